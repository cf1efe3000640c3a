"""The tables of ``tf.lookup`` and ``tf.lookup.experimental`` (see ``tapejax.lookup``)."""
import numpy as np

from .. import errors as _errors
from .._core import dtypes as _dtypes, host as _host
from .._core.engine import known_value as _known_value
from .._core.farmhash import fingerprint64 as _fingerprint64
from .._core.tensor import Tensor as _Tensor, _TensorBase, string_array as _string_array
from ..ops.array_ops import convert_to_tensor as _convert
from ..ops.lookup_ops import dict_lookup as _dict_lookup, static_lookup as _static_lookup


def _is_string(dtype):
    return dtype == _dtypes.string


def _host_keys(t):
    """A tensor's elements as table keys: bytes for strings, Python ints or floats otherwise."""
    if isinstance(t._value, np.ndarray) and t._value.dtype == object:
        return _string_array(t._value)
    v = _known_value(t)
    if v is None:
        raise ValueError("tf.lookup needs the keys and values of a table when it is made (tensors with known "
                         f"values); got {t!r}.")
    return v


def _key_of(k):
    return k if isinstance(k, bytes) else k.item() if isinstance(k, np.generic) else k


def _values_tensor(vals, dtype, shape):
    """A tensor of ``dtype`` and ``shape`` from a list of looked-up values."""
    if _is_string(dtype):
        out = np.empty(len(vals), object)
        out[:] = vals
        return _Tensor(_string_array(out.reshape(shape)))
    return _Tensor(np.asarray(vals, _dtypes.np_dtype(dtype)).reshape(shape))


class KeyValueTensorInitializer:
    """A table's contents from a tensor of keys and a tensor of values
    (``tf.lookup.KeyValueTensorInitializer``); ``key_dtype``/``value_dtype`` convert them.

    Example:
        >>> import tapejax as tf
        >>> init = tf.lookup.KeyValueTensorInitializer(["x", "y"], [1.5, 2.5])
        >>> init.key_dtype, init.value_dtype
        (tf.string, tf.float32)
    """

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        self._keys = _convert(keys, dtype=key_dtype)
        self._values = _convert(values, dtype=value_dtype)
        self._name = name
        # Python and NumPy data stay known inside a tf.function, where their tensors are symbolic
        self._known = [None if isinstance(x, _TensorBase) else np.asarray(x) for x in (keys, values)]

    @property
    def key_dtype(self):
        """The keys' dtype."""
        return self._keys.dtype

    @property
    def value_dtype(self):
        """The values' dtype."""
        return self._values.dtype

    def _pairs(self):
        keys, values = (_host_keys(t) if k is None or t.dtype == _dtypes.string else
                        k.astype(_dtypes.np_dtype(t.dtype)) for t, k in zip((self._keys, self._values), self._known))
        if np.shape(keys)[:1] != np.shape(values)[:1]:
            raise _errors.InvalidArgumentError(None, None, (
                f"Expected shape {list(np.shape(keys))} for value, got {list(np.shape(values))}"))
        return [_key_of(k) for k in np.reshape(keys, [-1])], list(values)


class TextFileIndex:
    """Column indices of ``tf.lookup.TextFileInitializer`` that are not columns: the whole line
    (``WHOLE_LINE``, -2) or its line number (``LINE_NUMBER``, -1).

    Example:
        >>> import tapejax as tf
        >>> tf.lookup.TextFileIndex.WHOLE_LINE, tf.lookup.TextFileIndex.LINE_NUMBER
        (-2, -1)
    """
    WHOLE_LINE = -2
    LINE_NUMBER = -1


