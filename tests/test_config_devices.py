"""tf.device, Tensor.device, tf.config's device lists, virtual CPUs, soft placement, memory info.

Expected values were recorded with TensorFlow 2.21.0 (CPU). JAX fixes its CPU count when it
starts, and this test process has started it with one device: the virtual-device split runs
in fresh subprocesses (``_run``), as in TensorFlow it must come before the first computation.
"""
import os
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest

import tapejax as tf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
# Where new tensors go: the first accelerator where there is one, as in TensorFlow.
DEV0 = f"/job:localhost/replica:0/task:0/device:{'CPU' if jax.default_backend() == 'cpu' else 'GPU'}:0"
# Recorded from TensorFlow on a machine with no GPU (what it lists, where a GPU request falls back).
cpu_only = pytest.mark.skipif(jax.default_backend() != "cpu", reason="expects a machine with only a CPU, as "
                              "TensorFlow's recorded values (checked on a GPU machine by the tests besides)")


def _run(code):
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=ROOT)
    env.pop("XLA_FLAGS", None)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.splitlines()


def test_tensor_device_is_tensorflows_full_name():
    assert tf.constant([1.0]).device == DEV0
    assert (tf.constant([1.0]) * 2).device == DEV0
    assert tf.Variable(1.0).device == DEV0


def test_tensor_device_is_empty_while_traced():
    seen = []

    @tf.function
    def f(x):
        seen.append(x.device)
        return x + 1

    assert f(tf.constant(1.0)).device == DEV0
    assert seen == [""]


def test_device_scope_inside_a_function_body_traces():
    @tf.function
    def f(x):
        with tf.device("CPU:0"):
            y = x * 2
        with tf.device("GPU:0"):  # soft placement: no GPU here
            return y + 1

    assert float(f(tf.constant(1.0))) == 3.0
    with tf.device("CPU:0"):
        r = f(tf.constant(3.0))
    assert float(r) == 7.0 and r.device == CPU0


@pytest.mark.parametrize("name", ["CPU:0", "/device:CPU:0", "/job:localhost/replica:0/task:0/device:CPU:0",
                                  "cpu:0", "/cpu:0", "device:CPU:0", "CPU", "/cpu:*", "", None,
                                  "/job:localhost", "/task:0/cpu:0", "/device:cpu:0"])
def test_device_scope_accepts_tensorflows_spellings(name):
    with tf.device(name):
        y = tf.constant([1.0]) + 1
    assert y.device == (DEV0 if name in ("", None, "/job:localhost") else CPU0)


def test_device_scope_is_a_context_manager_that_places_new_tensors():
    import jax
    with tf.device("CPU:0") as scope:
        assert scope is not None
        assert jax.config.jax_default_device == jax.devices("cpu")[0]
    assert jax.config.jax_default_device is None


@pytest.mark.parametrize("name, message", [
    ("XPU:0", "Unknown attribute 'XPU' is encountered while parsing the device spec: 'XPU:0'."),
    ("foo", "Unknown attribute 'foo' is encountered while parsing the device spec: 'foo'."),
    ("CPU:0/GPU:0", "Multiple device types are not allowed while parsing the device spec: CPU:0/GPU:0."),
])
def test_unparsable_device_raises_tensorflows_value_error(name, message):
    scope = tf.device(name)  # TensorFlow parses on entry
    with pytest.raises(ValueError) as info:
        with scope:
            pass
    assert str(info.value) == message


def test_device_name_of_wrong_type_raises_type_error():
    with pytest.raises(TypeError, match="device name string"):
        with tf.device(0):
            pass


@cpu_only
def test_soft_placement_falls_back_like_tensorflow():
    # TF 2.21 on a CPU-only machine: GPU:0, CPU:9 and /device:XPU:0 all run on CPU:0.
    assert tf.config.get_soft_device_placement() is True
    for name in ["GPU:0", "/gpu:0", "CPU:9", "/device:XPU:0", "/job:localhost/device:GPU:0"]:
        with tf.device(name):
            assert (tf.constant([1.0]) + 1).device == CPU0


