"""Where a tf.function train step's time goes (the MLP of bench_train_step), on this machine:
the jax.jit step, the tf.function's own compiled program called directly, the tf.function call
(per step, not synchronized; then synchronized each step), the buffer copies per step, and a
profile of the call. Run from the repository root: python benchmarks/function_call_parts.py"""
import time, sys, cProfile, pstats, gc
sys.path.insert(0, "benchmarks")
import jax, jax.numpy as jnp, numpy as np
import tapejax as tf
import bench_train_step as B
from tapejax._staging import function as F
from tapejax._core import state as S
x, y = B.data("mlp"); xt, yt = tf.constant(x), tf.constant(y)
model, opt, step = B.tapejax_step("mlp")
step = tf.function(step)
step(xt, yt); step(xt, yt)
conc = [o for o in gc.get_objects() if type(o) is F.ConcreteFunction][0]
params = [tuple(jnp.asarray(v.numpy()) for v in l.weights) for l in model.layers if l.weights]
tx, jstep = B.jax_step(B.jax_apply("mlp"))
st = [params, tx.init(params)]; xj, yj = jnp.asarray(x), jnp.asarray(y)
def runj():
    st[0], st[1], l = jstep(st[0], st[1], xj, yj); return l
vals, tensors, var_args, *_ = F._split_args((xt, yt), {})
state = list(var_args) + list(conc.captured); upd = [state[i] for i in conc._updated]
def raw():
    o, nv = conc._jitted(vals, [state[i]._stored for i in conc._donate], [state[i]._stored for i in conc._keep])
    for v, x_ in zip(upd, nv): v._stored = x_
    return o
copies = [0]; orig = S.copy_buffer
def counting(x):
    copies[0] += 1; return orig(x)
S.copy_buffer = counting
def T(fn, n=200):
    fn(); fn(); best = 1e9
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(n): r = fn()
        jax.block_until_ready(r); best = min(best, (time.perf_counter() - t0) / n * 1e6)
    return best
for name, fn in [("jax.jit step", runj), ("raw jitted call + store", raw), ("tf.function step", lambda: step(xt, yt)), ("jax.jit step", runj)]:
    copies[0] = 0
    print(f"{name:26s} {T(fn):8.1f} us/step   copies {copies[0]}")
def sync_each(fn):
    return lambda: jax.block_until_ready(fn())
print(f"{'jax.jit step, synced':26s} {T(sync_each(runj)):8.1f}")
print(f"{'tf.function, synced':26s} {T(sync_each(lambda: step(xt, yt)._value)):8.1f}")
cProfile.run("for _ in range(300): step(xt, yt)", "/tmp/prof")
pstats.Stats("/tmp/prof").sort_stats("tottime").print_stats(12)
