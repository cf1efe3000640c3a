"""tf.data's background work: prefetch threads, parallel map / interleave, Options, and fit on
loaders that are not tf.data (a generator, a grain-like iterable).

Concurrency is shown with barriers (two calls must be running at once to pass one), never with
timings; a wrong implementation fails with BrokenBarrierError instead of hanging.
"""
import gc
import threading
import time

import numpy as np
import pytest

import tapejax as tf

Dataset = tf.data.Dataset
WAIT = 30  # seconds a barrier waits before it breaks (only reached when something is wrong)


def values(ds):
    return [np.asarray(x).tolist() for x in ds]


def eager_map(fn):
    """A map function that runs ``fn`` on NumPy values for each element (tf.numpy_function)."""
    return lambda x: tf.numpy_function(lambda v: np.asarray(fn(v), np.int64), [x], tf.int64)


def data_threads():
    return [t for t in threading.enumerate() if t.name.startswith("tf.data")]


def threads_settle():
    """Waits until no tf.data thread is alive (True), or gives up after WAIT seconds."""
    deadline = time.monotonic() + WAIT
    while data_threads() and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.02)
    return not data_threads()


@pytest.mark.parametrize("calls", [1, 3, tf.data.AUTOTUNE])
def test_parallel_map_keeps_the_order(calls):
    ds = Dataset.range(100)
    assert values(ds.map(eager_map(lambda v: v * 3), num_parallel_calls=calls)) == [3 * i for i in range(100)]
    # A traceable function is vectorized per task, in order as well.
    assert values(ds.map(lambda x: x * 2 + 1, num_parallel_calls=calls)) == [2 * i + 1 for i in range(100)]
    # Tuple elements are unpacked as in a serial map.
    pairs = Dataset.from_tensor_slices((np.arange(40.0), np.arange(40)))
    out = [(float(a), int(b)) for a, b in pairs.map(lambda a, b: (a / 2, b + 1), num_parallel_calls=calls)]
    assert out == [(i / 2, i + 1) for i in range(40)]


def test_parallel_map_runs_calls_at_the_same_time():
    meet = threading.Barrier(2, timeout=WAIT)

    def f(v):
        if v > 0:                  # numpy_function may be probed on zeros: not a real element
            meet.wait()            # passes only while another element is being mapped too
        return v

    n = 2 * tf.data.Dataset._PARALLEL_CHUNK  # two tasks of equal length: their elements pair up
    ds = Dataset.range(1, n + 1).map(eager_map(f), num_parallel_calls=2)
    assert values(ds) == list(range(1, n + 1))


def test_nondeterministic_map_yields_in_completion_order():
    chunk = tf.data.Dataset._PARALLEL_CHUNK
    n = 4 * chunk

    def run(deterministic=None, options=None):
        last_done = threading.Event()

        def f(v):
            # (numpy_function may be probed on zeros while traced: elements start at 1)
            if v == 1:
                last_done.wait(WAIT)   # the first element waits for the last one
            if v == n:
                last_done.set()
            return v
        ds = Dataset.range(1, n + 1)
        if options is not None:
            ds = ds.with_options(options)
        return values(ds.map(eager_map(f), num_parallel_calls=4, deterministic=deterministic))

    elements = list(range(1, n + 1))
    assert run() == elements                       # deterministic by default, whatever finishes first
    assert run(deterministic=True) == elements
    loose = run(deterministic=False)
    assert sorted(loose) == elements and loose[0] != 1   # the first task finished late
    options = tf.data.Options()
    options.deterministic = False
    assert run(options=options)[0] != 1            # tf.data.Options().deterministic = False does the same
    assert run(deterministic=True, options=options) == elements  # the argument wins


def test_worker_exceptions_surface_at_next_with_the_original_exception():
    def f(v):
        if v == 37:
            raise KeyError("element 37 is bad")
        return v

    it = iter(Dataset.range(100).map(eager_map(f), num_parallel_calls=4))
    got = []
    with pytest.raises(KeyError, match="element 37 is bad"):
        for x in it:
            got.append(int(x))
    assert got == list(range(37))                  # everything before it, in order

    def gen():
        yield from range(5)
        raise ValueError("the source broke")

    prefetched = Dataset.from_generator(gen, output_types=tf.int32).prefetch(2)
    got = []
    with pytest.raises(ValueError, match="the source broke"):
        for x in prefetched:
            got.append(int(x))
    assert got == [0, 1, 2, 3, 4]


