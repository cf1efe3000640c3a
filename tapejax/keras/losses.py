"""tf.keras.losses: each loss call is one tape op (per-sample loss, weighting and reduction fused).

The per-sample functions are pure JAX (optax's numerically stable cross entropies
where they fit) and follow Keras 3's numerics: probabilities are clipped to
``[1e-7, 1 - 1e-7]`` when ``from_logits=False``, categorical probabilities are
renormalised, and the default reduction ``'sum_over_batch_size'`` divides the
weighted sum by the number of per-sample values (not by the sum of the weights).

Example:
    >>> import tapejax as tf
    >>> from tapejax.keras import losses
    >>> float(losses.MeanSquaredError()([[0.0, 1.0]], [[1.0, 1.0]]))
    0.5
    >>> print(losses.SparseCategoricalCrossentropy(from_logits=True)([0], [[0.0, 0.0]]).numpy())
    0.6931472
"""
import jax
import jax.numpy as jnp
import optax

from .._core.tensor import Tensor, _TensorBase, to_array
from ..extend import defop
from ..ops import bounds as _bounds, eigen_reduce, kinks
from ..ops.array_ops import _shape_of as _bounds_shape
from ._repr import KerasObjectRepr as _KerasObjectRepr

EPSILON = 1e-7  # Keras's backend.epsilon()

_REDUCTIONS = ("sum_over_batch_size", "sum", "none", None, "mean", "mean_with_sample_weight", "auto")


class Reduction:
    """``tf.keras.losses.Reduction``: the names accepted by ``reduction=``."""

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)


# ---------------------------------------------------------------------------
# Pure helpers (Keras 3's shape and weighting rules)
# ---------------------------------------------------------------------------

def same_rank(x1, x2, expand_rank_1=True):
    """Keras's ``squeeze_or_expand_to_same_rank``: fix a trailing size-1 dimension."""
    r1, r2 = x1.ndim, x2.ndim
    if r1 == r2 + 1 and x1.shape[-1] == 1:
        if r2 == 1 and expand_rank_1:
            x2 = jnp.expand_dims(x2, -1)
        else:
            x1 = jnp.squeeze(x1, -1)
    if r2 == r1 + 1 and x2.shape[-1] == 1:
        if r1 == 1 and expand_rank_1:
            x1 = jnp.expand_dims(x1, -1)
        else:
            x2 = jnp.squeeze(x2, -1)
    return x1, x2


def _float(x):
    # Keras computes losses in float32 (its loss dtype), also for float16/bfloat16
    # predictions under mixed precision; float64 stays float64.
    return x if x.dtype in (jnp.float32, jnp.float64) else x.astype(jnp.float32)


def reduce_weighted(values, sample_weight=None, reduction="sum_over_batch_size", mask=None):
    """Weights per-sample losses and reduces them as Keras does."""
    if sample_weight is not None:
        sample_weight = sample_weight.astype(values.dtype)
        values, sample_weight = same_rank(values, sample_weight)
        values = values * sample_weight
    if reduction in (None, "none") or values.ndim == 0:
        return values
    total = eigen_reduce.tf_sum(values)         # Keras 3 on TF: tf.reduce_sum, TF's order
    if reduction == "sum":
        return total
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        divisor = eigen_reduce.tf_sum(jnp.broadcast_to(sample_weight, values.shape))
    elif mask is not None:
        divisor = jnp.sum(mask).astype(values.dtype)
    else:
        divisor = jnp.asarray(values.size, values.dtype)
    quotient = eigen_reduce.ieee_divide(total, jnp.where(divisor == 0, 1.0, divisor).astype(total.dtype))
    return jnp.where(divisor == 0, 0.0, quotient).astype(values.dtype)


# ---------------------------------------------------------------------------
# Per-sample losses: pure JAX, one line each where possible
# ---------------------------------------------------------------------------

def _pair(y_true, y_pred):
    y_pred = _float(y_pred)
    y_true, y_pred = same_rank(y_true.astype(y_pred.dtype), y_pred)
    return y_true, y_pred


