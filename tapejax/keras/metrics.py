"""tf.keras.metrics: small stateful objects whose state is non-trainable tapejax Variables.

A built-in metric's ``update_state`` is one compiled call (per-sample values,
weighting and accumulation fused in a ``jax.jit`` function) followed by ``_set``
on its state Variables, so it also works inside ``tapejax.function``.

Example:
    >>> from tapejax.keras import metrics
    >>> m = metrics.SparseCategoricalAccuracy()
    >>> m.update_state([1, 0, 2], [[0.1, 0.9, 0.0], [0.8, 0.1, 0.1], [0.5, 0.3, 0.2]])
    >>> float(m.result())
    0.6666666...
    >>> m.reset_state(); float(m.result())
    0.0
"""
import functools
import inspect

import jax
import jax.numpy as jnp
import numpy as np

from .._core.engine import read_raw
from .._core.state import init_scope as _init_scope
from .._core.tensor import Tensor, to_array
from ._variables import owned_variable as _owned_variable
from ._naming import _to_snake_case, unique_name as _unique_name
from ..extend import defop
from ..checkpoint.tracking import AutoTrackable as _AutoTrackable
from ..ops import eigen_reduce
from . import losses as _losses

_f32 = jnp.float32


# ---------------------------------------------------------------------------
# Per-sample metric functions (pure JAX, Keras 3's definitions)
# ---------------------------------------------------------------------------

def _accuracy(y_true, y_pred):
    y_true, y_pred = _losses.same_rank(y_true, y_pred)
    return (y_true == y_pred).astype(_f32)


def _binary_accuracy(y_true, y_pred, threshold=0.5):
    y_true, y_pred = _losses.same_rank(y_true, y_pred)
    return (y_true == (y_pred > threshold).astype(y_true.dtype)).astype(_f32)


def _sparse_categorical_accuracy(y_true, y_pred):
    shape = y_true.shape
    squeeze = y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1
    if squeeze:
        y_true = jnp.squeeze(y_true, -1)
    matches = (y_true == jnp.argmax(y_pred, axis=-1).astype(y_true.dtype)).astype(_f32)
    return matches.reshape(shape) if squeeze else matches


def _categorical_accuracy(y_true, y_pred):
    return _sparse_categorical_accuracy(jnp.argmax(y_true, axis=-1), y_pred)


def _sparse_top_k(y_true, y_pred, k=5):
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = jnp.squeeze(y_true, -1)
    target = jnp.take_along_axis(y_pred, y_true.astype(jnp.int32)[..., None], axis=-1)
    # in the top k when fewer than k classes score strictly higher (tf.math.in_top_k)
    return (jnp.sum(y_pred > target, axis=-1) < k).astype(_f32)


def _top_k(y_true, y_pred, k=5):
    return _sparse_top_k(jnp.argmax(y_true, axis=-1), y_pred, k)


def _loss_metric(name):
    per_sample = _losses._PER_SAMPLE[name]
    if name == "sparse_categorical_crossentropy":
        return lambda y_true, y_pred, **kw: per_sample(y_true, y_pred, **kw)
    return lambda y_true, y_pred, **kw: per_sample(*_losses._pair(y_true, y_pred), **kw)


def _squared_error(y_true, y_pred):  # RootMeanSquaredError accumulates squared errors
    y_true, y_pred = _losses._pair(y_true, y_pred)
    return jnp.square(y_pred - y_true)


_FUNCS = {
    "accuracy": _accuracy,
    "binary_accuracy": _binary_accuracy,
    "categorical_accuracy": _categorical_accuracy,
    "sparse_categorical_accuracy": _sparse_categorical_accuracy,
    "top_k_categorical_accuracy": _top_k,
    "sparse_top_k_categorical_accuracy": _sparse_top_k,
    "squared_error": _squared_error,
}
for _n in ("mean_squared_error", "mean_absolute_error", "mean_absolute_percentage_error",
           "mean_squared_logarithmic_error", "binary_crossentropy", "categorical_crossentropy",
           "sparse_categorical_crossentropy", "kl_divergence", "poisson", "hinge", "squared_hinge",
           "log_cosh", "cosine_similarity"):
    _FUNCS[_n] = _loss_metric(_n)


