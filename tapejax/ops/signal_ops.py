"""tf.signal rows of the op table: FFTs (``fft``/``ifft``/``rfft``/``irfft`` of rank 1, 2 and 3,
``fftshift``), framing (``frame``, ``overlap_and_add``), windows, ``stft``/``inverse_stft``, the mel
filterbank, the DCT and MFCCs, as TensorFlow 2.21's ``tensorflow/python/ops/signal`` defines them.

The transforms are ``jnp.fft`` in ``defop`` rows; lengths, steps and axes are static arguments
(Python ints, or tensors whose values are known while tracing, as TensorFlow's constant folding
needs them for static shapes). Gradients are JAX's: every op here is linear (or a composition of
linear ops with elementwise ones), where TensorFlow's registered gradients are the same adjoints.
Windows and the mel matrix are computed in NumPy in the requested dtype with TensorFlow's order of
operations.
"""
import math as _math

import jax.numpy as jnp
import numpy as np

from .._core import dtypes as _dtypes
from .._core.engine import known_value
from .._core.tensor import Tensor, _TensorBase
from ..errors import InvalidArgumentError
from ..extend import defop
from .namespaces import export
from .array_ops import convert_to_tensor
from .math_ops import multiply

_REAL_OF = {np.dtype(np.complex64): _dtypes.float32, np.dtype(np.complex128): _dtypes.float64}
_COMPLEX_OF = {np.dtype(np.float32): _dtypes.complex64, np.dtype(np.float64): _dtypes.complex128}


def _static_int(value, what):
    """``value`` as a Python int: a number, or a tensor whose value is known (also while tracing)."""
    v = known_value(value)
    if v is None:
        raise ValueError(f"tf.signal needs a static {what} (a Python int, or a tensor whose value is known "
                         f"while tracing); got {value!r}.")
    if np.ndim(v) != 0:
        raise ValueError(f"Shape {tuple(np.shape(v))} must have rank 0")
    return int(v)


def _static_ints(value, what):
    v = known_value(value)
    if v is None:
        raise ValueError(f"tf.signal needs a static {what} (Python ints, or a tensor whose value is known "
                         f"while tracing); got {value!r}.")
    return tuple(int(i) for i in np.reshape(v, [-1]))


def _np(dtype):
    return np.dtype(_dtypes.np_dtype(dtype))


# --- FFTs -------------------------------------------------------------------------------------

def _axes(rank):
    return tuple(range(-rank, 0))


_fftn = defop(lambda x, rank: jnp.fft.fftn(x, axes=_axes(rank)), name="fft", static=("rank",))
_ifftn = defop(lambda x, rank: jnp.fft.ifftn(x, axes=_axes(rank)), name="ifft", static=("rank",))
_rfftn = defop(lambda x, fft_length: jnp.fft.rfftn(x, s=fft_length, axes=_axes(len(fft_length))),
               name="rfft", static=("fft_length",))
_irfftn = defop(lambda x, fft_length: jnp.fft.irfftn(x, s=fft_length, axes=_axes(len(fft_length))),
                name="irfft", static=("fft_length",))


def _shape_str(shape):
    return "[" + ",".join("?" if d is None else str(d) for d in shape.as_list()) + "]"


def _complex_wrapper(op, rank, tf_name, inverse):
    def transform(input, name=None):  # noqa: A002  (TensorFlow's argument name)
        x = convert_to_tensor(input, dtype_hint=_dtypes.complex64)
        if not x.dtype.is_complex:
            raise InvalidArgumentError(None, None, (
                f"Value for attr 'Tcomplex' of {_dtypes.c_name(x.dtype)} is not in the list of allowed values: "
                f"complex64, complex128\n\t; NodeDef: {{{{node {tf_name}}}}}; Op<name={tf_name}; "
                f"signature=input:Tcomplex -> output:Tcomplex; attr=Tcomplex:type,default=DT_COMPLEX64,"
                f"allowed=[DT_COMPLEX64, DT_COMPLEX128]> [Op:{tf_name}] name: "))
        if x.shape.rank is not None and x.shape.rank < rank:
            raise InvalidArgumentError(None, None, f"Input must have rank of at least {rank} but got: "
                                                   f"{_shape_str(x.shape)} [Op:{tf_name}] name: ")
        return op(x, rank=rank)
    which = ("inverse " if inverse else "") + ("" if rank == 1 else f"{rank}-dimensional ")
    dims = "inner-most dimension" if rank == 1 else f"inner-most {rank} dimensions"
    transform.__name__ = tf_name.lower()
    transform.__doc__ = (
        f"The {which}discrete Fourier transform over the {dims} of a complex64/complex128 ``input`` "
        f"(``tf.signal.{transform.__name__}``)" + (", divided by the transform's size" if inverse else "") + ".\n\n"
        "    Example:\n"
        "        >>> import tapejax as tf\n"
        f"        >>> x = {'tf.reshape(' if rank > 1 else ''}tf.complex(tf.range(8.0), 0.0)"
        f"{', [2, 2, 2])' if rank == 3 else ', [2, 4])' if rank == 2 else ''}\n"
        f"        >>> tf.signal.{transform.__name__}(x).shape\n"
        f"        TensorShape([{', '.join(['2'] * rank) if rank == 3 else '2, 4' if rank == 2 else '8'}])\n")
    return transform


