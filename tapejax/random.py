"""tf.random with TensorFlow's numbers: Philox-4x32-10 as TF's CPU/GPU kernels use it.

Three seeding schemes, each as in TensorFlow:

* ``stateless_*(shape, seed=[a, b])``: the seed pair is scrambled into a Philox
  key and counter (TF's ``StatelessRandomGetKeyCounter``); same seed, same numbers.
* ``Generator``: the state (128-bit counter + 64-bit key) lives in a Variable, so
  it checkpoints and advances under ``tapejax.function``; each draw of ``n``
  numbers uses the current state and moves the counter on by ``256 * n``.
* ``normal/uniform/truncated_normal/shuffle(..., seed=None)``: TF's
  ``get_seed`` (global seed from ``set_seed``, op seeds from a ``random.Random``
  seeded with it, ``87654321`` when only the op seed is given) and TF's eager
  kernel cache (an op called again with the same seeds continues its stream).
  Inside ``tapejax.function`` each op is a graph op, as in TF: its own state starts at
  its seeds (an op given no seed takes the graph's op seeds 0, 1, ...) and advances
  with every call. Without any seed they draw from the global Generator instead
  (TF's numbers then come from the system's entropy).

Float results equal TensorFlow 2.21's on CPU: uniform floats and integers bit
for bit; normals to 2 ulp (XLA's ``log``/``sin``/``cos`` are not glibc's; about
93% of values are bit-identical). float64 needs JAX's 64-bit mode and raises.
``categorical`` draws from the global Generator with JAX's sampler (not TF's numbers).

Example:
    >>> import tapejax as tf
    >>> tf.random.stateless_normal([2, 3], seed=[1, 2]).numpy().round(4)
    array([[ 0.5441,  0.2074,  0.0736],
           [ 0.0464, -1.3016, -0.9539]], dtype=float32)
    >>> g = tf.random.Generator.from_seed(1)
    >>> g.normal([3]).numpy().round(4)
    array([ 0.4384, -0.5344, -0.0771], dtype=float32)
"""
import contextlib
import math
import os
import random as _pyrandom
import threading
import types
import weakref as _weakref

import jax
import jax.numpy as jnp
import numpy as np

from ._core import dtypes as _dtypes, philox as _philox, state as _state
from . import errors as errors
from ._core.tensor import Tensor, _TensorBase, to_array, is_tracer as _is_tracer
from ._core.variable import Variable
from .ops import multiply, add, subtract, convert_to_tensor as _convert, stack as _stack
from .ops.normalize import static_shape as _static_shape

_MAXINT32 = 2 ** 31 - 1
DEFAULT_GRAPH_SEED = 87654321
_PHILOX = 1
_ALGS = {None: _PHILOX, "philox": _PHILOX, "auto_select": _PHILOX, 1: _PHILOX, 3: _PHILOX}


def _alg(alg):
    a = getattr(alg, "value", alg)
    a = a.lower() if isinstance(a, str) else a
    if a not in _ALGS:
        raise ValueError(f"Unsupported random algorithm {alg!r}: tapejax implements TensorFlow's Philox "
                         "only. Use alg='philox' (or 'auto_select', which is Philox on CPU and GPU).")
    return _ALGS[a]


def _shape(shape):
    s = _static_shape(shape)
    if any(d < 0 for d in s):
        raise ValueError(f"Random shapes must be fully known, got {list(shape)}: pass concrete sizes.")
    return s


def _float_dtype(dtype):
    return _philox._check_float(_dtypes.np_dtype(dtype))


def _scale(z, mean, stddev):
    """``z * stddev + mean`` as TF writes it (tape-recorded, so mean and stddev get gradients)."""
    if type(mean) in (int, float) and type(stddev) in (int, float) and mean == 0 and stddev == 1:
        return z
    return add(multiply(z, stddev), mean)


def _range(u, minval, maxval, dtype):
    """TF's ``rnd * (maxval - minval) + minval``, with both bounds converted to ``dtype`` first."""
    lo = minval if isinstance(minval, _TensorBase) else Tensor(jnp.asarray(to_array(minval), dtype))
    hi = maxval if isinstance(maxval, _TensorBase) else Tensor(jnp.asarray(to_array(maxval), dtype))
    return add(multiply(u, subtract(hi, lo)), lo)


def _words(arr):
    return tuple(arr[i] for i in range(arr.shape[0]))


# ---------------------------------------------------------------------------
# Sampling from a Philox key and counter
# ---------------------------------------------------------------------------

