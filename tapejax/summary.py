"""tf.summary: scalars, histograms, images and text written as TensorBoard event files.

The files are written by TensorBoard's own event writer (``pip install tapejax[tensorboard]``),
in TensorFlow 2's format, so TensorBoard shows them as it shows TensorFlow's. Inside a
``tf.function`` a summary is written when the compiled program runs (a host callback), with
the values and step of that run.

Example:
    >>> import tempfile, tapejax as tf
    >>> writer = tf.summary.create_file_writer(tempfile.mkdtemp())
    >>> with writer.as_default():
    ...     for step in range(3):
    ...         tf.summary.scalar("loss", 1.0 / (step + 1), step=step)
    True
    True
    True
    >>> writer.flush()
"""
import contextlib
import io
import struct
import threading
import time
import zlib

import jax
import numpy as np

from ._core.checks import quiet, staged
from ._core.tensor import _TensorBase, is_tracer as _is_tracer, to_array

_INSTALL = ("tf.summary writes TensorBoard event files with the tensorboard package, which is not "
            "installed: pip install tapejax[tensorboard]")


class _State(threading.local):
    def __init__(self):
        self.writer = None
        self.step = None
        self.record = True


_state = _State()


def _tensorboard():
    try:
        from tensorboard.compat.proto import event_pb2, summary_pb2
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
        from tensorboard.util import tensor_util
    except ImportError as e:
        raise ImportError(_INSTALL) from e
    return event_pb2, summary_pb2, EventFileWriter, tensor_util