class TextFileInitializer:
    """A table's contents from a text file (``tf.lookup.TextFileInitializer``): one entry a line,
    the key and the value each a column (``delimiter``-separated, converted to ``key_dtype`` /
    ``value_dtype``), the whole line (``TextFileIndex.WHOLE_LINE``) or the line number
    (``TextFileIndex.LINE_NUMBER``, plus ``value_index_offset``); only the first ``vocab_size``
    lines when given. The file is read when the table is made.

    Example:
        >>> import tapejax as tf, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "vocab.txt")
        >>> _ = open(path, "w").write("emerson\\nlake\\npalmer\\n")
        >>> init = tf.lookup.TextFileInitializer(path, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE,
        ...                                      tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER)
        >>> tf.lookup.StaticHashTable(init, -1).lookup(tf.constant(["palmer", "elp"])).numpy().tolist()
        [2, -1]
    """

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index, vocab_size=None, delimiter="\t",
                 name=None, value_index_offset=0):
        key_dtype, value_dtype = _dtypes.as_dtype(key_dtype), _dtypes.as_dtype(value_dtype)
        for what, index, dtype in (("key", key_index, key_dtype), ("value", value_index, value_dtype)):
            if index < -2:
                raise ValueError(f"`{what}_index` should be >= -2, received: {index}.")
            if index == TextFileIndex.LINE_NUMBER and dtype != _dtypes.int64:
                raise ValueError(f"`{what}_dtype` must be int64 if `{what}_index` is -1, received: {dtype}")
            if index == TextFileIndex.WHOLE_LINE and not (dtype.is_integer or _is_string(dtype)):
                raise ValueError(f"`{what}_dtype` should be either integer or string for `{what}_index` "
                                 f"-2, received: {dtype}")
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"`vocab_size` must be > 0, got {vocab_size}.")
        filename = filename.numpy().decode() if isinstance(filename, _TensorBase) else str(filename)
        self._filename, self._delimiter = filename, delimiter
        self.key_dtype, self.value_dtype = key_dtype, value_dtype
        self._key_index, self._value_index = key_index, value_index
        self._vocab_size, self._offset = vocab_size, value_index_offset

    def _field(self, line, number, index, dtype, offset=0):
        if index == TextFileIndex.LINE_NUMBER:
            return number + offset
        text = line if index == TextFileIndex.WHOLE_LINE else line.split(self._delimiter)[index]
        if _is_string(dtype):
            return text.encode("utf-8")
        return int(text) if dtype.is_integer else float(text)

    def _pairs(self):
        try:
            with open(self._filename, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            raise _errors.NotFoundError(None, None, f"{self._filename}; No such file or directory") from None
        if self._vocab_size is not None:
            if len(lines) < self._vocab_size:
                raise _errors.InvalidArgumentError(None, None, (
                    f"Invalid vocab_size in {self._filename}: expected {self._vocab_size} but got {len(lines)}"))
            lines = lines[:self._vocab_size]
        keys = [self._field(line, i, self._key_index, self.key_dtype) for i, line in enumerate(lines)]
        values = [self._field(line, i, self._value_index, self.value_dtype, self._offset) for i, line in enumerate(lines)]
        return keys, values


class _Table:
    """A table: ``self._table`` maps each key (bytes or a Python number) to its value."""

    _mutable = False

    def __init__(self, key_dtype, value_dtype, default_value, name):
        self._key_dtype, self._value_dtype = _dtypes.as_dtype(key_dtype), _dtypes.as_dtype(value_dtype)
        self._default = _convert(default_value, dtype=self._value_dtype) if isinstance(default_value, _TensorBase) \
            else _default_tensor(default_value, self._value_dtype)
        self._name = name
        self._table = {}
        if _is_string(self._value_dtype):
            self._default_np = _host_keys(self._default)
            self._default_np = self._default_np[()] if np.ndim(self._default_np) == 0 else self._default_np
        else:
            known = _known_value(self._default)
            self._default_np = known if known is not None else np.asarray(
                default_value, _dtypes.np_dtype(self._value_dtype))

    key_dtype = property(lambda self: self._key_dtype, doc="The keys' dtype.")
    value_dtype = property(lambda self: self._value_dtype, doc="The values' dtype.")
    name = property(lambda self: self._name, doc="The table's name (None, as TensorFlow's eager tables).")
    default_value = property(lambda self: self._default, doc="The value of keys not in the table.")

    def size(self, name=None):
        """The number of entries, an int64 scalar.

        Example:
            >>> import tapejax as tf
            >>> t = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a"], [1]), -1)
            >>> int(t.size())
            1
        """
        return _Tensor(np.int64(len(self._table)))

    def export(self, name=None):
        """The keys and the values, two tensors.

        Example:
            >>> import tapejax as tf
            >>> t = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a"], [1]), -1)
            >>> [x.numpy().tolist() for x in t.export()]
            [[b'a'], [1]]
        """
        keys, values = list(self._table), list(self._table.values())
        shape = np.shape(self._default_np)
        return (_values_tensor(keys, self._key_dtype, [len(keys)]),
                _values_tensor(values, self._value_dtype, [len(keys), *shape]))

    def _check_keys(self, keys):
        if keys.dtype != self._key_dtype:
            raise TypeError(f"Dtype of argument `keys` must be {self._key_dtype}, received: {keys.dtype}")

    def lookup(self, keys, name=None):
        """The values of ``keys`` (a tensor of any shape; a RaggedTensor or SparseTensor's values),
        the default value for keys not in the table.

        Example:
            >>> import tapejax as tf
            >>> init = tf.lookup.KeyValueTensorInitializer([3, 5], [30.0, 50.0], key_dtype=tf.int64)
            >>> table = tf.lookup.StaticHashTable(init, default_value=0.0)
            >>> table.lookup(tf.constant([[5, 4], [3, 3]], tf.int64)).numpy().tolist()
            [[50.0, 0.0], [30.0, 30.0]]
        """
        if hasattr(keys, "with_values"):        # RaggedTensor
            self._check_keys(keys.values)
            return keys.with_values(self.lookup(keys.values))
        if hasattr(keys, "dense_shape") and hasattr(keys, "indices"):   # SparseTensor
            self._check_keys(keys.values)
            return type(keys)(keys.indices, self.lookup(keys.values), keys.dense_shape)
        self._check_keys(keys)
        return self._find(keys)

    __getitem__ = lookup

    def _find(self, keys):
        if not self._mutable and self._key_dtype.is_integer and not _is_string(self._value_dtype):
            items = sorted(self._table.items())
            default = np.asarray(self._default_np)
            return _static_lookup(keys, keys=tuple(k for k, _ in items),
                                  values=tuple(np.asarray(v).tolist() for _, v in items),
                                  dtype=np.dtype(_dtypes.np_dtype(self._value_dtype)).name,
                                  default=default.tolist())
        return _host.call("LookupTableFindV2", self._host_find, keys)

    def _host_find(self, keys):
        a = _host_keys(keys)
        flat = [_key_of(k) for k in np.reshape(a, [-1])]
        default = self._default_np
        return _values_tensor(_dict_lookup(self._table, default, flat), self._value_dtype,
                              list(np.shape(a)) + list(np.shape(default)))


def _default_tensor(value, dtype):
    try:
        return _convert(value, dtype=dtype)
    except (TypeError, ValueError):
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}") from None