@cpu_only
def test_hard_placement_raises_invalid_argument_with_the_devices_there_are():
    tf.config.set_soft_device_placement(False)
    try:
        assert tf.config.get_soft_device_placement() is False
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            with tf.device("GPU:0"):
                pass
        assert str(info.value) == (
            "Could not satisfy device specification '/job:localhost/replica:0/task:0/device:GPU:0'. "
            "enable_soft_placement=0. Supported device types [CPU]. All available devices "
            "[/job:localhost/replica:0/task:0/device:CPU:0].")
        with pytest.raises(tf.errors.InvalidArgumentError, match="device:CPU:9'"):
            with tf.device("CPU:9"):
                pass
        with tf.device("CPU:0"):  # a device that exists is fine
            assert tf.ones([1]).device == CPU0
    finally:
        tf.config.set_soft_device_placement(True)


def test_unknown_job_or_task_or_replica_raises_even_with_soft_placement():
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        with tf.device("/job:worker/device:CPU:0"):
            pass
    assert str(info.value).startswith("/job:worker/replica:0/task:0/device:CPU:0 unknown device.")
    with pytest.raises(tf.errors.InvalidArgumentError, match="unknown device"):
        with tf.device("/job:localhost/replica:0/task:1/device:CPU:0"):
            pass
    with pytest.raises(tf.errors.InvalidArgumentError, match="enable_soft_placement=1"):
        with tf.device("/replica:1/device:CPU:0"):
            pass


def test_device_scope_restores_on_error():
    import jax
    with pytest.raises(ZeroDivisionError):
        with tf.device("CPU:0"):
            1 / 0
    assert jax.config.jax_default_device is None
    with tf.device("CPU:0"):
        with pytest.raises(ValueError):
            with tf.device("bogus"):
                pass
        assert jax.config.jax_default_device == jax.devices("cpu")[0]
    assert jax.config.jax_default_device is None


@cpu_only
def test_device_lists_are_tensorflows_namedtuples():
    assert repr(tf.config.list_physical_devices()) == "[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]"
    assert repr(tf.config.list_physical_devices("CPU")) == "[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]"
    assert tf.config.list_physical_devices("GPU") == []
    assert repr(tf.config.list_logical_devices()) == "[LogicalDevice(name='/device:CPU:0', device_type='CPU')]"
    # TF matches the type exactly: 'cpu' lists nothing.
    assert tf.config.list_logical_devices("cpu") == [] and tf.config.list_physical_devices("cpu") == []
    assert tf.config.experimental.list_physical_devices is tf.config.list_physical_devices
    assert repr(tf.config.LogicalDeviceConfiguration()) == (
        "LogicalDeviceConfiguration(memory_limit=None, experimental_priority=None, "
        "experimental_device_ordinal=None)")
    assert tf.config.experimental.VirtualDeviceConfiguration is tf.config.LogicalDeviceConfiguration


def test_virtual_devices_after_start_raise_tensorflows_runtime_error_with_the_fix():
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.constant(1.0) + 1  # JAX has started
    for setter in (tf.config.set_logical_device_configuration, tf.config.experimental.set_virtual_device_configuration):
        with pytest.raises(RuntimeError) as info:
            setter(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        message = str(info.value)
        assert message.startswith("Virtual devices cannot be modified after being initialized")
        assert "--xla_force_host_platform_device_count=2" in message and "before any computation" in message
    assert tf.config.get_logical_device_configuration(cpu) is None
    # The configuration JAX already has is accepted (TensorFlow accepts setting the same one again).
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()])
    assert tf.config.get_logical_device_configuration(cpu) == [tf.config.LogicalDeviceConfiguration()]


@cpu_only
def test_virtual_device_configuration_errors_are_tensorflows():
    cpu = tf.config.list_physical_devices("CPU")[0]
    with pytest.raises(ValueError, match="^Setting memory limit on CPU virtual devices is currently not supported$"):
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration(memory_limit=100)] * 2)
    with pytest.raises(ValueError, match=r"^Unrecognized device: 'CPU:0'$"):
        tf.config.set_logical_device_configuration("CPU:0", [tf.config.LogicalDeviceConfiguration()])
    gpu = tf.config.PhysicalDevice("/physical_device:GPU:0", "GPU")
    with pytest.raises(ValueError, match=r"^Unrecognized device: PhysicalDevice\(name='/physical_device:GPU:0'"):
        tf.config.set_logical_device_configuration(gpu, [tf.config.LogicalDeviceConfiguration(memory_limit=10)])