def _int_bounds(minval, maxval):
    lo, hi = to_array(minval), to_array(maxval)
    if not (_is_tracer(lo) or _is_tracer(hi)) and int(np.asarray(lo)) >= int(np.asarray(hi)):
        raise errors.InvalidArgumentError(
            None, None, f"Need minval < maxval, got {int(np.asarray(lo))} >= {int(np.asarray(hi))}: "
            "integer ranges are [minval, maxval), e.g. tf.random.uniform([3], 0, 10, dtype=tf.int32).")
    return lo, hi


def _host_u64(key, counter, n):
    """``n`` 64-bit words as TF's 64-bit distributions pair them (low word first), on the host."""
    w = np.asarray(_philox.words(key, counter, (2 * n,))).astype(np.uint64)
    return w[0::2] | (w[1::2] << np.uint64(32))


def _sample(kind, key, counter, shape, dtype, minval=None, maxval=None):
    """Draws TF's numbers of one distribution from a Philox key and counter."""
    if kind == "normal":
        return Tensor(_philox.normal(key, counter, shape, _float_dtype(dtype)))
    if kind == "truncated_normal":
        return Tensor(_philox.truncated_normal(key, counter, shape, _float_dtype(dtype)))
    dt = _dtypes.np_dtype(dtype)
    if kind == "uniform" and dt.kind not in "iu":
        return Tensor(_philox.uniform(key, counter, shape, _float_dtype(dt)))
    full = minval is None
    if dt in (np.int32, np.uint32):
        if full:
            w = _philox.words(key, counter, shape)
            return Tensor(w if dt == np.uint32 else w.view(jnp.int32))
        lo, hi = _int_bounds(minval, maxval)
        return Tensor(_philox.uniform_int(key, counter, shape, lo, hi, dt))
    if dt in (np.int64, np.uint64):
        # 64-bit integers take two words each; without x64 the result is computed on the host
        # and lands in tapejax's int64 (stored as int32, like every tapejax int64 tensor).
        if any(_is_tracer(w) for w in (*key, *counter)):
            raise TypeError("64-bit random integers cannot be drawn inside tapejax.function "
                            "(no 64-bit JAX mode): use dtype=tf.int32.")
        n = math.prod(shape)
        bits = _host_u64(key, counter, n)
        if full:
            out = bits.view(np.int64) if dt == np.int64 else bits
        else:
            lo, hi = (int(np.asarray(v)) for v in _int_bounds(minval, maxval))
            out = (np.int64(lo) + (bits % np.uint64((hi - lo) % (1 << 64))).view(np.int64))
        return Tensor(jnp.asarray(out.reshape(shape)))
    raise TypeError(f"Random integers of dtype {dt} are not supported: use tf.int32 or tf.int64.")


# ---------------------------------------------------------------------------
# Stateless ops
# ---------------------------------------------------------------------------

def _seed_key_counter(seed, alg="auto_select"):
    """TF's seed -> (key, counter) for stateless ops (``StatelessRandomGetKeyCounter``)."""
    _alg(alg)
    raw = to_array(seed) if isinstance(seed, _TensorBase) else seed
    if _is_tracer(raw):
        if raw.shape != (2,):
            raise ValueError(f"seed must have shape [2], not {list(raw.shape)}.")
        return _philox.key_counter_from_seed(raw[0], raw[1])
    s = np.asarray(raw)
    if s.shape != (2,) or s.dtype.kind not in "iu":
        raise errors.InvalidArgumentError(
            None, None, f"seed must be a shape [2] integer tensor, got {s.dtype} of shape {list(s.shape)}: "
            "pass two integers, e.g. seed=[1, 2].")
    return _philox.key_counter_from_seed(int(s[0]), int(s[1]))


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=_dtypes.float32, name=None, alg="auto_select"):
    """Deterministic uniform numbers from a seed pair (``tf.random.stateless_uniform``).

    Integer dtypes need both bounds, or neither for the full range.

    Example:
        >>> import tapejax as tf
        >>> tf.random.stateless_uniform([3], seed=[1, 2]).numpy()
        array([0.8440604 , 0.19204533, 0.9962232 ], dtype=float32)
        >>> tf.random.stateless_uniform([3], seed=[1, 2], minval=0, maxval=10, dtype=tf.int32).numpy()
        array([0, 9, 4], dtype=int32)
    """
    dt = _dtypes.np_dtype(dtype)
    key, counter = _seed_key_counter(seed, alg)
    shape = _shape(shape)
    if dt.kind in "iu":
        if (minval is None) != (maxval is None):
            raise ValueError(f"For integer dtype {dt}, minval and maxval must be both None (full range) "
                             f"or both given; got minval={minval} and maxval={maxval}.")
        return _sample("uniform", key, counter, shape, dt, minval, maxval)
    return _range(_sample("uniform", key, counter, shape, dt), minval, 1 if maxval is None else maxval, dt)


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None, alg="auto_select"):
    """Deterministic normal numbers from a seed pair (``tf.random.stateless_normal``).

    Example:
        >>> import tapejax as tf
        >>> tf.random.stateless_normal([2], seed=[1, 2], mean=1.0, stddev=2.0).numpy()
        array([2.0882201, 1.4147606], dtype=float32)
    """
    key, counter = _seed_key_counter(seed, alg)
    return _scale(_sample("normal", key, counter, _shape(shape), dtype), mean, stddev)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None,
                               alg="auto_select"):
    """Deterministic normals cut at two standard deviations (``tf.random.stateless_truncated_normal``).

    Example:
        >>> import tapejax as tf
        >>> float(tf.reduce_max(tf.abs(tf.random.stateless_truncated_normal([1000], seed=[3, 4])))) < 2
        True
    """
    key, counter = _seed_key_counter(seed, alg)
    return _scale(_sample("truncated_normal", key, counter, _shape(shape), dtype), mean, stddev)


