"""tf.config: run functions eagerly, devices as TensorFlow lists them (JAX's devices), virtual CPUs.

A physical device is ``PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')``; the
logical devices are what ``tf.device`` names: JAX's local devices (``/device:CPU:0``,
``/device:GPU:0``...). ``set_logical_device_configuration`` splits the host CPU into several
logical CPUs (JAX's ``jax_num_cpu_devices``), which a ``tf.distribute.MirroredStrategy`` then
uses; like TensorFlow, only before the first computation.

Example:
    >>> import tapejax as tf
    >>> tf.config.run_functions_eagerly(True)
    >>> tf.config.functions_run_eagerly()
    True
    >>> tf.config.run_functions_eagerly(False)
    >>> tf.config.list_physical_devices('CPU')
    [PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]
"""
import collections
import os
import types

import jax

from ._core import backward as _backward, cache as _cache, devices as _devices, engine as _engine, lazy as _lazy, weak as _weak
from ._core import graph_options as _graph_options, new_shapes as _new_shapes
from ._staging.function import run_functions_eagerly as _run_eagerly, functions_run_eagerly as _runs_eagerly

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
PhysicalDevice.__doc__ = "A device of the machine, named as TensorFlow names it ('/physical_device:GPU:0', 'GPU')."
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])
LogicalDevice.__doc__ = "A device ``tf.device`` can name: one of JAX's devices ('/device:GPU:0', 'GPU')."
LogicalDeviceConfiguration = collections.namedtuple(
    "LogicalDeviceConfiguration", ["memory_limit", "experimental_priority", "experimental_device_ordinal"],
    defaults=(None, None, None))
LogicalDeviceConfiguration.__doc__ = """One logical device of a split physical device (``tf.config.LogicalDeviceConfiguration``).

``tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 4)``
makes 4 logical CPUs. ``memory_limit`` (MB) is TensorFlow's for GPUs, which JAX cannot split.
"""

_CPU = PhysicalDevice("/physical_device:CPU:0", "CPU")
_virtual = {}
_memory_growth = {}

_INITIALIZED = (
    "{what} cannot be modified after being initialized: JAX has started its backends (the first "
    "computation, a tf.device scope, tf.config.list_logical_devices or listing accelerators does that), "
    "and {fixed} is fixed from then on. {fix}")
_CPU_FIX = (
    "Call tf.config.set_logical_device_configuration right after `import tapejax as tf`, before any "
    "computation, or start the program with XLA_FLAGS=--xla_force_host_platform_device_count={n} "
    "(or jax.config.update('jax_num_cpu_devices', {n}) before JAX starts).")
_GROWTH_FIX = (
    "Call tf.config.experimental.set_memory_growth before any computation (a PhysicalDevice"
    "('/physical_device:GPU:0', 'GPU') can be made by hand, since listing GPUs starts JAX), or start the "
    "program with XLA_PYTHON_CLIENT_PREALLOCATE={value}.")


def run_functions_eagerly(run_eagerly):
    """Makes every ``tf.function`` run its Python body eagerly (no tracing): for debugging.

    Inside, ``.numpy()``, ``print`` and Python ``if`` on tensors work as outside a function.
    """
    _run_eagerly(run_eagerly)


def functions_run_eagerly():
    """Whether :func:`run_functions_eagerly` is on."""
    return _runs_eagerly()


def list_physical_devices(device_type=None):
    """The machine's devices as TensorFlow's ``PhysicalDevice(name, device_type)``.

    The host is one physical CPU however many logical CPUs it is split into. Asking for
    ``'CPU'`` only does not start JAX (so the CPU can still be split); listing accelerators
    does (JAX counts them by starting its backends). ``device_type`` matches exactly, as in
    TensorFlow ('GPU', not 'gpu').

    Example:
        >>> import tapejax as tf
        >>> tf.config.list_physical_devices('CPU')
        [PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]
    """
    if device_type == "CPU":
        return [_CPU]
    out = [_CPU]
    counts = collections.Counter()
    for typ, _, _ in _devices.local_devices():
        if typ != "CPU":
            out.append(PhysicalDevice(f"/physical_device:{typ}:{counts[typ]}", typ))
            counts[typ] += 1
    return [d for d in out if device_type is None or d.device_type == device_type]