fft = export("signal.fft")(_complex_wrapper(_fftn, 1, "FFT", False))
ifft = export("signal.ifft")(_complex_wrapper(_ifftn, 1, "IFFT", True))
fft2d = export("signal.fft2d")(_complex_wrapper(_fftn, 2, "FFT2D", False))
ifft2d = export("signal.ifft2d")(_complex_wrapper(_ifftn, 2, "IFFT2D", True))
fft3d = export("signal.fft3d")(_complex_wrapper(_fftn, 3, "FFT3D", False))
ifft3d = export("signal.ifft3d")(_complex_wrapper(_ifftn, 3, "IFFT3D", True))


def _check_rank(x, rank):
    if x.shape.rank is not None and x.shape.rank < rank:
        raise ValueError(f"Shape {x.shape} must have rank at least {rank}")


def _rfft_wrapper(rank, tf_name):
    def rfft(input_tensor, fft_length=None, name=None):
        x = convert_to_tensor(input_tensor, dtype_hint=_dtypes.float32)
        if _np(x.dtype) not in _COMPLEX_OF:
            raise ValueError(f"RFFT requires tf.float32 or tf.float64 inputs, got: {x}")
        _check_rank(x, rank)
        length = tuple(x.shape.as_list()[-rank:]) if fft_length is None else _static_ints(fft_length, "fft_length")
        return _rfftn(x, fft_length=length)
    rfft.__name__ = tf_name
    shape, length = {1: ("[8]", "[5]"), 2: ("[2, 4]", "[2, 3]"), 3: ("[2, 2, 2]", "[2, 2, 2]")}[rank]
    rfft.__doc__ = (
        f"The {rank}-D discrete Fourier transform of a real ``input_tensor`` over its inner-most {rank} "
        f"dimension(s) (``tf.signal.{tf_name}``): float32 gives complex64, float64 complex128. ``fft_length`` "
        "(default: the input's inner sizes) crops or zero-pads the input; the innermost output size is "
        "``fft_length[-1] // 2 + 1``.\n\n"
        "    Example:\n"
        "        >>> import tapejax as tf\n"
        f"        >>> y = tf.signal.{tf_name}(tf.reshape(tf.range(8.0), {shape}))\n"
        "        >>> y.shape, y.dtype\n"
        f"        (TensorShape({length}), tf.complex64)\n")
    return rfft


def _irfft_wrapper(rank, tf_name):
    def irfft(input_tensor, fft_length=None, name=None):
        x = convert_to_tensor(input_tensor, dtype_hint=_dtypes.complex64)
        _check_rank(x, rank)
        if _np(x.dtype) not in _REAL_OF:
            raise ValueError(f"IRFFT requires tf.complex64 or tf.complex128 inputs, got: {x}")
        if fft_length is None:
            length = list(x.shape.as_list()[-rank:])
            length[-1] = max(0, 2 * (length[-1] - 1))
            length = tuple(length)
        else:
            length = _static_ints(fft_length, "fft_length")
        return _irfftn(x, fft_length=length)
    irfft.__name__ = tf_name
    rfft_name = "r" + tf_name[2:]
    irfft.__doc__ = (
        f"The inverse of ``tf.signal.{rfft_name}``: a real signal from the non-negative frequencies of its "
        f"{rank}-D transform (``tf.signal.{tf_name}``). ``fft_length`` (default: inner sizes, the last "
        "``2 * (n - 1)``) is the output's inner size; the input is cropped or zero-padded to "
        "``fft_length[-1] // 2 + 1``.\n\n"
        "    Example:\n"
        "        >>> import tapejax as tf\n"
        "        >>> x = tf.constant([1.0, 2.0, 3.0, 4.0])\n"
        + ("        >>> tf.signal.irfft(tf.signal.rfft(x)).numpy().tolist()\n"
           "        [1.0, 2.0, 3.0, 4.0]\n" if rank == 1 else
           f"        >>> x = tf.reshape(x, [{', '.join(['1'] * (rank - 1))}, 4])\n"
           f"        >>> tf.signal.{tf_name}(tf.signal.{rfft_name}(x)).shape\n"
           f"        TensorShape([{', '.join(['1'] * (rank - 1))}, 4])\n"))
    return irfft


rfft = export("signal.rfft")(_rfft_wrapper(1, "rfft"))
irfft = export("signal.irfft")(_irfft_wrapper(1, "irfft"))
rfft2d = export("signal.rfft2d")(_rfft_wrapper(2, "rfft2d"))
irfft2d = export("signal.irfft2d")(_irfft_wrapper(2, "irfft2d"))
rfft3d = export("signal.rfft3d")(_rfft_wrapper(3, "rfft3d"))
irfft3d = export("signal.irfft3d")(_irfft_wrapper(3, "irfft3d"))


def _shift_axes(x, axes):
    if axes is None:
        return None
    return _static_ints(axes, "axes")