# ---------------------------------------------------------------------------
# Generator
# ---------------------------------------------------------------------------

_STATE_SIZES = {"philox": 3, "threefry": 2, "auto_select": 3, 1: 3, 2: 2, 3: 3}


def create_rng_state(seed, alg):
    """A generator state from an int seed (its 64-bit chunks, low first) or a seed vector
    (left-padded with zeros): 3 int64 words for Philox, 2 for ThreeFry (``tf.random.create_rng_state``).

    Example:
        >>> import tapejax as tf
        >>> tf.random.create_rng_state(1234, "philox")
        <tf.Tensor: shape=(3,), dtype=int64, numpy=array([1234,    0,    0])>
    """
    a = getattr(alg, "value", alg)
    a = a.lower() if isinstance(a, str) else a
    if a not in _STATE_SIZES:
        raise ValueError(f"Argument `alg` got unsupported value {alg}. Supported values are philox for the Philox "
                         "algorithm, threefry for the ThreeFry algorithm, and auto_select for auto-selection.")
    n = _STATE_SIZES[a]
    if isinstance(seed, (int, np.integer)):
        seed, chunks = int(seed), []
        for _ in range(n):
            chunks.append(seed & ((1 << 64) - 1))
            seed >>= 64
    else:
        chunks = [int(v) for v in np.ravel(to_array(seed) if isinstance(seed, _TensorBase) else np.asarray(seed))]
    chunks = [c - (1 << 64) if c >= (1 << 63) else c for c in chunks][:n]
    return Tensor(np.asarray([0] * (n - len(chunks)) + chunks, np.int64))


def split(seed, num=2, alg="auto_select"):
    """``num`` new seed pairs from ``seed``, deterministically: TensorFlow's
    ``stateless_random_uniform([num, 2], seed, dtype=seed.dtype)`` over the full integer range
    (``tf.random.split``, ``tf.random.experimental.stateless_split``).

    Example:
        >>> import tapejax as tf
        >>> tf.random.split([1, 2], num=3)
        <tf.Tensor: shape=(3, 2), dtype=int32, numpy=
        array([[1105988140, 1738052849],
               [-335576002,  370444179],
               [  10670227, -246211131]], dtype=int32)>
    """
    seed = _convert(seed)
    return stateless_uniform([num, 2], seed, minval=None, maxval=None, dtype=seed.dtype, alg=alg)


def fold_in(seed, data, alg="auto_select"):
    """A new seed pair from ``seed`` and an integer ``data`` (a replica id, a step...):
    ``[stateless_random_uniform([], seed, dtype=data.dtype), data]`` (``tf.random.fold_in``,
    ``tf.random.experimental.stateless_fold_in``).

    Example:
        >>> import tapejax as tf
        >>> print(tf.random.fold_in([1, 2], 3))
        tf.Tensor([1105988140          3], shape=(2,), dtype=int32)
    """
    data = _convert(data)
    seed1 = stateless_uniform([], seed, minval=None, maxval=None, dtype=data.dtype, alg=alg)
    return _stack([seed1, data])


