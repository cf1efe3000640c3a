"""Keras 3's configurations of models: Sequential and functional ``get_config`` / ``from_config``.

A Sequential model's configuration lists its layers (its ``InputLayer`` first, when it has an
input shape) as ``serialize_keras_object`` describes them, and the input shape it was built
with; a functional model's lists each layer with the calls (``inbound_nodes``) that connect it,
each symbolic tensor as ``{'class_name': '__keras_tensor__', 'config': {'shape', 'dtype',
'keras_history': [layer name, node index, tensor index]}}``, and its inputs and outputs as such
histories. ``from_config`` makes new layers from them and connects them the same way.
"""
from .._core.tensor import TensorShape
from . import layers as _layers
from ._serialization import _lookup, _takes_custom_objects, deserialize_keras_object, serialize_keras_object
from .layers._base import InputLayer, KerasTensor


def _map(fn, value):
    """``fn`` applied to each KerasTensor in nested lists, tuples and dicts (other values kept)."""
    if isinstance(value, KerasTensor):
        return fn(value)
    if isinstance(value, (list, tuple)):
        items = [_map(fn, v) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, dict):
        return {k: _map(fn, v) for k, v in value.items()}
    return value


def _leaves(value):
    out = []
    _map(out.append, value)
    return out


def _history(tensor):
    """(layer, node index, tensor index) of a KerasTensor: the call that made it."""
    node = tensor._k_node
    if node is None:
        return tensor._k_input_layer, 0, 0
    index = next(i for i, t in enumerate(_leaves(node.outputs)) if t is tensor)
    return node.layer, node.index, index


def layer_from_config(entry, custom_objects=None):
    """A layer from one entry of a model's ``layers``: Keras 3's ``serialize_keras_object`` form
    (its ``build_config`` left to the model), or the ``{'class_name', 'config'}`` form of
    configurations written before (a layer class of ``tf.keras.layers`` or ``custom_objects``)."""
    if not (isinstance(entry, dict) and isinstance(entry.get("class_name"), str)
            and isinstance(entry.get("config"), dict)):
        raise ValueError(f"A layer's configuration must be a {{'class_name': ..., 'config': {{...}}}} dict; got "
                         f"{str(entry)[:200]}")
    name = entry["class_name"]
    if "module" in entry:
        cls = _lookup(name, entry.get("module"), entry.get("registered_name"), custom_objects)
    else:
        cls = (custom_objects or {}).get(name) or getattr(_layers, name, None)
    if not (isinstance(cls, type) and issubclass(cls, _layers.Layer)):
        raise ValueError(f"Unknown layer: '{name[:80]}'. Pass it in custom_objects={{'{name[:80]}': "
                         f"{name[:80]}}}.")
    if custom_objects and _takes_custom_objects(cls):
        return cls.from_config(dict(entry["config"]), custom_objects=custom_objects)
    return cls.from_config(dict(entry["config"]))


# -- Sequential ---------------------------------------------------------------

def sequential_config(model):
    """Keras 3's ``Sequential.get_config``."""
    config = _layers.Layer.get_config(model)
    stack = ([model._k_input_layer] if model._k_input_layer is not None else []) + list(model._k_layer_list)
    config["layers"] = [serialize_keras_object(layer) for layer in stack]
    if model.built and model._k_input_layer is not None:
        config["build_input_shape"] = model._k_input_layer.batch_shape
    return config


def sequential_from_config(cls, config, custom_objects=None):
    """Keras 3's ``Sequential.from_config``: its layers added in order, then built on
    ``build_input_shape`` when no InputLayer gave the shape."""
    if isinstance(config, dict) and "layers" in config:
        name, layer_configs, build_input_shape = config.get("name"), config["layers"], config.get("build_input_shape")
    else:
        name, layer_configs, build_input_shape = None, config, None
    model = cls(name=name)
    for entry in layer_configs:
        model.add(layer_from_config(entry, custom_objects))
    if not model.built and isinstance(build_input_shape, (list, tuple)) and build_input_shape:
        model.build(tuple(build_input_shape))
    return model


# -- functional ---------------------------------------------------------------

