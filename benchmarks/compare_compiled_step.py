"""Interleaved rounds: the compiled tapejax training step against the hand-written jax.jit + optax step.

    python benchmarks/compare_compiled_step.py mlp|cnn

Times 20-step blocks of each, alternating, 9 rounds; prints the median ratio. The
alternation makes the ratio robust to machine load (bench_train_step.py times the
variants one after another).
"""
import sys, time, statistics, numpy as np, jax, jax.numpy as jnp
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
import bench_train_step as B
import tapejax as tf
kind = sys.argv[1]; batch = 128 if kind == "mlp" else 32
rng = np.random.RandomState(0)
x = rng.rand(batch, 784).astype(np.float32) if kind == "mlp" else rng.rand(batch, 28, 28, 1).astype(np.float32)
y = rng.randint(0, 10, size=(batch,)).astype(np.int32)
model = (B.mlp_model if kind == "mlp" else B.cnn_model)()
opt = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
def train_step(xb, yb):
    with tf.GradientTape() as tape:
        loss = loss_fn(yb, model(xb, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss
xt, yt = tf.constant(x), tf.constant(y)
f = tf.function(train_step); f(xt, yt)
params = [tuple(jnp.asarray(v.numpy()) for v in l.weights) for l in model.layers if l.weights]
tx, js = B.jax_step(B.jax_apply(kind)); st = [params, tx.init(params)]
xj, yj = jnp.asarray(x), jnp.asarray(y)
def rj():
    st[0], st[1], l = js(st[0], st[1], xj, yj); return l
rj()
def blk(fn, n=20):
    t = time.perf_counter()
    for _ in range(n): r = fn()
    jax.block_until_ready(r); return (time.perf_counter() - t) / n
ratios = []
for _ in range(9):
    a = blk(lambda: f(xt, yt)._value); b = blk(rj); ratios.append(a / b)
print(kind, "median ratio", round(statistics.median(ratios), 3), [round(r, 2) for r in ratios])