def list_logical_devices(device_type=None):
    """The devices ``tf.device`` can name (JAX's local devices) as TensorFlow's ``LogicalDevice``.

    Like TensorFlow's, this starts the runtime: a CPU split must come before it.

    Example:
        >>> import tapejax as tf
        >>> tf.config.list_logical_devices('CPU')[0]
        LogicalDevice(name='/device:CPU:0', device_type='CPU')
    """
    return [LogicalDevice(f"/device:{typ}:{i}", typ) for typ, i, _ in _devices.local_devices()
            if device_type is None or typ == device_type]


def _check_physical(device):
    if device == _CPU or (isinstance(device, PhysicalDevice) and not _devices.backends_initialized()
                          and device.device_type == "GPU"):
        return  # a GPU is taken on trust before JAX starts: listing GPUs would start it
    if device not in list_physical_devices():
        raise ValueError(f"Unrecognized device: {device!r}")


def set_logical_device_configuration(device, logical_devices):
    """Splits a physical device into logical devices: ``tf.config.set_logical_device_configuration``.

    ``set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 4)``
    makes 4 logical CPUs (``/device:CPU:0`` ... ``/device:CPU:3``), for a
    ``tf.distribute.MirroredStrategy`` on one machine. JAX fixes its CPU count when it starts, so,
    as in TensorFlow, this must come before the first computation.

    Raises:
        RuntimeError: once JAX has started (with a different configuration).
        ValueError: for a device that is not a ``PhysicalDevice`` of this machine, a CPU
            configuration with a memory limit, or a GPU (JAX cannot split a GPU).

    Example:
        >>> import tapejax as tf
        >>> cpu = tf.config.list_physical_devices('CPU')[0]
        >>> cpu
        PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')
        >>> # first thing in a program: tf.config.set_logical_device_configuration(
        >>> #     cpu, [tf.config.LogicalDeviceConfiguration()] * 4)
    """
    _check_physical(device)
    logical_devices = list(logical_devices)
    if device.device_type == "CPU":
        for field, what in (("memory_limit", "memory limit"), ("experimental_priority", "experimental_priority"),
                            ("experimental_device_ordinal", "experimental_device_ordinal")):
            if any(getattr(v, field) is not None for v in logical_devices):
                raise ValueError(f"Setting {what} on CPU virtual devices is currently not supported")
    else:
        raise ValueError(
            f"Virtual devices are not supported for {device.device_type} in tapejax: JAX cannot split a "
            f"{device.device_type} into logical devices. Limit the memory JAX takes with "
            "XLA_PYTHON_CLIENT_MEM_FRACTION (set before the program starts) instead.")
    if _virtual.get(device) == logical_devices:
        return
    n = max(len(logical_devices), 1)
    if _devices.backends_initialized():
        if device not in _virtual and n == len(jax.local_devices(backend="cpu")):
            _virtual[device] = logical_devices  # already split that way (XLA_FLAGS)
            return
        raise RuntimeError(_INITIALIZED.format(what="Virtual devices", fixed="its number of CPU devices",
                                               fix=_CPU_FIX.format(n=n)))
    jax.config.update("jax_num_cpu_devices", n)
    _virtual[device] = logical_devices


def get_logical_device_configuration(device):
    """The logical devices :func:`set_logical_device_configuration` gave ``device`` (None if never set)."""
    _check_physical(device)
    return _virtual.get(device)


def _growth_now():
    return os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE", "true").lower() in ("false", "0") or \
        os.environ.get("XLA_PYTHON_CLIENT_ALLOCATOR", "") == "platform"


def set_memory_growth(device, enable):
    """GPU memory taken as needed instead of all at start (``tf.config.experimental.set_memory_growth``).

    JAX's equivalent is ``XLA_PYTHON_CLIENT_PREALLOCATE=false``, read when JAX starts: this sets
    it, so it must come before the first computation (as in TensorFlow). Listing GPUs starts
    JAX, so pass ``tf.config.PhysicalDevice('/physical_device:GPU:0', 'GPU')`` made by hand.

    Raises:
        ValueError: for a CPU (TensorFlow's message) or a device that is not this machine's.
        RuntimeError: once JAX has started with the other setting.
    """
    _check_physical(device)
    if device in _virtual:
        raise ValueError("Cannot set memory growth on device when virtual devices configured")
    if device.device_type != "GPU":
        raise ValueError("Cannot set memory growth on non-GPU and non-Pluggable devices")
    enable = bool(enable)
    if _memory_growth.get(device, _growth_now()) == enable:
        _memory_growth[device] = enable
        return
    if _devices.backends_initialized():
        raise RuntimeError(_INITIALIZED.format(
            what="Physical devices", fixed="its GPU memory allocation",
            fix=_GROWTH_FIX.format(value="false" if enable else "true")))
    os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false" if enable else "true"
    _memory_growth[device] = enable


