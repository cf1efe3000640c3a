"""Inputs for tests/test_eigen_math.py (NumPy only: /tmp/h11/record_eigen.py imports it to record
TensorFlow 2.21's outputs), and the digest both sides compare."""
import hashlib

import numpy as np

SPECIAL = np.array([0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-39, 88.72, 88.73, -103.9, -104,
                    -103.98, -87.5, 87.5, 3e38, -3e38, 1, -1, 7.9, -7.9, 8.1, 16.6, 16.7, -9.0, 20, -20],
                   np.float32)
RANGES = [(-10, 10), (-1, 1), (-110, 90), (1e-3, 100), (-1e-6, 1e-6)]


def _mixed(rng, shape):
    """Values from the RANGES, each element from one picked at random."""
    lo, hi = np.array(RANGES).T[:, rng.randint(0, len(RANGES), shape)]
    return rng.uniform(lo, hi).astype(np.float32)


def cases():
    """name -> float32 array: packets of 8 and a scalar tail of 3 (1003 elements, the special
    values among them), a tail of 7 (15), one element, the special values (27: their last 3
    on the tail), and a (11, 13) matrix given to the op transposed (143: a tail of 7)."""
    rng = np.random.RandomState(11)
    big = _mixed(rng, 1003)
    big[rng.randint(0, 1003, len(SPECIAL))] = SPECIAL
    return {"mixed_1003": big, "mixed_15": _mixed(rng, 15), "one": _mixed(rng, 1), "special": SPECIAL,
            "transposed": _mixed(rng, (11, 13))}


def digest(values):
    """SHA-256 (12 hex digits) of float32 values' bytes, every NaN made the same NaN."""
    v = np.array(values, np.float32)
    v[np.isnan(v)] = np.nan
    return hashlib.sha256(v.tobytes()).hexdigest()[:12]


def cotangent(x):
    """The output gradient the gradient tests feed back for input ``x``."""
    return np.random.RandomState(x.size).uniform(-2, 2, x.shape).astype(np.float32)
