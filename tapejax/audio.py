"""tf.audio: 16-bit PCM WAV files to float tensors and back, as TensorFlow 2.21's ``DecodeWav`` /
``EncodeWav`` kernels (samples scaled by 1/32768; ``desired_channels`` and ``desired_samples``).

The codecs run on the host in NumPy, where string tensors live (``tapejax._core.host`` records
them into a ``tf.function`` or a ``tf.data.Dataset.map``).

Example:
    >>> import tapejax as tf
    >>> wav = tf.audio.encode_wav(tf.constant([[0.0], [0.5], [-0.5]]), sample_rate=16000)
    >>> audio, rate = tf.audio.decode_wav(wav)
    >>> audio.numpy().ravel().tolist(), int(rate)
    ([0.0, 0.5, -0.5], 16000)
"""
import collections as _collections
import struct as _struct

import numpy as _np

from . import errors as _errors
from ._core import dtypes as _dtypes, host as _host
from ._core.tensor import Tensor as _Tensor, _TensorBase, string_array as _string_array
from .ops.array_ops import convert_to_tensor as _convert

__all__ = ["decode_wav", "encode_wav"]

_DecodeWav = _collections.namedtuple("DecodeWav", ["audio", "sample_rate"])


def _bad(message, op="DecodeWav"):
    return _errors.InvalidArgumentError(None, None, f"{message} [Op:{op}]")


class _Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, n):
        if self.pos + n > len(self.data):
            raise _bad("Data too short when trying to read string")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def tag(self, expected):
        found = self.take(4)
        if found != expected:
            raise _bad(f"Header mismatch: Expected {expected.decode()} but found {found.decode('latin-1')}")

    def u32(self):
        return _struct.unpack("<I", self.take(4))[0]

    def u16(self):
        return _struct.unpack("<H", self.take(2))[0]


def _parse(data):
    """(int16 samples ``[frames, channels]``, sample rate) of a WAV file's bytes."""
    r = _Reader(data)
    r.tag(b"RIFF")
    r.u32()
    r.tag(b"WAVE")
    r.tag(b"fmt ")
    fmt_size = r.u32()
    if fmt_size not in (16, 18, 40):
        raise _bad(f"Bad fmt chunk size for WAV: Expected 16 or 18, but got{fmt_size}")
    fmt = r.u16()
    if fmt not in (1, 0xFFFE):
        raise _bad(f"Bad audio format for WAV: Expected 1 (PCM), but got{fmt}")
    channels, rate = r.u16(), r.u32()
    r.u32()
    r.u16()
    bits = r.u16()
    if bits != 16:
        raise _bad(f"Can only read 16-bit WAV files, but received {bits}")
    r.take(fmt_size - 16)
    while True:
        chunk, size = r.take(4), r.u32()
        if chunk == b"data":
            body = r.take(size)
            break
        r.take(size)
    samples = _np.frombuffer(body[:len(body) // 2 * 2], "<i2")
    return samples[:len(samples) // channels * channels].reshape(-1, channels), rate


def _decode(contents, desired_channels, desired_samples):
    data = bytes(_string_array(_np.asarray(contents._value))[()])
    samples, rate = _parse(data)
    audio = samples.astype(_np.float32) / _np.float32(32768.0)
    channels = desired_channels if desired_channels > 0 else audio.shape[1]
    if audio.shape[1] >= channels:
        audio = audio[:, :channels]
    else:
        audio = _np.concatenate([audio, _np.repeat(audio[:, -1:], channels - audio.shape[1], axis=1)], axis=1)
    if desired_samples > 0:
        audio = audio[:desired_samples] if len(audio) >= desired_samples else _np.pad(
            audio, [(0, desired_samples - len(audio)), (0, 0)])
    return _Tensor(_np.ascontiguousarray(audio, _np.float32)), _Tensor(_np.int32(rate))


def decode_wav(contents, desired_channels=-1, desired_samples=-1, name=None):
    """Decodes a 16-bit PCM WAV file (a scalar string tensor or bytes) to ``DecodeWav(audio,
    sample_rate)`` (``tf.audio.decode_wav``): ``audio`` float32 ``[samples, channels]`` in [-1, 1)
    (each sample / 32768), ``sample_rate`` an int32 scalar. ``desired_channels`` keeps the first
    channels, or repeats the last one; ``desired_samples`` cuts or zero-pads.

    Example:
        >>> import tapejax as tf
        >>> wav = tf.audio.encode_wav(tf.constant([[0.25, -0.25], [0.5, -0.5]]), 8000)
        >>> tf.audio.decode_wav(wav, desired_channels=1, desired_samples=3).audio.numpy().tolist()
        [[0.25], [0.5], [0.0]]
    """
    contents = _convert(contents, dtype=_dtypes.string) if not isinstance(contents, _TensorBase) else contents
    if contents.dtype != _dtypes.string:
        raise _errors.InvalidArgumentError(None, None, (
            f"cannot compute DecodeWav as input #0(zero-based) was expected to be a string tensor but is a "
            f"{contents.dtype.name} tensor [Op:DecodeWav] name: "))
    out = _host.call("DecodeWav", _decode, contents, int(desired_channels), int(desired_samples))
    return _DecodeWav(*out)


def _encode(audio, sample_rate):
    a = _np.asarray(audio._value, _np.float32)
    if a.ndim != 2:
        raise _bad(f"audio must be 2-dimensional[{','.join(str(d) for d in a.shape)}]", "EncodeWav")
    rate = int(_np.asarray(sample_rate._value))
    x = _np.clip(a, -1.0, 1.0) * _np.float32(32768.0)
    pcm = _np.clip(_np.sign(x) * _np.floor(_np.abs(x) + _np.float32(0.5)), -32768, 32767).astype("<i2")
    channels, data = a.shape[1], pcm.tobytes()
    header = (b"RIFF" + _struct.pack("<I", 36 + len(data)) + b"WAVE" + b"fmt " +
              _struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * channels * 2, channels * 2, 16) +
              b"data" + _struct.pack("<I", len(data)))
    out = _np.empty((), object)
    out[()] = header + data
    return _Tensor(_string_array(out))


def encode_wav(audio, sample_rate, name=None):
    """Encodes float32 ``audio`` (``[samples, channels]``, clipped to [-1, 1]) as a 16-bit PCM WAV
    file at ``sample_rate`` (``tf.audio.encode_wav``): a scalar string tensor. Samples are
    ``round(x * 32768)``, clamped to the int16 range, as TensorFlow.

    Example:
        >>> import tapejax as tf
        >>> wav = tf.audio.encode_wav(tf.zeros([4, 1]), 16000)
        >>> len(wav.numpy()), wav.numpy()[:4]
        (52, b'RIFF')
    """
    audio = _convert(audio)
    if audio.dtype != _dtypes.float32:
        raise _errors.InvalidArgumentError(None, None, (
            f"cannot compute EncodeWav as input #0(zero-based) was expected to be a float tensor but is a "
            f"{audio.dtype.name} tensor [Op:EncodeWav] name: "))
    return _host.call("EncodeWav", _encode, audio, _convert(sample_rate, dtype=_dtypes.int32))


from ._missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("tapejax.audio")
