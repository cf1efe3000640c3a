"""tf.experimental.dtensor on ``jax.sharding``: meshes, layouts and distributed tensors.

A DTensor is a Tensor whose jax array is sharded over a mesh of devices: a
:class:`Layout` is a ``NamedSharding`` (an axis sharded over a mesh dimension, or
``UNSHARDED``: replicated), a :class:`Mesh` a ``jax.sharding.Mesh``. Ops on DTensors are
JAX's on sharded arrays: XLA partitions them (SPMD) and adds the collectives, inside a
``tf.function`` as one program. A :class:`DVariable` keeps its layout when assigned.

Example:
    >>> import tapejax as tf
    >>> from tapejax.experimental import dtensor
    >>> mesh = dtensor.create_mesh([("batch", 1)], devices=["CPU:0"])
    >>> layout = dtensor.Layout(["batch", dtensor.UNSHARDED], mesh)
    >>> x = dtensor.call_with_layout(tf.ones, layout, shape=(4, 2))
    >>> dtensor.fetch_layout(x) == layout
    True
    >>> v = dtensor.DVariable(x)
    >>> v.layout.sharding_specs
    ['batch', 'unsharded']
"""
import weakref

import jax
import numpy as np
from jax.sharding import Mesh as _JaxMesh, NamedSharding, PartitionSpec

from .._core import devices as _devices, state as _state
from .._core.tensor import Tensor, _TensorBase, to_array
from .._core.variable import Variable

UNSHARDED = "unsharded"
MATCH = "match"

_MESHES = weakref.WeakValueDictionary()   # id of a jax Mesh -> the dtensor Mesh made of it


class Mesh:
    """Devices arranged in named dimensions (``tf.experimental.dtensor.Mesh``): a
    ``jax.sharding.Mesh`` (its ``jax_mesh``). Make one with :func:`create_mesh`."""

    def __init__(self, dim_names, devices, mesh_name=""):
        self._dim_names = list(dim_names)
        self._devices = np.asarray(devices, dtype=object)
        self.jax_mesh = _JaxMesh(self._devices, tuple(self._dim_names))
        self.name = mesh_name
        _MESHES[id(self.jax_mesh)] = self

    @property
    def dim_names(self):
        return list(self._dim_names)

    def shape(self):
        """The size of each dimension, in order."""
        return list(self._devices.shape)

    @property
    def size(self):
        return int(self._devices.size)

    def dim_size(self, dim_name):
        return self._devices.shape[self._dim_names.index(dim_name)]

    def __contains__(self, dim_name):
        return dim_name in self._dim_names

    def __getitem__(self, dim_name):
        return (dim_name, self.dim_size(dim_name))

    def device_type(self):
        return _devices.device_type(self._devices.flat[0])

    def local_devices(self):
        """The mesh's devices as TensorFlow names them, in mesh order."""
        return [_devices.device_name(d) for d in self._devices.flat]

    def local_device_ids(self):
        return list(range(self.size))

    def local_device_locations(self):
        """Each device's index along each dimension (``{dim_name: index}``), in mesh order."""
        return [dict(zip(self._dim_names, (int(i) for i in idx))) for idx in np.ndindex(*self._devices.shape)]

    def to_string(self):
        dims = ",".join(f"{n}={s}" for n, s in zip(self._dim_names, self._devices.shape))
        ids = ",".join(str(i) for i in range(self.size))
        return f"|{dims}|{ids}|{ids}|{','.join(self.local_devices())}"

    def __eq__(self, other):
        return isinstance(other, Mesh) and self._dim_names == other._dim_names and \
            self._devices.shape == other._devices.shape and list(self._devices.flat) == list(other._devices.flat)

    def __hash__(self):
        return hash((tuple(self._dim_names), self._devices.shape, tuple(d.id for d in self._devices.flat)))

    def __repr__(self):
        return f"Mesh.from_string({self.to_string()})"


def _device(d):
    """A jax device from a TensorFlow device name, a ``tf.config.LogicalDevice`` or a jax device."""
    if isinstance(d, jax.Device):
        return d
    name = d if isinstance(d, str) else d.name
    dev = _devices.resolve(_devices.parse(name), soft=False)
    return dev if dev is not None else jax.local_devices()[0]