def test_prefetch_produces_ahead_on_a_thread_and_stays_bounded():
    produced = []

    def gen():
        for i in range(1000):
            produced.append(threading.current_thread().name)
            yield i

    it = iter(Dataset.from_generator(gen, output_types=tf.int32).prefetch(3))
    assert int(next(it)) == 0
    deadline = time.monotonic() + WAIT
    while len(produced) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(produced) >= 4                      # three more are ready before they are asked for
    assert produced[0] != threading.current_thread().name
    time.sleep(0.2)
    assert len(produced) <= 1 + 3 + 1              # consumed + buffer + the one waiting to be put
    assert values(Dataset.range(5).prefetch(tf.data.AUTOTUNE)) == [0, 1, 2, 3, 4]
    assert values(Dataset.range(5).prefetch(0)) == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="`buffer_size` must be a non-negative integer"):
        Dataset.range(5).prefetch(-5)
    with pytest.raises(ValueError, match="`num_parallel_calls` must be a positive integer"):
        Dataset.range(5).map(lambda x: x, num_parallel_calls=0)


def test_dropped_iterators_stop_their_threads():
    assert threads_settle()
    baseline = threading.active_count()
    slow = eager_map(lambda v: v)
    pipeline = (Dataset.range(10).repeat().map(slow, num_parallel_calls=4).prefetch(3)
                .interleave(lambda x: Dataset.from_tensors(x).repeat(2), cycle_length=2, num_parallel_calls=2)
                .prefetch(2))
    it = iter(pipeline)
    for _ in range(7):
        next(it)
    assert threading.active_count() > baseline and data_threads()
    del it
    assert threads_settle(), threading.enumerate()
    assert threading.active_count() == baseline
    # An iteration that runs to the end, one that breaks early, and one that raised.
    assert values(Dataset.range(50).map(slow, num_parallel_calls=3).prefetch(2)) == list(range(50))
    for x in Dataset.range(50).map(slow, num_parallel_calls=3).prefetch(2):
        if int(x) == 3:
            break
    with pytest.raises(KeyError):
        values(Dataset.range(50).map(eager_map(lambda v: {}[int(v)]), num_parallel_calls=3).prefetch(2))
    assert threads_settle(), threading.enumerate()
    assert threading.active_count() == baseline


def test_parallel_interleave_reads_its_inputs_at_the_same_time():
    meet = threading.Barrier(2, timeout=WAIT)

    def source(i):
        def gen():
            meet.wait()            # both sources must be open and reading at once
            yield from range(10 * i, 10 * i + 3)
        return Dataset.from_generator(gen, output_types=tf.int32)

    ds = Dataset.from_tensor_slices([1, 2]).interleave(lambda i: source(int(i)), cycle_length=2,
                                                       num_parallel_calls=2)
    assert values(ds) == [10, 20, 11, 21, 12, 22]


@pytest.mark.parametrize("cycle, block", [(1, 1), (2, 1), (3, 2), (4, 3)])
def test_parallel_interleave_keeps_the_serial_order(cycle, block):
    make = lambda x: Dataset.range(x).map(lambda y: y + 10 * x)  # noqa: E731  (different lengths)
    serial = Dataset.range(1, 7).interleave(make, cycle_length=cycle, block_length=block)
    parallel = Dataset.range(1, 7).interleave(make, cycle_length=cycle, block_length=block,
                                              num_parallel_calls=tf.data.AUTOTUNE)
    assert values(parallel) == values(serial)