_fftshift = defop(lambda x, axes: jnp.fft.fftshift(x, axes), name="fftshift", static=("axes",))
_ifftshift = defop(lambda x, axes: jnp.fft.ifftshift(x, axes), name="ifftshift", static=("axes",))


@export("signal.fftshift")
def fftshift(x, axes=None, name=None):
    """Moves the zero-frequency term to the centre of ``axes`` (all axes by default;
    ``tf.signal.fftshift``): a roll by ``n // 2`` along each.

    Example:
        >>> import tapejax as tf
        >>> tf.signal.fftshift(tf.constant([0, 1, 2, -2, -1])).numpy().tolist()
        [-2, -1, 0, 1, 2]
    """
    x = convert_to_tensor(x)
    return _fftshift(x, axes=_shift_axes(x, axes))


@export("signal.ifftshift")
def ifftshift(x, axes=None, name=None):
    """The inverse of ``tf.signal.fftshift`` (a roll by ``-(n // 2)`` along each of ``axes``).

    Example:
        >>> import tapejax as tf
        >>> tf.signal.ifftshift(tf.constant([-2, -1, 0, 1, 2])).numpy().tolist()
        [0, 1, 2, -2, -1]
    """
    x = convert_to_tensor(x)
    return _ifftshift(x, axes=_shift_axes(x, axes))


# --- frames -----------------------------------------------------------------------------------

