"""Compile caches, bounded by count and bytes.

Every compile cache is bounded (``limits``, set by
``tf.config.experimental.set_compile_cache_limits``): whole programs by count and bytes
(:class:`CompileCache`, least recently used first), each op's compiled shape variants by
count (``track_variants``). JAX keeps every executable it compiles, 1-3 MB each on CPU.
"""
import itertools
import threading

import jax

from .tensor import Tensor, _TensorBase


class _Limits:
    """The bounds of the compile caches (``tf.config.experimental.set_compile_cache_limits``)."""

    max_programs = 32                 # whole compiled programs kept per cache (LRU)
    max_bytes = 256 * 2 ** 20         # their memory, measured as resident-set growth
    max_shapes_per_structure = 8      # tape structures seen with more shapes differentiate op by op
    max_variants_per_op = 8           # compiled (shapes, static arguments) variants of one op


limits = _Limits()
_MAX_OP_LIMIT = 4096


def resident_bytes():
    """The process's resident set size in bytes (0 where /proc is not there)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


try:
    import resource as _resource
    _PAGE = _resource.getpagesize()
except ImportError:  # not a Unix
    _PAGE = 4096


def data_bytes(values):
    """The bytes of the arrays among ``values`` (Tensors, Variables, arrays; others count 0)."""
    total = 0
    for v in jax.tree_util.tree_leaves(values, is_leaf=lambda x: isinstance(x, _TensorBase)):
        if isinstance(v, _TensorBase):
            stored = getattr(v, "_stored", None)   # a Variable: its storage (reading it would mark it shared)
            v = v._aval if stored is None else stored
        if not isinstance(v, (jax.core.Tracer, jax.core.AbstractValue)):   # a pending value: 0
            total += getattr(v, "nbytes", 0)
    return total


class CompileCache:
    """A least-recently-used cache of compiled programs, bounded by ``limits.max_programs``
    entries and ``limits.max_bytes`` of memory.

    An entry's bytes are what the process's resident set grew by while it was compiled and
    first run (:meth:`charge`): XLA does not report the host memory a CPU executable holds.
    ``on_evict(value)`` is called for each entry dropped, to free its executables now.
    """

    def __init__(self, on_evict=None):
        # key -> [value, bytes, insertion number, last use]: a hit is one dict lookup (a lazy
        # program's key is long: hashing and comparing it twice, as an OrderedDict's
        # move_to_end would, cost a tenth of a step); the least recently used is found on eviction.
        self._entries = {}
        self._bytes = 0
        self._inserted = 0
        self._uses = itertools.count()
        self._lock = threading.RLock()
        self._on_evict = on_evict

    def get(self, key):
        with self._lock:
            e = self._entries.get(key)
            if e is None:
                return None
            e[3] = next(self._uses)
            return e[0]

    def put(self, key, value):
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._inserted += 1
            self._entries[key] = [value, 0, self._inserted, next(self._uses)]
            dropped = self._trim()
        self._evict(dropped)

    def charge(self, key, nbytes):
        """Adds ``nbytes`` (clamped at 0) to the entry's size, then evicts down to the limits."""
        with self._lock:
            e = self._entries.get(key)
            if e is None or nbytes <= 0:
                return
            e[1] += nbytes
            self._bytes += nbytes
            dropped = self._trim()
        self._evict(dropped)

    def _trim(self):
        dropped = []
        while self._entries and (len(self._entries) > limits.max_programs
                                 or (self._bytes > limits.max_bytes and len(self._entries) > 1)):
            entries = self._entries
            value, nbytes, _, _ = entries.pop(min(entries, key=lambda k: entries[k][3]))
            self._bytes -= nbytes
            dropped.append(value)
        return dropped

    def _evict(self, dropped):
        if self._on_evict is not None:
            for value in dropped:
                self._on_evict(value)

    def trim(self):
        """Applies the current limits (after they changed)."""
        with self._lock:
            dropped = self._trim()
        self._evict(dropped)

    def clear(self):
        with self._lock:
            dropped = [e[0] for e in self._entries.values()]
            self._entries.clear()
            self._bytes = 0
        self._evict(dropped)

    def values(self):
        """The values in the order they were put in (not the order of use)."""
        with self._lock:
            return [e[0] for e in sorted(self._entries.values(), key=lambda e: e[2])]

    @property
    def nbytes(self):
        return self._bytes

    def __len__(self):
        return len(self._entries)

    def __contains__(self, key):
        return key in self._entries


def track_variants(op, jfn, vals, static):
    """Keeps the compiled variants of an op's jitted function bounded: JAX keeps every one
    (about 1-3 MB each on CPU), so an eager loop over ever new shapes would grow without end.

    When more than the op's limit have been compiled since the last clear, its cache is
    cleared. An op whose working set is larger (a variant cleared is compiled again) gets a
    doubled limit, so a model using one op with many fixed shapes does not recompile them.
    """
    n = getattr(jfn, "_cache_size", None)
    if n is None:          # not jitted (Op(jit=False))
        op._sized, op._variants = jfn, -1
        return
    n = n()
    if op._sized is not jfn:
        op._sized, op._variants, op._recent, op._evicted = jfn, n, [], frozenset()
        return
    if n < op._variants or any(isinstance(v, jax.core.Tracer) for v in vals):
        op._variants = n
        return
    key = hash((tuple([abstract_key(v) for v in vals]), tuple(sorted(static.items())) if static else ()))
    limit = op._limit or limits.max_variants_per_op
    if key in op._evicted:
        limit = op._limit = min(2 * limit, _MAX_OP_LIMIT)
    op._recent.append(key)
    op._variants = n
    if n > limit:
        jfn.clear_cache()
        op._evicted = frozenset(op._recent)
        op._recent = []
        op._variants = jfn._cache_size()



def abstract_key(v):
    """Fingerprint entry of one node input: its abstract value."""
    if type(v) is Tensor:
        v = v._aval
    if type(v) in (float, int, bool):
        return type(v)
    return (v.shape, v.dtype, getattr(v, "weak_type", False))