def test_options_have_tensorflows_fields_and_checks():
    options = tf.data.Options()
    assert options.deterministic is None and options.threading.private_threadpool_size is None
    options.experimental_deterministic = False          # TF's deprecated alias
    assert options.deterministic is False
    options.threading.private_threadpool_size = 4
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    options.autotune.enabled = True
    options.experimental_optimization.map_parallelization = True
    with pytest.raises(AttributeError, match="Cannot set the property foo on Options."):
        options.foo = 1
    with pytest.raises(TypeError, match='Property "deterministic" must be of type'):
        options.deterministic = 3
    ds = Dataset.range(3).with_options(options)
    assert ds.options() == options and ds.options().threading.private_threadpool_size == 4
    assert Dataset.range(3).options().deterministic is None
    later = tf.data.Options()
    later.deterministic = True
    merged = ds.with_options(later).options()
    assert merged.deterministic is True and merged.threading.private_threadpool_size == 4  # later wins
    assert ds.map(lambda x: x + 1).options().deterministic is False                        # carried along
    assert values(ds.batch(2)) == [[0, 1], [2]]
    with pytest.raises(TypeError, match="tf.data.Options"):
        Dataset.range(3).with_options({"deterministic": False})


class GrainLikeLoader:
    """What ``model.fit`` sees of a grain ``DataLoader``: a re-iterable object of (x, y) batches."""

    def __init__(self, x, y, batch_size):
        self.x, self.y, self.batch_size = x, y, batch_size
        self.epochs = 0

    def __iter__(self):
        self.epochs += 1
        for i in range(0, len(self.x), self.batch_size):
            yield self.x[i:i + self.batch_size], self.y[i:i + self.batch_size]


def test_fit_accepts_grain_like_loaders_and_generators():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)

    def model():
        tf.keras.utils.set_random_seed(0)
        m = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
        m.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
        return m

    loader = GrainLikeLoader(x, y, 16)
    m = model()
    history = m.fit(loader, epochs=5, verbose=0)
    assert loader.epochs == 5 and len(history.history["loss"]) == 5
    assert history.history["loss"][-1] < history.history["loss"][0] / 2
    # The same batches from tf.data give the same training.
    m2 = model()
    history2 = m2.fit(Dataset.from_tensor_slices((x, y)).batch(16), epochs=5, verbose=0)
    np.testing.assert_allclose(history.history["loss"], history2.history["loss"], rtol=1e-5)
    # A generator of batches (one pass per fit call, as Keras: steps_per_epoch bounds an epoch).
    gen = ((x[i:i + 16], y[i:i + 16]) for _ in range(3) for i in range(0, 64, 16))
    history3 = model().fit(gen, epochs=3, steps_per_epoch=4, verbose=0)
    np.testing.assert_allclose(history3.history["loss"], history.history["loss"][:3], rtol=1e-5)


def test_fit_accepts_grain_datasets():
    # Runs where grain is installed (`pip install grain`; checked with grain 0.2.18).
    grain = pytest.importorskip("grain")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)
    records = [(x[i], y[i]) for i in range(64)]

    def losses(data):
        tf.keras.utils.set_random_seed(0)
        m = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
        m.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
        return m.fit(data, epochs=3, verbose=0).history["loss"]

    expected = losses(Dataset.from_tensor_slices((x, y)).batch(16))
    np.testing.assert_allclose(losses(grain.MapDataset.source(records).batch(16)), expected, rtol=1e-5)
    threaded = grain.MapDataset.source(records).to_iter_dataset(
        grain.ReadOptions(num_threads=2, prefetch_buffer_size=4)).batch(16)
    np.testing.assert_allclose(losses(threaded), expected, rtol=1e-5)


def test_parallel_map_random_draws_are_not_reused():
    # Each draw advances the generator's state once, also when threads draw at the same time:
    # the parallel map makes the same draws as a serial one (assigned to elements in the
    # order the threads ran).
    def draws(calls):
        g = tf.random.Generator.from_seed(7)
        ds = Dataset.range(300).map(lambda x: g.normal(()), num_parallel_calls=calls)
        return [float(v) for v in ds]

    serial, parallel = draws(None), draws(4)
    assert len(set(parallel)) == 300
    assert sorted(parallel) == sorted(serial)
    unseeded = [float(v) for v in Dataset.range(300).map(lambda x: tf.random.uniform(()), num_parallel_calls=4)]
    assert len(set(unseeded)) == 300