def _state_words(state):
    """TF's Philox state (int64 [counter_lo, counter_hi, key]) as six uint32 words."""
    raw = to_array(state) if isinstance(state, _TensorBase) else state
    # Python ints may exceed int64 (uint64 halves of a counter): keep them exact, never float.
    a = np.asarray([int(v) for v in raw], object) if isinstance(raw, (list, tuple)) else np.asarray(raw)
    if a.dtype == np.uint32 and a.shape == (6,):   # tapejax's own layout, handed back
        return a
    if a.shape != (3,):
        raise ValueError(f"A Philox state has 3 int64 entries (counter low, counter high, key), "
                         f"got shape {list(a.shape)}.")
    out = []
    for v in a.tolist():
        out.extend(_philox.split_u64(int(v)))
    return np.asarray(out, np.uint32)


def _as_state(words):
    """The state Variable's value for six uint32 words: TF's int64 ``[counter_lo, counter_hi,
    key]``, or the words themselves without JAX's 64-bit mode (TAPEJAX_ENABLE_X64=0)."""
    w = jnp.asarray(words, jnp.uint32)
    if not jax.config.jax_enable_x64:
        return w
    return jax.lax.bitcast_convert_type(w.reshape(3, 2), jnp.int64)


def _as_words(value):
    """Six uint32 words (least significant first) of a state Variable's value."""
    if value.dtype == jnp.uint32:
        return value
    return jax.lax.bitcast_convert_type(value, jnp.uint32).reshape(6)


def _replica_key(key, replica):
    """TF's per-replica key, ``hash(key, replica_id)``: the first 64 bits Philox draws with the
    generator's key at the counter ``[replica_id, 0]`` (``Generator._preprocess_key``)."""
    w = _philox.words(key, (jnp.uint32(replica), jnp.uint32(0), jnp.uint32(0), jnp.uint32(0)), (2,))
    return w[0], w[1]


def _seed_state(seed):
    """TF's ``create_rng_state(seed, 'philox')``: an int's 64-bit chunks, or a vector left-padded."""
    if isinstance(seed, (int, np.integer)):
        seed = int(seed)
        chunks = [(seed >> (64 * i)) & ((1 << 64) - 1) for i in range(3)]
    else:
        chunks = [int(v) for v in np.asarray(to_array(seed) if isinstance(seed, _TensorBase) else seed)
                  .reshape(-1)[:3].tolist()]
        chunks = [0] * (3 - len(chunks)) + chunks
    return _state_words(np.asarray([c % (1 << 64) for c in chunks], np.uint64))


_ADVANCE_LOCK = threading.Lock()