def _fn_op(name):
    return defop(lambda y_true, y_pred, config=(): _FUNCS[name](y_true, y_pred, **dict(config)),
                 name=name, static=("config",))


_OPS = {n: _fn_op(n) for n in _FUNCS}


def accuracy(y_true, y_pred):
    """Per-element ``1.0`` where ``y_true == y_pred``."""
    return _OPS["accuracy"](y_true, y_pred)


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """Per-element ``1.0`` where ``y_true == (y_pred > threshold)``."""
    return _OPS["binary_accuracy"](y_true, y_pred, config=(("threshold", float(threshold)),))


def categorical_accuracy(y_true, y_pred):
    """Per-sample ``1.0`` where ``argmax(y_true) == argmax(y_pred)``."""
    return _OPS["categorical_accuracy"](y_true, y_pred)


def sparse_categorical_accuracy(y_true, y_pred):
    """Per-sample ``1.0`` where ``y_true == argmax(y_pred)``.

    Example:
        >>> from tapejax.keras import metrics
        >>> metrics.sparse_categorical_accuracy([1, 0], [[0.2, 0.8], [0.3, 0.7]]).numpy()
        array([1., 0.], dtype=float32)
    """
    return _OPS["sparse_categorical_accuracy"](y_true, y_pred)


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """Per-sample ``1.0`` where the true class is among the ``k`` highest predictions."""
    return _OPS["top_k_categorical_accuracy"](y_true, y_pred, config=(("k", int(k)),))


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    """Per-sample ``1.0`` where the integer label is among the ``k`` highest predictions."""
    return _OPS["sparse_top_k_categorical_accuracy"](y_true, y_pred, config=(("k", int(k)),))


# ---------------------------------------------------------------------------
# Accumulation (Keras 3's reduce_to_samplewise_values), compiled once per shape
# ---------------------------------------------------------------------------

def _samplewise(values, sample_weight, reduce_fn):
    values = values.astype(_f32)
    if sample_weight is not None:
        sample_weight = sample_weight.astype(_f32)
        values, sample_weight = _losses.same_rank(values, sample_weight)
        wd, vd = sample_weight.ndim, values.ndim
        if vd > wd:
            values = reduce_fn(values, axis=tuple(range(wd, vd)))
        sample_weight = jnp.broadcast_to(sample_weight, values.shape)
        values = values * sample_weight
        if wd > 1:
            sample_weight = reduce_fn(sample_weight, axis=tuple(range(1, wd)))
    if values.ndim > 1:
        values = reduce_fn(values, axis=tuple(range(1, values.ndim)))
    return values, sample_weight


def _accumulate(total, count, values, sample_weight, mean):
    # Keras 3 on TF: ops.mean / ops.sum are tf.reduce_mean / reduce_sum, TF's summation order
    values, sample_weight = _samplewise(values, sample_weight, eigen_reduce.tf_mean if mean else eigen_reduce.tf_sum)
    total = total + eigen_reduce.tf_sum(values)
    if count is None:
        return total, None
    if sample_weight is not None:
        n = eigen_reduce.tf_sum(sample_weight)
    else:
        n = values.shape[0] if values.ndim >= 1 else 1
    return total, count + jnp.asarray(n, _f32)


@functools.partial(jax.jit, static_argnames=("mean",))
def _reduce_update(total, count, values, sample_weight, mean):
    return _accumulate(total, count, values, sample_weight, mean)


@functools.partial(jax.jit, static_argnames=("fn", "config"))
def _wrapper_update(total, count, y_true, y_pred, sample_weight, fn, config):
    values = _FUNCS[fn](y_true, y_pred, **dict(config))
    return _accumulate(total, count, values, sample_weight, True)


def _arr(x):
    return None if x is None else to_array(x)


# ---------------------------------------------------------------------------
# Metric objects
# ---------------------------------------------------------------------------