def get_memory_growth(device):
    """Whether GPU memory grows as needed (:func:`set_memory_growth`); TensorFlow's KeyError for a CPU."""
    _check_physical(device)
    if device.device_type != "GPU":
        raise KeyError(device)
    return _memory_growth.get(device, _growth_now())


def get_memory_info(device):
    """``{'current': bytes, 'peak': bytes}`` a device's allocator holds (``tf.config.experimental.get_memory_info``).

    JAX's CPU backend keeps no statistics: a CPU gives zeros, as TensorFlow's does.

    Example:
        >>> import tapejax as tf
        >>> sorted(tf.config.experimental.get_memory_info('CPU:0'))
        ['current', 'peak']
    """
    if not isinstance(device, str):
        raise TypeError(f"get_memory_info takes a device name string such as 'GPU:0', not {device!r}.")
    try:
        d = _devices.resolve(_devices.parse(device), soft=False)
    except _devices.InvalidArgumentError:
        d = None
    if d is None:
        raise ValueError(f"No matching devices found for '{device}'")
    stats = d.memory_stats() or {}
    return {"current": int(stats.get("bytes_in_use", 0)), "peak": int(stats.get("peak_bytes_in_use", 0))}


def get_device_details(device):
    """TensorFlow's details of a physical device: ``{}`` for a CPU; a GPU's name and compute capability."""
    _check_physical(device)
    if device.device_type != "GPU":
        return {}
    d = jax.local_devices()[int(device.name.rsplit(":", 1)[1])]
    details = {"device_name": d.device_kind}
    cc = getattr(d, "compute_capability", None)
    if cc:
        details["compute_capability"] = tuple(int(x) for x in str(cc).split("."))
    return details


def get_visible_devices(device_type=None):
    """The devices JAX uses (all of them: see :func:`set_visible_devices`)."""
    return list_physical_devices(device_type)


def set_visible_devices(devices, device_type=None):
    """Accepted for compatibility: JAX chooses devices (JAX_PLATFORMS, CUDA_VISIBLE_DEVICES)."""


def set_soft_device_placement(enabled):
    """Whether ``tf.device`` falls back to an available device for one this process lacks (default True).

    Off, ``with tf.device('GPU:0')`` on a CPU-only machine raises TensorFlow's
    ``InvalidArgumentError`` ("Could not satisfy device specification ...").
    """
    _devices.set_soft_device_placement(enabled)


def get_soft_device_placement():
    """Whether soft device placement is on (:func:`set_soft_device_placement`)."""
    return _devices.get_soft_device_placement()


def _enable_tf32(enabled):
    """``tf.config.experimental.enable_tensor_float_32_execution``: whether float32 matrix
    products and convolutions may round their inputs to TensorFloat-32 on GPUs that have it
    (Ampere and newer), as TensorFlow does by default: faster, about 3 decimal digits in the
    products. Off, they compute in full float32 (JAX's ``jax_default_matmul_precision`` set to
    ``"highest"``). A CPU computes in float32 either way.

    Example:
        >>> import tapejax as tf
        >>> tf.config.experimental.enable_tensor_float_32_execution(False)
        >>> tf.config.experimental.tensor_float_32_execution_enabled()
        False
        >>> tf.config.experimental.enable_tensor_float_32_execution(True)
    """
    jax.config.update("jax_default_matmul_precision", None if enabled else "highest")


def _tf32_enabled():
    """Whether TensorFloat-32 execution is enabled (the default): see
    ``tf.config.experimental.enable_tensor_float_32_execution``."""
    return jax.config.jax_default_matmul_precision not in ("highest", "float32", "HIGHEST")


def _enable_op_determinism():
    """``tf.config.experimental.enable_op_determinism``: every op then runs compiled, also at
    shapes met for the first time (which otherwise run once in NumPy, equal to the compiled
    result to rounding), so a result never depends on which shapes were met before. XLA's CPU
    ops are deterministic.

    Example:
        >>> import tapejax as tf
        >>> tf.config.experimental.enable_op_determinism()
    """
    _new_shapes.run_new_shapes_on_host = False


