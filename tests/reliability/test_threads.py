"""Four trainers in four threads, each on its own model: the results equal the same
training run alone in one thread (tapes, caches and tf.function traces are shared safely)."""
import threading

import numpy as np

import tapejax as tf
from tapejax._core import engine as _engine
def _train(seed, steps=40):
    """An MLP trained eagerly and with a tf.function step; returns its final weights."""
    rng = np.random.default_rng(seed)
    batch = 4 + seed                       # each trainer its own shapes, too
    x = tf.constant(rng.normal(size=(batch, 5)).astype(np.float32))
    y = tf.constant(rng.normal(size=(batch, 1)).astype(np.float32))
    w1 = tf.Variable(rng.normal(size=(5, 8)).astype(np.float32) * 0.3)
    b1 = tf.Variable(np.zeros(8, np.float32))
    w2 = tf.Variable(rng.normal(size=(8, 1)).astype(np.float32) * 0.3)
    params = [w1, b1, w2]

    def step():
        with tf.GradientTape() as tape:
            h = tf.nn.relu(x @ w1 + b1)
            loss = tf.reduce_mean((h @ w2 - y) ** 2)
        for v, g in zip(params, tape.gradient(loss, params)):
            v.assign_sub(0.05 * g)
        return loss

    compiled = tf.function(step)
    losses = []
    for i in range(steps):
        losses.append(float((step if i % 2 else compiled)()))
    return [v.numpy() for v in params], losses, compiled.experimental_get_tracing_count()


def test_four_trainers_in_threads_equal_single_threaded():
    seeds = [0, 1, 2, 3]
    for s in seeds:
        # Shapes met for the first time run on the host, equal to the compiled ops to rounding,
        # not bit for bit: warm up, so that the runs compared below are both compiled.
        _train(s, steps=4)
    alone = {s: _train(s) for s in seeds}
    results, errors = {}, []
    barrier = threading.Barrier(len(seeds), timeout=60)

    def run(seed):
        try:
            barrier.wait()
            results[seed] = _train(seed)
        except BaseException as e:   # reported below, with the thread's seed
            errors.append((seed, e))

    threads = [threading.Thread(target=run, args=(s,)) for s in seeds]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    assert sorted(results) == seeds
    for s in seeds:
        weights, losses, traces = results[s]
        want_weights, want_losses, want_traces = alone[s]
        for got, want in zip(weights, want_weights):
            np.testing.assert_array_equal(got, want)
        assert losses == want_losses
        assert traces == want_traces == 1
        assert losses[-1] < losses[0]
    assert _engine.state.recorders == []
