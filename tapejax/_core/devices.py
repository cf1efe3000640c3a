"""TensorFlow's device names over JAX's devices: ``tf.device`` scopes, ``Tensor.device``, soft placement.

TensorFlow names a device ``/job:localhost/replica:0/task:0/device:CPU:0`` and accepts the
short forms ``'CPU:0'``, ``'/cpu:0'``, ``'/device:GPU:1'``, ``'GPU'``. Here each name stands for
a JAX device: the i-th local device of JAX's ``cpu`` backend is ``CPU:i``, the i-th of the
accelerator backend ``GPU:i`` (or ``TPU:i``). ``tf.device`` places new tensors with
``jax.default_device``: ops whose inputs are not pinned elsewhere run on that device, as
ops under a TensorFlow device scope do.

Example:
    >>> import tapejax as tf
    >>> with tf.device('CPU:0'):
    ...     x = tf.constant([1.0, 2.0]) * 2
    >>> x.device
    '/job:localhost/replica:0/task:0/device:CPU:0'
"""
import threading

import jax
from jax._src import xla_bridge as _xla_bridge

from ..errors import InvalidArgumentError

# The device types TensorFlow's DeviceSpec parses (device_spec._VALID_DEVICE_TYPES).
VALID_DEVICE_TYPES = frozenset({"CPU", "GPU", "TPU", "CUSTOM", "EPU"})
_PLATFORM_TYPES = {"cpu": "CPU", "gpu": "GPU", "cuda": "GPU", "rocm": "GPU", "tpu": "TPU", "metal": "GPU"}


def backends_initialized():
    """Whether JAX has started its backends (the first computation or ``jax.devices()`` does).

    From then on its number of CPU devices (``jax_num_cpu_devices``) is fixed.
    """
    return _xla_bridge.backends_are_initialized()


def device_type(d):
    """TensorFlow's type name of a jax device: 'CPU', 'GPU' or 'TPU'."""
    return _PLATFORM_TYPES.get(d.platform, d.platform.upper())


def local_devices():
    """(TF device type, index, jax device) of this process: the CPUs first, then the accelerators."""
    try:
        out = [("CPU", i, d) for i, d in enumerate(jax.local_devices(backend="cpu"))]
    except RuntimeError:  # JAX_PLATFORMS without cpu
        out = []
    if jax.default_backend() != "cpu":
        devs = jax.local_devices()
        out += [(device_type(d), i, d) for i, d in enumerate(devs)]
    return out


_names = {}


def _job():
    """TensorFlow's job name of this process: 'localhost', or 'worker' in a cluster of processes."""
    return "worker" if jax.process_count() > 1 else "localhost"


def _prefix(task=None):
    return f"/job:{_job()}/replica:0/task:{jax.process_index() if task is None else task}"


def device_name(d):
    """TensorFlow's full name of a jax device: '/job:localhost/replica:0/task:0/device:CPU:0'.

    The index counts the devices of the same kind on the same process (host), as TensorFlow's.
    """
    name = _names.get(d)
    if name is None:
        same = [x for x in jax.devices(d.platform) if x.process_index == d.process_index]
        name = _names[d] = f"{_prefix(d.process_index)}/device:{device_type(d)}:{same.index(d)}"
    return name


def default_device():
    """The device new arrays go to now: the ``tf.device`` / ``jax.default_device`` scope's, else
    JAX's first device."""
    d = jax.config.jax_default_device
    if isinstance(d, jax.Device):
        return d
    return jax.devices(d)[0] if d else jax.devices()[0]


def array_device_name(value):
    """``Tensor.device`` of a concrete jax array (the first of its devices when it is sharded)."""
    return device_name(min(value.devices(), key=lambda d: d.id))


def parse(spec):
    """TensorFlow's DeviceSpec parse of a device string: (job, replica, task, device_type, index).

    Raises TensorFlow's ``ValueError`` for a part it does not know ('XPU:0', 'foo').
    """
    job = replica = task = typ = index = None
    for part in (spec or "").split("/"):
        y = part.split(":")
        if len(y) == 2 and y[0] == "job":
            job = y[1]
        elif len(y) == 2 and y[0] == "replica":
            replica = int(y[1])
        elif len(y) == 2 and y[0] == "task":
            task = int(y[1])
        elif len(y) in (1, 2) and y[0].upper() in VALID_DEVICE_TYPES:
            if typ is not None:
                raise ValueError(f"Multiple device types are not allowed while parsing the device spec: {spec}.")
            typ = y[0].upper()
            index = int(y[1]) if len(y) == 2 and y[1] != "*" else None
        elif len(y) == 3 and y[0] == "device":
            if typ is not None:
                raise ValueError(f"Multiple device types are not allowed while parsing the device spec: {spec}.")
            typ = y[1].upper()
            index = int(y[2]) if y[2] != "*" else None
        elif y[0] != "":
            raise ValueError(f"Unknown attribute '{y[0]}' is encountered while parsing the device spec: '{spec}'.")
    return (job, replica, task, typ, index)