class SummaryWriter:
    """Writes summaries to an event file in ``logdir`` (``tf.summary.create_file_writer``).

    Use it with ``with writer.as_default(step=...):`` (or ``writer.set_as_default()``) and
    call ``tf.summary.scalar`` & co. inside.
    """

    def __init__(self, logdir=None, max_queue=None, flush_millis=None, filename_suffix=None):
        self._logdir = logdir
        self._max_queue = 10 if max_queue is None else max_queue
        self._flush_secs = 120 if flush_millis is None else flush_millis / 1000.0
        self._suffix = ".v2" if filename_suffix is None else filename_suffix
        self._writer = None
        self._lock = threading.Lock()
        if logdir is not None:
            self.init()

    def init(self):
        """Opens the event file (done on creation)."""
        if self._writer is None and self._logdir is not None:
            _, _, EventFileWriter, _ = _tensorboard()
            self._writer = EventFileWriter(str(self._logdir), self._max_queue, self._flush_secs, self._suffix)

    @contextlib.contextmanager
    def as_default(self, step=None):
        """Context in which summaries go to this writer (and, given ``step``, default to it).

        Example:
            >>> import tempfile, tapejax as tf
            >>> writer = tf.summary.create_file_writer(tempfile.mkdtemp())
            >>> with writer.as_default(step=7):
            ...     tf.summary.experimental.get_step()
            7
        """
        saved = _state.writer, _state.step
        _state.writer = self
        if step is not None:
            _state.step = step
        try:
            yield self
        finally:
            _state.writer = saved[0]
            if step is not None:
                _state.step = saved[1]
            self.flush()

    def set_as_default(self, step=None):
        """Makes this the default writer until another is set."""
        _state.writer = self
        if step is not None:
            _state.step = step

    def flush(self):
        """Writes what is queued to the file."""
        if self._writer is not None:
            self._writer.flush()

    def close(self):
        """Flushes and closes the file; summaries sent afterwards are dropped."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        self._logdir = None

    def _write(self, summary, step):
        if self._writer is None:
            return
        event_pb2, _, _, _ = _tensorboard()
        with self._lock:
            self._writer.add_event(event_pb2.Event(wall_time=time.time(), step=int(step), summary=summary))


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None,
                       experimental_trackable=False, experimental_mesh=None):
    """A :class:`SummaryWriter` writing an event file in ``logdir`` (created if needed).

    Args:
        logdir: the directory; TensorBoard's ``--logdir`` or a subdirectory of it.
        max_queue: how many summaries are queued before a write (10).
        flush_millis: the longest time between writes, in milliseconds (120000).
        filename_suffix: the event file's suffix (``.v2``).

    Raises:
        ImportError: tensorboard is not installed (``pip install tapejax[tensorboard]``).
    """
    return SummaryWriter(logdir, max_queue, flush_millis, filename_suffix)


def create_noop_writer():
    """A writer that writes nothing (summaries under it return False)."""
    return SummaryWriter(None)


def flush(writer=None, name=None):
    """Flushes ``writer`` (the default writer if None)."""
    writer = writer or _state.writer
    if writer is not None:
        writer.flush()


@contextlib.contextmanager
def record_if(condition):
    """Context in which summaries are written only when ``condition`` (a bool, or a callable
    returning one) holds.

    Example:
        >>> import tempfile, tapejax as tf
        >>> with tf.summary.create_file_writer(tempfile.mkdtemp()).as_default(step=0):
        ...     with tf.summary.record_if(False):
        ...         tf.summary.scalar("x", 1.0)
        False
    """
    saved = _state.record
    _state.record = condition
    try:
        yield
    finally:
        _state.record = saved


def _record_flag():
    """False when nothing can be recorded now, else the ``record_if`` condition (a bool, or a
    traced boolean known only when the compiled program runs)."""
    if _state.writer is None or _state.writer._writer is None:
        return False
    record = _state.record
    record = record() if callable(record) else record
    if isinstance(record, (bool, np.bool_)):
        return bool(record)
    value = to_array(record)
    return value if _is_tracer(value) else bool(np.asarray(value))


def should_record_summaries():
    """Whether a summary written now would be recorded (a default writer and ``record_if``)."""
    flag = _record_flag()
    return flag if isinstance(flag, bool) else True


class experimental:
    """``tf.summary.experimental``: the default step."""

    @staticmethod
    def set_step(step):
        """Sets the step that summaries use when given none (an int, a Tensor or a Variable)."""
        _state.step = step

    @staticmethod
    def get_step():
        """The default step, or None."""
        return _state.step


# ---------------------------------------------------------------------------
# Summaries
# ---------------------------------------------------------------------------

def _step(step):
    step = _state.step if step is None else step
    if step is None:
        raise ValueError("No step set. Please specify one either through the `step` argument or through "
                         "tf.summary.experimental.set_step()")
    return step


def _emit(name, data, step, build):
    """Writes ``build(numpy data)`` (a Summary proto) at ``step`` to the default writer, now or,
    inside a compiled function, when the program runs. Returns whether it is recorded."""
    flag = _record_flag()
    if flag is False:
        return False
    step = _step(step)
    writer = _state.writer
    value, step_value = to_array(data), to_array(step)
    if not (_is_tracer(value) or _is_tracer(step_value) or _is_tracer(flag)):
        writer._write(build(np.asarray(value)), int(np.asarray(step_value)))
        return True
    if quiet():   # the body re-run only to differentiate it: written on the forward run
        return True

    def write(record, v, s):
        if record:
            writer._write(build(np.asarray(v)), int(np.asarray(s)))

    from jax.experimental import io_callback
    with staged():
        io_callback(write, None, flag, jax.lax.stop_gradient(value), step_value, ordered=True)
    return True


def scalar(name, data, step=None, description=None):
    """Writes a scalar summary (TensorBoard's Scalars dashboard).

    Args:
        name: the tag.
        data: a real number or scalar Tensor.
        step: the step (int or Tensor); by default ``tf.summary.experimental.get_step()``.
        description: shown in TensorBoard.

    Returns:
        True if written, False when no default writer is set (or ``record_if`` is false).

    Raises:
        ValueError: no step given and no default step set.
    """
    def build(v):
        from tensorboard.plugins.scalar import summary_v2
        return summary_v2.scalar_pb(name, v.astype(np.float32), description)
    return _emit(name, data, step, build)


def histogram(name, data, step=None, buckets=None, description=None):
    """Writes a histogram of ``data``'s values (``buckets`` bins, 30 by default)."""
    def build(v):
        from tensorboard.plugins.histogram import summary_v2
        return summary_v2.histogram_pb(name, v.astype(np.float64), 30 if buckets is None else buckets, description)
    return _emit(name, data, step, build)


def text(name, data, step=None, description=None):
    """Writes text (a Python string, or a list of them): TensorBoard's Text dashboard."""
    from tensorboard.plugins.text import summary_v2

    if isinstance(data, _TensorBase):
        raise TypeError("tf.summary.text takes Python strings: tapejax tensors hold numbers.")
    if not should_record_summaries():
        return False
    _state.writer._write(summary_v2.text_pb(name, np.asarray(data, dtype=object), description),
                         int(np.asarray(to_array(_step(step)))))
    return True


def image(name, data, step=None, max_outputs=3, description=None):
    """Writes up to ``max_outputs`` images of ``data`` (``[k, h, w, c]``, c in 1, 3, 4; floats in
    [0, 1] or uint8) as PNGs: TensorBoard's Images dashboard."""
    def build(v):
        from tensorboard.compat.proto import summary_pb2
        from tensorboard.plugins.image import metadata
        from tensorboard.util import tensor_util
        if v.ndim != 4 or v.shape[-1] not in (1, 3, 4):
            raise ValueError(f"tf.summary.image takes images of shape [k, h, w, c] with c in 1, 3, 4; got {v.shape}.")
        if v.dtype != np.uint8:
            v = (np.clip(v.astype(np.float32), 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)
        images = [_png(im) for im in v[:max_outputs]]
        strings = [str(v.shape[2]).encode(), str(v.shape[1]).encode()] + images
        summary = summary_pb2.Summary()
        summary.value.add(tag=name, metadata=metadata.create_summary_metadata(
                              display_name=None, description=description or ""),
                          tensor=tensor_util.make_tensor_proto(np.asarray(strings, dtype=object)))
        return summary
    return _emit(name, data, step, build)


def _png(im):
    """An 8-bit image ``[h, w, c]`` as PNG bytes (zlib is all PNG needs)."""
    h, w, c = im.shape
    kind = {1: 0, 3: 2, 4: 6}[c]
    raw = b"".join(b"\x00" + im[y].tobytes() for y in range(h))

    def chunk(tag, body):
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body) & 0xFFFFFFFF)
    out = io.BytesIO()
    out.write(b"\x89PNG\r\n\x1a\n")
    out.write(chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, kind, 0, 0, 0)))
    out.write(chunk(b"IDAT", zlib.compress(raw)))
    out.write(chunk(b"IEND", b""))
    return out.getvalue()


from ._missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr(__name__)