class Metric(_AutoTrackable):
    """Base class of metrics: state in Variables, ``update_state`` / ``result`` / ``reset_state``.

    Subclass it: create state with ``add_weight`` (or ``add_variable``) in
    ``__init__``, change it with ``assign_add`` in ``update_state``, and compute
    the value in ``result``.

    Example:
        >>> import tapejax as tf
        >>> from tapejax.keras import metrics
        >>> class Count(metrics.Metric):
        ...     def __init__(self, name="count", **kw):
        ...         super().__init__(name=name, **kw)
        ...         self.n = self.add_weight(name="n", initializer="zeros")
        ...     def update_state(self, x, sample_weight=None):
        ...         self.n.assign_add(tf.cast(tf.size(x), tf.float32))
        ...     def result(self):
        ...         return self.n.value()
        >>> c = Count(); c.update_state([1, 2, 3]); float(c.result())
        3.0
    """

    def __init__(self, name=None, dtype=None):
        # Keras 3's auto_name: unique among the process's layer, optimizer and metric names
        # (auc, auc_1; a class with a default name of its own, Mean's 'mean', keeps it).
        self.name = name or _unique_name(_to_snake_case(type(self).__name__))
        self.dtype = dtype or "float32"
        self._metric_variables = []
        self._initial = []

    def add_variable(self, shape=(), initializer="zeros", dtype=None, aggregation="sum", name=None):
        """Adds a non-trainable state Variable, reset to its initial value by ``reset_state``."""
        dtype = dtype or self.dtype
        if callable(initializer) and not isinstance(initializer, str):
            init = np.asarray(initializer(shape=shape, dtype=dtype) if _takes_shape(initializer)
                              else initializer())
        else:
            fill = {"zeros": 0.0, "zero": 0.0, "ones": 1.0, "one": 1.0}.get(initializer)
            if fill is None:
                raise ValueError(f"Unknown metric variable initializer {initializer!r}: use 'zeros', "
                                 "'ones' or a callable initializer(shape, dtype).")
            init = np.full(tuple(shape or ()), fill, dtype=np.dtype(str(getattr(dtype, "name", dtype))))
        # As Keras 3: created concretely, outside any function being traced (a step that
        # builds its compiled metrics at its first trace is traced once more, not three times).
        with _init_scope():
            v = _owned_variable(self.name, init, name or "variable")   # Keras 3 path: 'mean/total'
        self._metric_variables.append(v)
        self._initial.append(v._value)
        return v

    def add_weight(self, name=None, shape=(), initializer="zeros", dtype=None, aggregation="sum", **kwargs):
        """Keras 2 spelling of :meth:`add_variable`."""
        return self.add_variable(shape=shape, initializer=initializer, dtype=dtype, name=name)

    @property
    def variables(self):
        """The state Variables."""
        return list(self._metric_variables)

    weights = non_trainable_weights = non_trainable_variables = variables

    @property
    def trainable_weights(self):
        return []

    trainable_variables = trainable_weights

    def update_state(self, *args, **kwargs):
        raise NotImplementedError("Metric subclasses define update_state(self, y_true, y_pred, sample_weight=None).")

    def result(self):
        raise NotImplementedError("Metric subclasses define result(self).")

    def reset_state(self):
        """Sets every state Variable back to its initial value."""
        for v, init in zip(self._metric_variables, self._initial):
            v._set(init)


    def __call__(self, *args, **kwargs):
        """``update_state(*args, **kwargs)``, then returns ``result()``."""
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, **getattr(self, "_config", {})}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"   # Keras 3's form


def _takes_shape(fn):
    try:
        return "shape" in inspect.signature(fn).parameters or hasattr(fn, "__call__") and not inspect.isfunction(fn)
    except (TypeError, ValueError):
        return True


def _divide_no_nan(a, b):
    return jnp.where(b == 0, 0.0, a / jnp.where(b == 0, 1.0, b))


class Reduce(Metric):
    """Accumulates ``reduce_fn`` of values (``Sum`` and ``Mean``)."""

    _mean = True

    def __init__(self, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.total = self.add_variable(name="total")
        self.count = self.add_variable(name="count") if self._mean else None

    def update_state(self, values, sample_weight=None):
        """Adds ``values`` (weighted by ``sample_weight``) to the state."""
        total, count = _reduce_update(read_raw(self.total), None if self.count is None else read_raw(self.count),
                                      _arr(values), _arr(sample_weight), mean=self._mean)
        self.total._set(total)
        if self.count is not None:
            self.count._set(count)

    def result(self):
        if self.count is None:
            return Tensor(read_raw(self.total))
        return Tensor(_divide_no_nan(read_raw(self.total), read_raw(self.count)))


class Mean(Reduce):
    """The (weighted) mean of the values seen.

    Example:
        >>> from tapejax.keras import metrics
        >>> m = metrics.Mean()
        >>> m.update_state([1.0, 3.0, 5.0, 7.0], sample_weight=[1, 1, 0, 0])
        >>> float(m.result())
        2.0
    """

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)


