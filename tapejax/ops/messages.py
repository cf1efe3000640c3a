"""TensorFlow's messages for bad arguments (see ``_core/engine._op_error``): what TensorFlow's
kernels say, in the form its eager errors print, attached to the table's ops as ``op.explain``."""
import numpy as np

from .._core import dtypes as _dtypes
from .._core.basic import reshape as _reshape, concat as _concat, stack as _stack, packed
from .._core.tensor import _FITS, _TensorBase, _python_default_dtype, python_misfit
from .. import errors
from .math_ops import (
    add, subtract, multiply, truediv, floordiv, floormod, pow, atan2, maximum, minimum, squared_difference,
    equal, not_equal, less, less_equal, greater, greater_equal, logical_and, logical_or, logical_xor,
    divide_no_nan, multiply_no_nan, xlogy, select, clip_by_value, _add_n,
)
from .linalg_ops import _matmul, _tensordot, _einsum
from .bounds import _dims, _kernel_message


def _explain_broadcast(tf_op):
    def explain(shapes, static):
        a, b = shapes[:2]
        return _kernel_message(tf_op, f"Incompatible shapes: {_dims(a)} vs. {_dims(b)}", name="")
    return explain


# ---------------------------------------------------------------- inputs of mixed dtypes
# An op whose inputs share TF's type attribute T (engine.shares_dtype) met another dtype. How
# TensorFlow converts the inputs, and what it says:
# - most ops (the generated op's fast path): T is the first tensor input's dtype; a Python value
#   that does not convert to it is a TypeError (``Cannot convert 2.5 to EagerTensor of dtype
#   int32``), another tensor dtype the kernel's InvalidArgumentError;
# - ``add`` (math_ops.add) converts x alone, y with x's dtype as a hint: a mismatch is the kernel's
#   InvalidArgumentError, also for a Python float; ``truediv`` and ``divide_no_nan`` check first and
#   raise a TypeError;
# - while a tf.function is traced, TypeErrors with the graph builder's messages.

def _natural(a):
    """The dtype TensorFlow gives ``a`` converted on its own."""
    if isinstance(a, _TensorBase):
        return a.dtype
    arr = np.asarray(a) if isinstance(a, (np.ndarray, np.generic)) else _python_default_dtype(a)
    return _dtypes.as_dtype(arr.dtype)


def _converts(a, dtype):
    """Whether ``convert_to_tensor(a, dtype)`` succeeds (NumPy values are cast)."""
    if isinstance(a, _TensorBase):
        return a.dtype == dtype
    return isinstance(a, (np.ndarray, np.generic)) or python_misfit(a, dtype) is _FITS


def _hinted(a, hint):
    """The dtype of ``convert_to_tensor(a, dtype_hint=hint)``."""
    return hint if not isinstance(a, _TensorBase) and _converts(a, hint) else _natural(a)


def _kernel_mismatch(tf_op, index, want, got, name=""):
    return errors.InvalidArgumentError(None, None, (
        f"cannot compute {tf_op} as input #{index}(zero-based) was expected to be a {_dtypes.c_name(want)} "
        f"tensor but is a {_dtypes.c_name(got)} tensor [Op:{tf_op}]" + ("" if name is None else f" name: {name}")))


def _graph_mismatch(tf_op, params, index, first, want, got):
    return TypeError(f"Input '{params[index]}' of '{tf_op}' Op has type {got.name} that does not match type "
                     f"{want.name} of argument '{params[first]}'.")


def _typed(tf_op, params=("x", "y"), inputs=None, name="", natural=False, listed=None):
    """TF's error for an op whose inputs share T. The generated op's fast path takes T from the
    first tensor input and converts the others to it (a Python value that does not convert is a
    TypeError); with ``natural`` each input is converted on its own and T is the first's. An op
    taking a list (``listed``: the list's parameter) is checked as a whole while traced."""
    def error(args, index, tracing):
        positions = range(len(args)) if inputs is None else inputs
        first = next((i for i in positions if natural or isinstance(args[i], _TensorBase)), positions[0])
        want, a = _natural(args[first]), args[index]
        if tracing and listed is not None:
            kinds = ", ".join(_natural(args[i]).name for i in positions)
            return TypeError(f"Tensors in list passed to '{listed}' of '{tf_op}' Op have types [{kinds}] "
                             f"that don't all match.")
        if natural or isinstance(a, _TensorBase):
            if tracing:
                return _graph_mismatch(tf_op, params, index, first, want, _natural(a))
            return _kernel_mismatch(tf_op, index, want, _natural(a), name)
        if tracing:
            m = python_misfit(a, want)
            return TypeError(f"Expected {want.name} passed to parameter '{params[index]}' of op '{tf_op}', got "
                             f"{a!r} of type '{type(a).__name__}' instead. Error: Expected {want.name}, but "
                             f"got {m!r} of type '{type(m).__name__}'.")
        return TypeError(f"Cannot convert {a!r} to EagerTensor of dtype {_dtypes.c_name(want)}")
    return error


def _add_error(args, index, tracing):
    x = _natural(args[0])
    y = _hinted(args[1], x)
    if tracing:
        return _graph_mismatch("AddV2", ("x", "y"), 1, 0, x, y)
    return _kernel_mismatch("AddV2", 1, x, y)


def _div_error(args, index, tracing):
    x = _natural(args[0])
    return TypeError(f"`x` and `y` must have the same dtype, got {x!r} != {_hinted(args[1], x)!r}.")


def _clip_error(args, index, tracing):
    """clip_by_value(t, lo, hi) is TF's minimum(t, hi), then maximum(that, lo)."""
    t, lo, hi = args
    if not _converts(hi, _natural(t)):
        return _typed("Minimum")((t, hi), 1, tracing)
    return _typed("Maximum")((t, lo), 1, tracing)


for _op, _tf_op in [(add, "AddV2"), (subtract, "Sub"), (multiply, "Mul"), (truediv, "RealDiv"),
                    (floordiv, "FloorDiv"), (floormod, "FloorMod"), (pow, "Pow"), (maximum, "Maximum"),
                    (minimum, "Minimum"), (squared_difference, "SquaredDifference"), (equal, "Equal"),
                    (not_equal, "NotEqual"), (less, "Less"), (less_equal, "LessEqual"), (greater, "Greater"),
                    (greater_equal, "GreaterEqual"), (logical_and, "LogicalAnd"), (logical_or, "LogicalOr"),
                    (atan2, "Atan2"), (divide_no_nan, "DivNoNan"), (multiply_no_nan, "MulNoNan"),
                    (xlogy, "Xlogy"), (logical_xor, "LogicalOr")]:
    _op.explain = _explain_broadcast(_tf_op)
    _op.dtype_error = _typed(_tf_op)
add.dtype_error = _add_error
truediv.dtype_error = divide_no_nan.dtype_error = _div_error
clip_by_value.dtype_error = _clip_error
select.dtype_error = _typed("SelectV2", ("condition", "t", "e"), inputs=(1, 2), name=None)
_matmul.dtype_error = _tensordot.dtype_error = _typed("MatMul", ("a", "b"), natural=True)
_concat.dtype_error = _typed("ConcatV2", name="concat", listed="values")
_stack.dtype_error = _typed("Pack", name="stack", listed="values")
packed.dtype_error = _typed("Pack", name="packed", listed="values")
_add_n.dtype_error = _typed("AddN", natural=True, listed="inputs")
_einsum.dtype_error = _typed("Einsum", natural=True, listed="inputs")


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
