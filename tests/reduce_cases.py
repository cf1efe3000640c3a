"""Inputs for tests/test_eigen_reduce.py (NumPy only: /tmp/h12/record_reduce.py imports it to
record TensorFlow 2.21's outputs, single-threaded, softmax with TF_ENABLE_ONEDNN_OPTS=0), and the digest both sides compare."""
import hashlib

import numpy as np

FULL_SIZES = [1, 2, 3, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 63, 64, 65, 100, 1000, 4099, 8193, 20001, 100003]
# (shape, axis, keepdims)
AXES = [((3, 4, 5), None, False), ((7, 33, 9), None, True), ((5, 3), 1, False), ((5, 17), 1, False),
        ((4, 100), -1, True), ((3, 1000), 1, False), ((3, 9000), 1, False), ((2, 3, 50), -1, False),
        ((3, 5), 0, False), ((16, 9), 0, False), ((17, 33), 0, False), ((40, 5), 0, True),
        ((100, 12), 0, False), ((3, 20, 10), 1, False), ((4, 40, 12), 1, True), ((5, 17, 3), 1, False),
        ((5, 4, 7), (0, 2), False), ((3, 4, 5, 6), (0, 2), False), ((3, 4, 5, 6), (1, 3), True),
        ((2, 3, 4, 5), (1, 2), False), ((1,), None, False), ((5, 1), 1, False), ((1, 100), 1, False),
        ((20, 1, 3), (0, 1), False)]
SOFTMAX = [((1,), -1), ((4, 1), -1), ((5, 3), -1), ((3, 10), -1), ((2, 33), -1), ((6, 100), -1),
           ((2, 1000), -1), ((2, 3, 20), -1), ((12, 5), 0), ((2, 9, 3), 1)]
SPECIAL = {"negzero": np.array([-0.0] * 20), "inf": np.array([1.0, np.inf] + [2.0] * 20),
           "nan": np.array([1.0] * 30 + [np.nan]), "cancel": np.array([1e30, 1.0, -1e30] * 11)}


def full_cases(dtype):
    rng = np.random.RandomState(12 if dtype == np.float32 else 13)
    out = {f"n{n}": (rng.randn(n) * np.exp(rng.randn(n) * 2)).astype(dtype) for n in FULL_SIZES}
    out.update({k: v.astype(dtype) for k, v in SPECIAL.items()})
    return out


def axis_cases(dtype):
    rng = np.random.RandomState(14 if dtype == np.float32 else 15)
    return [(rng.randn(*shape) * np.exp(rng.randn(*shape))).astype(dtype) for shape, _, _ in AXES]


def softmax_cases(dtype):
    rng = np.random.RandomState(16 if dtype == np.float32 else 17)
    return [(rng.randn(*shape) * 4).astype(dtype) for shape, _ in SOFTMAX]


def cotangent(x):
    return np.random.RandomState(x.size).uniform(-2, 2, x.shape).astype(x.dtype)


def digest(values):
    """SHA-256 (12 hex digits) of the values' bytes (each as its own dtype), NaNs made one NaN."""
    h = hashlib.sha256()
    for v in values:
        v = np.array(v)
        if v.dtype.kind == "f":
            v[np.isnan(v)] = np.nan
        h.update(v.tobytes())
    return h.hexdigest()[:12]
