"""tf.signal: FFTs, frames, windows, the short-time Fourier transform, mel filterbanks, DCTs and MFCCs,
generated from the op table's rows (``tapejax.ops.signal_ops``).

Example:
    >>> import tapejax as tf
    >>> waveform = tf.sin(tf.range(16000.0) * 0.05)
    >>> spectrogram = tf.abs(tf.signal.stft(waveform, frame_length=255, frame_step=128))
    >>> spectrogram.shape
    TensorShape([124, 129])
"""
from .ops import exports as _exports

globals().update(_exports("signal"))
__all__ = sorted(_exports("signal"))