class StaticHashTable(_Table):
    """A table that does not change after it is made from ``initializer``
    (``tf.lookup.StaticHashTable``): ``lookup`` gives ``default_value`` for other keys.

    Example:
        >>> import tapejax as tf
        >>> keys = tf.constant(["emerson", "lake", "palmer"])
        >>> values = tf.constant([0, 1, 2], tf.int64)
        >>> table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(keys, values), -1)
        >>> table.lookup(tf.constant(["lake", "king"])).numpy().tolist()
        [1, -1]
        >>> int(table.size())
        3
    """

    def __init__(self, initializer, default_value, name=None, experimental_is_anonymous=False):
        super().__init__(initializer.key_dtype, initializer.value_dtype, default_value, None)
        keys, values = initializer._pairs()
        for k, v in zip(keys, values):
            v = v.item() if isinstance(v, np.generic) else v
            if k in self._table and self._table[k] != v:
                shown = k.decode("utf-8", "replace") if isinstance(k, bytes) else k
                old = self._table[k].decode("utf-8", "replace") if isinstance(self._table[k], bytes) else self._table[k]
                new = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
                raise _errors.FailedPreconditionError(None, None, (
                    f"HashTable has different value for same key. Key {shown} has {old} and trying to add value "
                    f"{new} [Op:LookupTableImportV2] name: "))
            self._table[k] = v