class Generator:
    """A random number generator whose Philox state is a Variable (``tf.random.Generator``).

    Draws equal TensorFlow's for the same seed and call sequence. ``state`` holds
    TF's 128-bit counter and 64-bit key: int64 ``[counter_lo, counter_hi, key]`` as in
    TensorFlow (six uint32 words when JAX's 64-bit mode is off: TAPEJAX_ENABLE_X64=0).

    Created in the scope of a ``tf.distribute`` strategy, it gives each replica its own
    stream, as TensorFlow does: inside ``strategy.run`` (running once per replica),
    replica ``r`` draws with the key ``hash(key, r)`` from the state all replicas share at
    the start of the run, so the replicas' numbers differ and are TensorFlow's. Outside
    ``strategy.run`` (and in a SavedModel) it draws with its own key. A generator created
    outside the strategy is one stream the replicas draw from in turn.

    Example:
        >>> import tapejax as tf
        >>> g = tf.random.Generator.from_seed(1)
        >>> g.uniform([2]).numpy()
        array([0.78749514, 0.3906511 ], dtype=float32)
        >>> g.uniform([2], minval=0, maxval=10, dtype=tf.int32).numpy()
        array([3, 5], dtype=int32)
    """

    def __init__(self, copy_from=None, state=None, alg=None):
        # The strategy whose scope (or whose replica) creates it: its replicas get their own streams.
        self._strategy = _state.distribution()[0]
        if copy_from is not None:
            words, self._alg = _state_words(copy_from.state), copy_from.algorithm
        else:
            if state is None:
                raise ValueError("Generator needs a state: use tf.random.Generator.from_seed(seed) or "
                                 "tf.random.Generator.from_non_deterministic_state().")
            words, self._alg = _state_words(state), _alg(alg)
        self.state = Variable(_as_state(words), trainable=False, name="StateVar")
        # Declared a generator state: skipping states is harmless, reusing one is not, so a
        # discarded trace keeps the draws initializers made (``_state.Scope.drop``).
        self.state._kind = _state.RNG
        _state.replica_local(self.state)

    @classmethod
    def from_seed(cls, seed, alg=None):
        """A generator from an integer or integer vector seed (TF's ``create_rng_state``)."""
        return cls(state=_seed_state(seed), alg=alg)

    @classmethod
    def from_state(cls, state, alg):
        """A generator from a Philox state (int64 ``[counter_lo, counter_hi, key]``)."""
        return cls(state=state, alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg):
        """A generator from a key and a two-entry counter."""
        return cls(state=[*np.asarray(counter).reshape(-1).tolist(), int(np.asarray(key))], alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        """A generator seeded from the operating system's entropy."""
        return cls(state=np.frombuffer(os.urandom(24), np.uint64), alg=alg)

    @property
    def algorithm(self):
        return self._alg

    def _trackable_children(self):
        """What a checkpoint saves: the state Variable, under TensorFlow's name."""
        return {"_state_var": self.state}

    def reset(self, state):
        """Replaces the state."""
        self.state.assign(_as_state(_state_words(state)))

    def reset_from_seed(self, seed):
        """Resets the state as ``from_seed(seed)`` makes it."""
        self.state.assign(_as_state(_seed_state(seed)))

    def reset_from_key_counter(self, key, counter):
        self.reset([*np.asarray(counter).reshape(-1).tolist(), int(np.asarray(key))])

    def skip(self, delta):
        """Moves the counter on as ``delta`` samples would; returns the old state."""
        return Tensor(_as_state(self._advance(int(delta))))

    def _advance(self, n):
        # A concrete state stays concrete, also when drawn inside a foreign jax trace (a layer
        # call under jax.eval_shape): the draw would otherwise leave a tracer in the Variable.
        # One draw at a time: threads (a parallel tf.data map) must not reuse a state.
        with _ADVANCE_LOCK, jax.ensure_compile_time_eval():
            words = _as_words(self.state.value()._value)
            lo, hi = _philox.split_u64(256 * n)
            new = _philox.add128(_words(words[:4]), jnp.uint32(lo), jnp.uint32(hi))
            self.state.assign(_as_state(jnp.concatenate([jnp.stack(new), words[4:]])))
        return words

    def _key_counter(self, shape):
        w = self._advance(math.prod(shape))
        key = _words(w[4:])
        strategy, replica = _state.distribution()
        if replica is not None and strategy is self._strategy:
            with contextlib.nullcontext() if _is_tracer(key[0]) else jax.ensure_compile_time_eval():
                key = _replica_key(key, replica)
        return key, _words(w[:4])

    def _draw(self, kind, shape, dtype, minval=None, maxval=None):
        shape = _shape(shape)
        key, counter = self._key_counter(shape)
        if _is_tracer(key[0]):
            return _sample(kind, key, counter, shape, dtype, minval, maxval)
        with jax.ensure_compile_time_eval():
            return _sample(kind, key, counter, shape, dtype, minval, maxval)

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None):
        """Normal samples, TF's for the same state."""
        return _scale(self._draw("normal", shape, dtype), mean, stddev)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None):
        """Normal samples redrawn until within two standard deviations."""
        return _scale(self._draw("truncated_normal", shape, dtype), mean, stddev)

    def uniform(self, shape, minval=0, maxval=None, dtype=_dtypes.float32, name=None):
        """Uniform samples on ``[minval, maxval)``; integer dtypes need ``maxval`` (or neither bound)."""
        dt = _dtypes.np_dtype(dtype)
        if dt.kind in "iu":
            if (minval is None) != (maxval is None):
                raise ValueError(f"For integer dtype {dt}, minval and maxval must be both None or both given; "
                                 f"got minval={minval} and maxval={maxval}: e.g. "
                                 "g.uniform([3], minval=0, maxval=10, dtype=tf.int32).")
            return self._draw("uniform", shape, dt, minval, maxval)
        return _range(self._draw("uniform", shape, dt), minval, 1 if maxval is None else maxval, dt)

    def uniform_full_int(self, shape, dtype=_dtypes.uint64, name=None):
        """Integers over the whole range of ``dtype``."""
        return self._draw("uniform", shape, dtype)

    def _int64_keys(self, count):
        key, counter = self._key_counter((count,))
        if _is_tracer(key[0]):
            raise TypeError("make_seeds and split need 64-bit integers, which tapejax.function cannot "
                            "trace (no 64-bit JAX mode): call them outside the compiled function.")
        return _host_u64(key, counter, count).view(np.int64)

    def make_seeds(self, count=1):
        """``[2, count]`` int64 seeds for stateless ops (a NumPy array: tapejax has no 64-bit tensors).

        Example:
            >>> import tapejax as tf
            >>> s = tf.random.Generator.from_seed(1).make_seeds(2)
            >>> tf.random.stateless_normal([1], seed=s[:, 0]).shape
            TensorShape([1])
        """
        keys = self._int64_keys(int(count))
        return np.stack([keys, np.zeros_like(keys)])

    def split(self, count=1):
        """``count`` new independent generators; advances this one."""
        return [Generator(state=[0, 0, int(k)], alg=self._alg) for k in self._int64_keys(int(count))]

    def make_key(self):
        """A jax PRNG key drawn from this generator (for flax modules and JAX samplers)."""
        return jax.random.wrap_key_data(self._draw("uniform", (2,), _dtypes.uint32)._value)

    def binomial(self, shape, counts, probs, dtype=_dtypes.int32, name=None):
        raise NotImplementedError("Generator.binomial is not implemented in tapejax.")

    def categorical(self, logits, num_samples, dtype=None, seed=None):
        logits = to_array(logits)
        s = jax.random.categorical(self.make_key(), logits[:, None, :], axis=-1,
                                   shape=(logits.shape[0], int(num_samples)))
        return Tensor(s.astype(_dtypes.np_dtype(dtype or _dtypes.int32)))

    def shuffle(self, value, seed=None):
        return Tensor(jax.random.permutation(self.make_key(), to_array(value), axis=0))


