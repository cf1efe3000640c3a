"""The harness of the tests of names added from TensorFlow (test_missing_*.py): each case is a
function whose result or error is compared with the one TensorFlow 2.21 gave for the same code."""
import numpy as np
import pytest

import tapejax as tf


def grad(f, *xs):
    xs = [tf.constant(x) for x in xs]
    with tf.GradientTape() as t:
        for x in xs: t.watch(x)
        y = f(*xs)
    return t.gradient(y, xs)


def _close(got, want):
    if isinstance(want, bytes):
        return got == want
    if isinstance(want, str):
        return str(got) == want or (want == "nan" and np.isnan(got))
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(_close(g, w) for g, w in zip(got, want))
    if isinstance(want, bool) or want is None:
        return got == want
    return bool(np.isclose(got, want, rtol=2e-5, atol=1e-6))


def check(case, want):
    """Asserts that ``case()`` gives ``want``: TF's value (a float32 tolerance) and dtype, or its
    exception class and the start of its message (``('EXC', class, text)``)."""
    if isinstance(want, tuple) and want[0] == "EXC":
        with pytest.raises(Exception) as e:
            case()
        assert type(e.value).__name__ == want[1] and " ".join(want[2].split()) in " ".join(str(e.value).split()), (type(e.value), str(e.value))
        return
    r = case()
    if want is None:
        assert r is None
        return
    if isinstance(r, tf.TensorShape):
        assert want[1] == "TensorShape" and (r.as_list() if r.rank is not None else None) == want[0]
        return
    if isinstance(r, (list, tuple)):
        got = [None if x is None else np.asarray(x).tolist() for x in r]
        assert _close(got, want), (got, want)
    else:
        assert str(getattr(r, 'dtype', '')) == want[1]
        got = np.asarray(r).tolist()
        assert _close(got, want[0]), (got, want[0])
