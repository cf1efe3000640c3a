"""TensorFlow's messages for bad arguments (see ``_core/engine._op_error``): what TensorFlow's
kernels say, in the form its eager errors print, attached to the table's ops as ``op.explain``."""
import numpy as np

from .._core.basic import reshape as _reshape, concat as _concat
from .math_ops import (
    add, subtract, multiply, truediv, floordiv, floormod, pow, maximum, minimum, squared_difference, equal,
    not_equal, less, less_equal, greater, greater_equal, logical_and, logical_or,
)
from .linalg_ops import _matmul


def _kernel_message(tf_op, text, name=None):
    device = "/job:localhost/replica:0/task:0/device:CPU:0"
    return (f"{{{{function_node __wrapped__{tf_op}_device_{device}}}}} {text} [Op:{tf_op}]"
            + ("" if name is None else f" name: {name}"))


def _dims(shape):
    return "[" + ",".join(map(str, shape)) + "]"


def _explain_broadcast(tf_op):
    def explain(shapes, static):
        a, b = shapes[:2]
        return _kernel_message(tf_op, f"Incompatible shapes: {_dims(a)} vs. {_dims(b)}", name="")
    return explain


for _op, _tf_op in [(add, "AddV2"), (subtract, "Sub"), (multiply, "Mul"), (truediv, "RealDiv"),
                    (floordiv, "FloorDiv"), (floormod, "FloorMod"), (pow, "Pow"), (maximum, "Maximum"),
                    (minimum, "Minimum"), (squared_difference, "SquaredDifference"), (equal, "Equal"),
                    (not_equal, "NotEqual"), (less, "Less"), (less_equal, "LessEqual"), (greater, "Greater"),
                    (greater_equal, "GreaterEqual"), (logical_and, "LogicalAnd"), (logical_or, "LogicalOr")]:
    _op.explain = _explain_broadcast(_tf_op)


def _explain_matmul(shapes, static):
    a, b = shapes
    return _kernel_message("MatMul", f"Matrix size-incompatible: In[0]: {_dims(a)}, In[1]: {_dims(b)}", name="")


def _explain_reshape(shapes, static):
    n = int(np.prod(shapes[0], dtype=np.int64))
    want = [d for d in static["shape"] if d != -1]
    known = int(np.prod(want, dtype=np.int64))
    text = (f"requires a multiple of {known}" if len(want) < len(static["shape"])
            else f"has {known}")
    return _kernel_message("Reshape", f"Input to reshape is a tensor with {n} values, but the requested shape {text}")


def _explain_concat(shapes, static):
    axis = static["axis"] % len(shapes[0]) if shapes[0] else 0
    for i, s in enumerate(shapes[1:], 1):
        if len(s) != len(shapes[0]):
            return _kernel_message("ConcatV2", f"ConcatOp : Ranks of all input tensors should match: "
                                   f"shape[0] = {_dims(shapes[0])} vs. shape[{i}] = {_dims(s)}", name="concat")
        for d, (x, y) in enumerate(zip(shapes[0], s)):
            if d != axis and x != y:
                return _kernel_message("ConcatV2", f"ConcatOp : Dimension {d} in both shapes must be equal: "
                                       f"shape[0] = {_dims(shapes[0])} vs. shape[{i}] = {_dims(s)}", name="concat")
    return None


_matmul.explain = _explain_matmul
_reshape.explain = _explain_reshape
_concat.explain = _explain_concat