def _clip(p):
    return kinks.clip(p, EPSILON, 1.0 - EPSILON)


def _mse(y_true, y_pred):
    return eigen_reduce.tf_mean(jnp.square(y_pred - y_true), axis=-1)


def _mae(y_true, y_pred):
    return eigen_reduce.tf_mean(kinks.abs(y_true - y_pred), axis=-1)  # Keras 3 order: -0.0 gradients at 0


def _mape(y_true, y_pred):
    return 100.0 * eigen_reduce.tf_mean(kinks.abs((y_true - y_pred) / kinks.maximum(kinks.abs(y_true), EPSILON)), axis=-1)


def _msle(y_true, y_pred):
    f = lambda x: jnp.log(kinks.maximum(x, EPSILON) + 1.0)  # noqa: E731
    return eigen_reduce.tf_mean(jnp.square(f(y_pred) - f(y_true)), axis=-1)


def _bce(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        return eigen_reduce.tf_mean(optax.sigmoid_binary_cross_entropy(y_pred, y_true), axis=axis)
    p = _clip(y_pred)
    return eigen_reduce.tf_mean(-(y_true * jnp.log(p) + (1.0 - y_true) * jnp.log(1.0 - p)), axis=axis)


def _cce(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / y_pred.shape[axis]
    if from_logits:
        return optax.softmax_cross_entropy(y_pred, y_true, axis=axis)
    p = _clip(y_pred / jnp.sum(y_pred, axis=axis, keepdims=True))
    return -jnp.sum(y_true * jnp.log(p), axis=axis)


def _scce(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    y_pred = _float(y_pred)
    labels = y_true
    if labels.ndim == y_pred.ndim and labels.shape[-1] == 1:
        labels = jnp.squeeze(labels, -1)
    labels = labels.astype(jnp.int32)
    valid = None
    if ignore_class is not None:
        valid = labels != ignore_class
        labels = jnp.where(valid, labels, 0)
    if from_logits:
        out = optax.softmax_cross_entropy_with_integer_labels(y_pred, labels, axis=axis)
    else:
        # Keras 3: the log of the clipped probabilities taken as logits (a row is normalized
        # after clipping, not before as in categorical_crossentropy).
        logits = jnp.moveaxis(jnp.log(_clip(y_pred)), axis, -1)
        shifted = logits - jax.lax.stop_gradient(jnp.max(logits, axis=-1, keepdims=True))   # as TF's kernel
        out = (jnp.log(jnp.sum(jnp.exp(shifted), axis=-1))
               - jnp.take_along_axis(shifted, labels[..., None], axis=-1)[..., 0])
    return out if valid is None else jnp.where(valid, out, 0.0)


def _huber(y_true, y_pred, delta=1.0):
    return eigen_reduce.tf_mean(optax.huber_loss(y_pred, y_true, delta=delta), axis=-1)


def _log_cosh(y_true, y_pred):
    x = y_pred - y_true
    return eigen_reduce.tf_mean(x + jax.nn.softplus(-2.0 * x) - jnp.log(2.0).astype(x.dtype), axis=-1)


def _kld(y_true, y_pred):
    t, p = kinks.clip(y_true, EPSILON, 1.0), kinks.clip(y_pred, EPSILON, 1.0)
    return jnp.sum(t * jnp.log(t / p), axis=-1)


def _poisson(y_true, y_pred):
    return eigen_reduce.tf_mean(y_pred - y_true * jnp.log(y_pred + EPSILON), axis=-1)


def _hinge_labels(y_true):
    binary = jnp.all((y_true == 0) | (y_true == 1))
    return jnp.where(binary, 2.0 * y_true - 1.0, y_true)


def _hinge(y_true, y_pred):
    return eigen_reduce.tf_mean(kinks.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0), axis=-1)


def _squared_hinge(y_true, y_pred):
    return eigen_reduce.tf_mean(jnp.square(kinks.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0)), axis=-1)


def _cosine(y_true, y_pred, axis=-1):
    n = lambda x: x / jnp.sqrt(jnp.maximum(jnp.sum(x * x, axis=axis, keepdims=True), 1e-12))  # noqa: E731
    return -jnp.sum(n(y_true) * n(y_pred), axis=axis)


# name -> (per-sample function, labels are integers)
_PER_SAMPLE = {
    "mean_squared_error": _mse,
    "mean_absolute_error": _mae,
    "mean_absolute_percentage_error": _mape,
    "mean_squared_logarithmic_error": _msle,
    "binary_crossentropy": _bce,
    "categorical_crossentropy": _cce,
    "sparse_categorical_crossentropy": _scce,
    "huber": _huber,
    "log_cosh": _log_cosh,
    "kl_divergence": _kld,
    "poisson": _poisson,
    "hinge": _hinge,
    "squared_hinge": _squared_hinge,
    "cosine_similarity": _cosine,
}


def _fused(y_true, y_pred, *sample_weight, fn, config, reduction):
    """The whole loss, pure: per-sample values, weights, reduction."""
    kw = dict(config)
    mask = None
    if fn == "sparse_categorical_crossentropy":
        values = _scce(y_true, y_pred, **kw)
        if kw.get("ignore_class") is not None:
            t = y_true[..., 0] if y_true.ndim == y_pred.ndim else y_true
            mask = (t != kw["ignore_class"])
    else:
        values = _PER_SAMPLE[fn](*_pair(y_true, y_pred), **kw)
    return reduce_weighted(values, sample_weight[0] if sample_weight else None, reduction, mask)


_loss_op = defop(_fused, name="loss", static=("fn", "config", "reduction"))


def _check_labels(args, static):
    """A sparse cross-entropy's labels, as TensorFlow's kernel checks them (Keras 3 on TF calls
    ``tf.nn.sparse_softmax_cross_entropy_with_logits``)."""
    if static.get("fn") != "sparse_categorical_crossentropy":
        return
    config = dict(static["config"])
    y_true, y_pred = args[0], args[1]
    shape = _bounds_shape(y_pred)
    _bounds.labels(y_true, shape[config.get("axis", -1)], ignore=config.get("ignore_class"))


_loss_op.check = _check_labels


def _reduce_fn(values, *sample_weight, reduction):
    return reduce_weighted(_float(values), sample_weight[0] if sample_weight else None, reduction)


_reduce_op = defop(_reduce_fn, name="reduce_loss", static=("reduction",))


def _call(fn, y_true, y_pred, sample_weight=None, reduction="none", **config):
    args = (y_true, y_pred) if sample_weight is None else (y_true, y_pred, sample_weight)
    return _loss_op(*args, fn=fn, config=tuple(sorted(config.items())), reduction=reduction)


# ---------------------------------------------------------------------------
# Function forms: per-sample losses (reduction 'none'), one op each call
# ---------------------------------------------------------------------------

def mean_squared_error(y_true, y_pred):
    """Per-sample ``mean(square(y_pred - y_true), axis=-1)``.

    Example:
        >>> from tapejax.keras import losses
        >>> losses.mse([[0.0, 2.0]], [[1.0, 1.0]]).numpy()
        array([1.], dtype=float32)
    """
    return _call("mean_squared_error", y_true, y_pred)


def mean_absolute_error(y_true, y_pred):
    """Per-sample ``mean(abs(y_pred - y_true), axis=-1)``."""
    return _call("mean_absolute_error", y_true, y_pred)


def mean_absolute_percentage_error(y_true, y_pred):
    """Per-sample ``100 * mean(abs((y_true - y_pred) / y_true), axis=-1)``."""
    return _call("mean_absolute_percentage_error", y_true, y_pred)


def mean_squared_logarithmic_error(y_true, y_pred):
    """Per-sample ``mean(square(log(y_pred + 1) - log(y_true + 1)), axis=-1)``."""
    return _call("mean_squared_logarithmic_error", y_true, y_pred)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Per-sample binary cross entropy (mean over ``axis``).

    Example:
        >>> from tapejax.keras import losses
        >>> losses.binary_crossentropy([[1.0]], [[0.0]], from_logits=True).numpy()
        array([0.6931472], dtype=float32)
    """
    return _call("binary_crossentropy", y_true, y_pred, from_logits=bool(from_logits),
                 label_smoothing=float(label_smoothing), axis=axis)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Per-sample cross entropy of one-hot (or soft) labels."""
    return _call("categorical_crossentropy", y_true, y_pred, from_logits=bool(from_logits),
                 label_smoothing=float(label_smoothing), axis=axis)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None, axis=-1):
    """Per-sample cross entropy of integer labels.

    Example:
        >>> from tapejax.keras import losses
        >>> losses.sparse_categorical_crossentropy([1], [[0.5, 0.5]]).numpy()
        array([0.6931472], dtype=float32)
    """
    return _call("sparse_categorical_crossentropy", y_true, y_pred, from_logits=bool(from_logits),
                 ignore_class=ignore_class, axis=axis)