def _frame_fn(x, frame_length, frame_step, pad_end, pad_value, axis):
    n = x.shape[axis]
    if pad_end:
        num_frames = max(0, -(-n // frame_step))
        pad = max(0, frame_length + frame_step * (num_frames - 1) - n)
        widths = [(0, 0)] * x.ndim
        widths[axis] = (0, pad)
        x = jnp.pad(x, widths, constant_values=jnp.asarray(pad_value, x.dtype))
    else:
        num_frames = max(0, (n - frame_length + frame_step) // frame_step)
    index = np.arange(num_frames)[:, None] * frame_step + np.arange(frame_length)[None, :]
    return jnp.take(x, index.reshape(num_frames, frame_length), axis=axis)


_frame = defop(_frame_fn, name="frame", static=("frame_length", "frame_step", "pad_end", "pad_value", "axis"))


@export("signal.frame")
def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """Splits ``axis`` of ``signal`` into frames of ``frame_length`` samples, ``frame_step`` apart
    (``tf.signal.frame``): that axis becomes ``[num_frames, frame_length]``. Without ``pad_end``
    the frames that do not fit are dropped; with it the end is padded with ``pad_value``.

    Example:
        >>> import tapejax as tf
        >>> tf.signal.frame(tf.range(6), frame_length=3, frame_step=2).numpy().tolist()
        [[0, 1, 2], [2, 3, 4]]
        >>> tf.signal.frame(tf.range(6), 3, 2, pad_end=True, pad_value=-1).numpy().tolist()
        [[0, 1, 2], [2, 3, 4], [4, 5, -1]]
    """
    x = convert_to_tensor(signal)
    if x.shape.rank == 0:
        raise ValueError("Shape () must have rank at least 1")
    length, step = _static_int(frame_length, "frame_length"), _static_int(frame_step, "frame_step")
    ax = range(x.shape.rank)[_static_int(axis, "axis")]
    value = known_value(pad_value) if pad_end else 0
    if value is None:
        raise ValueError("tf.signal.frame needs a pad_value known while tracing.")
    return _frame(x, frame_length=length, frame_step=step, pad_end=bool(pad_end),
                  pad_value=np.asarray(value).item(), axis=ax)


def _overlap_and_add_fn(x, frame_step):
    frames, length = x.shape[-2], x.shape[-1]
    out_len = length + frame_step * (frames - 1) if frames else 0
    if frame_step == length:
        return x.reshape(x.shape[:-2] + (out_len,))
    index = np.arange(frames)[:, None] * frame_step + np.arange(length)[None, :]
    out = jnp.zeros(x.shape[:-2] + (out_len,), x.dtype)
    return out.at[..., index].add(x)


_overlap_and_add = defop(_overlap_and_add_fn, name="overlap_and_add", static=("frame_step",))


@export("signal.overlap_and_add")
def overlap_and_add(signal, frame_step, name=None):
    """Sums the frames of ``signal`` (``[..., frames, frame_length]``), each ``frame_step`` after the
    previous one, into ``[..., (frames - 1) * frame_step + frame_length]``
    (``tf.signal.overlap_and_add``; the inverse of ``tf.signal.frame`` up to the overlaps).

    Example:
        >>> import tapejax as tf
        >>> tf.signal.overlap_and_add(tf.ones([3, 4]), frame_step=2).numpy().tolist()
        [1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 1.0, 1.0]
    """
    x = convert_to_tensor(signal)
    if x.shape.rank is not None and x.shape.rank < 2:
        raise ValueError(f"Shape {x.shape} must have rank at least 2")
    step_dtype = convert_to_tensor(frame_step).dtype
    if not step_dtype.is_integer:
        raise ValueError(f"frame_step must be an integer. Got {step_dtype}")
    return _overlap_and_add(x, frame_step=_static_int(frame_step, "frame_step"))


# --- windows ----------------------------------------------------------------------------------

def _window_params(window_length, dtype):
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype}")
    return _static_int(window_length, "window_length"), dtype, _np(dtype).type


def _raised_cosine(window_length, periodic, dtype, a, b):
    n, dtype, t = _window_params(window_length, dtype)
    if n == 1:
        return Tensor(np.ones([1], t))
    periodic = int(bool(known_value(periodic)))
    count = np.arange(n).astype(t)
    cos_arg = t(2 * np.pi) * count / t(n + periodic * (1 - n % 2) - 1)
    return Tensor(jnp.asarray((t(a) - t(b) * np.cos(cos_arg)).astype(t)))


@export("signal.hann_window")
def hann_window(window_length, periodic=True, dtype=_dtypes.float32, name=None):
    """The Hann window ``0.5 - 0.5 * cos(2 pi n / N)`` of ``window_length`` samples
    (``tf.signal.hann_window``); ``N`` is ``window_length`` when ``periodic`` (for spectral
    analysis), ``window_length - 1`` otherwise (symmetric, for filter design).

    Example:
        >>> import tapejax as tf
        >>> tf.signal.hann_window(4).numpy().tolist()
        [0.0, 0.5, 1.0, 0.5]
    """
    return _raised_cosine(window_length, periodic, dtype, 0.5, 0.5)


@export("signal.hamming_window")
def hamming_window(window_length, periodic=True, dtype=_dtypes.float32, name=None):
    """The Hamming window ``0.54 - 0.46 * cos(2 pi n / N)`` (``tf.signal.hamming_window``;
    ``periodic`` as ``tf.signal.hann_window``).

    Example:
        >>> import tapejax as tf
        >>> [round(v, 2) for v in tf.signal.hamming_window(4).numpy().tolist()]
        [0.08, 0.54, 1.0, 0.54]
    """
    return _raised_cosine(window_length, periodic, dtype, 0.54, 0.46)


@export("signal.vorbis_window")
def vorbis_window(window_length, dtype=_dtypes.float32, name=None):
    """The Vorbis power-complementary window ``sin(pi/2 sin(pi (n + 0.5) / N)^2)``
    (``tf.signal.vorbis_window``).

    Example:
        >>> import tapejax as tf
        >>> [round(v, 4) for v in tf.signal.vorbis_window(4).numpy().tolist()]
        [0.228, 0.9737, 0.9737, 0.228]
    """
    n, dtype, t = _window_params(window_length, dtype)
    arg = np.arange(n).astype(t)
    return Tensor(jnp.asarray(np.sin(t(np.pi / 2.0) * np.sin(t(np.pi) / t(n) * (arg + t(0.5))) ** 2).astype(t)))


@export("signal.kaiser_window")
def kaiser_window(window_length, beta=12.0, dtype=_dtypes.float32, name=None):
    """The Kaiser window ``I0(beta sqrt(1 - (2n/(N-1) - 1)^2)) / I0(beta)``
    (``tf.signal.kaiser_window``).

    Example:
        >>> import tapejax as tf
        >>> [round(v, 4) for v in tf.signal.kaiser_window(4, beta=2.0).numpy().tolist()]
        [0.4387, 0.9243, 0.9243, 0.4387]
    """
    import jax.scipy.special as _special
    n, dtype, t = _window_params(window_length, dtype)
    if n == 1:
        return Tensor(np.ones([1], t))
    half = (np.float32(n) - np.float32(1.0)) / np.float32(2.0)
    arg = np.arange(-half, half + np.float32(0.1), dtype=np.float32).astype(t)
    beta, half = t(beta), t(half)
    num = beta * np.sqrt(np.maximum(t(1.0) - np.square(arg / half), t(0)))
    window = jnp.exp(num - beta) * (_special.i0e(jnp.asarray(num)) / _special.i0e(jnp.asarray(beta)))
    return Tensor(window.astype(t))


@export("signal.kaiser_bessel_derived_window")
def kaiser_bessel_derived_window(window_length, beta=12.0, dtype=_dtypes.float32, name=None):
    """The Kaiser-Bessel-derived window (``tf.signal.kaiser_bessel_derived_window``): the square
    root of the cumulative Kaiser window of ``window_length // 2 + 1`` samples, mirrored.

    Example:
        >>> import tapejax as tf
        >>> tf.signal.kaiser_bessel_derived_window(6).shape
        TensorShape([6])
    """
    n, dtype, t = _window_params(window_length, dtype)
    kaiser = np.asarray(kaiser_window(n // 2 + 1, beta, dtype).numpy())
    csum = np.cumsum(kaiser, dtype=t)
    half = np.sqrt(csum[:-1] / csum[-1])
    return Tensor(jnp.asarray(np.concatenate([half, half[::-1]]).astype(t)))


class _Default:
    """A function default with a stable ``repr`` (the API snapshot records signatures)."""

    def __init__(self, fn, name):
        self._fn, self._name = fn, name

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __repr__(self):
        return self._name


_HANN = _Default(hann_window, "tf.signal.hann_window")


# --- STFT -------------------------------------------------------------------------------------

def _enclosing_power_of_two(value):
    return int(2 ** np.ceil(np.log(value) / np.log(2.0)))


@export("signal.stft")
def stft(signals, frame_length, frame_step, fft_length=None, window_fn=_HANN, pad_end=False, name=None):
    """The short-time Fourier transform of ``signals`` (``[..., samples]``, float32/float64)
    (``tf.signal.stft``): frames of ``frame_length`` every ``frame_step`` samples, times
    ``window_fn(frame_length, dtype=...)`` (a periodic Hann window by default; None for none),
    each ``rfft``'d to ``fft_length`` (default: the smallest power of 2 >= ``frame_length``).
    Returns ``[..., frames, fft_length // 2 + 1]`` complex values.

    Example:
        >>> import tapejax as tf
        >>> waveform = tf.sin(tf.range(16000.0) * 0.05)
        >>> spectrogram = tf.abs(tf.signal.stft(waveform, frame_length=255, frame_step=128))
        >>> spectrogram.shape
        TensorShape([124, 129])
    """
    x = convert_to_tensor(signals)
    if x.shape.rank == 0:
        raise ValueError("Shape () must have rank at least 1")
    length = _static_int(frame_length, "frame_length")
    n_fft = _enclosing_power_of_two(length) if fft_length is None else _static_int(fft_length, "fft_length")
    framed = frame(x, length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        framed = multiply(framed, window_fn(length, dtype=framed.dtype))
    return rfft(framed, [n_fft])


_fit_last = defop(lambda x, n: x[..., :n] if x.shape[-1] >= n else
                  jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, n - x.shape[-1])]), name="fit_last", static=("n",))


@export("signal.inverse_stft")
def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=_HANN, name=None):
    """The inverse of ``tf.signal.stft`` (``tf.signal.inverse_stft``): each frame ``irfft``'d,
    cut or padded to ``frame_length``, times ``window_fn(frame_length, dtype=...)`` and
    overlap-added. For perfect reconstruction pass
    ``window_fn=tf.signal.inverse_stft_window_fn(frame_step)``.

    Example:
        >>> import tapejax as tf
        >>> x = tf.sin(tf.range(64.0) * 0.3)
        >>> s = tf.signal.stft(x, 16, 4)
        >>> y = tf.signal.inverse_stft(s, 16, 4, window_fn=tf.signal.inverse_stft_window_fn(4))
        >>> y.shape, bool(tf.reduce_max(tf.abs(y[12:-12] - x[12:-12])) < 1e-5)
        (TensorShape([64]), True)
    """
    s = convert_to_tensor(stfts)
    if s.shape.rank is not None and s.shape.rank < 2:
        raise ValueError(f"Shape {s.shape} must have rank at least 2")
    length = _static_int(frame_length, "frame_length")
    n_fft = _enclosing_power_of_two(length) if fft_length is None else _static_int(fft_length, "fft_length")
    frames = _fit_last(irfft(s, [n_fft]), n=length)
    if window_fn is not None:
        frames = multiply(frames, window_fn(length, dtype=_REAL_OF[_np(s.dtype)]))
    return overlap_and_add(frames, frame_step)


@export("signal.inverse_stft_window_fn")
def inverse_stft_window_fn(frame_step, forward_window_fn=_HANN, name=None):
    """A ``window_fn`` for ``tf.signal.inverse_stft`` that inverts ``forward_window_fn``'s
    windowing at ``frame_step`` (``tf.signal.inverse_stft_window_fn``): the forward window
    divided by the overlapping sum of its squares.

    Example:
        >>> import tapejax as tf
        >>> [round(v, 3) for v in tf.signal.inverse_stft_window_fn(2)(4, tf.float32).numpy().tolist()]
        [0.0, 1.0, 1.0, 1.0]
    """
    def inverse_stft_window_fn_inner(frame_length, dtype):
        step = _static_int(frame_step, "frame_step")
        length = _static_int(frame_length, "frame_length")
        forward = np.asarray(convert_to_tensor(forward_window_fn(length, dtype=dtype)).numpy())
        denom = np.square(forward)
        overlaps = -(-length // step)
        denom = np.pad(denom, [(0, overlaps * step - length)])
        denom = np.tile(denom.reshape(overlaps, step).sum(0, keepdims=True, dtype=denom.dtype), [overlaps, 1])
        denom = denom.reshape(overlaps * step)[:length]
        with np.errstate(divide="ignore", invalid="ignore"):
            window = np.where(denom == 0, np.zeros_like(forward), forward / denom)
        return Tensor(jnp.asarray(window.astype(forward.dtype)))
    return inverse_stft_window_fn_inner


# --- mel filterbank, DCT, MFCCs ---------------------------------------------------------------

def _linspace(start, stop, num, t):
    out = np.empty([num], t)
    if num == 1:
        out[0] = start
        return out
    step = t((stop - start) / t(num - 1))
    out[:-1] = start + step * np.arange(num - 1).astype(t)
    out[-1] = stop
    return out


def _hertz_to_mel(f, t):
    return t(1127.0) * np.log(t(1.0) + f / t(700.0))


@export("signal.linear_to_mel_weight_matrix")
def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000, lower_edge_hertz=125.0,
                                upper_edge_hertz=3800.0, dtype=_dtypes.float32, name=None):
    """The ``[num_spectrogram_bins, num_mel_bins]`` matrix of triangular mel filters
    (``tf.signal.linear_to_mel_weight_matrix``, HTK's mel scale ``1127 ln(1 + f / 700)``): multiply a
    linear-frequency magnitude spectrogram by it to get a mel spectrogram. The DC bin gets no weight.

    Example:
        >>> import tapejax as tf
        >>> m = tf.signal.linear_to_mel_weight_matrix(num_mel_bins=40, num_spectrogram_bins=129,
        ...                                           sample_rate=16000, lower_edge_hertz=20.0,
        ...                                           upper_edge_hertz=8000.0)
        >>> m.shape, m.dtype
        (TensorShape([129, 40]), tf.float32)
    """
    if isinstance(sample_rate, _TensorBase) and known_value(sample_rate) is not None:
        sample_rate = known_value(sample_rate).item()
    if num_mel_bins <= 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {num_mel_bins}")
    if lower_edge_hertz < 0.0:
        raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lower_edge_hertz}")
    if lower_edge_hertz >= upper_edge_hertz:
        raise ValueError("lower_edge_hertz %.1f >= upper_edge_hertz %.1f" % (lower_edge_hertz, upper_edge_hertz))
    if sample_rate <= 0.0:
        raise ValueError(f"sample_rate must be positive. Got: {sample_rate}")
    if upper_edge_hertz > sample_rate / 2:
        raise ValueError("upper_edge_hertz must not be larger than the Nyquist frequency (sample_rate / 2). "
                         f"Got {upper_edge_hertz} for sample_rate: {sample_rate}")
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Got: {dtype}")
    t = _np(dtype).type
    nyquist = t(sample_rate) / t(2.0)
    freqs = _linspace(t(0.0), nyquist, num_spectrogram_bins, t)[1:]
    bins_mel = _hertz_to_mel(freqs, t)[:, None]
    edges = _linspace(_hertz_to_mel(t(lower_edge_hertz), t), _hertz_to_mel(t(upper_edge_hertz), t), num_mel_bins + 2, t)
    lower, center, upper = edges[None, :-2], edges[None, 1:-1], edges[None, 2:]
    with np.errstate(divide="ignore", invalid="ignore"):
        weights = np.maximum(t(0.0), np.minimum((bins_mel - lower) / (center - lower), (upper - bins_mel) / (upper - center)))
    return Tensor(jnp.asarray(np.pad(weights.astype(t), [(1, 0), (0, 0)])))