_global = [None]


def get_global_generator():
    """The global :class:`Generator` (seeded by ``set_seed``; used by unseeded ops)."""
    if _global[0] is None:
        with _state.init_scope():   # its state Variable is eager even when first asked for in a trace
            _global[0] = Generator.from_seed(_Seeds.generator_seed)
    return _global[0]


def set_global_generator(generator):
    """Replaces the global :class:`Generator`."""
    _global[0] = generator


# ---------------------------------------------------------------------------
# Global seed + op seed (TF's random_seed.get_seed and its eager kernel cache)
# ---------------------------------------------------------------------------

class _Seeds:
    global_seed = None
    rng = None
    kernels = {}     # (op, dtype, seed, seed2) -> the counter that op's next call starts at
    generator_seed = 0   # the global Generator's seed when it is first made (the last set_seed)
    graph_ops = _weakref.WeakSet()   # the states of random ops of traced functions (their Generators)


def set_seed(seed):
    """Sets the global seed (``tf.random.set_seed``): ops then draw TF's numbers in TF's order.

    As in TF, each unseeded op call gets the next op seed of a ``random.Random(seed)``
    sequence, and an op called again with the same seeds continues its stream. It also
    resets the global Generator (TF leaves that one alone; tapejax's unseeded sampling
    and compiled steps draw from it).

    Example:
        >>> import tapejax as tf
        >>> tf.random.set_seed(1234)
        >>> a = tf.random.uniform([1], seed=1)
        >>> b = tf.random.uniform([1], seed=1)
        >>> tf.random.set_seed(1234)
        >>> bool(tf.random.uniform([1], seed=1) == a), bool(a == b)
        (True, False)
    """
    if seed is None:
        _Seeds.global_seed, _Seeds.rng = None, None
    else:
        seed = int(np.asarray(to_array(seed) if isinstance(seed, _TensorBase) else seed))
        _Seeds.global_seed, _Seeds.rng, _Seeds.generator_seed = seed, _pyrandom.Random(seed), seed
        # Not made here if not made yet: its state Variable would start JAX's backends, and
        # TF's set_seed leaves devices alone (virtual devices can still be configured after it).
        if _global[0] is not None:
            _global[0].reset_from_seed(seed)
    _Seeds.kernels = {}
    # TF's set_seed also starts the kernels of traced functions' random ops again (at the seeds
    # they were traced with: those stay).
    for g in list(_Seeds.graph_ops):
        key, seed2 = g._start
        g.reset_from_key_counter(key, [0, seed2])


def get_seed(op_seed):
    """TF's ``(seed, seed2)`` for an op: from the global seed and ``op_seed``, ``(None, None)`` if neither."""
    if _Seeds.global_seed is not None:
        if op_seed is None:
            op_seed = _Seeds.rng.randint(0, _MAXINT32)
        seeds = _Seeds.global_seed % _MAXINT32, int(op_seed) % _MAXINT32
    elif op_seed is not None:
        seeds = DEFAULT_GRAPH_SEED, int(op_seed) % _MAXINT32
    else:
        return None, None
    return (0, _MAXINT32) if seeds == (0, 0) else seeds