@cpu_only
def test_memory_growth_and_info_on_cpu_as_tensorflow():
    cpu = tf.config.list_physical_devices("CPU")[0]
    # TensorFlow checks for a virtual-device configuration first (another test may have set one).
    expected = ("Cannot set memory growth on device when virtual devices configured"
                if tf.config.get_logical_device_configuration(cpu) is not None
                else "Cannot set memory growth on non-GPU and non-Pluggable devices")
    with pytest.raises(ValueError) as info:
        tf.config.experimental.set_memory_growth(cpu, True)
    assert str(info.value) == expected
    with pytest.raises(KeyError):
        tf.config.experimental.get_memory_growth(cpu)
    assert tf.config.experimental.get_memory_info("CPU:0") == {"current": 0, "peak": 0}
    assert tf.config.experimental.get_memory_info("/device:CPU:0") == {"current": 0, "peak": 0}
    with pytest.raises(ValueError, match="^No matching devices found for 'CPU:7'$"):
        tf.config.experimental.get_memory_info("CPU:7")
    with pytest.raises(ValueError, match="^No matching devices found for 'GPU:0'$"):
        tf.config.experimental.get_memory_info("GPU:0")
    with pytest.raises(TypeError):
        tf.config.experimental.get_memory_info(cpu)
    assert tf.config.experimental.get_device_details(cpu) == {}


@cpu_only
def test_mirrored_strategy_device_names_are_tensorflows():
    strategy = tf.distribute.MirroredStrategy(["/job:localhost/replica:0/task:0/device:CPU:0"])
    assert strategy.extended.worker_devices == (CPU0,)
    with pytest.raises(ValueError, match="cannot find the device"):
        tf.distribute.MirroredStrategy(["GPU:0"])  # a strategy does not fall back


SPLIT = """
import tapejax as tf
from jax._src import xla_bridge
cpu = tf.config.list_physical_devices('CPU')[0]
print('started', xla_bridge.backends_are_initialized())
"""


def test_split_cpu_into_logical_devices_before_the_first_computation():
    # Expected lines: TensorFlow 2.21's output of the same program.
    lines = _run(SPLIT + """
print(tf.config.get_logical_device_configuration(cpu))
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 4)
print(tf.config.list_logical_devices())
print(tf.config.list_physical_devices())
x = tf.constant(1.0)
print(x.device)
for name in ['CPU:0', '/device:CPU:0', '/job:localhost/replica:0/task:0/device:CPU:2', 'cpu:1', '/cpu:3', '/CPU:1']:
    with tf.device(name):
        y = tf.constant([1.0]) + 1
        print(name, '->', y.device)
try:
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
except RuntimeError as e:
    print(type(e).__name__, str(e).split(':')[0])
with tf.device('CPU:9'):
    print('CPU:9 ->', (tf.constant([1.0]) + 1).device)
with tf.device('CPU:1'):
    a = tf.constant([1.0]); v = tf.Variable(2.0)
    print('const', a.device, 'var', v.device)
    with tf.device(None):
        print('None nested', (a + 1).device)
    with tf.device(''):
        print("'' nested", (a + 1).device)
    with tf.device('CPU'):
        print("CPU nested", (a + 1).device)
    with tf.device('CPU:2'):
        print('nested', (a + 1).device)
print('outside', (a + 1).device, v.device, (v + 1).device)
f = tf.function(lambda x: x * 2, autograph=False)
with tf.device('CPU:1'):
    print('fn under CPU:1', f(tf.constant(2.0)).device)
print(tf.config.experimental.get_memory_info('CPU:1'))
s = tf.distribute.MirroredStrategy()
print(s.num_replicas_in_sync, s.extended.worker_devices)
""")
    L = "/job:localhost/replica:0/task:0/device:CPU:"
    assert lines == [
        "started False",
        "None",
        "[LogicalDevice(name='/device:CPU:0', device_type='CPU'), LogicalDevice(name='/device:CPU:1', "
        "device_type='CPU'), LogicalDevice(name='/device:CPU:2', device_type='CPU'), "
        "LogicalDevice(name='/device:CPU:3', device_type='CPU')]",
        "[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]",
        L + "0",
        "CPU:0 -> " + L + "0",
        "/device:CPU:0 -> " + L + "0",
        "/job:localhost/replica:0/task:0/device:CPU:2 -> " + L + "2",
        "cpu:1 -> " + L + "1",
        "/cpu:3 -> " + L + "3",
        "/CPU:1 -> " + L + "1",
        "RuntimeError Virtual devices cannot be modified after being initialized",
        "CPU:9 -> " + L + "0",
        f"const {L}1 var {L}1",
        f"None nested {L}0",
        f"'' nested {L}1",
        f"CPU nested {L}1",
        f"nested {L}2",
        f"outside {L}0 {L}1 {L}0",
        f"fn under CPU:1 {L}1",
        "{'current': 0, 'peak': 0}",
        f"4 ('{L}0', '{L}1', '{L}2', '{L}3')",
    ]


