"""``Model.summary()``: Keras 3's table, rendered with rich as Keras 3 renders it."""
import math
import re
import shutil

import numpy as np
import rich.console
import rich.markup
import rich.table

from .._core.tensor import TensorShape
from .layers._base import KerasTensor, _batchless, _leaves


def _count(weights):
    return int(sum(math.prod(tuple(v.shape)) for v in {id(w): w for w in weights}.values()))


def _bytes(weights):
    return sum(math.prod(tuple(v.shape)) * np.dtype(v.dtype.as_numpy_dtype).itemsize
               for v in {id(w): w for w in weights}.values())


def readable_memory_size(size):
    """Keras's ``'84.00 B'``, ``'94.04 KB'``, ``'3.82 MB'``."""
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if size / 1024 < 1:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} PB"


def _format_shape(shape):
    return "(" + ", ".join(str(d) for d in TensorShape(shape).as_list()) + ")"


def _format_layer_shape(layer, batchless):
    shape = layer._k_output_shape
    if shape is None:
        return "?"
    if isinstance(shape, (TensorShape, tuple)) and all(d is None or isinstance(d, int) for d in shape):
        return _format_shape(_batchless(shape) if batchless else shape)
    shapes = [s for s in _leaves(shape) if s is not None]
    fmt = [_format_shape(_batchless(s) if batchless else s) for s in shapes]
    if len(fmt) == 1:
        return fmt[0]
    nested = _map_shapes(shape, lambda s: _format_shape(_batchless(s) if batchless else s))
    return str(nested).replace("'", "")


def _map_shapes(shape, fn):
    if isinstance(shape, list) or (isinstance(shape, tuple) and not isinstance(shape, TensorShape)
                                   and not all(d is None or isinstance(d, int) for d in shape)):
        return [_map_shapes(s, fn) for s in shape]
    if isinstance(shape, dict):
        return {k: _map_shapes(v, fn) for k, v in shape.items()}
    return fn(shape)


def _graph_connections(model):
    """For a functional model: whether it is a plain chain, and each layer's 'Connected to'."""
    _, _, order = model._k_graph
    node_index = {}      # id(node) -> index among its layer's nodes
    per_layer = {}
    for node in order:
        per_layer.setdefault(id(node.layer), []).append(node)
        node_index[id(node)] = len(per_layer[id(node.layer)]) - 1
    consumers = {}
    sequential_like = len(model.inputs) == 1
    connections = {}
    for node in order:
        ins = [t for t in _leaves(list(node.args) + list(node.kwargs.values())) if isinstance(t, KerasTensor)]
        if len(ins) != 1 or len(per_layer[id(node.layer)]) > 1:
            sequential_like = False
        parts = []
        for t in ins:
            consumers[id(t)] = consumers.get(id(t), 0) + 1
            if consumers[id(t)] > 1:
                sequential_like = False
            if t._k_node is None:
                source, n, k = t._k_input_layer.name, 0, 0
            else:
                outs = [o for o in _leaves(t._k_node.outputs) if isinstance(o, KerasTensor)]
                source = t._k_node.layer.name
                n = node_index[id(t._k_node)]
                k = next(i for i, o in enumerate(outs) if o is t)
            parts.append(f"{source}[{n}][{k}]")
        connections.setdefault(id(node.layer), []).extend(parts)
    return sequential_like, {k: ", ".join(v) for k, v in connections.items()}