def _get_optimizer_experimental_options():
    """The experimental optimizer options set so far (``tf.config.optimizer.get_experimental_options``),
    as TensorFlow reports them: its switches that were set, ``disable_model_pruning`` and
    ``disable_meta_optimizer`` always.

    Example:
        >>> import tapejax as tf
        >>> tf.config.optimizer.get_experimental_options()
        {'disable_model_pruning': False, 'disable_meta_optimizer': False}
    """
    return _graph_options.get_options()


def _set_optimizer_experimental_options(options):
    """Sets experimental optimizer options (``tf.config.optimizer.set_experimental_options``).

    TensorFlow's Grappler switches. XLA optimizes every compiled program its own way, so only
    ``debug_stripper`` changes what runs here: on, ``tf.print`` and the ``tf.debugging`` checks
    (``check_numerics``, ``Assert``, ``assert_*``) are left out of ``tf.function`` programs, as
    Grappler strips them from TensorFlow's graphs (eager ops still check). The others are kept
    and reported by ``get_experimental_options``.

    Example:
        >>> import tapejax as tf
        >>> tf.config.optimizer.set_experimental_options({'debug_stripper': True})
        >>> @tf.function
        ... def f(x):
        ...     return tf.debugging.check_numerics(x, "Bad!")
        >>> f(tf.constant(float('inf')))
        <tf.Tensor: shape=(), dtype=float32, numpy=inf>
        >>> tf.config.optimizer.set_experimental_options({'debug_stripper': False})
    """
    _graph_options.set_options(options)


_jit = [False]


def _get_optimizer_jit():
    """``'autoclustering'`` after ``tf.config.optimizer.set_jit(True)``, else ``''`` (every
    ``tf.function`` is one XLA program here either way)."""
    return "autoclustering" if _jit[0] else ""


def _set_optimizer_jit(enabled):
    """``tf.config.optimizer.set_jit``: recorded for :func:`get_jit`; tapejax compiles every
    ``tf.function`` with XLA whatever it says."""
    _jit[0] = enabled in (True, "autoclustering")


optimizer = types.SimpleNamespace(
    get_experimental_options=_get_optimizer_experimental_options,
    set_experimental_options=_set_optimizer_experimental_options,
    get_jit=_get_optimizer_jit,
    set_jit=_set_optimizer_jit,
)


experimental = types.SimpleNamespace(
    list_physical_devices=list_physical_devices,
    list_logical_devices=list_logical_devices,
    get_visible_devices=get_visible_devices,
    set_visible_devices=set_visible_devices,
    enable_tensor_float_32_execution=_enable_tf32,
    tensor_float_32_execution_enabled=_tf32_enabled,
    set_memory_growth=set_memory_growth,
    get_memory_growth=get_memory_growth,
    get_memory_info=get_memory_info,
    get_device_details=get_device_details,
    set_virtual_device_configuration=set_logical_device_configuration,
    get_virtual_device_configuration=get_logical_device_configuration,
    VirtualDeviceConfiguration=LogicalDeviceConfiguration,
    enable_op_determinism=_enable_op_determinism,
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
    batches, sequences) would grow without end. On the CPU, eager ops and backward passes
    at shapes met for the first time are not compiled: they are traced and computed by
    NumPy, and compiled when the shapes come back. The caches are least-recently-used and
    bounded:

    Args:
        max_programs: compiled backward passes kept, and traces kept per ``tf.function``
            (default 32). An evicted trace is traced again when its signature comes back.
        max_bytes: the memory those programs may hold, per cache (default 256 MiB), measured as
            what the process's resident set grew by while each was compiled and first run.
        max_shapes_per_structure: a tape met again is compiled whole, up to this many
            shapes or arrangements of a tape of the same kinds of operations (default 8).
            Past that, one whose ops' VJPs were met before (a sequence unrolled to a new
            length) is differentiated op by op: each op's VJP a small program compiled per
            (op, shapes) and shared by every tape, instead of one whole program per shape.
            A shape seen 3 times is compiled whole.
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
        setattr(_cache.limits, name, value)
    _backward._BACKWARD_CACHE.trim()


def get_compile_cache_limits():
    """The limits set by :func:`set_compile_cache_limits`, as a dict.

    Example:
        >>> import tapejax as tf
        >>> sorted(tf.config.experimental.get_compile_cache_limits())
        ['max_bytes', 'max_programs', 'max_shapes_per_structure', 'max_variants_per_op']
    """
    lim = _cache.limits
    return {name: getattr(lim, name) for name in
            ("max_programs", "max_bytes", "max_shapes_per_structure", "max_variants_per_op")}