def huber(y_true, y_pred, delta=1.0):
    """Per-sample Huber loss: quadratic below ``delta``, linear above."""
    return _call("huber", y_true, y_pred, delta=float(delta))


def log_cosh(y_true, y_pred):
    """Per-sample ``mean(log(cosh(y_pred - y_true)), axis=-1)``."""
    return _call("log_cosh", y_true, y_pred)


def kl_divergence(y_true, y_pred):
    """Per-sample ``sum(y_true * log(y_true / y_pred), axis=-1)``."""
    return _call("kl_divergence", y_true, y_pred)


def poisson(y_true, y_pred):
    """Per-sample ``mean(y_pred - y_true * log(y_pred), axis=-1)``."""
    return _call("poisson", y_true, y_pred)


def hinge(y_true, y_pred):
    """Per-sample ``mean(maximum(1 - y_true * y_pred, 0), axis=-1)`` (0/1 labels become -1/1)."""
    return _call("hinge", y_true, y_pred)


def squared_hinge(y_true, y_pred):
    """Per-sample squared hinge loss."""
    return _call("squared_hinge", y_true, y_pred)


def cosine_similarity(y_true, y_pred, axis=-1):
    """Per-sample negative cosine similarity."""
    return _call("cosine_similarity", y_true, y_pred, axis=axis)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh
bce = binary_crossentropy
cce = categorical_crossentropy
scce = sparse_categorical_crossentropy


# ---------------------------------------------------------------------------
# Loss objects
# ---------------------------------------------------------------------------

_BAD_REDUCTION = ("Invalid value for argument `reduction`: {!r}. Use one of 'sum_over_batch_size' "
                  "(the default), 'sum' or 'none' (per-sample losses).")


class Loss(_KerasObjectRepr):
    """Base class of losses: ``loss(y_true, y_pred, sample_weight=None)``.

    Subclass it and define ``call(self, y_true, y_pred)`` returning per-sample
    losses with tapejax ops; ``__call__`` weights and reduces them.

    Args:
        name: the loss's name.
        reduction: ``'sum_over_batch_size'`` (mean), ``'sum'`` or ``'none'``.

    Example:
        >>> import tapejax as tf
        >>> from tapejax.keras import losses
        >>> class AbsDiff(losses.Loss):
        ...     def call(self, y_true, y_pred):
        ...         return tf.reduce_mean(tf.abs(y_true - y_pred), axis=-1)
        >>> float(AbsDiff()([[1.0, 2.0]], [[0.0, 0.0]]))
        1.5
    """

    _fn = None  # built-in losses: the name of their fused per-sample function

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        if reduction not in _REDUCTIONS:
            raise ValueError(_BAD_REDUCTION.format(reduction))
        self.reduction = "sum_over_batch_size" if reduction == "auto" else reduction
        self.name = name or _snake(type(self).__name__)
        self.dtype = dtype
        self._config = {}

    def __call__(self, y_true, y_pred, sample_weight=None):
        if self._fn is not None:
            return _call(self._fn, y_true, y_pred, sample_weight, self.reduction, **self._config)
        values = self.call(_tensor(y_true), _tensor(y_pred))
        args = (values,) if sample_weight is None else (values, sample_weight)
        return _reduce_op(*args, reduction=self.reduction)

    def call(self, y_true, y_pred):
        if self._fn is not None:
            return _call(self._fn, y_true, y_pred, None, "none", **self._config)
        raise NotImplementedError("Loss subclasses define call(self, y_true, y_pred) returning "
                                  "per-sample losses.")

    def get_config(self):
        return dict(name=self.name, reduction=self.reduction, **self._config)

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    _keras_modules = {"Loss": "keras.src.losses.loss"}

    def __repr__(self):
        if self._fn is None:       # a Loss subclass: Python's default repr, as Keras 3
            return super().__repr__()
        # Keras 3's built-in losses are LossFunctionWrappers of their function and arguments.
        return f"<LossFunctionWrapper({_FUNCTIONS[self._fn]!r}, kwargs={self._config})>"

    def _repr_pretty_(self, printer, cycle):
        if self._fn is None:
            return super()._repr_pretty_(printer, cycle)
        printer.text(repr(self))


