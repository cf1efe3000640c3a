"""The CIFAR batch files: Python pickles of ``{b"data": uint8 (N, 3072), b"<labels>": [...]}``."""
import pickle

import numpy as np

# The pickles hold numpy arrays and lists only; anything else (a tampered file's gadget) is refused,
# with Keras's message.
_ALLOWED = frozenset({("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.multiarray", "_reconstruct"),
                      ("numpy._core.multiarray", "_reconstruct")})


class _RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"Refusing to deserialize `{module}.{name}` while loading a Keras dataset. "
                                     "The file may be corrupted or malicious.")


def load_batch(fpath, label_key="labels"):
    """Returns ``(data, labels)`` of one batch file: data uint8 ``(N, 3, 32, 32)``, labels a list."""
    with open(fpath, "rb") as f:
        d = _RestrictedUnpickler(f, encoding="bytes").load()
    d = {k.decode("utf8"): v for k, v in d.items()}
    data = d["data"]
    return data.reshape(data.shape[0], 3, 32, 32), d[label_key]


def channels_last(x):
    return x.transpose(0, 2, 3, 1)