class Sum(Reduce):
    """The (weighted) sum of the values seen.

    Example:
        >>> from tapejax.keras import metrics
        >>> float(metrics.Sum()([1.0, 3.0, 5.0]))
        9.0
    """

    _mean = False

    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)


class CompileMetrics(Metric):
    """The metrics given to ``compile`` as one metric (Keras 3's ``CompileMetrics``): what
    ``model.metrics`` lists after the loss tracker, named ``compile_metrics``.

    ``metrics`` are the metric objects (made at the first step); ``result()`` is a dict of
    their results by name.

    Example:
        >>> import numpy as np, tapejax as tf
        >>> model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
        >>> model.compile(optimizer='sgd', loss='mse', metrics=['mae'])
        >>> model.metrics_names
        ['loss', 'compile_metrics']
        >>> _ = model.evaluate(np.ones((4, 2)), np.ones((4, 1)), verbose=0)
        >>> [m.name for m in model.metrics[1].metrics]
        ['mae']
    """

    def __init__(self, model):
        super().__init__(name="compile_metrics")
        self._model = model

    @property
    def metrics(self):
        return list(self._model._k_metric_objs or [])

    @property
    def built(self):
        return self._model._k_metric_objs is not None

    @property
    def variables(self):
        return [v for m in self.metrics for v in m.variables]

    def update_state(self, y_true, y_pred, sample_weight=None):
        raise NotImplementedError("The compiled metrics are updated by the model's train_step / test_step.")

    def reset_state(self):
        for m in self.metrics:
            m.reset_state()

    def result(self):
        if not self.built:
            raise ValueError("Cannot get result() since the metric has not yet been built.")
        return dict(zip(self._model._k_metric_names(), (m.result() for m in self.metrics)))