def test_mirrored_strategy_trains_over_two_logical_cpus():
    lines = _run(SPLIT + """
import numpy as np
tf.config.experimental.set_virtual_device_configuration(cpu, [tf.config.experimental.VirtualDeviceConfiguration()] * 2)
strategy = tf.distribute.MirroredStrategy()
print(strategy.num_replicas_in_sync, len(tf.config.list_logical_devices('CPU')))
with strategy.scope():
    w = tf.Variable([[1.0], [2.0]])
opt = tf.keras.optimizers.SGD(0.1)
x = np.arange(8, dtype='float32').reshape(4, 2)
y = np.ones((4, 1), 'float32')
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)

@tf.function
def step(xb, yb):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((tf.matmul(xb, w) - yb) ** 2)
    opt.apply_gradients([(tape.gradient(loss, w), w)])
    return loss

for xb, yb in strategy.experimental_distribute_dataset(dataset):
    loss = strategy.run(step, args=(xb, yb))
print(sorted({s.device.id for s in tf.convert_to_tensor(xb)._value.addressable_shards}))
print(np.round(w.numpy().ravel(), 5).tolist(), round(float(loss), 5))
""")
    # The same step on one device, by hand: loss = mean((xw - 1)^2), w -= 0.1 * dloss/dw.
    import numpy as np
    x = np.arange(8, dtype="float32").reshape(4, 2)
    w = np.array([[1.0], [2.0]], "float32")
    r = x @ w - 1
    w_new = w - 0.1 * (2 * x.T @ r / 4)
    assert lines[:2] == ["started False", "2 2"]
    assert lines[2] == "[0, 1]"  # the batch was split over both logical CPUs
    assert lines[3] == f"{np.round(w_new.ravel(), 5).tolist()} {round(float(np.mean(r ** 2)), 5)}"


def test_listing_accelerators_starts_jax_so_the_split_fails_with_the_fix():
    lines = _run("""
import tapejax as tf
tf.config.list_logical_devices()
cpu = tf.config.list_physical_devices('CPU')[0]
try:
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
except RuntimeError as e:
    print(e)
""")
    assert lines[0].startswith("Virtual devices cannot be modified after being initialized: JAX has started")


def test_memory_growth_before_start_sets_jaxs_preallocation_switch():
    lines = _run("""
import os
os.environ.pop('XLA_PYTHON_CLIENT_PREALLOCATE', None)
import tapejax as tf
gpu = tf.config.PhysicalDevice('/physical_device:GPU:0', 'GPU')  # listing GPUs would start JAX
print(tf.config.experimental.get_memory_growth(gpu))
tf.config.experimental.set_memory_growth(gpu, True)
print(os.environ['XLA_PYTHON_CLIENT_PREALLOCATE'], tf.config.experimental.get_memory_growth(gpu))
tf.constant(1.0) + 1  # JAX starts (on a CPU-only machine there is no GPU)
try:
    tf.config.experimental.set_memory_growth(gpu, True)
except ValueError as e:
    print(e)
""")
    assert lines == ["False", "false True",
                     "Unrecognized device: PhysicalDevice(name='/physical_device:GPU:0', device_type='GPU')"]


def test_tensor_float_32_switch_sets_jax_matmul_precision():
    # TensorFlow: on by default; off, float32 products are computed in full float32.
    assert tf.config.experimental.tensor_float_32_execution_enabled() is (jax.default_backend() != "gpu")
    before = tf.config.experimental.tensor_float_32_execution_enabled()
    a = np.random.default_rng(0).normal(size=(64, 64)).astype(np.float32)
    try:
        tf.config.experimental.enable_tensor_float_32_execution(False)
        assert tf.config.experimental.tensor_float_32_execution_enabled() is False
        assert jax.config.jax_default_matmul_precision == "highest"
        exact = (a.astype(np.float64) @ a.astype(np.float64))
        np.testing.assert_allclose(tf.matmul(a, a).numpy(), exact, rtol=1e-4, atol=1e-4)
        tf.config.experimental.enable_tensor_float_32_execution(True)
        assert tf.config.experimental.tensor_float_32_execution_enabled() is True
        assert jax.config.jax_default_matmul_precision is None
    finally:
        tf.config.experimental.enable_tensor_float_32_execution(before)