def print_summary(model, line_length=None, positions=None, print_fn=None, expand_nested=False,
                  show_trainable=False, layer_range=None, functional=False, sequential=False):
    """Prints Keras 3's summary table of ``model`` (a functional or ``sequential`` model's
    shapes hide the batch size; a functional graph that is not a chain gets 'Connected to')."""
    # Keras 3 lists a functional graph's operations (``x + 1``: "add (Add)") among its layers.
    graph_layers = getattr(model, "_k_layer_list", None)
    layers = list(graph_layers) if graph_layers is not None else model.layers
    # A functional model shows its graph's shapes (None batch from tf.keras.Input); a Sequential
    # the shapes it was built with, so the first call's batch size when built by one (Keras 3).
    batchless = functional
    sequential_like, connections = True, {}
    if functional:
        sequential_like, connections = _graph_connections(model)
    if sequential_like:
        default_line_length, positions = 88, positions or [0.45, 0.80, 1.0]
        header, alignment = ["Layer (type)", "Output Shape", "Param #"], ["left", "left", "right"]
    else:
        default_line_length, positions = 108, positions or [0.3, 0.56, 0.74, 1.0]
        header = ["Layer (type)", "Output Shape", "Param #", "Connected to"]
        alignment = ["left", "left", "right", "left"]
    if show_trainable:
        default_line_length += 12
        positions = [p * 0.90 for p in positions] + [1.0]
        header.append("Trainable")
        alignment.append("center")
    line_length = line_length or min(default_line_length, shutil.get_terminal_size().columns - 4)
    widths, current = [], 0
    for pos in positions:
        width = int(pos * line_length) - current
        if width < 4:
            raise ValueError("Insufficient console width to print summary.")
        widths.append(width)
        current += width
    table = rich.table.Table(*[rich.table.Column(h, justify=a, width=w)
                               for h, a, w in zip(header, alignment, widths)],
                             width=line_length, show_lines=True)

    def fields(layer, prefix=""):
        name = rich.markup.escape(f"{prefix}{layer.name}") + f" ({rich.markup.escape(type(layer).__name__)})"
        built = getattr(layer, "built", True)
        params = f"{layer.count_params():,}" if built else "0 (unbuilt)"
        row = [name, _format_layer_shape(layer, batchless), params]
        if not sequential_like:
            row.append(connections.get(id(layer), "-"))
        if show_trainable:
            row.append(("Y" if layer.trainable else "N") if layer.weights else "-")
        return row

    def rows(layer, level=0):
        out = [fields(layer, "   " * level + "└ " if level else "")]
        if expand_nested and getattr(layer, "layers", None):
            for sub in layer.layers:
                out.extend(rows(sub, level + 1))
        return out

    start, stop = _layer_range(layers, layer_range)
    for layer in layers[start:stop]:
        for row in rows(layer):
            table.add_row(*row)

    trainable, non_trainable = model.trainable_weights, model.non_trainable_weights
    opt = getattr(model, "_k_optimizer", None)
    # Keras 3 counts the optimizer once it is built (an SGD without momentum: iteration, rate).
    opt_vars = list(opt.variables) if opt is not None and getattr(opt, "built", False) else []
    total_count = _count(trainable) + _count(non_trainable) + _count(opt_vars)
    total_size = _bytes(trainable) + _bytes(non_trainable) + _bytes(opt_vars)
    lines = [(" Total params: ", total_count, total_size),
             (" Trainable params: ", _count(trainable), _bytes(trainable)),
             (" Non-trainable params: ", _count(non_trainable), _bytes(non_trainable))]
    if opt is not None and getattr(opt, "built", False):
        lines.append((" Optimizer params: ", _count(opt_vars), _bytes(opt_vars)))
    if print_fn is not None:
        console = rich.console.Console(highlight=False, force_terminal=False, color_system=None)
        console.begin_capture()
    else:
        console = rich.console.Console(highlight=False)
    console.print(f'[bold]Model: "{rich.markup.escape(model.name)}"[/]')
    console.print(table)
    for label, count, size in lines:
        console.print(f"[bold]{label}[/]{count:,} ({readable_memory_size(size)})")
    if print_fn is not None:
        print_fn(console.end_capture())


def _layer_range(layers, layer_range):
    if layer_range is None:
        return 0, len(layers)
    if len(layer_range) != 2 or not all(isinstance(s, str) for s in layer_range):
        raise ValueError(f"layer_range must be a list or tuple of two strings (layer names or regexes). "
                         f"Received: {layer_range}")
    lower = [i for i, l in enumerate(layers) if re.match(layer_range[0], l.name)]
    upper = [i for i, l in enumerate(layers) if re.match(layer_range[1], l.name)]
    if not lower or not upper:
        raise ValueError(f"Passed layer_names do not match the layer names in the model. Received: {layer_range}")
    if min(lower) > max(upper):
        return min(upper), max(lower) + 1
    return min(lower), max(upper) + 1