class MeanMetricWrapper(Mean):
    """The mean of ``fn(y_true, y_pred, **kwargs)`` over the samples seen.

    ``fn`` is a name of a built-in per-sample function (fused into one compiled
    update) or any callable of Tensors.

    Example:
        >>> import tapejax as tf
        >>> from tapejax.keras import metrics
        >>> m = metrics.MeanMetricWrapper(lambda t, p: tf.abs(t - p), name="abs")
        >>> float(m([1.0, 2.0], [0.0, 0.0]))
        1.5
    """

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype)
        self._fn = fn
        self._fn_kwargs = kwargs
        self._config = dict(kwargs)

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds the per-sample values of this batch to the running mean."""
        if isinstance(self._fn, str):
            total, count = _wrapper_update(read_raw(self.total), read_raw(self.count), to_array(y_true),
                                           to_array(y_pred), _arr(sample_weight), fn=self._fn,
                                           config=tuple(sorted(self._fn_kwargs.items())))
            self.total._set(total)
            self.count._set(count)
        else:
            super().update_state(self._fn(_losses._tensor(y_true), _losses._tensor(y_pred), **self._fn_kwargs),
                                 sample_weight)


def _wrapper_class(cls_name, fn, defaults, doc, default_name=None):
    """A built-in Keras mean metric: its per-sample function and its own arguments."""
    names = list(defaults)

    def __init__(self, *args, name=None, dtype=None, **kwargs):
        cfg = dict(defaults)
        cfg.update(zip(names, args))
        for k in list(kwargs):
            if k not in cfg:
                raise TypeError(f"{cls_name}() got an unexpected keyword argument {k!r}. "
                                f"It accepts {names + ['name', 'dtype']}.")
            cfg[k] = kwargs.pop(k)
        MeanMetricWrapper.__init__(self, fn, name=name or default_name or fn, dtype=dtype, **cfg)
        for k, v in cfg.items():
            setattr(self, k, v)

    return type(cls_name, (MeanMetricWrapper,), {"__init__": __init__, "__doc__": doc})


_W = _wrapper_class  # one line per Keras mean metric: class, per-sample function, own arguments
Accuracy = _W("Accuracy", "accuracy", {}, "How often predictions equal labels.")
BinaryAccuracy = _W("BinaryAccuracy", "binary_accuracy", dict(threshold=0.5),
                    "How often ``y_pred > threshold`` equals the binary label.")
CategoricalAccuracy = _W("CategoricalAccuracy", "categorical_accuracy", {},
                         "How often ``argmax(y_pred)`` equals ``argmax(y_true)`` (one-hot labels).")
SparseCategoricalAccuracy = _W("SparseCategoricalAccuracy", "sparse_categorical_accuracy", {},
                               "How often ``argmax(y_pred)`` equals the integer label.")
TopKCategoricalAccuracy = _W("TopKCategoricalAccuracy", "top_k_categorical_accuracy", dict(k=5),
                             "How often the one-hot label is in the top ``k`` predictions.")
SparseTopKCategoricalAccuracy = _W("SparseTopKCategoricalAccuracy", "sparse_top_k_categorical_accuracy",
                                   dict(k=5), "How often the integer label is in the top ``k`` predictions.")
MeanSquaredError = _W("MeanSquaredError", "mean_squared_error", {}, "Mean squared error.")
MeanAbsoluteError = _W("MeanAbsoluteError", "mean_absolute_error", {}, "Mean absolute error.")
MeanAbsolutePercentageError = _W("MeanAbsolutePercentageError", "mean_absolute_percentage_error", {},
                                 "Mean absolute percentage error.")
MeanSquaredLogarithmicError = _W("MeanSquaredLogarithmicError", "mean_squared_logarithmic_error", {},
                                 "Mean squared logarithmic error.")
BinaryCrossentropy = _W("BinaryCrossentropy", "binary_crossentropy", dict(from_logits=False, label_smoothing=0.0),
                        "Mean binary cross entropy.")
CategoricalCrossentropy = _W("CategoricalCrossentropy", "categorical_crossentropy",
                             dict(from_logits=False, label_smoothing=0.0), "Mean categorical cross entropy.")
SparseCategoricalCrossentropy = _W("SparseCategoricalCrossentropy", "sparse_categorical_crossentropy",
                                   dict(from_logits=False), "Mean sparse categorical cross entropy.")
KLDivergence = _W("KLDivergence", "kl_divergence", {}, "Mean KL divergence.")
Poisson = _W("Poisson", "poisson", {}, "Mean Poisson loss.")
Hinge = _W("Hinge", "hinge", {}, "Mean hinge loss.")
SquaredHinge = _W("SquaredHinge", "squared_hinge", {}, "Mean squared hinge loss.")
LogCoshError = _W("LogCoshError", "log_cosh", {}, "Mean log-cosh error.", "logcosh")
del _W


class CosineSimilarity(MeanMetricWrapper):
    """Mean cosine similarity (positive, unlike the loss)."""

    def __init__(self, name="cosine_similarity", dtype=None, axis=-1):
        super().__init__(lambda t, p: -_losses.cosine_similarity(t, p, axis=axis), name=name, dtype=dtype)


class RootMeanSquaredError(Mean):
    """``sqrt`` of the mean squared error.

    Example:
        >>> from tapejax.keras import metrics
        >>> float(metrics.RootMeanSquaredError()([[0.0, 1.0]], [[1.0, 1.0]]))
        0.7071067...
    """

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        total, count = _wrapper_update(read_raw(self.total), read_raw(self.count), to_array(y_true),
                                       to_array(y_pred), _arr(sample_weight), fn="squared_error", config=())
        self.total._set(total)
        self.count._set(count)

    def result(self):
        return Tensor(jnp.sqrt(_divide_no_nan(read_raw(self.total), read_raw(self.count))))


# ---------------------------------------------------------------------------
# Confusion-matrix metrics: Precision, Recall, AUC
# ---------------------------------------------------------------------------

@functools.partial(jax.jit, static_argnames=("which",))
def _confusion_update(state, y_true, y_pred, sample_weight, thresholds, which):
    # Keras 3's update_confusion_matrix_variables: predictions and labels to one rank, then the
    # weights (per example: (batch,) against (batch, 1) predictions) expanded and fitted to the labels'.
    y_pred, y_true = _losses.same_rank(y_pred, y_true)
    if sample_weight is not None:
        sample_weight = jnp.expand_dims(sample_weight.astype(_f32), -1)
        _, sample_weight = _losses.same_rank(y_true, sample_weight, expand_rank_1=False)
    labels = y_true.astype(bool).reshape(1, -1)
    preds = y_pred.astype(_f32)
    w = jnp.ones_like(preds) if sample_weight is None else jnp.broadcast_to(sample_weight, preds.shape)
    preds, w = preds.reshape(1, -1), w.reshape(1, -1)
    above = preds > thresholds[:, None]
    parts = {"tp": labels & above, "fp": ~labels & above, "tn": ~labels & ~above, "fn": labels & ~above}
    return tuple(s + jnp.sum(parts[k] * w, axis=1) for s, k in zip(state, which))


class _Confusion(Metric):
    _which = ("tp", "fp", "tn", "fn")
    _names = {"tp": "true_positives", "fp": "false_positives", "tn": "true_negatives", "fn": "false_negatives"}

    def _make(self, thresholds):
        self.thresholds = thresholds
        self._thr = jnp.asarray(thresholds, _f32)
        for k in self._which:
            setattr(self, self._names[k], self.add_variable(shape=(len(thresholds),), name=self._names[k]))

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Accumulates the confusion counts of this batch at every threshold."""
        vars_ = [getattr(self, self._names[k]) for k in self._which]
        new = _confusion_update(tuple(read_raw(v) for v in vars_), to_array(y_true), to_array(y_pred),
                                _arr(sample_weight), self._thr, which=self._which)
        for v, a in zip(vars_, new):
            v._set(a)