def _trace_state_clean():
    # JAX has no public "is a trace active" query; this is the one jax.jit itself uses.
    from jax._src import core
    return core.trace_state_clean()


def _op_key_counter(op, dtype, seed, reserve):
    """Key and counter of a stateful op's next call, as TF's ``GuardedPhiloxRandom``; or None.

    None (draw from the global Generator) without seeds, and inside tapejax.function or
    any jax trace (a vectorized ``Dataset.map``), where a Python-side counter would be
    frozen into the traced program.
    """
    if _state.tracing() or not _trace_state_clean():
        return None
    seed, seed2 = get_seed(seed)
    if seed is None:
        return None
    cache = (op, str(dtype), seed, seed2)
    start = _Seeds.kernels.get(cache, seed2 << 64)
    _Seeds.kernels[cache] = start + reserve
    return _kernel_key_counter(seed, start)


def _kernel_key_counter(seed, start):
    """A Philox kernel's key (from ``seed``) and counter (the 128-bit ``start``)."""
    (c0, c1), (c2, c3) = _philox.split_u64(start), _philox.split_u64(start >> 64)
    k0, k1 = _philox.split_u64(seed)
    return (tuple(jnp.uint32(k) for k in (k0, k1)), tuple(jnp.uint32(c) for c in (c0, c1, c2, c3)))


def _shuffle_permutation(kc, n):
    """TF's RandomShuffle: Fisher-Yates with one 32-bit word per step, ``word % (n - i)``."""
    w = np.asarray(_philox.words(*kc, (n - 1,))).astype(np.int64)
    perm = np.arange(n)
    for i in range(n - 1):
        j = i + int(w[i] % (n - i))
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def _first_op_in_new_graph_shuffle(n):
    """The permutation of ``range(n)`` that TF's ``tf.random.shuffle`` gives as the first random
    op of a new graph (a ``tf.data`` map function), or None without a global seed.

    In a graph TF takes op seeds from a per-graph counter (0 for the first op), not from the
    eager sequence, and the kernel is new: so the permutation depends on the global seed alone
    and is the same each time the graph is made. Keras 3's ``fit`` shuffles array inputs this
    way (``ArrayDataAdapter``: ``tf.random.shuffle(tf.range(n))`` in a ``Dataset.map``), the
    same order every epoch once ``tf.random.set_seed`` is called. Eager state is left alone.
    """
    if _Seeds.global_seed is None or n <= 1:
        return None
    seeds = (_Seeds.global_seed % _MAXINT32, 0)
    seed, seed2 = (0, _MAXINT32) if seeds == (0, 0) else seeds
    return _shuffle_permutation(_kernel_key_counter(seed, seed2 << 64), n)


def _graph_op_generator(op, dtype, seed):
    """The state of a seeded random op of a function being traced, as a Generator; or None.

    In a graph each op has its own kernel: its counter starts at its seeds (``seed2 << 64``,
    key ``seed``) when the concrete function is made, and moves on by ``256 * n`` each time it
    runs, so the same op in two traced functions, or twice in one, draws the same numbers.
    An op given no seed, under ``set_seed``, gets the graph's next op seed (0, 1, ... in the
    order the trace meets them: TF's ``get_seed`` in a graph); with no global seed either it
    draws from the global Generator (TF's numbers then come from the system's entropy).
    """
    if not _state.tracing():
        return None
    if seed is None:
        if _Seeds.global_seed is None:
            return None
        seed = _state.graph_op_seed()
        if seed is None:
            return None
    seed, seed2 = get_seed(seed)

    def make():
        with _state.init_scope():   # eager state, as the global Generator's
            g = Generator.from_key_counter(seed, [0, seed2], _PHILOX)
        g._strategy = None   # one kernel per replica, all from the op's seeds (no replica streams)
        # A kernel, not a generator whose draws a discarded trace keeps (``Scope.drop``): TF never
        # runs the trace of a first call that creates Variables (it lifts their initializers out
        # and runs a second trace, with kernels of its own), so the step's first call draws the
        # kernel's first numbers.
        g.state._kind = None
        g._start = (seed, seed2)
        _Seeds.graph_ops.add(g)
        return g
    return _state.random_op_state((op, str(dtype), seed, seed2), make)