def _full(spec):
    job, replica, task, typ, index = spec
    s = f"/job:{job or _job()}/replica:{replica or 0}/task:{jax.process_index() if task is None else task}"
    return s if typ is None else f"{s}/device:{typ}:{0 if index is None else index}"


_soft_placement = [True]


def resolve(spec, soft=None):
    """The jax device a parsed spec names; None when it names no device type (the default device).

    With soft placement (TensorFlow's default) a device this process lacks falls back to the
    same type's device 0, else the default device; without it, TensorFlow's
    ``InvalidArgumentError`` lists the devices there are.
    """
    job, replica, task, typ, index = spec
    here = local_devices()
    if job not in (None, "localhost", _job()) or task not in (None, jax.process_index()):
        raise InvalidArgumentError(None, None, f"{_full(spec)} unknown device. This process is "
                                   f"{_prefix()}: name a device of it, such as 'CPU:0'.")
    soft = _soft_placement[0] if soft is None else soft
    if typ is None:
        return None
    index = 0 if index is None else index
    for t, i, d in here:
        if t == typ and i == index and not replica:
            return d
    if soft and not replica:
        same = [d for t, i, d in here if t == typ]
        return same[0] if same else jax.local_devices()[0]
    types = sorted({t for t, _, _ in here})
    raise InvalidArgumentError(None, None, (
        f"Could not satisfy device specification '{_full(spec)}'. enable_soft_placement={int(soft)}. "
        f"Supported device types [{', '.join(types)}]. All available devices "
        f"[{', '.join(device_name(d) for _, _, d in here)}]."))


def set_soft_device_placement(enabled):
    _soft_placement[0] = bool(enabled)


def get_soft_device_placement():
    return _soft_placement[0]


_scope = threading.local()


def _current():
    return getattr(_scope, "spec", (None,) * 5)


class device:
    """Places the tensors made in its block on a device: ``with tf.device('GPU:0'): ...``.

    Args:
        device_name: a TensorFlow device name (``'CPU:0'``, ``'/device:GPU:1'``,
            ``'/job:localhost/replica:0/task:0/device:CPU:0'``, ``'GPU'``), merged with the
            enclosing scope's as in TensorFlow (``''`` keeps it), or None for the default device.

    Ops whose inputs are not pinned to another device run on the scope's device (JAX's
    ``jax.default_device``); a ``tf.function`` called in the scope runs there. Inside a
    ``tf.function`` body the scope has no effect: XLA places the compiled program as a whole.
    With soft placement (the default, see ``tf.config.set_soft_device_placement``) a device
    this process lacks, such as 'GPU:0' on a CPU-only machine, falls back to an available one
    as in TensorFlow; without it, entering the scope raises ``tf.errors.InvalidArgumentError``.

    Raises:
        ValueError: for a string TensorFlow cannot parse ('XPU:0').
        tf.errors.InvalidArgumentError: for a job or task this process is not.

    Example:
        >>> import tapejax as tf
        >>> with tf.device('/cpu:0'):
        ...     y = tf.ones([2]) + 1
        >>> y.device
        '/job:localhost/replica:0/task:0/device:CPU:0'
    """

    def __init__(self, device_name):
        self._name = device_name
        self._saved = []

    def __enter__(self):
        outer = _current()
        if self._name is None:
            spec = (None,) * 5
        elif isinstance(self._name, str):
            spec = tuple(o if n is None else n for n, o in zip(parse(self._name), outer))
        else:
            raise TypeError(f"tf.device takes a device name string such as 'CPU:0' (or None), "
                            f"not {type(self._name).__name__}: {self._name!r}.")
        ctx = jax.default_device(resolve(spec))
        ctx.__enter__()
        self._saved.append((outer, ctx))
        _scope.spec = spec
        return self

    def __exit__(self, *exc):
        _scope.spec, ctx = self._saved.pop()
        ctx.__exit__(*exc)
        return False
