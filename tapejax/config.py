"""tf.config: run functions eagerly, list devices (JAX's devices), TF32 switches.

Example:
    >>> import tapejax as tf
    >>> tf.config.run_functions_eagerly(True)
    >>> tf.config.functions_run_eagerly()
    True
    >>> tf.config.run_functions_eagerly(False)
    >>> [d.device_type for d in tf.config.list_physical_devices('CPU')]
    ['CPU']
"""
import collections
import types

import jax

from ._function import run_functions_eagerly as _run_eagerly, functions_run_eagerly as _runs_eagerly

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
PhysicalDevice.__doc__ = "A device JAX sees, named as TensorFlow names it ('/physical_device:GPU:0', 'GPU')."
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])
LogicalDevice.__doc__ = "A device as TensorFlow's logical device ('/device:GPU:0', 'GPU')."

_TYPES = {"cpu": "CPU", "gpu": "GPU", "cuda": "GPU", "rocm": "GPU", "tpu": "TPU", "metal": "GPU"}


def run_functions_eagerly(run_eagerly):
    """Makes every ``tf.function`` run its Python body eagerly (no tracing): for debugging.

    Inside, ``.numpy()``, ``print`` and Python ``if`` on tensors work as outside a function.
    """
    _run_eagerly(run_eagerly)


def functions_run_eagerly():
    """Whether :func:`run_functions_eagerly` is on."""
    return _runs_eagerly()


def _jax_devices():
    """(TF device type, jax device) pairs: the CPU first, then the default backend's accelerators."""
    out = []
    try:
        out += [("CPU", d) for d in jax.devices("cpu")]
    except RuntimeError:
        pass
    if jax.default_backend() != "cpu":
        out += [(_TYPES.get(d.platform, d.platform.upper()), d) for d in jax.devices()]
    return out


def list_physical_devices(device_type=None):
    """The devices JAX sees, as TF's ``PhysicalDevice(name, device_type)`` (filter by type)."""
    counts = collections.Counter()
    out = []
    for typ, _ in _jax_devices():
        name = f"/physical_device:{typ}:{counts[typ]}"
        counts[typ] += 1
        if device_type is None or device_type.upper() == typ:
            out.append(PhysicalDevice(name, typ))
    return out


def list_logical_devices(device_type=None):
    """Like :func:`list_physical_devices`, with TF's logical device names."""
    return [LogicalDevice(d.name.replace("/physical_device:", "/device:"), d.device_type)
            for d in list_physical_devices(device_type)]


def get_visible_devices(device_type=None):
    """The devices JAX uses (all of them: see :func:`set_visible_devices`)."""
    return list_physical_devices(device_type)


def set_visible_devices(devices, device_type=None):
    """Accepted for compatibility: JAX chooses devices (JAX_PLATFORMS, CUDA_VISIBLE_DEVICES)."""


def set_soft_device_placement(enabled):
    """Accepted for compatibility: JAX places computations itself."""


def get_soft_device_placement():
    """Always True: JAX places computations itself."""
    return True


_tf32 = [True]


def _enable_tf32(enabled):
    """Accepted for compatibility (set ``jax_default_matmul_precision`` to control it in JAX)."""
    _tf32[0] = bool(enabled)


experimental = types.SimpleNamespace(
    list_physical_devices=list_physical_devices,
    list_logical_devices=list_logical_devices,
    get_visible_devices=get_visible_devices,
    set_visible_devices=set_visible_devices,
    enable_tensor_float_32_execution=_enable_tf32,
    tensor_float_32_execution_enabled=lambda: _tf32[0],
    set_memory_growth=lambda device, enable: None,
    get_memory_growth=lambda device: True,
    get_device_details=lambda device: {"device_name": device.name},
    enable_op_determinism=lambda: None,
)