def _stateful(op, kind, shape, dtype, seed, minval=None, maxval=None):
    shape = _shape(shape)
    g = _graph_op_generator(op, _dtypes.np_dtype(dtype), seed)
    if g is not None:
        return g._draw(kind, shape, dtype, minval, maxval)
    kc = _op_key_counter(op, _dtypes.np_dtype(dtype), seed, 256 * math.prod(shape))
    if kc is None:
        return get_global_generator()._draw(kind, shape, dtype, minval, maxval)
    return _sample(kind, *kc, shape, dtype, minval, maxval)


def normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    """Normal samples (``tf.random.normal``), TF's numbers under ``tf.random.set_seed`` or an op seed.

    Example:
        >>> import tapejax as tf
        >>> tf.random.set_seed(5)
        >>> tf.random.normal([2]).numpy()
        array([-0.18030666, -0.95028627], dtype=float32)
    """
    return _scale(_stateful("RandomStandardNormal", "normal", shape, dtype, seed), mean, stddev)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dtypes.float32, seed=None, name=None):
    """Normal samples redrawn until within two standard deviations (``tf.random.truncated_normal``).

    Example:
        >>> import tapejax as tf
        >>> tf.random.truncated_normal([2], seed=1).shape
        TensorShape([2])
    """
    return _scale(_stateful("TruncatedNormal", "truncated_normal", shape, dtype, seed), mean, stddev)


def uniform(shape, minval=0, maxval=None, dtype=_dtypes.float32, seed=None, name=None):
    """Uniform samples on ``[minval, maxval)`` (``tf.random.uniform``); integers need ``maxval``.

    Example:
        >>> import tapejax as tf
        >>> tf.random.uniform([3], maxval=10, dtype=tf.int32, seed=3).dtype
        tf.int32
    """
    dt = _dtypes.np_dtype(dtype)
    if dt.kind in "iu":
        if maxval is None:
            raise ValueError("Must specify maxval for integer dtype uniform: tf.random.uniform(shape, "
                             "minval=0, maxval=10, dtype=tf.int32).")
        return _stateful("RandomUniformInt", "uniform", shape, dt, seed, minval, maxval)
    u = _stateful("RandomUniform", "uniform", shape, dt, seed)
    if maxval is None:
        maxval = 1
    # TF skips the arithmetic for Python-int bounds 0 and 1, and scales only for minval 0.
    lo_zero = isinstance(minval, int) and not isinstance(minval, bool) and minval == 0
    hi_one = isinstance(maxval, int) and not isinstance(maxval, bool) and maxval == 1
    if lo_zero and hi_one:
        return u
    if lo_zero:
        hi = maxval if isinstance(maxval, _TensorBase) else Tensor(jnp.asarray(to_array(maxval), dt))
        return multiply(u, hi)
    return _range(u, minval, maxval, dt)


def shuffle(value, seed=None, name=None):
    """Shuffles ``value`` along its first axis (``tf.random.shuffle``), TF's permutation when seeded.

    Example:
        >>> import tapejax as tf
        >>> tf.random.set_seed(0)
        >>> tf.random.shuffle(tf.range(5)).numpy()
        array([3, 2, 1, 4, 0], dtype=int32)
    """
    x = to_array(value)
    n = x.shape[0] if x.ndim else 0
    if x.size <= 1 or n <= 1:
        return Tensor(x)
    kc = _op_key_counter("RandomShuffle", x.dtype, seed, (n - 1 + 3) // 4)
    if kc is None:
        return Tensor(jax.random.permutation(get_global_generator().make_key(), x, axis=0))
    return Tensor(jnp.take(x, jnp.asarray(_shuffle_permutation(kc, n)), axis=0))


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """Draws ``num_samples`` class indices per row of ``logits`` (JAX's sampler, not TF's numbers)."""
    return get_global_generator().categorical(logits, num_samples, dtype)


experimental = types.ModuleType("tapejax.random.experimental", "tf.random.experimental: TensorFlow's aliases of "
                                "tf.random's seed splitting and generators.")
experimental.stateless_split, experimental.stateless_fold_in = split, fold_in
experimental.Generator, experimental.get_global_generator, experimental.set_global_generator = (
    Generator, get_global_generator, set_global_generator)
experimental.create_rng_state = create_rng_state
experimental.__all__ = ["Generator", "create_rng_state", "get_global_generator", "set_global_generator",
                        "stateless_fold_in", "stateless_split"]