def create_mesh(mesh_dims=None, mesh_name="", devices=None, device_type=None, use_xla_spmd=False):
    """A single-client mesh (``tf.experimental.dtensor.create_mesh``).

    Args:
        mesh_dims: ``[(name, size), ...]`` (or a dict); one dimension ``'x'`` over every
            device when omitted.
        mesh_name: the mesh's name.
        devices: TensorFlow device names (``'CPU:0'``) or jax devices; the local devices of
            ``device_type`` (the accelerators, else the CPUs) when omitted.
        device_type: ``'CPU'``, ``'GPU'`` or ``'TPU'``, when ``devices`` is omitted.
        use_xla_spmd: accepted (XLA's SPMD partitioner is always used).

    Raises:
        ValueError: when the dimensions' sizes do not multiply to the number of devices.

    Example:
        >>> from tapejax.experimental import dtensor
        >>> dtensor.create_mesh([("batch", 1)], devices=["CPU:0"]).shape()
        [1]
    """
    if devices is None:
        typ = (device_type or "").upper()
        local = _devices.local_devices()
        if not typ:
            accel = [d for t, _, d in local if t != "CPU"]
            devs = accel or [d for t, _, d in local if t == "CPU"]
        else:
            devs = [d for t, _, d in local if t == typ]
    else:
        devs = [_device(d) for d in devices]
    if mesh_dims is None:
        mesh_dims = [("x", len(devs))]
    elif isinstance(mesh_dims, dict):
        mesh_dims = list(mesh_dims.items())
    names = [n for n, _ in mesh_dims]
    sizes = [int(s) for _, s in mesh_dims]
    if int(np.prod(sizes)) != len(devs):
        raise ValueError(f"length of devices ({len(devs)}) must be equal to total size of the mesh of "
                         f"shape {sizes}")
    grid = np.empty(len(devs), dtype=object)
    grid[:] = devs
    return Mesh(names, grid.reshape(sizes), mesh_name)


class Layout:
    """How a tensor's axes are split over a mesh (``tf.experimental.dtensor.Layout``): for each
    axis a mesh dimension it is sharded over, or ``UNSHARDED`` (replicated).

    Raises:
        ValueError: for a mesh dimension the mesh lacks or one used twice (TensorFlow's messages).
    """

    def __init__(self, sharding_specs, mesh):
        if not isinstance(mesh, Mesh):
            raise ValueError("mesh is not a valid Mesh object.")
        specs = list(sharding_specs)
        for s in specs:
            if s in (UNSHARDED, MATCH):
                continue
            if specs.count(s) > 1:
                raise ValueError(f"Mesh dimension {s} was repeated in sharding specification {specs}. "
                                 "Mesh dimensions must be unique in a layout.")
            if s not in mesh:
                raise ValueError(f"{s}: A dimension sharding must either be a valid mesh dimension or UNSHARDED.")
        self.sharding_specs = specs
        self.mesh = mesh

    @classmethod
    def replicated(cls, mesh, rank):
        """Every axis replicated."""
        return cls([UNSHARDED] * rank, mesh)

    @classmethod
    def batch_sharded(cls, mesh, batch_dim, rank, axis=0):
        """Axis ``axis`` sharded over ``batch_dim``, the others replicated."""
        specs = [UNSHARDED] * rank
        specs[axis] = batch_dim
        return cls(specs, mesh)

    @property
    def rank(self):
        return len(self.sharding_specs)

    @property
    def shape(self):
        """The mesh's shape (TensorFlow's ``Layout.shape``)."""
        return self.mesh.shape()

    def num_shards(self, idx):
        s = self.sharding_specs[idx]
        return 1 if s in (UNSHARDED, MATCH) else self.mesh.dim_size(s)

    def delete(self, dims):
        """This layout without the axes ``dims``."""
        dims = dims if isinstance(dims, list) else [dims]
        return Layout([s for i, s in enumerate(self.sharding_specs) if i not in dims], self.mesh)

    def is_fully_replicated(self):
        return all(s == UNSHARDED for s in self.sharding_specs)

    @property
    def sharding(self):
        """The ``jax.sharding.NamedSharding`` this layout is."""
        return NamedSharding(self.mesh.jax_mesh, PartitionSpec(*[None if s == UNSHARDED else s
                                                                  for s in self.sharding_specs]))

    def to_string(self):
        return f"sharding_specs:{','.join(self.sharding_specs)}, mesh:{self.mesh.to_string()}"

    def __eq__(self, other):
        return isinstance(other, Layout) and self.sharding_specs == other.sharding_specs and self.mesh == other.mesh

    def __hash__(self):
        return hash((tuple(self.sharding_specs), self.mesh))

    def __repr__(self):
        return f"Layout.from_string({self.to_string()})"


def _value(x):
    return x._value if isinstance(x, _TensorBase) else to_array(x)


def relayout(tensor, layout, name=None):
    """``tensor`` with the layout ``layout`` (its values moved between devices as needed)."""
    v = _value(tensor)
    if len(np.shape(v)) != layout.rank:
        raise ValueError(f"Layout of rank {layout.rank} given for a tensor of rank {len(np.shape(v))}: "
                         f"{layout}.")
    if isinstance(v, jax.core.Tracer):
        return Tensor(jax.lax.with_sharding_constraint(v, layout.sharding))
    return Tensor(_state.put(v, layout.sharding))