def _dct_fn(x, type, n, norm):  # noqa: A002  (TensorFlow's argument name)
    if n is not None:
        x = x[..., :n] if n <= x.shape[-1] else jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, n - x.shape[-1])])
    dim = x.shape[-1]
    t = x.dtype.type
    dimf = t(dim)
    if type == 1:
        return jnp.real(jnp.fft.rfft(jnp.concatenate([x, x[..., -2:0:-1]], axis=-1)))
    if type == 2:
        scale = 2.0 * jnp.exp(1j * (-np.arange(dim).astype(t) * t(_math.pi) * t(0.5) / dimf)).astype(
            jnp.result_type(x.dtype, jnp.complex64))
        out = jnp.real(jnp.fft.rfft(x, n=2 * dim)[..., :dim] * scale)
        if norm == "ortho":
            n1 = t(0.5) / np.sqrt(dimf)
            out = out * np.concatenate([[n1], np.full([dim - 1], n1 * t(_math.sqrt(2.0)), t)]).astype(t)
        return out
    if type == 3:
        if norm == "ortho":
            n1 = np.sqrt(dimf)
            x = x * np.concatenate([[n1], np.full([dim - 1], n1 * t(_math.sqrt(0.5)), t)]).astype(t)
        else:
            x = x * dimf
        scale = 2.0 * jnp.exp(1j * (np.arange(dim).astype(t) * t(_math.pi) * t(0.5) / dimf)).astype(
            jnp.result_type(x.dtype, jnp.complex64))
        return jnp.fft.irfft(scale * x.astype(scale.dtype), n=2 * dim)[..., :dim]
    out = _dct_fn(x, 2, 2 * dim, None)[..., 1::2]
    if norm == "ortho":
        out = out * (t(_math.sqrt(0.5)) / np.sqrt(dimf))
    return out


