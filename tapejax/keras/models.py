"""tf.keras models: ``Model`` (subclassed or functional), ``Sequential``, and the training loop.

``compile``/``fit``/``evaluate``/``predict`` run the same tape path as a custom
loop (``GradientTape`` + ``optimizer.apply_gradients``); the step is compiled
with ``tapejax.function`` when it exists, unless ``compile(run_eagerly=True)``.
"""
import itertools
import warnings

import jax
import numpy as np

from .. import ops as _ops
from ._summary import print_summary as _print_summary
from .callbacks import CallbackList as _CallbackList, History, ProgbarLogger
from .._core.tensor import Tensor, TensorShape, _TensorBase, to_array
from .._core.module import Module
from .layers._base import (
    Layer, unique_name, InputLayer, KerasTensor, _Spec, _infer_output, _dedup, _leaves,
    _is_tensor_leaf, _to_tensors, _batchless,
)
from . import saving as _saving
from . import _model_config
from ._serialization import deserialize_keras_object as _deserialize, serialize_keras_object as _serialize
from .saving import load_model as load_model, save_model as save_model  # noqa: F401 -- tf.keras.models names
from . import optimizers as _optimizers, losses as _losses
from . import metrics as _metrics
from .._core.tape import GradientTape
from .._staging.function import Function as _Function, TensorSpec as _TensorSpec, function as _tf_function
from .._staging.function import _tracing_detector, _tensor_shapes
from .. import random as random
from ..data import Dataset as _Dataset


def _tree_leaves(x):
    return jax.tree_util.tree_leaves(x, is_leaf=_is_tensor_leaf)


def _check_model_init_arguments(cls_name, args, kwargs):
    """Keras 3's rule: ``Model(...)`` is functional given inputs and outputs (two positional
    arguments, or by keyword); any other positional or inputs/outputs argument goes to
    ``Layer.__init__``, which takes none (``super().__init__(self)`` in a subclass, too)."""
    functional = (len(args) == 2 or (len(args) == 1 and "outputs" in kwargs)
                  or ("inputs" in kwargs and "outputs" in kwargs))
    if functional:
        return
    if args:
        raise TypeError(f"Layer.__init__() takes 1 positional argument but {len(args) + 1} were given")
    stray = {k: kwargs[k] for k in ("inputs", "outputs") if k in kwargs}
    if stray:
        raise ValueError(f"Unrecognized keyword arguments passed to {cls_name}: {stray}")


def _multi_step_on_iterator(iterator):
    """Stands for Keras 3's train/test function (one code object for both, so one frequent-tracing
    detector counts fit's and evaluate's traces together, as in TensorFlow)."""


class _StepFunctionDetector:
    """What TensorFlow's frequent-tracing detector sees of Keras 3's fit/evaluate: their
    tf.function takes the data iterator and is traced on its element spec (as tapejax's step
    is, :meth:`Model._k_call_step`), so a smaller last batch traces nothing. Its traces are
    reported under the name of Keras 3's function."""

    __slots__ = ("_detector",)

    def __init__(self, detector):
        self._detector = detector

    def called_with_tracing(self, python_function):
        self._detector.called_with_tracing(self)

    def __str__(self):
        # The function TensorFlow's warning names: Keras 3's step on the iterator.
        return f"<function TensorFlowTrainer._make_function.<locals>.multi_step_on_iterator at {id(self):#x}>"

    def called_without_tracing(self):
        self._detector.called_without_tracing()


def _inputs_by_name(sym_in, syms, inputs):
    """A dict given to a functional model, as Keras 3 reads it: its inputs picked by name (a
    model of dict inputs by its keys, of a list of inputs by their names); keys it does not use
    are left out, and a model of dict inputs warns that the structures differ. Anything else is
    returned as it is."""
    if isinstance(sym_in, dict):
        if not set(sym_in) <= set(inputs):
            return inputs
        if set(inputs) != set(sym_in):
            shown = {k: f"Tensor(shape={tuple(TensorShape(getattr(v, 'shape', ())))})" for k, v in inputs.items()}
            warnings.warn("The structure of `inputs` doesn't match the expected structure.\n"
                          f"Expected: { {k: getattr(t, 'name', k) for k, t in sym_in.items()} }\n"
                          f"Received: inputs={shown}", stacklevel=3)
        return {k: inputs[k] for k in sym_in}
    names = [getattr(t, "name", None) for t in syms]
    if all(names) and set(names) <= set(inputs):
        return [inputs[n] for n in names]
    return inputs