class _Ratio(_Confusion):
    """``tp / (tp + other)`` at ``thresholds`` (0.5): Precision (other = fp) and Recall (fn)."""

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        if top_k is not None or class_id is not None:
            raise NotImplementedError(f"{type(self).__name__}(top_k=..., class_id=...) is not supported; slice "
                                      "the predictions yourself: m.update_state(y_true[:, i], y_pred[:, i]).")
        super().__init__(name=name, dtype=dtype)
        self._given = thresholds
        self._scalar = thresholds is None or np.ndim(thresholds) == 0
        self._make([0.5] if thresholds is None else list(np.atleast_1d(thresholds)))

    def get_config(self):
        # Keras 3's keys (what load_model rebuilds the metric from), thresholds as given
        return {"name": self.name, "dtype": self.dtype, "thresholds": self._given, "top_k": None, "class_id": None}

    def result(self):
        tp = read_raw(self.true_positives)
        r = _divide_no_nan(tp, tp + read_raw(getattr(self, self._names[self._which[1]])))
        return Tensor(r[0] if self._scalar else r)


class Precision(_Ratio):
    """``tp / (tp + fp)`` with predictions above ``thresholds`` (0.5) counted positive.

    Example:
        >>> from tapejax.keras import metrics
        >>> float(metrics.Precision()([0, 1, 1, 1], [1, 0, 1, 1]))
        0.6666666...
    """

    _which = ("tp", "fp")


class Recall(_Ratio):
    """``tp / (tp + fn)`` with predictions above ``thresholds`` (0.5) counted positive."""

    _which = ("tp", "fn")


class _Count(_Confusion):
    """One confusion count at ``thresholds`` (0.5), summed over batches in ``accumulator``, as Keras 3."""

    def __init__(self, thresholds=None, name=None, dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.thresholds = 0.5 if thresholds is None else thresholds
        self._scalar = np.ndim(self.thresholds) == 0
        self._thr = jnp.asarray(np.atleast_1d(self.thresholds), _f32)
        self.accumulator = self.add_variable(shape=(int(self._thr.shape[0]),), name="accumulator")

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds this batch's (weighted) count at every threshold."""
        (new,) = _confusion_update((read_raw(self.accumulator),), to_array(y_true), to_array(y_pred),
                                   _arr(sample_weight), self._thr, which=self._which)
        self.accumulator._set(new)

    def result(self):
        acc = read_raw(self.accumulator)
        return Tensor(acc[0] if self._scalar else acc)

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, "thresholds": self.thresholds}


class TruePositives(_Count):
    """The (weighted) number of positive labels predicted above ``thresholds`` (0.5).

    Example:
        >>> import tapejax as tf
        >>> m = tf.keras.metrics.TruePositives()
        >>> m.update_state([0, 1, 1, 1], [1, 0, 1, 1])
        >>> float(m.result())
        2.0
    """

    _which = ("tp",)


