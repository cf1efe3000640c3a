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

from . import _engine
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


# ---------------------------------------------------------------------------
# Compile caches (tapejax's own: TensorFlow's graphs need no compiled programs per shape)
# ---------------------------------------------------------------------------

def set_compile_cache_limits(max_programs=None, max_bytes=None, max_shapes_per_structure=None,
                             max_variants_per_op=None):
    """Bounds the caches of compiled programs; ``None`` leaves a limit as it is.

    tapejax compiles with XLA, one program per input shapes: a backward pass per tape
    structure, a trace per ``tf.function`` signature, an executable per op and shapes. Each
    costs host memory (1-3 MB on CPU), so a loop over ever new shapes (variable-length
    batches, sequences) would grow without end. The caches are least-recently-used and
    bounded:

    Args:
        max_programs: compiled backward passes kept, and traces kept per ``tf.function``
            (default 32). An evicted trace is traced again when its signature comes back.
        max_bytes: the memory those programs may hold, per cache (default 256 MiB), measured as
            what the process's resident set grew by while each was compiled and first run.
        max_shapes_per_structure: past this many shapes or arrangements of a tape of the
            same kinds of operations (default 8), a new one whose ops' VJPs were compiled
            before (a sequence unrolled to a new length) is differentiated op by op: each
            op's VJP a small program compiled per (op, shapes) and shared by every tape,
            instead of one whole program per shape. A new batch size makes every op new:
            that still compiles one whole program, the cheaper compile. A shape seen 3
            times is compiled whole.
        max_variants_per_op: compiled shape variants kept per op (default 8). An op that
            needs more (its evicted variants come back) has its limit doubled.

    Example:
        >>> import tapejax as tf
        >>> tf.config.experimental.set_compile_cache_limits(max_programs=16)
        >>> tf.config.experimental.get_compile_cache_limits()['max_programs']
        16
        >>> tf.config.experimental.set_compile_cache_limits(max_programs=32)
    """
    given = dict(max_programs=max_programs, max_bytes=max_bytes,
                 max_shapes_per_structure=max_shapes_per_structure, max_variants_per_op=max_variants_per_op)
    for name, value in given.items():
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"set_compile_cache_limits: {name} must be a positive integer, got {value!r}.")
        setattr(_engine.limits, name, value)
    _engine._BACKWARD_CACHE.trim()


def get_compile_cache_limits():
    """The limits set by :func:`set_compile_cache_limits`, as a dict.

    Example:
        >>> import tapejax as tf
        >>> sorted(tf.config.experimental.get_compile_cache_limits())
        ['max_bytes', 'max_programs', 'max_shapes_per_structure', 'max_variants_per_op']
    """
    lim = _engine.limits
    return {name: getattr(lim, name) for name in
            ("max_programs", "max_bytes", "max_shapes_per_structure", "max_variants_per_op")}


experimental.set_compile_cache_limits = set_compile_cache_limits
experimental.get_compile_cache_limits = get_compile_cache_limits