experimental.set_compile_cache_limits = set_compile_cache_limits


# ---------------------------------------------------------------------------
# Lazy execution (tapejax's own: eager ops fused into one compiled program)
# ---------------------------------------------------------------------------

def set_lazy_execution(enabled, max_pending_ops=None, fuse_ops=None):
    """Turns lazy execution of eager ops on or off (off by default; ``TAPEJAX_LAZY=1`` in the
    environment turns it on at import).

    While it is on, eager ops (inside and outside a ``GradientTape``) are not run one by
    one: they are recorded into a pending program, which runs as one compiled XLA program
    -- cached by its structure, so a loop compiles it once; a program met for the first time
    runs on the host (NumPy) and is compiled when it comes back -- when a value is observed
    (``.numpy()``, ``print``, ``bool``/``float``, NumPy conversion, a Variable assignment, a
    Python ``if`` on a tensor), after ``max_pending_ops`` ops, or when it is turned off.
    ``tape.gradient`` of pending values runs forward and backward as one program. Shapes and
    dtypes are inferred when an op is called, so an op given incompatible arguments raises
    its error at that line, as in eager mode. Turning it off runs what is pending.

    It pauses (ops run now) while TensorFlow's new type promotion is on
    (``experimental_enable_numpy_behavior(dtype_conversion_mode="all")`` or ``"safe"``).

    Off by default: it pays for a loop that repeats a step (a custom training loop, a long
    elementwise chain with its gradient: one program per step), while code that runs once
    (a notebook cell) is traced as a whole program instead of reusing the ops compiled
    before.

    On a CPU no op of a compiled program is fused with its neighbours in a way that rounds
    differently (XLA would turn a multiply and the add after it into one FMA instruction,
    which rounds once): arithmetic ops are fenced by adding a run-time -0.0 to their outputs,
    the others are compiled apart. Values equal eager execution's bit for bit, as eager's
    equal TensorFlow's (a program run on the host equals them to rounding, as eager ops at new
    shapes do; ``enable_op_determinism`` compiles it). ``fuse_ops=True`` lets XLA fuse across
    ops (faster; values within rounding, as a ``tf.function`` gives). On accelerators programs
    are always fused.

    Args:
        enabled: True to turn it on, False to turn it off.
        max_pending_ops: the most ops a pending program holds before it runs (default 1024).
        fuse_ops: True to let XLA fuse across ops on a CPU too (default False; None: unchanged).

    Example:
        >>> import tapejax as tf
        >>> tf.config.experimental.set_lazy_execution(True)
        >>> x = tf.constant([1.0, 2.0])
        >>> y = tf.tanh(tf.sin(x) * 2.0 + 1.0)     # pending: nothing has run yet
        >>> y.shape
        TensorShape([2])
        >>> print(y.numpy().round(3))                 # observed: the three ops run as one program
        [0.991 0.993]
        >>> tf.config.experimental.set_lazy_execution(False)
    """
    _lazy.set_enabled(enabled, max_pending_ops, fuse_ops)
    _weak.lazy_changed()   # paused while TF's new type promotion is on


def lazy_execution_enabled():
    """Whether :func:`set_lazy_execution` is on.

    Example:
        >>> import tapejax as tf
        >>> tf.config.experimental.lazy_execution_enabled()
        False
    """
    return _lazy.config.enabled


def describe_lazy_execution():
    """A line saying what lazy execution has pending in this thread and what its last run
    fused (ops by name, inputs, outputs, whether it ran on the host, compiled or hit the cache).

    Example:
        >>> import tapejax as tf
        >>> tf.config.experimental.set_lazy_execution(True)
        >>> x = tf.constant([1.0, 2.0])
        >>> y = tf.sin(x) * 2.0
        >>> print(tf.config.experimental.describe_lazy_execution())
        lazy execution: on (max_pending_ops=1024); pending: 2 ops (sin, multiply); 2 inputs, 1 outputs; pending; ...
        >>> _ = y.numpy()
        >>> tf.config.experimental.set_lazy_execution(False)
    """
    return _lazy.describe()


experimental.set_lazy_execution = set_lazy_execution
experimental.lazy_execution_enabled = lazy_execution_enabled
experimental.describe_lazy_execution = describe_lazy_execution
experimental.get_compile_cache_limits = get_compile_cache_limits
