"""A Variable's sparse reads and updates: ``sparse_read``, ``gather_nd``, ``scatter_*`` and
``scatter_nd_*``, TensorFlow's ``ResourceVariable`` methods, with its kernels' index checks
(``bounds``). An update assigns the whole new value (``tensor.at[indices]`` op), so it is
one write of the state model like ``assign``: inside ``tf.function`` it becomes a scatter in
place of the donated buffer."""
from .._core.indexed_slices import IndexedSlices

from .._core.variable import Variable, _UnreadVariable
from . import bounds
from .array_ops import _gather, _gather_nd, _shape_of, _tensor_scatter, convert_to_tensor, expand_dims
from .math_ops import cast

# TensorFlow's kind -> the ``tensor.at[...]`` method (array_ops._tensor_scatter)
_KINDS = {"update": "set", "add": "add", "sub": "sub", "mul": "multiply", "div": "divide", "max": "max", "min": "min"}


def sparse_read(self, indices, name=None):
    """The rows of the Variable at ``indices`` (``tf.gather(v, indices)``); its gradient is
    IndexedSlices, as TensorFlow's.

    Example:
        >>> import tapejax as tf
        >>> v = tf.Variable([[1., 2.], [3., 4.], [5., 6.]])
        >>> v.sparse_read([2, 0]).numpy().tolist()
        [[5.0, 6.0], [1.0, 2.0]]
    """
    return bounds.gather(indices, _shape_of(self)[0], "ResourceGather", name=bounds.fast_path(indices),
                         then=lambda: _gather(self, indices, axis=0, batch_dims=0))


def _variable_gather_nd(self, indices, name=None):
    """The elements (or slices) of the Variable at the rows of ``indices`` (``tf.gather_nd``).

    Example:
        >>> import tapejax as tf
        >>> tf.Variable([[1., 2.], [3., 4.]]).gather_nd([[1, 0]]).numpy().tolist()
        [3.0]
    """
    return bounds.nd(indices, _shape_of(self), "ResourceGatherNd", param=True, name=bounds.fast_path(indices),
                     then=lambda: _gather_nd(self, indices, batch_dims=0))


def _scatter(tf_kind, nd):
    kind = _KINDS[tf_kind]
    tf_op = ("ResourceScatterNd" if nd else "ResourceScatter") + tf_kind.title()

    def scatter(self, indices, updates):
        i = convert_to_tensor(indices)
        if nd:
            bounds.nd(i, _shape_of(self), tf_op)
        else:   # rows: one index each
            bounds.gather(i, _shape_of(self)[0], tf_op, name="")
            i = expand_dims(i, -1)
        self.assign(_tensor_scatter[kind](self.read_value(), i, cast(updates, self.dtype)))
        return _UnreadVariable(self)

    if nd:
        def method(self, indices, updates, name=None):
            return scatter(self, indices, updates)
        call, name = "[[1]], [5.]", f"scatter_nd_{tf_kind}"
        what = "``updates`` into the Variable at the rows of ``indices``"
    else:
        def method(self, sparse_delta, use_locking=False, name=None):
            if not isinstance(sparse_delta, IndexedSlices):
                raise TypeError(f"sparse_delta is not IndexedSlices: {sparse_delta}")
            return scatter(self, sparse_delta.indices, sparse_delta.values)
        call, name = "tf.IndexedSlices(tf.constant([5.]), tf.constant([1]))", f"scatter_{tf_kind}"
        what = "the rows of ``sparse_delta`` (IndexedSlices) into the Variable at their indices"
    method.__name__ = method.__qualname__ = name
    method.__doc__ = (
        f"Scatter-{tf_kind}s {what} (``tf.Variable.{name}``); returns the Variable.\n\n"
        "    Example:\n        >>> import tapejax as tf\n        >>> v = tf.Variable([1., 2., 3.])\n"
        f"        >>> v.{name}({call}).numpy().tolist()\n"
        f"        {_EXAMPLE[tf_kind]}\n")
    return method


_EXAMPLE = {"update": "[1.0, 5.0, 3.0]", "add": "[1.0, 7.0, 3.0]", "sub": "[1.0, -3.0, 3.0]", "mul": "[1.0, 10.0, 3.0]",
            "div": "[1.0, 0.4000000059604645, 3.0]", "max": "[1.0, 5.0, 3.0]", "min": "[1.0, 2.0, 3.0]"}

Variable.sparse_read = sparse_read
Variable.gather_nd = _variable_gather_nd
for _kind in _KINDS:
    setattr(Variable, f"scatter_{_kind}", _scatter(_kind, nd=False))
for _kind in ("update", "add", "sub", "max", "min"):
    setattr(Variable, f"scatter_nd_{_kind}", _scatter(_kind, nd=True))