def functional_config(model):
    """Keras 3's ``Functional.get_config``: name, trainable, the layers with their inbound
    nodes, and the input and output layers as ``[layer name, node index, tensor index]``."""
    sym_in, sym_out, order = model._k_graph
    own = {}   # layer id -> its nodes in this model, in call order
    for node in order:
        own.setdefault(id(node.layer), []).append(node)
    new_index = {}   # node id -> its index among the layer's nodes in this model
    for nodes in own.values():
        for i, node in enumerate(sorted(nodes, key=lambda n: n.index)):
            new_index[id(node)] = i

    def position(tensor):
        layer, node_index, tensor_index = _history(tensor)
        if tensor._k_node is not None:
            node_index = new_index.get(id(tensor._k_node), node_index)
        return layer, node_index, tensor_index

    def tensor_config(tensor):
        layer, node_index, tensor_index = position(tensor)
        shape = tensor.shape
        shape = tuple(shape.as_list()) if isinstance(shape, TensorShape) else tuple(shape)
        return {"class_name": "__keras_tensor__",
                "config": {"shape": shape, "dtype": tensor.dtype, "keras_history": [layer.name, node_index,
                                                                                     tensor_index]}}

    entries = []
    for layer in model._k_layer_list:
        entry = serialize_keras_object(layer)
        entry["name"] = layer.name
        entry["inbound_nodes"] = [
            {"args": serialize_keras_object(_map(tensor_config, tuple(node.args))),
             "kwargs": serialize_keras_object(_map(tensor_config, dict(node.kwargs)))}
            for node in sorted(own.get(id(layer), []), key=lambda n: n.index)]
        entries.append(entry)

    def ref(tensor):
        layer, node_index, tensor_index = position(tensor)
        return [layer.name, node_index, tensor_index]

    return {"name": model.name, "trainable": model.trainable, "layers": entries,
            "input_layers": _map(ref, sym_in), "output_layers": _map(ref, sym_out)}


def _is_history(value):
    return isinstance(value, list) and len(value) == 3 and isinstance(value[0], str)


def functional_from_config(cls, config, custom_objects=None):
    """Keras 3's ``functional_from_config``: each layer made from its configuration and called
    on the tensors its inbound nodes name, then ``cls(inputs, outputs, name=...)``."""
    outputs_of = {}   # (layer name, node index) -> the call's output tensors, flattened
    pending = []
    for entry in config["layers"]:
        layer = layer_from_config(entry, custom_objects)
        if isinstance(layer, InputLayer):
            outputs_of[(layer.name, 0)] = [layer._k_tensor]
        for i, node_data in enumerate(entry.get("inbound_nodes") or []):
            pending.append((layer, i, node_data))

    def tensor(history):
        name, node_index, tensor_index = history
        return outputs_of[(name, node_index)][tensor_index]

    def resolve(value):
        if isinstance(value, dict) and value.get("class_name") == "__keras_tensor__":
            return tensor(value["config"]["keras_history"])
        if isinstance(value, (list, tuple)):
            items = [resolve(v) for v in value]
            return tuple(items) if isinstance(value, tuple) else items
        if isinstance(value, dict) and not ("class_name" in value and "config" in value):
            return {k: resolve(v) for k, v in value.items()}
        return deserialize_keras_object(value, custom_objects)

    while pending:
        waiting = []
        for layer, i, node_data in pending:
            try:
                if isinstance(node_data, list):   # Keras 2's [[name, node, tensor, kwargs], ...]
                    args = [tensor(h[:3]) for h in node_data]
                    args, kwargs = ((args[0] if len(args) == 1 else args),), (node_data[0][3] if len(node_data[0]) > 3
                                                                              else {})
                else:
                    args, kwargs = resolve(list(node_data.get("args", []))), resolve(dict(node_data.get("kwargs", {})))
            except KeyError:   # a tensor of a call not made yet
                waiting.append((layer, i, node_data))
                continue
            outputs_of[(layer.name, i)] = _leaves(layer(*args, **kwargs))
        if len(waiting) == len(pending):
            raise ValueError(f"The functional model's configuration cannot be connected: the inputs of "
                             f"{[layer.name for layer, _, _ in waiting]} are made by no layer of it.")
        pending = waiting

    def endpoints(spec):
        if _is_history(spec):
            return tensor(spec)
        if isinstance(spec, dict):
            return {k: endpoints(v) for k, v in spec.items()}
        items = [endpoints(v) for v in spec]
        return tuple(items) if isinstance(spec, tuple) else items

    return cls(inputs=endpoints(config["input_layers"]), outputs=endpoints(config["output_layers"]),
               name=config.get("name"), trainable=config.get("trainable", True))