class StaticVocabularyTable(_Table):
    """A vocabulary table (``tf.lookup.StaticVocabularyTable``): a key of ``initializer`` gets its
    int64 id, any other key a bucket ``size + Fingerprint64(key) % num_oov_buckets`` (an integer
    key hashed as its decimal text), as TensorFlow.

    Example:
        >>> import tapejax as tf
        >>> init = tf.lookup.KeyValueTensorInitializer(["emerson", "lake", "palmer"],
        ...                                            tf.constant([0, 1, 2], tf.int64))
        >>> table = tf.lookup.StaticVocabularyTable(init, num_oov_buckets=5)
        >>> table.lookup(tf.constant(["emerson", "lake", "palmer", "king", "crimson"])).numpy().tolist()
        [0, 1, 2, 6, 7]
    """

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None,
                 experimental_is_anonymous=False):
        if num_oov_buckets <= 0:
            raise ValueError("`num_oov_buckets` must be > 0; use StaticHashTable.")
        self._inner = None
        if initializer:
            if lookup_key_dtype is None:
                lookup_key_dtype = initializer.key_dtype
            if initializer.key_dtype not in (_dtypes.int64, _dtypes.string):
                raise TypeError(f"Invalid `key_dtype`, expected one of (tf.int64, tf.string), but got "
                                f"{initializer.key_dtype}.")
            lookup_key_dtype = _dtypes.as_dtype(lookup_key_dtype)
            if initializer.key_dtype.is_integer != lookup_key_dtype.is_integer:
                raise TypeError(f"Invalid `key_dtype`, expected {'integer' if lookup_key_dtype.is_integer else 'non-integer'} "
                                f"but got {initializer.key_dtype}.")
            if initializer.value_dtype != _dtypes.int64:
                raise TypeError(f"Invalid `value_dtype`, expected {_dtypes.int64} but got {initializer.value_dtype}.")
            self._inner = StaticHashTable(initializer, default_value=-1)
        else:
            lookup_key_dtype = _dtypes.as_dtype(lookup_key_dtype or _dtypes.string)
            if not lookup_key_dtype.is_integer and not _is_string(lookup_key_dtype):
                raise TypeError(f"Invalid `key_dtype`, expected integer or string, got {lookup_key_dtype}")
        super().__init__(lookup_key_dtype, _dtypes.int64, -1, None)
        self._num_oov_buckets = int(num_oov_buckets)
        if self._inner is not None:
            self._table = self._inner._table

    def size(self, name=None):
        """The number of ids: the vocabulary's plus the buckets, an int64 scalar."""
        return _Tensor(np.int64(len(self._table) + self._num_oov_buckets))

    def _find(self, keys):
        return _host.call("StaticVocabularyTableLookup", self._host_find, keys)

    def _host_find(self, keys):
        a = _host_keys(keys)
        n, size = self._num_oov_buckets, len(self._table)
        ids = []
        for k in np.reshape(a, [-1]):
            k = _key_of(k)
            i = self._table.get(k, -1)
            if i == -1:
                i = size + _fingerprint64(k if isinstance(k, bytes) else str(int(k)).encode()) % n
            ids.append(i)
        return _Tensor(np.asarray(ids, np.int64).reshape(np.shape(a)))


