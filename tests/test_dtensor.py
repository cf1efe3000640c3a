"""tf.experimental.dtensor on jax.sharding, as the core distribution guide uses it. Values and
messages are TF 2.21's, recorded with /tmp/tf/bin/python (one CPU device here; the guide's
8 virtual CPUs are checked in a subprocess)."""
import os
import subprocess
import sys
import textwrap

import pytest

import tapejax as tf
from tapejax.experimental import dtensor


@pytest.fixture
def mesh():
    return dtensor.create_mesh([("batch", 1)], devices=["CPU:0"])


def test_mesh_and_layout(mesh):
    assert (mesh.dim_names, mesh.shape(), mesh.size, "batch" in mesh) == (["batch"], [1], 1, True)
    assert mesh.local_device_locations() == [{"batch": 0}]
    layout = dtensor.Layout(["batch", dtensor.UNSHARDED], mesh)
    assert (layout.sharding_specs, layout.shape, layout.rank) == (["batch", "unsharded"], [1], 2)
    assert layout.delete([0]).sharding_specs == ["unsharded"]
    assert dtensor.Layout.batch_sharded(mesh, "batch", 3, axis=1).sharding_specs == ["unsharded", "batch", "unsharded"]
    assert dtensor.Layout.replicated(mesh, 2).sharding_specs == ["unsharded", "unsharded"]
    for make, message in (
            (lambda: dtensor.Layout(["x"], mesh), "x: A dimension sharding must either be a valid mesh dimension "
                                                  "or UNSHARDED."),
            (lambda: dtensor.Layout(["batch", "batch"], mesh), "Mesh dimension batch was repeated in sharding "
             "specification ['batch', 'batch']. Mesh dimensions must be unique in a layout."),
            (lambda: dtensor.Layout(["batch"], "mesh"), "mesh is not a valid Mesh object."),
            (lambda: dtensor.create_mesh([("batch", 2)], devices=["CPU:0"]),
             "length of devices (1) must be equal to total size of the mesh of shape [2]")):
        with pytest.raises(ValueError) as e:
            make()
        assert str(e.value) == message


def test_dtensors_and_dvariables(mesh):
    layout = dtensor.Layout(["batch", dtensor.UNSHARDED], mesh)
    x = dtensor.call_with_layout(tf.ones, layout, shape=(4, 2))
    assert dtensor.fetch_layout(x) == layout and x.shape == (4, 2)
    p = dtensor.pack([tf.constant([[1., 2.], [3., 4.]])], layout)
    assert [c.numpy().tolist() for c in dtensor.unpack(p)] == [[[1.0, 2.0], [3.0, 4.0]]]
    v = dtensor.DVariable(dtensor.call_with_layout(tf.zeros, dtensor.Layout.replicated(mesh, 1), shape=[2]))

    @tf.function
    def f(a):
        v.assign_add(tf.reduce_sum(a, 0))
        return tf.matmul(a, tf.ones([2, 1]))
    assert [c.numpy().tolist() for c in dtensor.unpack(f(p))] == [[[3.0], [7.0]]]
    assert v.numpy().tolist() == [4.0, 6.0]
    assert v.layout.sharding_specs == ["unsharded"] and dtensor.fetch_layout(v).sharding_specs == ["unsharded"]
    assert (dtensor.num_clients(), dtensor.client_id()) == (1, 0)


_GUIDE = textwrap.dedent("""
    import tapejax as tf
    from tapejax.experimental import dtensor
    cpu = tf.config.list_physical_devices('CPU')[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 8)
    mesh = dtensor.create_mesh([("batch", 8)], devices=[f'CPU:{i}' for i in range(8)])
    layout = dtensor.Layout(['batch', dtensor.UNSHARDED], mesh)
    x = tf.reshape(tf.range(32, dtype=tf.float32), [16, 2])
    parts = tf.nest.map_structure(lambda t: tf.split(t, layout.shape[0], axis=0), [x])[0]
    d = dtensor.pack(parts, layout)
    w = dtensor.DVariable(dtensor.call_with_layout(tf.function(tf.random.stateless_uniform),
        dtensor.Layout.replicated(mesh, 2), shape=(2, 3), seed=(22, 23), minval=-1.0, maxval=1.0))
    @tf.function
    def step(d):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.matmul(d, w) ** 2)
        w.assign_sub(0.01 * tape.gradient(loss, w))
        return loss
    print(len(dtensor.unpack(d)), dtensor.unpack(d)[3].numpy().tolist())
    print(w.numpy()[0].tolist())
    print(float(step(d)), dtensor.fetch_layout(w).sharding_specs, len(w._value.sharding.device_set))
""")


def test_the_guides_eight_cpu_mesh():
    # TF 2.21 on the same program: 8 components (the 4th rows 6-7), stateless_uniform's weights,
    # the step's loss, the variable's layout
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(tf.__file__))]
                                                      + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    out = subprocess.run([sys.executable, "-c", _GUIDE], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.strip().splitlines()
    assert lines[0] == "8 [[12.0, 13.0], [14.0, 15.0]]"
    assert lines[1] == "[0.5485811233520508, 0.8008143901824951, 0.14422130584716797]"
    loss, specs = lines[2].split(" ", 1)
    assert abs(float(loss) - 60.12616729736328) < 1e-4 and specs == "['unsharded', 'unsharded'] 8"