copy_to_mesh = relayout


def call_with_layout(fn, layout, *args, **kwargs):
    """``fn(*args, **kwargs)`` with its result given ``layout`` (``tf.experimental.dtensor.call_with_layout``).

    Example:
        >>> import tapejax as tf
        >>> from tapejax.experimental import dtensor
        >>> mesh = dtensor.create_mesh([("x", 1)], devices=["CPU:0"])
        >>> dtensor.call_with_layout(tf.zeros, dtensor.Layout.replicated(mesh, 1), shape=[2])
        <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0., 0.], dtype=float32)>
    """
    out = fn(*args, **kwargs)
    if isinstance(out, (list, tuple)):
        return type(out)(relayout(o, layout) for o in out)
    return relayout(out, layout)


def fetch_layout(tensor):
    """The :class:`Layout` of a DTensor.

    Raises:
        ValueError: for a tensor that is not sharded over a mesh made by :func:`create_mesh`.
    """
    if isinstance(tensor, DVariable):
        return tensor.layout
    sharding = getattr(_value(tensor), "sharding", None)
    mesh = _MESHES.get(id(getattr(sharding, "mesh", None))) if isinstance(sharding, NamedSharding) else None
    if mesh is None:
        raise ValueError("FetchLayout expects a tensor placed on the layout device: this tensor is not a "
                         "DTensor (make one with dtensor.call_with_layout, relayout or pack).")
    spec = list(sharding.spec) + [None] * (len(np.shape(_value(tensor))) - len(sharding.spec))
    return Layout([UNSHARDED if s is None else s for s in spec], mesh)


def pack(tensors, layout):
    """A DTensor of ``layout`` from its components, one per device of the mesh, in mesh order
    (``tf.experimental.dtensor.pack``).

    Raises:
        ValueError: when the number of components is not the number of devices, or the
            components' shapes differ.
    """
    comps = [np.asarray(_value(t)) for t in tensors]
    devs = list(layout.mesh.jax_mesh.devices.flat)
    if len(comps) != len(devs):
        raise ValueError(f"Pack expects {len(devs)} components, one per device of the mesh, but received "
                         f"{len(comps)}.")
    if len({c.shape for c in comps}) != 1:
        raise ValueError(f"Pack expects components of one shape, got {[c.shape for c in comps]}.")
    shape = tuple(d * layout.num_shards(i) for i, d in enumerate(comps[0].shape))
    arrays = [jax.device_put(c, d) for c, d in zip(comps, devs)]
    return Tensor(jax.make_array_from_single_device_arrays(shape, layout.sharding, arrays))


def unpack(tensor):
    """The components of a DTensor, one per device of its mesh, in mesh order."""
    layout = fetch_layout(tensor)
    by_device = {s.device: s.data for s in _value(tensor).addressable_shards}
    return [Tensor(by_device[d]) for d in layout.mesh.jax_mesh.devices.flat]


class DVariable(Variable):
    """A Variable with a layout (``tf.experimental.dtensor.DVariable``): its initial value's (a
    DTensor's), kept by every assignment.

    Example:
        >>> import tapejax as tf
        >>> from tapejax.experimental import dtensor
        >>> mesh = dtensor.create_mesh([("x", 1)], devices=["CPU:0"])
        >>> v = dtensor.DVariable(dtensor.call_with_layout(tf.ones, dtensor.Layout.replicated(mesh, 1), [3]))
        >>> _ = v.assign_add([1.0, 2.0, 3.0])
        >>> v.numpy(), v.layout.sharding_specs
        (array([2., 3., 4.], dtype=float32), ['unsharded'])
    """

    def __init__(self, initial_value, *args, dtype=None, **kwargs):
        layout = kwargs.pop("layout", None)
        value = initial_value() if callable(initial_value) else initial_value
        if layout is None:
            layout = fetch_layout(value)
        super().__init__(value, *args, dtype=dtype, **kwargs)
        self.layout = layout
        _state.place(self, layout.sharding)


def client_id():
    """This client's index (0: tapejax runs DTensor programs as one client)."""
    return jax.process_index()


def num_clients():
    return jax.process_count()


def local_devices(device_type, for_client_id=None):
    """This client's devices of ``device_type`` as TensorFlow names them."""
    return [_devices.device_name(d) for t, _, d in _devices.local_devices() if t == device_type.upper()]


def num_local_devices(device_type):
    return len(local_devices(device_type))


def num_global_devices(device_type):
    return num_local_devices(device_type) * num_clients()