class MutableHashTable(_Table):
    """A table that ``insert`` and ``remove`` change (``tf.lookup.experimental.MutableHashTable``);
    values may be vectors (``default_value`` gives their shape).

    Example:
        >>> import tapejax as tf
        >>> table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, default_value=-1)
        >>> table.insert(tf.constant(["a", "b"]), tf.constant([1, 2], tf.int64))
        >>> table.remove(tf.constant(["a"]))
        >>> table.lookup(tf.constant(["a", "b"])).numpy().tolist()
        [-1, 2]
    """

    _mutable = True

    def __init__(self, key_dtype, value_dtype, default_value, name="MutableHashTable", checkpoint=True,
                 experimental_is_anonymous=False):
        super().__init__(key_dtype, value_dtype, default_value, name)

    def _convert_keys(self, keys, what="keys"):
        try:
            return _convert(keys, dtype=self._key_dtype)
        except ValueError as e:
            raise ValueError(f"{what}: {e}") from None

    def insert(self, keys, values, name=None):
        """Sets the values of ``keys`` (new keys are added)."""
        keys = self._convert_keys(keys)
        try:
            values = _convert(values, dtype=self._value_dtype)
        except ValueError as e:
            raise ValueError(f"values: {e}") from None
        _host.call("LookupTableInsertV2", self._host_insert, keys, values)

    def _host_insert(self, keys, values):
        ks = [_key_of(k) for k in np.reshape(_host_keys(keys), [-1])]
        vs = np.asarray(_host_keys(values))
        vs = vs.reshape((len(ks),) + np.shape(self._default_np))
        for k, v in zip(ks, vs):
            self._check_insert(k)
            self._table[k] = v.item() if v.ndim == 0 else v
        return _Tensor(np.int64(len(self._table)))

    def _check_insert(self, key):
        pass

    def remove(self, keys, name=None):
        """Removes ``keys`` from the table (keys not in it are ignored)."""
        keys = self._convert_keys(keys)
        _host.call("LookupTableRemoveV2", self._host_remove, keys)

    def _host_remove(self, keys):
        for k in np.reshape(_host_keys(keys), [-1]):
            self._check_insert(_key_of(k))
            self._table.pop(_key_of(k), None)
        return _Tensor(np.int64(len(self._table)))

    def size(self, name=None):
        """The number of entries, an int64 scalar."""
        return _host.call("LookupTableSizeV2", lambda: _Tensor(np.int64(len(self._table))))


class DenseHashTable(MutableHashTable):
    """A mutable table with open addressing (``tf.lookup.experimental.DenseHashTable``): as
    ``MutableHashTable``, with an ``empty_key`` and a ``deleted_key`` that may not be keys.

    Example:
        >>> import tapejax as tf
        >>> table = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, default_value=-1,
        ...                                               empty_key=0, deleted_key=-1)
        >>> table.insert(tf.constant([5, 9], tf.int64), tf.constant([50, 90], tf.int64))
        >>> table.erase(tf.constant([5], tf.int64))
        >>> table.lookup(tf.constant([5, 9], tf.int64)).numpy().tolist()
        [-1, 90]
    """

    def __init__(self, key_dtype, value_dtype, default_value, empty_key, deleted_key, initial_num_buckets=None,
                 name="MutableDenseHashTable", checkpoint=True, experimental_is_anonymous=False):
        super().__init__(key_dtype, value_dtype, default_value, name)
        self._empty = _key_of(np.reshape(_host_keys(_convert(empty_key, dtype=self._key_dtype)), [-1])[0])
        self._deleted = _key_of(np.reshape(_host_keys(_convert(deleted_key, dtype=self._key_dtype)), [-1])[0])
        if self._empty == self._deleted:
            raise _errors.InvalidArgumentError(None, None, "Empty and deleted keys cannot be equal "
                                                           "[Op:MutableDenseHashTableV2] name: MutableDenseHashTable")

    def _check_insert(self, key):
        for special, what in ((self._empty, "empty_key"), (self._deleted, "deleted_key")):
            if key == special:
                raise _errors.InvalidArgumentError(None, None, f"Using the {what} as a table key is not allowed")

    def erase(self, keys, name=None):
        """Removes ``keys`` from the table (``remove``)."""
        return self.remove(keys, name)