class Model(Layer):
    """A layer with training features: ``layers``, ``summary``, ``compile``/``fit``/``evaluate``/``predict``.

    Subclass it (create layers in ``__init__``, compute in ``call(self, inputs,
    training=None)``), or build a functional model from ``tf.keras.Input``:
    ``tf.keras.Model(inputs, outputs)``.

    Example:
        >>> import tapejax as tf
        >>> class MyModel(tf.keras.Model):
        ...     def __init__(self, num_classes=10):
        ...         super().__init__(name='my_model')
        ...         self.dense_1 = tf.keras.layers.Dense(32, activation='relu')
        ...         self.dense_2 = tf.keras.layers.Dense(num_classes)
        ...     def call(self, inputs, training=None):
        ...         return self.dense_2(self.dense_1(inputs))
        >>> model = MyModel()
        >>> model(tf.ones([4, 8])).shape
        TensorShape([4, 10])
        >>> [v.path for v in model.trainable_variables][:2]
        ['my_model/dense.../kernel', 'my_model/dense.../bias']
        >>> model.count_params()
        618
    """

    _k_model = True   # a keras Model (its auto config takes no arguments)

    # The compiled metrics' state is not part of the model's checkpoints (save_weights /
    # load_weights, as Keras 3's weights files): loading weights leaves the metrics as they are.
    _TF_MODULE_IGNORED_PROPERTIES = Layer._TF_MODULE_IGNORED_PROPERTIES | frozenset(
        {"_k_metric_objs", "_k_metric_specs", "_k_weighted_specs", "_k_trackers"})

    @property
    def _allow_non_tensor_positional_args(self):
        # Keras 3's Functional takes non-tensor inputs; a subclassed model or a Sequential does not.
        return self.__dict__.get("_k_graph") is not None and not isinstance(self, Sequential)

    def __init__(self, *args, **kwargs):
        _check_model_init_arguments(type(self).__name__, args, kwargs)
        inputs = kwargs.pop("inputs", None)
        outputs = kwargs.pop("outputs", None)
        if args:
            inputs = args[0]
            if len(args) > 1:
                outputs = args[1]
        if inputs is not None and kwargs.get("name") is None and type(self) is Model:
            kwargs["name"] = unique_name("functional")   # Keras 3 names functional models so
        super().__init__(**kwargs)
        self._k_layer_list = None       # functional / Sequential: the layers in order
        self._k_graph = None
        self._k_optimizer = None
        self._k_loss = None
        self.loss = None          # Keras 3's Trainer: compile's loss argument, None before
        self.compiled = False
        self._k_metric_specs = []
        self._k_metric_objs = None
        self._k_step_fns = {}
        self._k_run_eagerly = None
        self.history = None
        self.stop_training = False
        if inputs is not None or outputs is not None:
            if inputs is None or outputs is None:
                raise ValueError("A functional model needs both inputs and outputs: "
                                 "tf.keras.Model(inputs=inputs, outputs=outputs).")
            self._k_init_graph(inputs, outputs)

    def __repr__(self):
        cls = "Functional" if type(self) is Model and self._k_graph is not None else type(self).__name__
        return f"<{cls} name={self.name}, built={self.built}>"

    # -- configuration (Keras 3's) ------------------------------------------

    _keras_public_module = "keras"   # keras.Model, keras.Sequential

    def _k_keras_identity(self):
        """How ``serialize_keras_object`` names a functional model (Keras 3's Functional class)."""
        if type(self) is Model and self._k_graph is not None:
            return "keras.src.models.functional", "Functional", "Functional"
        return None

    def get_config(self):
        """The model's configuration, as Keras 3's: a functional model's layers, the calls that
        connect them and its inputs and outputs; a Sequential model's layers; a subclassed
        model's base configuration (name, trainable, dtype).

        Example:
            >>> import tapejax as tf
            >>> inputs = tf.keras.Input(shape=(3,), name='x')
            >>> model = tf.keras.Model(inputs, tf.keras.layers.Dense(2, name='out')(inputs), name='m')
            >>> config = model.get_config()
            >>> [entry['name'] for entry in config['layers']], config['output_layers']
            (['x', 'out'], ['out', 0, 0])
        """
        if self.__dict__.get("_k_graph") is not None and not isinstance(self, Sequential):
            return _model_config.functional_config(self)
        return super().get_config()

    get_config._k_default = True   # the base configuration (layers/_base._default_get_config)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A model from ``get_config()``'s configuration: a functional model is rebuilt layer by
        layer and connected as the configuration says (new weights)."""
        if isinstance(config, dict) and "layers" in config and "input_layers" in config:
            return _model_config.functional_from_config(cls, config, custom_objects)
        return cls(**config)

    def to_json(self, **kwargs):
        """The model's ``serialize_keras_object`` description as JSON (``json.dumps(..., **kwargs)``);
        ``tf.keras.models.model_from_json`` makes a new model from it.

        Example:
            >>> import json, tapejax as tf
            >>> model = tf.keras.Sequential([tf.keras.layers.Dense(2)], name='s')
            >>> json.loads(model.to_json())['class_name']
            'Sequential'
        """
        import json
        return json.dumps(_serialize(self), **kwargs)

    def get_build_config(self):
        """Keras 3's build configuration: ``{'input_shape': ...}`` of a built model (a functional
        model's is None), or None for a model never built."""
        if self.__dict__.get("_k_graph") is not None and not isinstance(self, Sequential):
            return {"input_shape": None}
        shape = self.__dict__.get("_k_build_shape")
        if not self.built or shape is None:
            return None
        return {"input_shape": tuple(TensorShape(shape).as_list())}

    def build_from_config(self, config):
        """Builds a model on ``get_build_config()``'s input shape (Keras 3's ``build_from_config``)."""
        shape = (config or {}).get("input_shape")
        if shape is not None and not self.built:
            self._k_build_from_config(tuple(shape))

    def get_compile_config(self):
        """Keras 3's compile configuration; ``{}`` for a model not compiled."""
        if not self.compiled:
            return {}
        return _saving._keras_compile_config(self, True) or {}

    # -- structure ----------------------------------------------------------

    def _k_init_graph(self, inputs, outputs):
        in_leaves = _tree_leaves(inputs)
        for t in in_leaves + _tree_leaves(outputs):
            if not isinstance(t, KerasTensor):
                raise TypeError(f"Functional Model inputs and outputs must be symbolic tensors made from "
                                f"tf.keras.Input(shape=...), got {type(t).__name__}.")
        order, seen = [], set()

        def visit(t):
            node = t._k_node
            if node is None or id(node) in seen:
                return
            for leaf in _leaves(list(node.args) + list(node.kwargs.values())):
                if isinstance(leaf, KerasTensor):
                    visit(leaf)
            seen.add(id(node))
            order.append(node)

        for t in _tree_leaves(outputs):
            visit(t)
        self._k_graph = (inputs, outputs, order)
        input_layers = [getattr(t, "_k_input_layer", None) for t in in_leaves]
        self._k_layer_list = _dedup([l for l in input_layers if l is not None] + [n.layer for n in order])
        self._k_output_shape = jax.tree_util.tree_map(lambda t: t.shape, outputs, is_leaf=_is_tensor_leaf)
        self.built = True

    def _k_output_specs(self, fn, inputs):
        """A functional model called on KerasTensors gives its outputs' specs (Keras 3 runs its
        graph symbolically), without tracing layers that compute on the host (string lookups)."""
        graph = getattr(self, "_k_graph", None)
        if graph is None:
            return super()._k_output_specs(fn, inputs)
        return jax.tree_util.tree_map(lambda t: _Spec(t.shape, t.dtype), graph[1], is_leaf=_is_tensor_leaf)

    def _k_run_graph(self, inputs, training):
        sym_in, sym_out, order = self._k_graph
        values = {}
        syms = _tree_leaves(sym_in)
        if isinstance(inputs, dict):
            inputs = _inputs_by_name(sym_in, syms, inputs)
        vals = _tree_leaves(inputs) if isinstance(inputs, (list, tuple, dict)) else [inputs]
        if len(vals) != len(syms):
            raise ValueError(f"Model '{self.name}' expects {len(syms)} input(s) but received {len(vals)}.")
        for s, v in zip(syms, vals):
            values[id(s)] = _adjust_input_rank(_as_input_dtype(_to_tensors(v), s.dtype), s.shape)

        def sub(x):
            return values[id(x)] if isinstance(x, KerasTensor) else x

        for node in order:
            args = jax.tree_util.tree_map(sub, list(node.args), is_leaf=_is_tensor_leaf)
            kwargs = jax.tree_util.tree_map(sub, dict(node.kwargs), is_leaf=_is_tensor_leaf)
            if training is not None:
                kwargs["training"] = training
            out = node.layer(*args, **kwargs)
            for s, v in zip(_tree_leaves(node.outputs), _tree_leaves(out)):
                values[id(s)] = v
        return jax.tree_util.tree_map(sub, sym_out, is_leaf=_is_tensor_leaf)

    def call(self, inputs, training=None, mask=None):
        """The forward pass; subclasses override it. A functional model runs its graph."""
        if self._k_graph is None:
            raise NotImplementedError(
                f"Model '{self.name}' has no call(): subclass tf.keras.Model and define "
                "`def call(self, inputs, training=None):`, or build it functionally with "
                "tf.keras.Model(inputs, outputs).")
        return self._k_run_graph(inputs, training)

    def _k_layers_first(self, sublayers):
        if self._k_layer_list is None:
            return sublayers
        return _dedup(list(self._k_layer_list) + sublayers)

    def _k_watched(self):
        held = super()._k_watched()
        return held if self._k_layer_list is None else held + [self._k_layer_list]

    @property
    def layers(self):
        """The model's layers: in call order for functional and Sequential models, else in
        attribute-assignment order."""
        if self._k_layer_list is not None:
            # Operations (``x + 1`` on KerasTensors) are graph nodes, not layers (Keras 3).
            return [l for l in self._k_layer_list if not getattr(l, "_k_is_operation", False)]
        return [l for l in self._k_sublayers() if isinstance(l, Layer)]

    @property
    def inputs(self):
        """The symbolic inputs of a functional model (a list), else None."""
        return None if self._k_graph is None else _tree_leaves(self._k_graph[0])

    @property
    def outputs(self):
        """The symbolic outputs of a functional model (a list), else None."""
        return None if self._k_graph is None else _tree_leaves(self._k_graph[1])

    def get_layer(self, name=None, index=None):
        """A layer by name or index.

        Raises:
            ValueError: no such layer.

        Example:
            >>> import tapejax as tf
            >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, name='out', input_shape=(2,))])
            >>> model.get_layer('out').units
            1
        """
        if index is not None:
            return self.layers[index]
        for l in self.layers:
            if l.name == name:
                return l
        raise ValueError(f"No such layer: {name}. Existing layers are: {[l.name for l in self.layers]}.")

    def _k_has_default_build(self):
        # Model.build (tracing call for a given shape) stands for Keras 3's default build.
        return type(self).build in (Layer.build, Model.build) and self._k_graph is None

    def _k_maybe_build(self, input_shape):
        if self.built:
            return
        if type(self).build is Model.build:
            # A subclassed model's sub-layers build themselves during the first call; its
            # shape is what load_model builds a saved copy with (Keras 3's build config).
            if isinstance(input_shape, TensorShape) and getattr(self, "_k_build_shape", None) is None:
                self._k_build_shape = input_shape
            self.built = True
            return
        super()._k_maybe_build(input_shape)

    def build(self, input_shape):
        """Marks the model built for inputs of ``input_shape``, as Keras 3's default ``build``:
        a subclassed model's layers are not built by it (they build at the first call, or in
        fit's first step), and it warns when some are unbuilt, as TF 2.21 does.

        Example:
            >>> import warnings, tapejax as tf
            >>> class M(tf.keras.Model):
            ...     def __init__(self):
            ...         super().__init__()
            ...         self.d = tf.keras.layers.Dense(3)
            ...     def call(self, x):
            ...         return self.d(x)
            >>> m = M()
            >>> with warnings.catch_warnings(record=True) as caught:
            ...     warnings.simplefilter("always")
            ...     m.build((None, 5))
            >>> m.built, m.count_params(), str(caught[0].message)[:40]
            (True, 0, "`build()` was called on layer 'm', howev")
            >>> m(tf.ones([2, 5])).shape, m.count_params()
            (TensorShape([2, 3]), 18)
        """
        if self._k_graph is None and input_shape is not None:
            self._k_build_shape = TensorShape(input_shape)
        if self._k_graph is None and type(self).build is Model.build and any(
                isinstance(sub, Layer) and not sub.built for sub in self._k_sublayers()):
            # Keras 3 warns from one line of its own (no stacklevel).
            warnings.warn(f"`build()` was called on layer '{self.name}', however the layer does not have a "
                          "`build()` method implemented and it looks like it has unbuilt state. This will "
                          "cause the layer to be marked as built, despite not being actually built, which "
                          "may cause failures down the line. Make sure to implement a proper `build()` method.")
        self.built = True

    def _k_build_from_config(self, input_shape):
        """Keras 3's ``build_from_config`` (load_model): a model without a ``build`` of its own
        is built by running ``call`` abstractly on ``input_shape`` (its weights are created)."""
        if type(self).build is not Model.build or self._k_graph is not None:
            self.build(input_shape)
            return
        shape = TensorShape(input_shape)
        with self._k_scope():
            out = _infer_output(lambda xs: self._k_plain_call(xs[0]), [_Spec(shape, self._k_dtype)])
        self._k_output_shape = jax.tree_util.tree_map(lambda sp: _batchless(sp.shape), out)
        self._k_build_shape = shape
        self.built = True

    # -- saving (tapejax.keras.saving) -------------------------------------

    def save_weights(self, filepath, overwrite=True, save_format=None, options=None):
        """Writes the weights (and the compiled optimizer's state) as a ``tf.train`` checkpoint.

        Example:
            >>> import tempfile, tapejax as tf
            >>> model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
            >>> path = tempfile.mkdtemp() + '/weights'
            >>> model.save_weights(path)
            >>> _ = tf.keras.Sequential([tf.keras.layers.Dense(2)]).load_weights(path)
        """
        return _saving.save_weights(self, filepath, overwrite)

    def load_weights(self, filepath, skip_mismatch=False, by_name=False, options=None):
        """Restores ``save_weights``; an unbuilt model gets the values when it builds. Returns the status."""
        return _saving.load_weights(self, filepath, skip_mismatch)

    def save(self, filepath, overwrite=True, include_optimizer=True, save_format=None, **kwargs):
        """Saves the configuration (Sequential), weights, optimizer state and a SavedModel of ``call``.

        Reload with ``tf.keras.models.load_model(filepath)`` (or ``tf.saved_model.load``).
        """
        return _saving.save_model(self, filepath, overwrite, include_optimizer=include_optimizer,
                                  save_format=save_format, **kwargs)

    @property
    def _default_save_signature(self):
        """The call of the built model (inference mode) as a tf.function with an input signature,
        its argument named after the model's input, or None: what ``tf.saved_model.save``
        exports as the model's ``__call__`` and serving signature (TensorFlow's protocol)."""
        graph = self._k_graph
        if graph is not None:
            leaves = jax.tree_util.tree_leaves(graph[0], is_leaf=lambda t: isinstance(t, KerasTensor))
            if len(leaves) != 1:
                return None
            t = leaves[0]
            shape, dtype, arg = tuple(t.shape), t.dtype, t.name or "inputs"
        else:
            shape = getattr(self, "_k_build_shape", None)
            if shape is None:
                return None
            dtype, arg = self.dtype, "inputs"
        shape = (None,) + tuple(shape)[1:]

        def call(x):
            return self(x, training=False)

        fn = _Function(call, input_signature=[_TensorSpec(shape, dtype)], autograph=False, name="__call__")
        fn._params = [arg]
        return fn

    # -- inspection ---------------------------------------------------------

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False,
                show_trainable=False, layer_range=None):
        """Prints Keras 3's table: layer (type), output shape, parameter count, and totals with sizes.

        As Keras 3, it is drawn with rich (plain text when stdout is not a terminal);
        ``print_fn`` receives the whole table as one string. An unbuilt layer shows
        ``?`` and ``0 (unbuilt)``.

        Example:
            >>> import tapejax as tf
            >>> model = tf.keras.Sequential([tf.keras.Input((784,)), tf.keras.layers.Dense(10, name='d')],
            ...                             name='mlp')
            >>> model.summary(line_length=60)
            Model: "mlp"
            ┏━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━┓
            ┃ Layer (type)             ┃ Output Shape      ┃   Param # ┃
            ┡━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━┩
            │ d (Dense)                │ (None, 10)        │     7,850 │
            └──────────────────────────┴───────────────────┴───────────┘
             Total params: 7,850 (30.66 KB)
             Trainable params: 7,850 (30.66 KB)
             Non-trainable params: 0 (0.00 B)
        """
        _print_summary(self, line_length, positions, print_fn, expand_nested, show_trainable, layer_range,
                       functional=self._k_graph is not None and not isinstance(self, Sequential),
                       sequential=isinstance(self, Sequential))

    # -- training -----------------------------------------------------------

    @property
    def optimizer(self):
        """The compiled optimizer; as in Keras 3, a model never compiled has no such attribute."""
        if self._k_optimizer is None and not self.compiled:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute 'optimizer'")
        return self._k_optimizer

    @optimizer.setter
    def optimizer(self, value):
        self._k_optimizer = value

    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None, weighted_metrics=None,
                run_eagerly=None, steps_per_execution=None, jit_compile=None, **kwargs):
        """Configures training: an optimizer, a loss and metrics (objects or Keras names).

        Args:
            optimizer: an optimizer object or a name (``'adam'``, ``'sgd'``...).
            loss: a loss object, a function ``(y_true, y_pred) -> loss``, or a name (``'mse'``).
            metrics: metric objects or names (``'accuracy'`` picks binary, categorical or
                sparse categorical accuracy from the data, as Keras does). As in Keras 3 they
                ignore ``sample_weight`` and ``class_weight``.
            weighted_metrics: metrics that weigh each example by ``sample_weight`` /
                ``class_weight`` (named ``weighted_<name>`` after a metric of the same name).
            run_eagerly: run the step eagerly instead of compiling it with ``tapejax.function``.

        Example:
            >>> import tapejax as tf
            >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
            >>> model.compile(optimizer='sgd', loss='mse')
        """
        self._k_optimizer = _optimizers.get(optimizer)
        self._k_loss = None if loss is None else (_losses.get(loss) if isinstance(loss, (str, dict)) else loss)
        self._k_loss_spec = loss
        self.loss = loss   # Keras 3 keeps compile's argument as model.loss
        self.compiled = True
        specs = metrics or []
        if isinstance(specs, (str,)) or callable(specs) and not isinstance(specs, (list, tuple)):
            specs = [specs]
        self._k_metric_specs = list(specs)
        weighted = weighted_metrics or []
        if isinstance(weighted, (str,)) or callable(weighted) and not isinstance(weighted, (list, tuple)):
            weighted = [weighted]
        # Keras 3: `metrics` ignore sample and class weights; `weighted_metrics` use them.
        self._k_weighted_specs = list(weighted)
        self._k_metric_objs = None
        self._k_step_fns = {}
        self._k_run_eagerly = run_eagerly

    @property
    def metrics(self):
        """Keras 3's list: once compiled, the loss tracker (``Mean`` named ``loss``) and, when
        ``compile`` was given metrics, their :class:`~tapejax.keras.metrics.CompileMetrics`
        (``model.metrics[1].metrics`` are the metric objects, made at the first step)."""
        out = []
        if self.compiled:
            trackers = getattr(self, "_k_trackers", None)
            if trackers is None:
                trackers = self._k_trackers = (_metrics.Mean(name="loss"), _metrics.CompileMetrics(self))
            out = [trackers[0]] + ([trackers[1]] if self._k_all_metric_specs() else [])
        # then the metrics its attributes hold, and its layers' (not those of a nested Model)
        out += self._k_own_metrics()
        stack = [sub for sub in self._k_sublayers() if isinstance(sub, Layer)]
        while stack:
            layer = stack.pop(0)
            if not isinstance(layer, Model):
                out += layer._k_own_metrics()
                stack += [sub for sub in layer._k_sublayers() if isinstance(sub, Layer)]
        return _dedup(out)

    def reset_metrics(self):
        """Resets every metric of :attr:`metrics` (``fit`` does at each epoch, ``evaluate`` first)."""
        for m in self.metrics:
            m.reset_state()

    @property
    def metrics_names(self):
        """The names of :attr:`metrics`: ``['loss', 'compile_metrics']`` (Keras 3), ``['loss']``
        without compiled metrics, ``[]`` before ``compile``."""
        return [m.name for m in self.metrics]

    def _k_all_metric_specs(self):
        return self._k_metric_specs + getattr(self, "_k_weighted_specs", [])

    def _k_metric_names(self):
        """Keras 3's names: a weighted metric named as an earlier one is ``weighted_<name>``."""
        names, n = [], len(self._k_metric_specs)
        for i, (m, spec) in enumerate(zip(self._k_metric_objs or [], self._k_all_metric_specs())):
            name = _metric_name(m, spec)
            if i >= n and name in names:
                name = f"weighted_{name}"
            names.append(name)
        return names

    def _k_resolve_metrics(self, y, y_pred):
        if self._k_metric_objs is not None:
            return
        objs = []
        for spec in self._k_all_metric_specs():
            if isinstance(spec, str) and spec in ("accuracy", "acc"):
                objs.append(self._k_accuracy(y, y_pred, _metrics))
            elif isinstance(spec, str) and spec in ("crossentropy", "ce"):
                objs.append(_metrics.get("sparse_categorical_crossentropy"))
            else:
                objs.append(_metrics._compile_metric(spec))   # a name, a config, a metric object or a function
        self._k_metric_objs = objs
        for m, name in zip(objs, self._k_metric_names()):   # Keras 3 names each one as its logs do
            if isinstance(m, _metrics.Metric):
                m.name = name

    def _k_accuracy(self, y, y_pred, _metrics):
        y_rank = len(np.shape(y))
        out_shape = tuple(y_pred.shape)
        loss_name = (self._k_loss_spec if isinstance(self._k_loss_spec, str)
                     else type(self._k_loss_spec).__name__).lower()
        if out_shape[-1:] == (1,) or "binary" in loss_name:
            return _metrics.BinaryAccuracy(name="accuracy")
        if "sparse" in loss_name or y_rank < len(out_shape) or (y_rank == len(out_shape) and np.shape(y)[-1] == 1):
            return _metrics.SparseCategoricalAccuracy(name="accuracy")
        return _metrics.CategoricalAccuracy(name="accuracy")

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None):
        """The compiled loss (mean over the batch) plus the layers' regularization losses and
        ``add_loss`` terms (either alone where the other is absent, as Keras 3)."""
        extra = self.losses
        if self._k_loss is None:
            if not extra:
                raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
            return _ops.add_n(list(extra)) if len(extra) > 1 else _ops.convert_to_tensor(extra[0])
        if sample_weight is not None:
            # Keras 3 wraps a loss function (`loss='binary_crossentropy'`, your own fn) in a
            # LossFunctionWrapper, which weighs its per-example values.
            fn = self._k_loss if isinstance(self._k_loss, _losses.Loss) else _losses.LossFunctionWrapper(self._k_loss)
            loss = fn(y, y_pred, sample_weight=sample_weight)
        else:
            loss = self._k_loss(y, y_pred)
        if isinstance(loss, _TensorBase) and loss.shape.rank:
            loss = _ops.reduce_mean(loss)
        if extra:
            loss = _ops.add_n([loss] + [_ops.cast(l, loss.dtype) for l in extra])
        return loss

    def train_step(self, data):
        """One training step on a batch ``(x, y)``: tape, gradients, ``apply_gradients``, metrics.

        ``fit`` calls it (compiled with ``tapejax.function``); override it to
        customise training, as in Keras.

        Returns:
            ``{'loss': loss, <metric name>: result, ...}`` (Tensors).

        Example:
            >>> import tapejax as tf
            >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, kernel_initializer='zeros',
            ...                                                    input_shape=(2,))])
            >>> model.compile(optimizer='sgd', loss='mse')
            >>> float(model.train_step((tf.ones([4, 2]), tf.ones([4, 1])))['loss'])
            1.0
        """
        x, y, sample_weight = _unpack(data)
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred, sample_weight)
            # A LossScaleOptimizer differentiates the scaled loss (and unscales the gradients).
            scaled = self.optimizer.scale_loss(loss) if hasattr(self.optimizer, "scale_loss") else loss
        variables = self.trainable_variables
        if variables:
            grads = tape.gradient(scaled, variables)
            self.optimizer.apply_gradients(zip(grads, variables))
        else:   # as Keras 3: a model without trainable weights trains nothing, and says so
            warnings.warn("The model does not have any trainable weights.")
        return self._k_update_metrics(loss, y, y_pred, sample_weight)

    def test_step(self, data):
        """One evaluation step: forward (``training=False``), loss and metrics."""
        x, y, sample_weight = _unpack(data)
        y_pred = self(x, training=False)
        loss = self.compute_loss(x, y, y_pred, sample_weight)
        return self._k_update_metrics(loss, y, y_pred, sample_weight)

    def predict_step(self, data):
        """One prediction step: the forward pass with ``training=False``."""
        x, _, _ = _unpack(data)
        return self(x, training=False)

    def _k_update_metrics(self, loss, y, y_pred, sample_weight):
        self._k_resolve_metrics(y, y_pred)   # at the first step's trace, as Keras 3 builds them
        logs = {"loss": loss}
        n = len(self._k_metric_specs)
        for i, (m, name) in enumerate(zip(self._k_metric_objs or [], self._k_metric_names())):
            if sample_weight is not None and i >= n:
                m.update_state(y, y_pred, sample_weight=sample_weight)
            else:
                m.update_state(y, y_pred)
            logs[name] = m.result()
        return logs

    def _k_ordered(self, logs):
        """Logs as floats in Keras's order: loss, then the metrics as compiled (a compiled step
        may hand the dict back with its keys sorted)."""
        names = [n for n in ["loss"] + self._k_metric_names() if n in logs]
        names += [k for k in logs if k not in names]
        return {k: float(logs[k]) for k in names}

    def _k_running_logs(self, kind, logs, x, total, count):
        """A step's logs as Keras 3 hands them to callbacks: floats, the loss averaged over the
        examples seen so far in the epoch (the metrics already are running results). Keras's
        own steps weigh the loss tracker by the batch size; a step the model overrides returns
        its logs as they are (its metrics are its own)."""
        if getattr(type(self), kind) is not getattr(Model, kind):
            return self._k_ordered(logs), total, count
        n = _batch_len(x)
        # float32 sums, as Keras's Mean: the logged values are Keras's to the last digit.
        total = np.float32(total) + np.float32(logs["loss"]) * np.float32(n)
        count += n
        logs = self._k_ordered(logs)
        logs["loss"] = float(total / np.float32(max(count, 1)))
        tracker = self.metrics[0]   # Keras 3's loss tracker holds the running sums
        tracker.total._set(jax.numpy.asarray(total, jax.numpy.float32))
        tracker.count._set(jax.numpy.asarray(count, jax.numpy.float32))
        return logs, total, count

    def _k_step(self, kind):
        """The (compiled) step function of ``kind``: one per compile. Keras 3 compiles each with
        ``reduce_retracing=True``: a second type of data is traced once with the dimensions that
        differ unknown (TF's retracing warnings count so)."""
        fn = self._k_step_fns.get(kind)
        if fn is None:
            fn = getattr(self, kind)
            if kind == "predict_step":
                fn = _keras3_predict_function(self)
            if not self._k_run_eagerly:
                fn = _tf_function(fn, reduce_retracing=True)
                if kind != "predict_step":
                    fn._detector = _StepFunctionDetector(_tracing_detector(_multi_step_on_iterator))
            self._k_step_fns[kind] = fn
        return fn

    def _k_call_step(self, kind, data, spec=None):
        """Runs the step ``kind`` on a batch ``data``, traced as Keras 3's TF backend traces it:
        on ``spec`` (the shapes of the data's element spec, one per tensor, ``None`` for an
        unknown batch size: see :meth:`_Batches.spec`), as its tf.function takes the data's
        iterator; ``None``: on the batch's own shapes (``predict``, ``train_on_batch``)."""
        fn = self._k_step_fns.get(kind) or self._k_step(kind)
        if type(fn) is _Function:
            return fn._call_typed(spec, (data,))
        return fn(data)

    def _k_reset_metrics(self):
        for m in self._k_metric_objs or []:
            m.reset_state()
        trackers = getattr(self, "_k_trackers", ())    # the loss tracker holds the running sums fit sets
        for m in self.metrics:
            if not any(m is t for t in trackers):
                m.reset_state()

    def _k_check_compiled(self, what):
        """Keras 3's check before ``what`` (fit, evaluate, train_on_batch): compile() was called.
        A loss is needed only by the default steps (``compute_loss``), not by a custom one."""
        if not self.compiled:
            raise ValueError("You must call `compile()` before using the model.")

    def _tf_function_state(self):
        """The Variables a compiled step reaches besides the model's weights: the optimizer's
        and the metrics' (known before the step is traced, so it is traced once, as in TF)."""
        out = []
        if self._k_optimizer is not None:
            out += list(self._k_optimizer.variables) + list(getattr(self._k_optimizer, "_slot_vars", ()))
        for m in self.metrics:
            out += list(m.variables)
        return out

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None, sample_weight=None,
            initial_epoch=0, steps_per_epoch=None, validation_steps=None, validation_batch_size=None,
            validation_freq=1, **kwargs):
        """Trains for ``epochs`` epochs, printing Keras 3's progress bar (``verbose=1`` or
        ``'auto'``: redrawn after every batch, with ETA and metrics; ``verbose=2``: one line
        per epoch; ``0``: silent).

        ``x``/``y`` are arrays (numpy, Tensors), or ``x`` is a dataset yielding
        ``(x, y)`` batches. Returns a ``History`` whose ``history`` maps
        ``'loss'`` (and metric / ``val_`` names) to one value per epoch.

        Example:
            >>> import numpy as np, tapejax as tf
            >>> tf.random.set_seed(0)
            >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
            >>> model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss='mse')
            >>> x = np.random.RandomState(0).randn(64, 2).astype('float32')
            >>> h = model.fit(x, x.sum(1, keepdims=True), epochs=3, verbose=0)
            >>> h.history['loss'][-1] < h.history['loss'][0]
            True
        """
        self._k_check_compiled("fit")
        x, y, sample_weight = _standardize_arrays(x), _standardize_arrays(y), _standardize_arrays(sample_weight)
        if isinstance(validation_data, (tuple, list)):
            validation_data = _standardize_arrays(tuple(validation_data))
        if class_weight is not None:
            sample_weight = _class_weight_to_sample_weight(class_weight, x, y, sample_weight)
        verbose = 1 if verbose == "auto" else verbose
        if validation_split and validation_data is None and y is not None:
            n = len(_first(x))
            cut = int(n * (1.0 - validation_split))
            split = lambda a, s: jax.tree_util.tree_map(lambda v: np.asarray(v)[s], a)  # noqa: E731
            validation_data = (split(x, slice(cut, None)), split(y, slice(cut, None)))
            x, y = split(x, slice(0, cut)), split(y, slice(0, cut))
        data = _Batches(x, y, sample_weight, batch_size, shuffle)
        self.history = History()
        # The History goes after the user's callbacks, so it records what they add to the epoch's logs.
        callbacks = _CallbackList(_with_progbar(list(callbacks or []) + [self.history], verbose), self,
                                  epochs=epochs, verbose=verbose, steps=steps_per_epoch or data.n_batches or None)
        self.stop_training = False
        self._initial_epoch = None
        callbacks.call("on_train_begin", {})
        # A callback restoring interrupted training (BackupAndRestore) sets where to resume.
        initial_epoch = self._initial_epoch or initial_epoch
        self._initial_epoch = None
        spec = None
        for epoch in range(initial_epoch, epochs):
            self._k_reset_metrics()
            callbacks.call("on_epoch_begin", epoch, {})
            total, count, logs = 0.0, 0, {}
            for step, batch in enumerate(data.epoch(steps_per_epoch)):
                callbacks.call("on_train_batch_begin", step, {})
                bx, by, _ = _unpack(batch)
                if spec is None:
                    spec = data.spec(batch)
                logs, total, count = self._k_running_logs("train_step", self._k_call_step("train_step", batch, spec),
                                                          bx, total, count)
                callbacks.call("on_train_batch_end", step, _sorted(logs))
                if self.stop_training:
                    break
            epoch_logs = _sorted(logs)
            if validation_data is not None and (epoch + 1) % validation_freq == 0:
                val = self.evaluate(*_val_args(validation_data), batch_size=validation_batch_size or batch_size,
                                    verbose=0, return_dict=True)
                epoch_logs.update({"val_" + k: v for k, v in val.items()})
            callbacks.call("on_epoch_end", epoch, epoch_logs)
            if self.stop_training:
                break
        callbacks.call("on_train_end", {})
        return self.history

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None, steps=None,
                 callbacks=None, return_dict=False, **kwargs):
        """Loss and metrics over the data (``training=False``).

        Returns:
            The loss if no metrics were compiled, else ``[loss, *metrics]``
            (a dict with ``return_dict=True``).

        Example:
            >>> import numpy as np, tapejax as tf
            >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, kernel_initializer='zeros',
            ...                                                    input_shape=(2,))])
            >>> model.compile(optimizer='sgd', loss='mse')
            >>> model.evaluate(np.zeros((4, 2)), np.ones((4, 1)), verbose=0)
            1.0
        """
        self._k_check_compiled("evaluate")
        x, y, sample_weight = _standardize_arrays(x), _standardize_arrays(y), _standardize_arrays(sample_weight)
        verbose = 1 if verbose == "auto" else verbose
        self._k_reset_metrics()
        data = _Batches(x, y, sample_weight, batch_size, False)
        callbacks = _CallbackList(_with_progbar(callbacks, verbose), self, epochs=1, verbose=verbose,
                                  steps=steps or data.n_batches or None)
        callbacks.call("on_test_begin", {})
        total, count, out, spec = 0.0, 0, {}, None
        for step, batch in enumerate(data.epoch(steps)):
            callbacks.call("on_test_batch_begin", step, {})
            bx, by, _ = _unpack(batch)
            if spec is None:
                spec = data.spec(batch)
            out, total, count = self._k_running_logs("test_step", self._k_call_step("test_step", batch, spec),
                                                     bx, total, count)
            callbacks.call("on_test_batch_end", step, _sorted(out))
        logs = _sorted(out)
        callbacks.call("on_test_end", logs)
        if return_dict:
            return logs
        if len(out) == 1:
            return out["loss"]
        return list(out.values())

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None, **kwargs):
        """The model's outputs on ``x`` (``training=False``), batched, as numpy arrays.

        Example:
            >>> import numpy as np, tapejax as tf
            >>> model = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(2,))])
            >>> model.predict(np.zeros((5, 2)), verbose=0).shape
            (5, 3)
        """
        verbose = 1 if verbose == "auto" else verbose
        x = _standardize_arrays(x)
        data = _Batches(x, None, None, batch_size, False)
        callbacks = _CallbackList(_with_progbar(callbacks, verbose), self, epochs=1, verbose=verbose,
                                  steps=steps or data.n_batches or None)
        callbacks.call("on_predict_begin", {})
        outs = []
        for i, batch in enumerate(data.epoch(steps)):
            callbacks.call("on_predict_batch_begin", i, {})
            # Keras 3 calls its predict function with each batch (not the iterator): typed by its shapes.
            out = self._k_call_step("predict_step", batch)
            outs.append(jax.tree_util.tree_map(lambda t: np.asarray(t), out, is_leaf=_is_tensor_leaf))
            callbacks.call("on_predict_batch_end", i, {"outputs": outs[-1]})
        callbacks.call("on_predict_end", {})
        if not outs:
            raise ValueError("Unexpected result of `predict_function` (Empty batch_outputs). Please use "
                             "`Model.compile(..., run_eagerly=True)`, or check that your input data is not empty.")
        return jax.tree_util.tree_map(lambda *a: np.concatenate(a, axis=0), *outs)

    def predict_on_batch(self, x):
        """The outputs for one batch, by predict's compiled step (``training=False``), as numpy.

        Example:
            >>> import numpy as np, tapejax as tf
            >>> model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(3)])
            >>> model.predict_on_batch(np.zeros((4, 2))).shape
            (4, 3)
        """
        x = _to_tensors(_standardize_arrays(x))
        # (An unbuilt model builds in the step's first trace, as Keras 3's, which is then traced again.)
        out = self._k_call_step("predict_step", (x,))
        return jax.tree_util.tree_map(lambda t: np.asarray(t), out, is_leaf=_is_tensor_leaf)

    def train_on_batch(self, x, y=None, sample_weight=None, return_dict=False, **kwargs):
        """One training step on one batch, by fit's compiled step; the loss (and metrics).

        Example:
            >>> import numpy as np, tapejax as tf
            >>> model = tf.keras.Sequential([tf.keras.Input((2,)),
            ...                              tf.keras.layers.Dense(1, kernel_initializer='zeros')])
            >>> model.compile(optimizer='sgd', loss='mse')
            >>> model.train_on_batch(np.ones((4, 2)), np.ones((4, 1)))
            1.0
        """
        return self._k_on_batch("train", x, y, sample_weight, return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """The loss (and metrics) on one batch, by evaluate's compiled step (``training=False``).

        Example:
            >>> import numpy as np, tapejax as tf
            >>> model = tf.keras.Sequential([tf.keras.Input((2,)),
            ...                              tf.keras.layers.Dense(1, kernel_initializer='zeros')])
            >>> model.compile(optimizer='sgd', loss='mse')
            >>> model.test_on_batch(np.ones((4, 2)), np.ones((4, 1)))
            1.0
        """
        return self._k_on_batch("test", x, y, sample_weight, return_dict)

    def _k_on_batch(self, kind, x, y, sample_weight, return_dict):
        self._k_check_compiled(f"{kind}_on_batch")
        x, y = _to_tensors(x), _to_tensors(y)
        # Keras 3 calls its step function on (x, y, sample_weight), None where not given; an
        # unbuilt model is built in the step's first trace (TensorFlow then traces it twice).
        logs = self._k_call_step(f"{kind}_step", (x, y, sample_weight))
        logs = self._k_ordered(logs)
        return _sorted(logs) if return_dict else (logs["loss"] if len(logs) == 1 else list(logs.values()))


def _keras3_predict_function(model):
    """The function Keras 3's ``predict`` compiles, under its name: TensorFlow's retracing
    warning names it (``5 out of the last 11 calls to <function TensorFlowTrainer.
    make_predict_function.<locals>.one_step_on_data_distributed at 0x...> triggered ...``), and
    it counts the traces of every model's predict together (one code object), as TF does."""
    def one_step_on_data_distributed(data):
        return model.predict_step(data)
    one_step_on_data_distributed.__qualname__ = \
        "TensorFlowTrainer.make_predict_function.<locals>.one_step_on_data_distributed"
    return one_step_on_data_distributed


def _sorted(logs):
    """Logs as Keras 3 hands them to callbacks and returns them as dicts: keys sorted
    (``accuracy`` before ``loss``; a returned list keeps the loss, then the metrics as compiled)."""
    return dict(sorted(logs.items()))


class Sequential(Model):
    """A linear stack of layers: ``Sequential([layer, ...])`` or ``.add(layer)``.

    Given an input shape (``input_shape=`` on the first layer, an ``InputLayer`` or
    ``tf.keras.Input``) it is built at once; otherwise on its first call.

    Example:
        >>> import tapejax as tf
        >>> model = tf.keras.Sequential([
        ...     tf.keras.layers.Conv2D(16, [3, 3], activation='relu', input_shape=(None, None, 1)),
        ...     tf.keras.layers.Conv2D(16, [3, 3], activation='relu'),
        ...     tf.keras.layers.GlobalAveragePooling2D(),
        ...     tf.keras.layers.Dense(10)])
        >>> model.count_params(), model.layers[0].output_shape
        (2650, TensorShape([None, None, None, 16]))
        >>> model(tf.zeros([2, 28, 28, 1])).shape
        TensorShape([2, 10])
    """

    def __init__(self, layers=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self._k_layer_list = []
        self._k_build_shape = None
        self._k_input_layer = None   # Keras 3's first layer: the InputLayer of its input shape, once known
        for layer in layers or []:
            self.add(layer, rebuild=False)
        self._k_rebuild()

    def add(self, layer, rebuild=True):
        """Appends a layer (or sets the input shape, for an ``InputLayer`` / ``tf.keras.Input``).

        Raises:
            TypeError: not a layer.

        Example:
            >>> import tapejax as tf
            >>> model = tf.keras.Sequential()
            >>> model.add(tf.keras.Input(shape=(4,)))
            >>> model.add(tf.keras.layers.Dense(2))
            >>> model.count_params()
            10
        """
        if isinstance(layer, KerasTensor):
            layer = getattr(layer, "_k_input_layer", None)
            if layer is None:
                raise TypeError("Sequential.add() takes layers or a tf.keras.Input(shape=...); got a symbolic "
                                "tensor produced by a layer. Use the functional API for graphs.")
        if isinstance(layer, InputLayer):
            self._k_input_layer = layer
            self._k_build_shape = layer._k_batch_input_shape
            if rebuild:
                self._k_rebuild()
            return
        if not isinstance(layer, Module) and not callable(layer):
            raise TypeError(f"The added layer must be an instance of class Layer. Received: layer={layer!r} "
                            f"of type {type(layer).__name__}.")
        if not self._k_layer_list and self._k_build_shape is None:
            self._k_build_shape = getattr(layer, "_k_batch_input_shape", None)
            if self._k_build_shape is not None and self._k_input_layer is None:
                # Keras 3 adds an InputLayer of the first layer's input_shape= here
                self._k_input_layer = InputLayer(batch_shape=self._k_build_shape)
        self._k_layer_list.append(layer)
        if rebuild:
            self._k_rebuild()

    def pop(self):
        """Removes the last layer and returns it.

        Example:
            >>> import tapejax as tf
            >>> model = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(2,)),
            ...                              tf.keras.layers.Dense(1)])
            >>> type(model.pop()).__name__, len(model.layers)
            ('Dense', 1)
        """
        if not self._k_layer_list:
            raise TypeError("There are no layers in the model.")
        layer = self._k_layer_list.pop()
        self._k_rebuild()
        return layer

    def _k_rebuild(self):
        if self._k_build_shape is not None and self._k_layer_list:
            self.built = False
            self.build(self._k_build_shape)

    def build(self, input_shape=None):
        """Builds every layer for ``input_shape`` (batch dimension included), recording output shapes.

        Example:
            >>> import tapejax as tf
            >>> model = tf.keras.Sequential([tf.keras.layers.Dense(4), tf.keras.layers.Dense(2)])
            >>> model.build((None, 3))
            >>> model.count_params()
            26
        """
        if input_shape is None:
            input_shape = self._k_build_shape
        if input_shape is None:
            raise ValueError("You must provide an `input_shape` argument: model.build((None, 784)).")
        shape = TensorShape(input_shape)
        self._k_build_shape = tuple(shape)
        if self._k_input_layer is None and self._k_layer_list:
            # Keras 3 puts an InputLayer of this shape first (its configuration lists it)
            first = self._k_layer_list[0]
            self._k_input_layer = InputLayer(batch_shape=self._k_build_shape,
                                             dtype=getattr(first, "compute_dtype", None))
        # As in Keras 3, its layers build under its scope (paths 'sequential/dense/kernel').
        with self._k_scope():
            for layer in self._k_layer_list:
                try:
                    if isinstance(layer, Layer):
                        out = layer.compute_output_shape(shape)
                        # Keras 3 builds on an InputLayer of this batch shape: a model built
                        # by its first call (or predict) shows that call's batch size.
                        layer._k_output_shape = TensorShape(out) if isinstance(out, tuple) else out
                        layer._k_declared_shape = True
                    else:
                        out = _infer_output(lambda xs, l=layer: l(xs[0]), [_Spec(shape, "float32")]).shape
                except (TypeError, NotImplementedError, jax.errors.JAXTypeError):
                    # A layer whose call needs concrete values (.numpy(), Python branching on data)
                    # cannot be traced abstractly: it and the rest build on the first real call.
                    shape = None
                    break
                shape = out
        self._k_output_shape = None if shape is None else shape
        self._k_declared_shape = shape is not None
        self.built = True
        unique_name("functional")   # Keras 3 builds a functional model inside: it takes a name

    def call(self, inputs, training=None, mask=None, **kwargs):
        # Keras 3's signature: its call errors list the arguments, ``kwargs=<class 'inspect._empty'>`` too.
        x = _adjust_input_rank(inputs, self._k_build_shape)
        for layer in self._k_layer_list:
            x = layer(x, training=training) if isinstance(layer, Layer) else layer(x)
        return x

    @property
    def output_shape(self):
        """The output shape it was built with: the first call's batch size when a call built it,
        as Keras 3 (``None`` from a declared input shape or ``fit``).

        Example:
            >>> import tapejax as tf
            >>> model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            >>> _ = model(tf.ones([10, 3]))
            >>> model.output_shape
            (10, 2)
        """
        shape = Layer.output_shape.fget(self) if self._k_output_shape is None else self._k_output_shape
        return tuple(shape) if isinstance(shape, TensorShape) else shape

    def get_config(self):
        """Keras 3's configuration: name, trainable, dtype, the layers (its InputLayer first, once
        it has an input shape) as ``serialize_keras_object`` describes them, and the input shape
        it was built with.

        Example:
            >>> import tapejax as tf
            >>> model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(2)])
            >>> config = model.get_config()
            >>> [entry['class_name'] for entry in config['layers']], config['build_input_shape']
            (['InputLayer', 'Dense'], (None, 3))
        """
        return _model_config.sequential_config(self)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A Sequential model from ``get_config()``'s configuration (new layers, new weights)."""
        return _model_config.sequential_from_config(cls, config, custom_objects)


_saving._MODEL_CLASSES["Sequential"] = Sequential   # what load_model rebuilds a saved configuration as
_saving._MODEL_CLASSES["Functional"] = Model


def model_from_json(json_string, custom_objects=None):
    """A new model from ``model.to_json()``'s description (Keras 3's ``keras.models.model_from_json``).

    Example:
        >>> import tapejax as tf
        >>> model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(2)], name='s')
        >>> twin = tf.keras.models.model_from_json(model.to_json())
        >>> twin.name, twin(tf.ones([1, 3])).shape
        ('s', TensorShape([1, 2]))
    """
    import json
    return _deserialize(json.loads(json_string), custom_objects)


def clone_model(model, input_tensors=None, clone_function=None, call_function=None, recursive=False, **kwargs):
    """A new model with the structure of ``model`` and new weights: its configuration made
    again (Keras 3's ``keras.models.clone_model`` with the default ``clone_function``, which
    makes each layer from its configuration). Sequential and functional models.

    Raises:
        ValueError: a subclassed model, or arguments tapejax does not support.

    Example:
        >>> import tapejax as tf
        >>> model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(2, name='d')])
        >>> twin = tf.keras.models.clone_model(model)
        >>> [l.name for l in twin.layers], twin.layers[0] is model.layers[0]
        (['d'], False)
    """
    if input_tensors is not None or call_function is not None or kwargs:
        raise NotImplementedError("clone_model(input_tensors / call_function / ...) is not supported by "
                                  "tapejax yet.")
    if isinstance(model, Sequential):
        config = model.get_config()
        if clone_function is not None:
            layers = [clone_function(l) for l in model._k_layer_list]
            ref = model._k_input_layer
            inputs = [] if ref is None else [InputLayer(batch_shape=ref.batch_shape, dtype=ref.dtype, sparse=ref.sparse,
                                                        name=ref.name)]
            return Sequential(inputs + layers, name=model.name, trainable=model.trainable)
        return Sequential.from_config(config)
    if not isinstance(model, Model) or model.__dict__.get("_k_graph") is None:
        raise ValueError("Arguments `clone_function` and `input_tensors` are only supported for Sequential "
                         f"models or Functional models. Received model of type '{type(model).__name__}', "
                         "with clone_function=None and input_tensors=None")
    if clone_function is not None:
        raise NotImplementedError("clone_model(functional model, clone_function=...) is not supported by tapejax yet.")
    return type(model).from_config(model.get_config())


# ---------------------------------------------------------------------------
# Training-loop helpers
# ---------------------------------------------------------------------------

def _pandas_kind(a):
    """'DataFrame' / 'Series' for a pandas object (pandas is not imported for this), else None."""
    kind = type(a).__name__
    if kind in ("DataFrame", "Series") and type(a).__module__.split(".")[0] == "pandas":
        return kind
    return None


_KERAS_DTYPES = frozenset({"float16", "float32", "float64", "uint8", "uint16", "uint32", "uint64", "int8", "int16",
                           "int32", "int64", "bfloat16", "bool", "string", "float8_e4m3fn", "float8_e5m2",
                           "complex64", "complex128"})


def _check_keras_dtype(dtype):
    """Keras 3's array adapter asks whether each array's dtype is a float (``standardize_dtype``):
    text (NumPy 'str32' / object, pandas 'str') is no Keras dtype, and fit/evaluate/predict raise
    ``ValueError: Invalid dtype: str`` for it (feed strings as tensors or a tf.data.Dataset)."""
    name = getattr(dtype, "name", None)
    if dtype is not object and name is not None and name not in _KERAS_DTYPES:
        raise ValueError(f"Invalid dtype: {name}")


def _standardize_array(a):
    """One input of fit/evaluate/predict as Keras 3's array adapter sees it: a pandas DataFrame
    as its values, a Series as one column (``(n,) -> (n, 1)``), and floats that are not
    float32 (float64, float16) cast to float32 (a DataFrame: all of it if any column is)."""
    kind = _pandas_kind(a)
    if kind == "DataFrame":
        for d in getattr(getattr(a, "dtypes", None), "values", ()):
            _check_keras_dtype(d)
    elif kind == "Series" or isinstance(a, np.ndarray):
        _check_keras_dtype(getattr(a, "dtype", None))
    if kind == "DataFrame":
        cast = any(np.dtype(d).kind == "f" and np.dtype(d) != np.float32 for d in a.dtypes.values
                   if d is not object and isinstance(d, np.dtype))
        a = a.astype(np.float32).to_numpy() if cast else a.to_numpy()
    elif kind == "Series":
        a = np.expand_dims(a.to_numpy(), axis=-1)
    if isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.dtype != np.float32:
        a = a.astype(np.float32)
    return a


def _standardize_arrays(x):
    """:func:`_standardize_array` on every array of ``x`` (a dataset is left alone)."""
    if x is None or _is_dataset(x) and _pandas_kind(x) is None:
        return x
    return jax.tree_util.tree_map(_standardize_array, x, is_leaf=lambda a: _pandas_kind(a) is not None)


def _as_input_dtype(x, dtype):
    """Keras 3's functional input conversion (``Functional._convert_inputs_to_tensors``): a value
    (a pandas Series too) becomes a tensor, cast to its ``Input``'s dtype (int64 data into a
    float32 input)."""
    if getattr(x, "_tf_composite", False):   # a SparseTensor / RaggedTensor: its values take the dtype
        if x.dtype.name == dtype or dtype == "string":
            return x
        if hasattr(x, "with_flat_values"):
            return x.with_flat_values(_ops.cast(x.flat_values, dtype))
        return x.with_values(_ops.cast(x.values, dtype))
    if not isinstance(x, _TensorBase):
        if not hasattr(x, "__array__") or isinstance(x, KerasTensor):
            return x
        x = _ops.convert_to_tensor(np.asarray(x))
    if x.dtype.name == dtype or dtype == "string" or x.dtype.name == "string":
        return x
    return _ops.cast(x, dtype)


def _adjust_input_rank(x, ref_shape):
    """Keras 3's functional input check (``Functional._adjust_input_rank``): an input one rank
    short of a model input whose last dimension is 1 gets that axis (``(n,) -> (n, 1)``); one
    rank over with a last dimension of 1 loses it."""
    if not isinstance(x, _TensorBase) or ref_shape is None:
        return x
    ref_shape = tuple(ref_shape)
    rank, ref_rank = len(x.shape), len(ref_shape)
    if rank == ref_rank:
        return x
    if rank == ref_rank + 1 and x.shape[-1] == 1:
        return _ops.squeeze(x, axis=-1)
    if rank == ref_rank - 1 and ref_shape[-1] == 1:
        return _ops.expand_dims(x, axis=-1)
    raise ValueError(f"Invalid input shape for input {x}. Expected shape {ref_shape}, but input has "
                     f"incompatible shape {tuple(x.shape)}")


def _unpack(data):
    if isinstance(data, (tuple, list)) and not isinstance(data, TensorShape):
        if len(data) == 1:
            return data[0], None, None
        if len(data) == 2:
            return data[0], data[1], None
        if len(data) == 3:
            return data
    return data, None, None


def _first(x):
    return _tree_leaves(x)[0]


def _batch_len(x):
    return int(np.shape(_first(x))[0])


def _val_args(validation_data):
    x, y, sw = _unpack(validation_data)
    return (x, y) if sw is None else (x, y, None, sw)


def _is_dataset(x):
    return x is not None and not isinstance(x, (np.ndarray, _TensorBase, list, tuple, dict, jax.Array)) \
        and hasattr(x, "__iter__")


def _class_weight_to_sample_weight(class_weight, x, y, sample_weight):
    """Keras's ``fit(class_weight=...)``: each example weighs ``class_weight[its class]`` (1.0
    for a class the dict omits). Labels are class ids, one-hot rows (argmax) or one binary column."""
    if _is_dataset(x) or y is None or not isinstance(class_weight, dict):
        raise ValueError("fit(class_weight=...) needs a dict {class id: weight} and the labels `y` as one "
                         "array; with a dataset, yield (x, y, sample_weight) batches instead.")
    if sample_weight is not None:
        raise ValueError("You cannot `class_weight` and `sample_weight` at the same time.")
    labels = np.asarray(y)
    if labels.ndim > 1 and labels.shape[-1] > 1:
        labels = np.argmax(labels, axis=-1)
    elif labels.ndim > 1:
        labels = np.round(labels[..., 0])
    return np.asarray([class_weight.get(int(c), 1.0) for c in labels.reshape(len(labels))], np.float32)


def _check_dataset_arguments(y, sample_weight, shuffle):
    """Keras 3's data adapter for a ``tf.data.Dataset``: the targets and weights belong in it,
    and ``shuffle`` is ignored, with a warning from one line (once per process, as Keras's)."""
    for value, name, description in ((y, "y", "the targets"),
                                     (sample_weight, "sample_weights", "the sample weights")):
        if value is not None:
            raise ValueError(f"When providing `x` as a tf.data.Dataset, `{name}` should not be passed. "
                             f"Instead, {description} should be included as part of the tf.data.Dataset.")
    if shuffle:
        warnings.warn("`shuffle=True` was passed, but will be ignored since the data `x` was provided as a "
                      "tf.data.Dataset. The Dataset is expected to already be shuffled "
                      "(via `.shuffle(buffer_size)`).")


def _check_array_data(x, y, sample_weight):
    """Keras 3's data adapters take arrays (and lists/dicts of them): a list of Python numbers
    (``fit([1, 2, 3], ...)``) is no data type they know; the error names ``x`` whichever it was."""
    leaves = jax.tree_util.tree_leaves((x, y, sample_weight), is_leaf=_is_tensor_leaf)
    if any(isinstance(leaf, (bool, int, float, complex, str, bytes)) for leaf in leaves):
        raise ValueError(f"Unrecognized data type: x={x} (of type {type(x)})")


class _Batches:
    """Batches of arrays (sliced with numpy, shuffled per epoch) or the elements of a dataset."""

    def __init__(self, x, y, sample_weight, batch_size, shuffle):
        if isinstance(x, _Dataset):
            _check_dataset_arguments(y, sample_weight, shuffle)
        self.dataset = x if _is_dataset(x) else None
        # Keras 3's EpochIterator state over a dataset: the iterator, the batches taken from it,
        # and the number of batches (the cardinality, or what the first pass found).
        self._iterator, self._seen, self._num_batches = None, 0, None
        if self.dataset is None:
            _check_array_data(x, y, sample_weight)
            conv = lambda a: np.asarray(a) if not isinstance(a, np.ndarray) else a  # noqa: E731
            self.x = jax.tree_util.tree_map(conv, x, is_leaf=_is_tensor_leaf)
            self.y = None if y is None else jax.tree_util.tree_map(conv, y, is_leaf=_is_tensor_leaf)
            self.sw = None if sample_weight is None else np.asarray(sample_weight)
            self.n = len(_first(self.x))
            self.batch_size = int(batch_size or 32)
            self.n_batches = -(-self.n // self.batch_size)
        else:
            cardinality = getattr(x, "cardinality", None)
            cardinality = int(cardinality()) if callable(cardinality) else -1
            self._num_batches = cardinality if cardinality >= 0 else None
            self.n_batches = self._num_batches or 0
        self.shuffle = shuffle

    @property
    def static_batch_size(self):
        """The batch dimension of the data's element spec, as Keras 3's TF backend traces its
        step on it: the batch size where every batch is full (arrays whose length it divides, a
        dataset batched with ``drop_remainder=True``), else ``None``."""
        if self.dataset is None:
            return self.batch_size if self.n % self.batch_size == 0 else None
        spec = getattr(self.dataset, "element_spec", None)
        leaves = jax.tree_util.tree_leaves(spec, is_leaf=lambda s: hasattr(s, "shape"))
        shape = getattr(leaves[0], "shape", None) if leaves else None
        if shape is None or not len(shape):
            return None
        return tuple(shape)[0]

    def spec(self, batch):
        """The type Keras 3's TF backend traces its step on, for ``batch`` (one of these
        batches): its tensors' shapes (``Function._call_typed``) as the data's element spec
        has them. Arrays: the batch size where every batch is full (see
        :attr:`static_batch_size`), else ``None``; a dataset: its ``element_spec``'s shapes."""
        shapes = _tensor_shapes((batch,))
        if self.dataset is not None:
            spec = getattr(self.dataset, "element_spec", None)
            leaves = jax.tree_util.tree_leaves(spec, is_leaf=lambda s: hasattr(s, "shape"))
            known = [getattr(getattr(s, "shape", None), "rank", None) is not None for s in leaves]
            if len(leaves) == len(shapes) and all(known) and all(
                    len(s.shape) == len(shape) for s, shape in zip(leaves, shapes)):
                return tuple(tuple(s.shape) for s in leaves)
            return tuple((None,) + shape[1:] if shape else shape for shape in shapes)
        size = self.static_batch_size
        return tuple((size,) + shape[1:] if shape else shape for shape in shapes)

    def epoch(self, steps=None):
        if self.dataset is not None:
            count = 0
            for element in self._dataset_epoch(steps):
                count += 1
                yield tuple(element) if isinstance(element, (tuple, list)) else element
            self.n_batches = count
            return
        if self.shuffle:
            # With a global seed, Keras 3's order (TF's shuffle in a tf.data function: the same
            # every epoch); without one, a fresh order from the global Generator each epoch.
            order = random._first_op_in_new_graph_shuffle(self.n)
            if order is None:
                seed = np.asarray(jax.random.key_data(random.get_global_generator().make_key())).ravel()
                order = np.random.default_rng(seed).permutation(self.n)
        else:
            order = None
        for i in range(self.n_batches):
            if steps is not None and i >= steps:
                break
            sl = slice(i * self.batch_size, (i + 1) * self.batch_size)
            idx = order[sl] if order is not None else sl
            take = lambda a: Tensor(to_array(a[idx]))  # noqa: E731
            bx = jax.tree_util.tree_map(take, self.x)
            if self.y is None:
                # Keras 3's batch without targets (pack_x_y_sample_weight): the inputs, or (x,)
                # for a tuple or list of them.
                yield (bx,) if isinstance(bx, (tuple, list)) else bx
            elif self.sw is None:
                yield (bx, jax.tree_util.tree_map(take, self.y))
            else:
                yield (bx, jax.tree_util.tree_map(take, self.y), take(self.sw))


    def _dataset_epoch(self, steps_per_epoch):
        """One epoch over the dataset as Keras 3's ``EpochIterator``: with ``steps_per_epoch`` the
        iterator carries over to the next epoch (a repeated dataset goes on with its stream), else
        each epoch makes a new one, and one more is made when an epoch has taken all the batches
        (each new iterator of a shuffled dataset draws new seeds, as in TF). A dataset that runs out
        warns, as Keras does: every epoch when its size is unknown (the count then includes the
        step that found it empty)."""
        steps = steps_per_epoch or self._num_batches or -1
        if steps > 0:
            if self._iterator is None or steps_per_epoch is None:
                self._iterator, self._seen = iter(self.dataset), 0
            for _ in range(steps):
                if self._num_batches and self._seen >= self._num_batches:
                    if steps_per_epoch:
                        _interrupted_warning()
                    break
                self._seen += 1
                try:
                    element = next(self._iterator)
                except StopIteration:
                    self._ran_out()
                    return
                yield element
            if self._num_batches and self._seen >= self._num_batches:
                self._iterator, self._seen = iter(self.dataset), 0
        else:
            iterator, self._seen = iter(self.dataset), 0
            while True:
                self._seen += 1
                try:
                    element = next(iterator)
                except StopIteration:
                    self._ran_out()
                    return
                yield element

    def _ran_out(self):
        if self._num_batches is None:
            self._num_batches = self._seen
        _interrupted_warning()
        self._iterator = None


def _interrupted_warning():
    # stacklevel 2, as Keras: the warning is shown once per place that calls this (two).
    warnings.warn("Your input ran out of data; interrupting training. Make sure that your dataset or generator "
                  "can generate at least `steps_per_epoch * epochs` batches. You may need to use the "
                  "`.repeat()` function when building your dataset.", stacklevel=2)


def _with_progbar(callbacks, verbose):
    """The callbacks plus Keras's default ``ProgbarLogger`` (unless silent, or one is given)."""
    callbacks = list(callbacks or [])
    if verbose and not any(isinstance(cb, ProgbarLogger) for cb in callbacks):
        callbacks.append(ProgbarLogger())
    return callbacks


def _metric_name(metric, spec):
    if isinstance(spec, str):
        return spec if spec not in ("acc",) else "acc"
    return getattr(metric, "name", type(metric).__name__)