_dct = defop(_dct_fn, name="dct", static=("type", "n", "norm"))


def _validate_dct(x, dct_type, n, axis, norm):
    if axis != -1:
        raise NotImplementedError(f"axis must be -1. Got: {axis}")
    if n is not None and n < 1:
        raise ValueError("n should be a positive integer or None")
    if dct_type not in (1, 2, 3, 4):
        raise ValueError("Types I, II, III and IV (I)DCT are supported.")
    if dct_type == 1:
        if norm == "ortho":
            raise ValueError("Normalization is not supported for the Type-I DCT.")
        if x.shape.rank and x.shape[-1] is not None and x.shape[-1] < 2:
            raise ValueError("Type-I DCT requires the dimension to be greater than one.")
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")


@export("signal.dct")
def dct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002  (TensorFlow's argument names)
    """The DCT of types I-IV over the last axis of a float32/float64 ``input`` (``tf.signal.dct``;
    scipy.fftpack.dct's definitions). ``n`` crops or zero-pads the input; ``norm="ortho"`` makes
    types II-IV orthonormal.

    Example:
        >>> import tapejax as tf
        >>> tf.signal.dct(tf.constant([1.0, 2.0, 3.0, 4.0])).numpy().round(3).tolist()
        [20.0, -6.309, 0.0, -0.448]
    """
    x = convert_to_tensor(input)
    _validate_dct(x, type, n, axis, norm)
    return _dct(x, type=type, n=n, norm=norm)


@export("signal.idct")
def idct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002
    """The inverse DCT (``tf.signal.idct``): the DCT of the inverse type (I->I, II->III, III->II,
    IV->IV); with ``norm="ortho"`` it inverts ``tf.signal.dct`` exactly, else up to a scale ``2N``.

    Example:
        >>> import tapejax as tf
        >>> x = tf.constant([1.0, 2.0, 3.0, 4.0])
        >>> tf.signal.idct(tf.signal.dct(x, norm="ortho"), norm="ortho").numpy().round(4).tolist()
        [1.0, 2.0, 3.0, 4.0]
    """
    x = convert_to_tensor(input)
    _validate_dct(x, type, n, axis, norm)
    return _dct(x, type={1: 1, 2: 3, 3: 2, 4: 4}[type], n=n, norm=norm)


_mfccs = defop(lambda x: _dct_fn(x, 2, None, None) * (1.0 / np.sqrt(x.dtype.type(x.shape[-1] * 2.0))).astype(x.dtype),
               name="mfccs_from_log_mel_spectrograms")


@export("signal.mfccs_from_log_mel_spectrograms")
def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """Mel-frequency cepstral coefficients of ``[..., num_mel_bins]`` log-mel spectrograms
    (``tf.signal.mfccs_from_log_mel_spectrograms``): their type-II DCT scaled by
    ``1 / sqrt(2 num_mel_bins)`` (HTK's scaling); keep the first 13 or so.

    Example:
        >>> import tapejax as tf
        >>> tf.signal.mfccs_from_log_mel_spectrograms(tf.zeros([2, 100, 80])).shape
        TensorShape([2, 100, 80])
    """
    x = convert_to_tensor(log_mel_spectrograms)
    if x.shape.rank and x.shape[-1] == 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {x}")
    return _mfccs(x)


# --- N-D FFTs and the MDCT ----------------------------------------------------------------------

def _nd_args(x, fft_length, axes, inverse_real=False):
    rank = x.shape.rank
    axes = tuple(range(-rank, 0)) if axes is None else _static_ints(axes, "axes")
    if fft_length is None:
        length = [x.shape[a] for a in axes]
        if inverse_real:
            length[-1] = max(0, 2 * (length[-1] - 1))
        return tuple(length), axes
    return _static_ints(fft_length, "fft_length"), axes


_fftnd = defop(lambda x, s, axes, norm: jnp.fft.fftn(x, s, axes, norm), name="fftnd", static=("s", "axes", "norm"))
_ifftnd = defop(lambda x, s, axes, norm: jnp.fft.ifftn(x, s, axes, norm), name="ifftnd", static=("s", "axes", "norm"))
_rfftnd = defop(lambda x, s, axes, norm: jnp.fft.rfftn(x, s, axes, norm), name="rfftnd", static=("s", "axes", "norm"))
_irfftnd = defop(lambda x, s, axes, norm: jnp.fft.irfftn(x, s, axes, norm), name="irfftnd",
                 static=("s", "axes", "norm"))


@export("signal.fftnd")
def fftnd(input_tensor, fft_length=None, axes=None, norm=None, name=None):
    """The N-D discrete Fourier transform over ``axes`` (default: all) of a complex tensor
    (``tf.signal.fftnd``); ``fft_length`` crops or zero-pads, ``norm`` is "backward" (default),
    "ortho" or "forward".

    Example:
        >>> import tapejax as tf
        >>> tf.signal.fftnd(tf.complex(tf.ones([2, 2]), 0.0)).numpy().real.tolist()
        [[4.0, 0.0], [0.0, 0.0]]
    """
    x = convert_to_tensor(input_tensor, dtype_hint=_dtypes.complex64)
    s, axes = _nd_args(x, fft_length, axes)
    return _fftnd(x, s=s, axes=axes, norm=norm or "backward")


@export("signal.ifftnd")
def ifftnd(input_tensor, fft_length=None, axes=None, norm=None, name=None):
    """The inverse of ``tf.signal.fftnd`` (``tf.signal.ifftnd``).

    Example:
        >>> import tapejax as tf
        >>> x = tf.complex(tf.constant([[1.0, 2.0], [3.0, 4.0]]), 0.0)
        >>> tf.signal.ifftnd(tf.signal.fftnd(x)).numpy().real.tolist()
        [[1.0, 2.0], [3.0, 4.0]]
    """
    x = convert_to_tensor(input_tensor, dtype_hint=_dtypes.complex64)
    s, axes = _nd_args(x, fft_length, axes)
    return _ifftnd(x, s=s, axes=axes, norm=norm or "backward")


@export("signal.rfftnd")
def rfftnd(input_tensor, fft_length=None, axes=None, norm=None, name=None):
    """The N-D discrete Fourier transform of a real tensor over ``axes`` (default: all)
    (``tf.signal.rfftnd``): the last axis keeps ``fft_length[-1] // 2 + 1`` frequencies.

    Example:
        >>> import tapejax as tf
        >>> tf.signal.rfftnd(tf.ones([2, 4])).shape
        TensorShape([2, 3])
    """
    x = convert_to_tensor(input_tensor, dtype_hint=_dtypes.float32)
    if _np(x.dtype) not in _COMPLEX_OF:
        raise ValueError(f"RFFT requires tf.float32 or tf.float64 inputs, got: {x}")
    s, axes = _nd_args(x, fft_length, axes)
    return _rfftnd(x, s=s, axes=axes, norm=norm or "backward")


@export("signal.irfftnd")
def irfftnd(input_tensor, fft_length=None, axes=None, norm=None, name=None):
    """The inverse of ``tf.signal.rfftnd`` (``tf.signal.irfftnd``): the last axis gives
    ``fft_length[-1]`` samples (default ``2 * (n - 1)``).

    Example:
        >>> import tapejax as tf
        >>> tf.signal.irfftnd(tf.signal.rfftnd(tf.ones([2, 4]))).numpy().tolist()
        [[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]
    """
    x = convert_to_tensor(input_tensor, dtype_hint=_dtypes.complex64)
    if _np(x.dtype) not in _REAL_OF:
        raise ValueError(f"IRFFT requires tf.complex64 or tf.complex128 inputs, got: {x}")
    s, axes = _nd_args(x, fft_length, axes, inverse_real=True)
    return _irfftnd(x, s=s, axes=axes, norm=norm or "backward")


def _mdct_fold(x):
    a, b, c, d = jnp.split(x, 4, axis=-1)
    return jnp.concatenate([-c[..., ::-1] - d, a - b[..., ::-1]], axis=-1)


def _imdct_unfold(x):
    a, b = jnp.split(x, 2, axis=-1)
    return jnp.concatenate([b, -b[..., ::-1], -a[..., ::-1], -a], axis=-1)


_mdct_fold_op = defop(_mdct_fold, name="mdct_fold")
_imdct_unfold_op = defop(_imdct_unfold, name="imdct_unfold")
_VORBIS = _Default(vorbis_window, "tf.signal.vorbis_window")


@export("signal.mdct")
def mdct(signals, frame_length, window_fn=_VORBIS, pad_end=False, norm=None, name=None):
    """The modified discrete cosine transform (``tf.signal.mdct``): frames of ``frame_length`` (a
    multiple of 4) every ``frame_length // 2`` samples, windowed (Vorbis by default), folded and
    DCT-IV'd to ``[..., frames, frame_length // 2]``.

    Example:
        >>> import tapejax as tf
        >>> tf.signal.mdct(tf.sin(tf.range(64.0)), frame_length=16).shape
        TensorShape([7, 8])
    """
    x = convert_to_tensor(signals)
    length = _static_int(frame_length, "frame_length")
    if length % 4 != 0:
        raise ValueError("The frame length must be a multiple of 4.")
    framed = frame(x, length, length // 2, pad_end=pad_end)
    if window_fn is not None:
        framed = multiply(framed, window_fn(length, dtype=framed.dtype))
    else:
        framed = multiply(framed, np.asarray(1.0 / np.sqrt(2), _np(framed.dtype)))
    return dct(_mdct_fold_op(framed), type=4, norm=norm)


@export("signal.inverse_mdct")
def inverse_mdct(mdcts, window_fn=_VORBIS, norm=None, name=None):
    """The inverse of ``tf.signal.mdct`` (``tf.signal.inverse_mdct``): DCT-IV, unfolded,
    windowed and overlap-added.

    Example:
        >>> import tapejax as tf
        >>> x = tf.sin(tf.range(64.0))
        >>> y = tf.signal.inverse_mdct(tf.signal.mdct(x, 16))
        >>> y.shape, bool(tf.reduce_max(tf.abs(y[8:-8] - x[8:-8])) < 1e-4)
        (TensorShape([64]), True)
    """
    x = convert_to_tensor(mdcts)
    half = x.shape[-1]
    t = _np(x.dtype).type
    if norm is None:
        out = multiply(dct(x, type=4), np.asarray(t(0.5) / t(half), t))
    else:
        out = dct(x, type=4, norm="ortho")
    frames = _imdct_unfold_op(out)
    if window_fn is not None:
        frames = multiply(frames, window_fn(2 * half, dtype=x.dtype))
    else:
        frames = multiply(frames, np.asarray(1.0 / np.sqrt(2), t))
    return overlap_and_add(frames, half)
