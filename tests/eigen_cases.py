"""Inputs for tests/test_eigen_math.py (NumPy only: /tmp/h11/record_eigen.py imports it to record
TensorFlow 2.21's outputs), and the digest both sides compare."""
import hashlib

import numpy as np

SPECIAL = np.array([0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-39, 88.72, 88.73, -103.9, -104,
                    -103.98, -87.5, 87.5, 3e38, -3e38, 1, -1, 7.9, -7.9, 8.1, 16.6, 16.7, -9.0, 20, -20],
                   np.float32)
RANGES = [("10", -10, 10), ("1", -1, 1), ("wide", -110, 90), ("pos", 1e-3, 100), ("tiny", -1e-6, 1e-6)]
SIZES = [1, 7, 9, 17, 1003]


def cases():
    """name -> float32 array: several value ranges and sizes (packets of 8 and a scalar tail),
    the special values, and a (53, 37) matrix given to the op transposed."""
    rng = np.random.RandomState(11)
    out = {}
    for name, lo, hi in RANGES:
        for n in SIZES:
            x = rng.uniform(lo, hi, n).astype(np.float32)
            if n > 100:
                x[rng.randint(0, n, len(SPECIAL))] = SPECIAL
            out[f"{name}_{n}"] = x
    out["special"] = SPECIAL
    out["transposed"] = rng.uniform(-10, 10, (53, 37)).astype(np.float32)
    return out


def digest(values):
    """SHA-256 (12 hex digits) of float32 values' bytes, every NaN made the same NaN."""
    v = np.array(values, np.float32)
    v[np.isnan(v)] = np.nan
    return hashlib.sha256(v.tobytes()).hexdigest()[:12]