class FalsePositives(_Count):
    """The (weighted) number of negative labels predicted above ``thresholds`` (0.5).

    Example:
        >>> import tapejax as tf
        >>> m = tf.keras.metrics.FalsePositives(thresholds=[0.15, 0.5, 0.85])
        >>> m.update_state([0, 1, 1, 0], [0.2, 0.6, 0.9, 0.95], sample_weight=[1, 2, 3, 4])
        >>> m.result().numpy().tolist()
        [5.0, 4.0, 4.0]
    """

    _which = ("fp",)


class TrueNegatives(_Count):
    """The (weighted) number of negative labels predicted at or below ``thresholds`` (0.5).

    Example:
        >>> import tapejax as tf
        >>> float(tf.keras.metrics.TrueNegatives()([0, 1, 0, 0], [0.3, 0.6, 0.9, 0.1]))
        2.0
    """

    _which = ("tn",)


class FalseNegatives(_Count):
    """The (weighted) number of positive labels predicted at or below ``thresholds`` (0.5).

    Example:
        >>> import tapejax as tf
        >>> float(tf.keras.metrics.FalseNegatives(thresholds=0.7)([[0, 1], [1, 1]], [[0.2, 0.6], [0.9, 0.65]]))
        2.0
    """

    _which = ("fn",)


# The loss functions TensorFlow also exports as metrics (these names only): the same objects as in
# tf.keras.losses.
mse = MSE = _losses.mse
mae = MAE = _losses.mae
mape = MAPE = _losses.mape
msle = MSLE = _losses.msle
kld = KLD = _losses.kld
binary_crossentropy = _losses.binary_crossentropy
categorical_crossentropy = _losses.categorical_crossentropy
sparse_categorical_crossentropy = _losses.sparse_categorical_crossentropy
hinge = _losses.hinge
squared_hinge = _losses.squared_hinge
huber = _losses.huber
poisson = _losses.poisson
logcosh = _losses.logcosh