def _tensor(x):
    """Keras hands ``call`` Tensors, whatever the caller passed."""
    return x if isinstance(x, _TensorBase) else Tensor(to_array(x))


def _snake(name):
    out = []
    for i, c in enumerate(name):
        if c.isupper() and i and not name[i - 1].isupper():
            out.append("_")
        out.append(c.lower())
    return "".join(out)


class LossFunctionWrapper(Loss):
    """A loss object from a function ``fn(y_true, y_pred, **kwargs) -> per-sample losses``."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, **kwargs):
        super().__init__(name=name or getattr(fn, "__name__", "loss"), reduction=reduction)
        self.fn = fn
        self._kwargs = kwargs

    def call(self, y_true, y_pred):
        return self.fn(_tensor(y_true), _tensor(y_pred), **self._kwargs)

    def __repr__(self):
        return f"<LossFunctionWrapper({self.fn!r}, kwargs={self._kwargs})>"

    def _repr_pretty_(self, printer, cycle):
        printer.text(repr(self))


def _loss_class(cls_name, fn, defaults, doc, default_name=None):
    """A built-in Keras loss class: its per-sample function and its own arguments."""
    names = list(defaults)

    def __init__(self, *args, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        cfg = dict(defaults)
        cfg.update(zip(names, args))
        for k in list(kwargs):
            if k not in cfg:
                raise TypeError(f"{cls_name}() got an unexpected keyword argument {k!r}. "
                                f"It accepts {names + ['reduction', 'name']}.")
            cfg[k] = kwargs.pop(k)
        Loss.__init__(self, name=name or default_name or fn, reduction=reduction, dtype=dtype)
        self._config = cfg
        for k, v in cfg.items():
            setattr(self, k, v)

    return type(cls_name, (Loss,), {"__init__": __init__, "_fn": fn, "__doc__": doc})


_L = _loss_class  # one line per Keras loss class: name, per-sample function, own arguments
MeanSquaredError = _L("MeanSquaredError", "mean_squared_error", {}, "Mean of squared errors.")
MeanAbsoluteError = _L("MeanAbsoluteError", "mean_absolute_error", {}, "Mean of absolute errors.")
MeanAbsolutePercentageError = _L("MeanAbsolutePercentageError", "mean_absolute_percentage_error", {},
                                 "Mean absolute percentage error.")
MeanSquaredLogarithmicError = _L("MeanSquaredLogarithmicError", "mean_squared_logarithmic_error", {},
                                 "Mean squared logarithmic error.")
BinaryCrossentropy = _L("BinaryCrossentropy", "binary_crossentropy",
                        dict(from_logits=False, label_smoothing=0.0, axis=-1),
                        "Binary cross entropy of probabilities (or logits with ``from_logits=True``).")
CategoricalCrossentropy = _L("CategoricalCrossentropy", "categorical_crossentropy",
                             dict(from_logits=False, label_smoothing=0.0, axis=-1),
                             "Cross entropy of one-hot labels.")
SparseCategoricalCrossentropy = _L("SparseCategoricalCrossentropy", "sparse_categorical_crossentropy",
                                   dict(from_logits=False, ignore_class=None, axis=-1),
                                   "Cross entropy of integer labels.")
Huber = _L("Huber", "huber", dict(delta=1.0), "Huber loss.", "huber_loss")
LogCosh = _L("LogCosh", "log_cosh", {}, "Logarithm of the hyperbolic cosine of the error.")
KLDivergence = _L("KLDivergence", "kl_divergence", {}, "Kullback-Leibler divergence.")
Poisson = _L("Poisson", "poisson", {}, "Poisson loss.")
Hinge = _L("Hinge", "hinge", {}, "Hinge loss.")
SquaredHinge = _L("SquaredHinge", "squared_hinge", {}, "Squared hinge loss.")
CosineSimilarity = _L("CosineSimilarity", "cosine_similarity", dict(axis=-1), "Negative cosine similarity.")
del _L

_FUNCTIONS = {
    "mean_squared_error": mean_squared_error, "mse": mse, "MSE": MSE,
    "mean_absolute_error": mean_absolute_error, "mae": mae, "MAE": MAE,
    "mean_absolute_percentage_error": mape, "mape": mape, "MAPE": mape,
    "mean_squared_logarithmic_error": msle, "msle": msle, "MSLE": msle,
    "binary_crossentropy": binary_crossentropy, "bce": bce,
    "categorical_crossentropy": categorical_crossentropy, "cce": cce,
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy, "scce": scce,
    "huber": huber, "huber_loss": huber, "log_cosh": log_cosh, "logcosh": log_cosh,
    "kl_divergence": kl_divergence, "kld": kld, "KLD": kld, "kullback_leibler_divergence": kld,
    "poisson": poisson, "hinge": hinge, "squared_hinge": squared_hinge,
    "cosine_similarity": cosine_similarity,
}
# tf.keras.losses (TF 2.21, Keras 3) names these functions only by their short names (``mse``,
# ``logcosh``...): ``tf.keras.losses.mean_squared_error`` is an AttributeError there, as here;
# ``get("mean_squared_error")`` finds them.
del mean_squared_error, mean_absolute_error, mean_absolute_percentage_error, mean_squared_logarithmic_error
del log_cosh, kl_divergence, bce, cce, scce
_CLASSES = {c.__name__: c for c in (
    MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredLogarithmicError,
    BinaryCrossentropy, CategoricalCrossentropy, SparseCategoricalCrossentropy, Huber, LogCosh,
    KLDivergence, Poisson, Hinge, SquaredHinge, CosineSimilarity)}


def get(identifier):
    """A loss from a name: a function name (``'mse'``) gives the function, a class
    name (``'MeanSquaredError'``) a loss object; callables pass through.

    Example:
        >>> from tapejax.keras import losses
        >>> losses.get("mean_squared_error") is losses.mse
        True
    """
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, dict):
        return _CLASSES[identifier["class_name"]](**identifier.get("config", {}))
    if isinstance(identifier, str):
        if identifier in _FUNCTIONS:
            return _FUNCTIONS[identifier]
        if identifier in _CLASSES:
            return _CLASSES[identifier]()
    raise ValueError(f"Could not interpret loss identifier: {identifier!r}. Use a function name such as "
                     f"'mse' or 'sparse_categorical_crossentropy', a class name such as "
                     f"'MeanSquaredError', or a callable loss(y_true, y_pred).")


def serialize(loss):
    """``{'class_name': ..., 'config': ...}`` of a loss object (the inverse of :func:`deserialize`)."""
    return {"class_name": type(loss).__name__, "config": loss.get_config()}


def deserialize(config):
    """A loss from the dict :func:`serialize` made (same as :func:`get`)."""
    return get(config)
