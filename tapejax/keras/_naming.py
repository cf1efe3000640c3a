"""Keras 3's automatic names: one per-process counter per snake-case base name, shared by layers,
models and optimizers (``dense``, ``dense_1``; ``adam``, ``adam_1``); ``clear_session`` resets it."""
import collections
import re

_uids = collections.defaultdict(int)


def _to_snake_case(name):
    # Keras's own rule, so Conv2D -> conv2d, ReLU -> re_lu, BatchNormalization -> batch_normalization.
    s = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    s = re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()
    return s if s[0] != "_" else "private" + s


def unique_name(base):
    """``base``, then ``base_1``, ``base_2``... (Keras's layer naming)."""
    n = _uids[base]
    _uids[base] = n + 1
    return base if n == 0 else f"{base}_{n}"


def reset_uids():
    _uids.clear()