class AUC(_Confusion):
    """Area under the ROC (or PR) curve, from confusion counts at ``num_thresholds`` thresholds.

    Example:
        >>> from tapejax.keras import metrics
        >>> float(metrics.AUC()([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]))
        0.75
    """

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation", name=None,
                 dtype=None, thresholds=None, multi_label=False, num_labels=None, label_weights=None,
                 from_logits=False):
        if multi_label:
            raise NotImplementedError("AUC(multi_label=True) is not supported; use one AUC per label.")
        super().__init__(name=name, dtype=dtype)
        self.curve, self.summation_method, self.from_logits = curve.upper(), summation_method, from_logits
        self._given = thresholds
        if thresholds is None:
            eps = 1e-7
            thresholds = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            thresholds = [0.0 - eps] + thresholds + [1.0 + eps]
        else:
            thresholds = [0.0 - 1e-7] + sorted(float(t) for t in thresholds) + [1.0 + 1e-7]
        self.num_thresholds = len(thresholds)
        self._make(thresholds)

    def update_state(self, y_true, y_pred, sample_weight=None):
        if self.from_logits:
            y_pred = jax.nn.sigmoid(to_array(y_pred))
        super().update_state(y_true, y_pred, sample_weight)

    def get_config(self):
        # Keras 3's keys (what load_model rebuilds the metric from); thresholds only when given
        config = {"name": self.name, "dtype": self.dtype, "num_thresholds": self.num_thresholds, "curve": self.curve,
                  "summation_method": self.summation_method, "multi_label": False, "num_labels": None,
                  "label_weights": None, "from_logits": self.from_logits}
        if self._given is not None:
            config["thresholds"] = list(self._given)
        return config

    def result(self):
        tp, fp, tn, fn = (read_raw(v) for v in (self.true_positives, self.false_positives,
                                                  self.true_negatives, self.false_negatives))
        n = self.num_thresholds
        if self.curve == "PR" and self.summation_method == "interpolation":
            dtp = tp[:n - 1] - tp[1:]
            p = tp + fp
            dp = p[:n - 1] - p[1:]
            slope = _divide_no_nan(dtp, jnp.maximum(dp, 0))
            intercept = tp[1:] - slope * p[1:]
            ratio = jnp.where((p[:n - 1] > 0) & (p[1:] > 0),
                              _divide_no_nan(p[:n - 1], jnp.maximum(p[1:], 0)), jnp.ones_like(p[1:]))
            return Tensor(jnp.sum(_divide_no_nan(slope * (dtp + intercept * jnp.log(ratio)),
                                                 jnp.maximum(tp[1:] + fn[1:], 0))))
        recall = _divide_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = _divide_no_nan(fp, fp + tn), recall
        else:
            x, y = recall, _divide_no_nan(tp, tp + fp)
        if self.summation_method == "interpolation":
            heights = (y[:n - 1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = jnp.minimum(y[:n - 1], y[1:])
        else:
            heights = jnp.maximum(y[:n - 1], y[1:])
        return Tensor(jnp.sum((x[:n - 1] - x[1:]) * heights))


# ---------------------------------------------------------------------------
# get
# ---------------------------------------------------------------------------

_BY_NAME = {
    "accuracy": Accuracy, "acc": Accuracy,
    "binary_accuracy": BinaryAccuracy, "categorical_accuracy": CategoricalAccuracy,
    "sparse_categorical_accuracy": SparseCategoricalAccuracy,
    "top_k_categorical_accuracy": TopKCategoricalAccuracy,
    "sparse_top_k_categorical_accuracy": SparseTopKCategoricalAccuracy,
    "mean_squared_error": MeanSquaredError, "mse": MeanSquaredError,
    "mean_absolute_error": MeanAbsoluteError, "mae": MeanAbsoluteError,
    "mean_absolute_percentage_error": MeanAbsolutePercentageError, "mape": MeanAbsolutePercentageError,
    "mean_squared_logarithmic_error": MeanSquaredLogarithmicError, "msle": MeanSquaredLogarithmicError,
    "root_mean_squared_error": RootMeanSquaredError, "rmse": RootMeanSquaredError,
    "binary_crossentropy": BinaryCrossentropy, "categorical_crossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "auc": AUC, "precision": Precision, "recall": Recall, "mean": Mean, "sum": Sum,
    "true_positives": TruePositives, "false_positives": FalsePositives,
    "true_negatives": TrueNegatives, "false_negatives": FalseNegatives,
}
_CLASSES = {c.__name__: c for c in set(_BY_NAME.values()) | {KLDivergence, Poisson, Hinge, SquaredHinge,
                                                               LogCoshError, CosineSimilarity}}


def get(identifier):
    """A metric object from a name (``'accuracy'``, ``'acc'``, ``'mse'``, ``'AUC'``...), a
    metric object (returned as is), a metric class (instantiated) or a function
    ``fn(y_true, y_pred)`` (returned as is; ``compile`` wraps it in a mean).

    Example:
        >>> from tapejax.keras import metrics
        >>> metrics.get("acc")
        <Accuracy name=acc>
    """
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier) or _CLASSES.get(identifier)
        if cls is not None:
            return cls(name=identifier) if identifier in ("acc", "accuracy") else cls()
    if isinstance(identifier, dict) and identifier.get("class_name") in _CLASSES:
        return _CLASSES[identifier["class_name"]](**identifier.get("config", {}))
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if callable(identifier):
        return identifier   # a function: compile wraps it (_compile_metric)
    raise ValueError(f"Could not interpret metric identifier: {identifier!r}. Use a name such as "
                     f"'accuracy' or 'mse', a metric object such as tf.keras.metrics.AUC(), or a "
                     "function metric(y_true, y_pred).")


def _compile_metric(identifier):
    """A metric of ``compile``'s list as Keras 3's ``get_metric`` makes it: a function is wrapped
    in a ``MeanMetricWrapper`` (which takes an automatic name) named after the function."""
    obj = get(identifier)
    if isinstance(obj, Metric):
        return obj
    wrapper = MeanMetricWrapper(obj)
    wrapper.name = _to_snake_case(getattr(obj, "__name__", None) or type(obj).__name__)
    return wrapper


def serialize(metric):
    """``{'class_name': ..., 'config': ...}`` of a metric object (the inverse of :func:`deserialize`)."""
    return {"class_name": type(metric).__name__, "config": metric.get_config()}


def deserialize(config):
    """A metric from the dict :func:`serialize` made (same as :func:`get`)."""
    return get(config)
