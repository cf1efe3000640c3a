"""tf.print: prints tensor values, at run time also inside compiled functions."""
import sys

import jax
import numpy as np

from .._core import checks as _checks, graph_options as _graph_options, host as _host, state as _state
from .._core.tensor import HostValue, _TensorBase, is_tracer


def _fmt(x, summarize):
    return _fmt_array(x._value, summarize) if isinstance(x, _TensorBase) else str(x)


def print_(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):
    """Prints its inputs (``tf.print``); inside a compiled function, when the step runs.

    Example:
        >>> import tapejax as tf
        >>> tf.print("loss:", tf.constant([1.0, 2.0]))
        loss: [1 2]
        >>> tf.print(tf.range(10))
        [0 1 2 ... 7 8 9]
    """
    stream = output_stream if output_stream not in (None, "stderr") and hasattr(output_stream, "write") else sys.stdout
    tracers = [x for x in inputs if isinstance(x, _TensorBase) and is_tracer(x._value)]
    if tracers or _state.tracing() or _checks.staging():
        # Inside a tapejax.function every print is part of the program: it prints per call.
        if _checks.quiet() or _graph_options.strips_debug_ops():
            return None   # (Grappler's debug_stripper leaves prints out of TF's graphs)
        # Per input: a value of the program, a string of the call (read from the host program
        # that runs before it), or text known now (Python values, string constants).
        parts = [x._value if isinstance(x, _TensorBase) else str(x) for x in inputs]
        for i, v in enumerate(parts):
            if type(v) is HostValue:
                parts[i] = _host.reader(v)
            elif isinstance(v, np.ndarray) and v.dtype == object:
                parts[i] = _fmt_array(v, summarize)
        idx = [i for i, v in enumerate(parts) if not isinstance(v, str) and not callable(v)]

        def cb(*vals):
            it = iter(vals)
            out = [_fmt_array(next(it), summarize) if i in idx else _fmt_array(v(), summarize) if callable(v)
                   else v for i, v in enumerate(parts)]
            stream.write(sep.join(out) + end)

        with _checks.staged():
            jax.debug.callback(cb, *[parts[i] for i in idx], ordered=True)
        return None
    stream.write(sep.join(_fmt(x, summarize) for x in inputs) + end)
    return None


def _fmt_array(a, summarize):
    """TensorFlow's print format (``Tensor::SummarizeValue``): numbers as its ``StrCat`` writes
    them, unpadded; ``...`` past 2 * ``summarize`` elements."""
    a = np.asarray(a)
    full = summarize is None or summarize < 0
    if a.dtype.kind == "V" and jax.dtypes.issubdtype(a.dtype, np.floating):
        a = a.astype(np.float32)   # bfloat16 (an ml_dtypes type numpy does not format as a float)
    floats = _double_text if a.dtype == np.float64 else _float_text
    return np.array2string(a, threshold=sys.maxsize if full else 2 * summarize,
                           edgeitems=3 if full else summarize, separator=" ",
                           formatter={"float_kind": floats, "int": str, "bool": lambda v: "1" if v else "0",
                                      "complex_kind": lambda v: "?", "object": _quoted})


def _shortest(v, cast, digits, more):
    # TensorFlow's FloatToBuffer / DoubleToBuffer: the short form when it reads back as the same
    # value, else enough digits to round-trip ('%.6g' / '%.9g' for float, '%.15g' / '%.17g' for double).
    if np.isnan(v):
        return "-nan" if np.signbit(v) else "nan"
    if np.isinf(v):
        return "-inf" if v < 0 else "inf"
    text = "%.*g" % (digits, v)
    return text if cast(text) == v else "%.*g" % (more, v)


def _float_text(v):
    # float16 and bfloat16 print through float, as in TensorFlow.
    return _shortest(np.float32(v), np.float32, 6, 9)


def _double_text(v):
    return _shortest(float(v), float, 15, 17)


def _quoted(b):
    """A string element as tf.print shows it: in double quotes, without Python's b prefix."""
    return '"' + (b.decode("utf-8", "backslashreplace") if isinstance(b, bytes) else str(b)) + '"'
