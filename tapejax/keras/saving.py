"""Keras model files (``tf.keras.saving``): ``save_model`` / ``load_model`` (``model.save``,
``tf.keras.models.load_model``) and ``save_weights`` / ``load_weights``, on ``tapejax.checkpoint``
and ``tapejax.saved_model``.

``save_weights(model, path)`` writes a ``tf.train`` checkpoint with the model as its root (its
optimizer included when compiled, as TensorFlow's checkpoint format does). ``save_model`` writes
a directory: ``keras_model.json`` (the configuration of a Sequential model, its build shape and
compile arguments), ``weights/`` (a checkpoint) and, for a built model, a SavedModel of its call.
"""
import json
import os
import shutil
import uuid
import warnings

from ..checkpoint import Checkpoint as _Checkpoint, DataLossError as _DataLossError, NotFoundError as _NotFoundError
from ..checkpoint.checkpoint import _restore
from ..checkpoint.reader import read_index as _read_index
from ..checkpoint.tracking import Graph as _Graph
from ..checkpoint.writer import swap_into_place as _swap_into_place, write as _write
from .. import saved_model as _saved_model
from .._core.logs import absl_warning as _absl_warning
from . import layers as _layers, losses as _losses, metrics as _metrics, optimizers as _optimizers

from ._serialization import (  # noqa: E402,F401 -- tf.keras.saving's names
    deserialize_keras_object as deserialize_keras_object, serialize_keras_object as serialize_keras_object,
    register_keras_serializable as register_keras_serializable, get_registered_name as get_registered_name,
    get_registered_object as get_registered_object, get_custom_objects as get_custom_objects,
    CustomObjectScope as CustomObjectScope, custom_object_scope as custom_object_scope, _REGISTERED)
from ._model_config import layer_from_config

__all__ = ["save_model", "load_model", "save_weights", "load_weights", "register_keras_serializable",
           "get_registered_name", "get_registered_object", "serialize_keras_object", "deserialize_keras_object"]

_KERAS_FILE = "keras_model.json"
# The class load_model rebuilds a saved configuration of layers as: tapejax.keras.models, which
# builds on this module for Model.save, sets "Sequential".
_MODEL_CLASSES = {}
def save_weights(model, filepath, overwrite=True, max_shard_size=None, **kwargs):
    """Writes the weights of ``model`` (and its compiled optimizer's state) as a ``tf.train``
    checkpoint at ``filepath`` (``model.save_weights(filepath)``).

    Example:
        >>> import tempfile, tapejax as tf
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
        >>> path = tempfile.mkdtemp() + '/weights'
        >>> tf.keras.saving.save_weights(model, path)
        >>> [shape for _, shape in tf.train.list_variables(path)]   # the object graph, _kernel, bias
        [[], [3, 2], [2]]
    """
    if not overwrite and os.path.exists(os.fspath(filepath)):
        raise FileExistsError(f"{os.fspath(filepath)!r} exists; pass overwrite=True to replace it.")
    _Checkpoint(root=model).write(filepath)


def load_weights(model, filepath, skip_mismatch=False, **kwargs):
    """Restores ``save_weights`` (or the weights of a ``save_model`` directory) into ``model``
    (``model.load_weights(filepath)``); returns the restore status. An unbuilt model gets the
    values when it builds.

    Example:
        >>> import tempfile, tapejax as tf
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
        >>> path = tempfile.mkdtemp() + '/weights'
        >>> model.save_weights(path)
        >>> twin = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
        >>> _ = tf.keras.saving.load_weights(twin, path)
        >>> bool(tf.reduce_all(twin.layers[0].kernel == model.layers[0].kernel))
        True
    """
    filepath = os.fspath(filepath)
    if os.path.exists(os.path.join(filepath, _KERAS_FILE)):
        filepath = os.path.join(filepath, "weights")
    return _read_weights(model, filepath)


_OPTIMIZER = "_k_optimizer/"
_H5 = (".h5", ".hdf5")   # Keras 3's legacy format: tapejax writes its own under these names too


def _saved_optimizer_size(filepath):
    """How many variables Keras would list for the optimizer saved in the checkpoint: its
    ``iterations``, learning rate and slots, not the update rules' step counts (see
    ``Optimizer.variables``)."""
    entries = [e for p, e in _read_index(filepath)["variables"].items() if p.startswith(_OPTIMIZER)]
    return sum(1 for e in entries if not (e.get("name", "").endswith("/count") and e.get("shape") == []
                                          and str(e.get("dtype", "")).startswith("int")))


def _read_weights(model, filepath, legacy=False):
    """Restores ``filepath`` into ``model``. As Keras 3's ``load_own_variables``, the saved
    optimizer state is restored only into an optimizer with as many variables (built alike);
    otherwise it is skipped with Keras's warning, and the optimizer starts afresh. ``legacy``
    (an ``.h5`` model): its iterations and learning rate are restored, not its slots (Keras 3's
    legacy loader sets the weights of an optimizer built without the model's variables)."""
    ckpt, skip = _Checkpoint(root=model), ()
    opt = getattr(model, "_k_optimizer", None)
    if opt is not None and legacy:
        skip = (_OPTIMIZER + "_slot_vars/",)
    elif opt is not None:
        saved, own = _saved_optimizer_size(filepath), len(opt.variables)
        if saved and saved != own:
            msg = (f"Skipping variable loading for optimizer '{opt.name}', because it has {own} variables "
                   f"whereas the saved optimizer has {saved} variables. ")
            if own == 0:
                msg += "This is likely because the optimizer has not been called/built yet."
            warnings.warn(msg, stacklevel=3)
            skip = (_OPTIMIZER,)
    ckpt._ensure_counter()
    return _restore(ckpt, filepath, skip)


def _keras_compile_config(model, include_optimizer):
    opt = getattr(model, "_k_optimizer", None)
    loss = getattr(model, "_k_loss_spec", None)
    metrics = getattr(model, "_k_metric_specs", [])
    if opt is None:
        return None
    cfg = {"loss": _compile_entry(loss, _losses),
           "metrics": [e for e in (_compile_entry(m, _metrics) for m in metrics) if e is not None]}
    weighted = getattr(model, "_k_weighted_specs", [])
    if weighted:
        cfg["weighted_metrics"] = [e for e in (_compile_entry(m, _metrics) for m in weighted) if e is not None]
    if include_optimizer:
        try:
            cfg["optimizer"] = json.loads(json.dumps(_optimizers.serialize(opt)))
        except (TypeError, ValueError):   # a schedule or optax transformation: not serialisable
            cfg["optimizer"] = None
    return cfg


def _compile_entry(spec, module):
    """A loss or metric of ``compile`` as JSON: a name, a Keras function's name, or a built-in
    class's ``{'class_name', 'config'}`` (Keras 3 saves the objects' configurations too); None
    for what cannot be rebuilt from JSON (a custom callable)."""
    if isinstance(spec, str):
        return spec
    cls = type(spec)
    if module._CLASSES.get(cls.__name__) is cls:
        try:
            return json.loads(json.dumps(module.serialize(spec)))
        except (TypeError, ValueError):
            return None
    names = [k for k, f in getattr(module, "_FUNCTIONS", {}).items() if f is spec]
    return names[0] if names else None


def save_model(model, filepath, overwrite=True, zipped=None, include_optimizer=True, save_format=None, **kwargs):
    """Saves a model (``model.save(filepath)``): a directory holding its configuration
    (Sequential), its weights (a checkpoint with the optimizer's state) and a SavedModel of its
    call (inference mode).

    ``load_model(filepath)`` rebuilds a Sequential model from it; ``tf.saved_model.load(filepath)``
    loads the exported call of any built model. The directory is replaced atomically.

    Args:
        model: a Keras model.
        filepath: the directory to write.
        overwrite: replace what is at ``filepath`` (else ``FileExistsError``).
        zipped: accepted for Keras 3's signature; the model is always a directory.
        include_optimizer: save the compiled optimizer's configuration and state.

    Example:
        >>> import tempfile, tapejax as tf
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
        >>> path = tempfile.mkdtemp() + '/model'
        >>> tf.keras.saving.save_model(model, path)
        >>> tf.keras.saving.load_model(path).layers[0].kernel.shape
        TensorShape([3, 2])
    """
    filepath = os.path.abspath(os.fspath(filepath))
    if filepath.endswith(_H5):
        _absl_warning("You are saving your model as an HDF5 file via `model.save()` or `keras.saving.save_model(model)`. "
                      "This file format is considered legacy. We recommend using instead the native Keras format, "
                      "e.g. `model.save('my_model.keras')` or `keras.saving.save_model(model, 'my_model.keras')`. ")
    if os.path.exists(filepath) and not overwrite:
        raise FileExistsError(f"{filepath!r} exists; pass overwrite=True to replace it.")
    tmp = f"{filepath}.tmp-{uuid.uuid4().hex[:8]}"
    try:
        exported = model._default_save_signature is not None
        if exported:
            _saved_model.save(model, tmp)
        else:
            os.makedirs(tmp)
        own = _safe_config(model)
        config = model.get_config() if "layers" in (own or {}) else None
        variables = _Graph(model).variables
        if not include_optimizer:
            variables = {p: v for p, v in variables.items() if not p.startswith("_k_optimizer/")}
        _write(os.path.join(tmp, "weights"), variables)
        build_shape = getattr(model, "_k_build_shape", None)
        meta = {"format": "tapejax-keras", "version": 1, "class_name": type(model).__name__,
                "config": config, "build_shape": None if build_shape is None else list(build_shape),
                "compile": _keras_compile_config(model, include_optimizer), "saved_model": exported}
        if config is None and get_registered_name(type(model)) in _REGISTERED:
            # A registered subclassed model: rebuilt by load_model from its own configuration.
            meta["registered_name"] = get_registered_name(type(model))
            meta["model_config"] = json.loads(json.dumps(own)) if own is not None else {}
        with open(os.path.join(tmp, _KERAS_FILE), "w") as fh:
            json.dump(meta, fh)
        _swap_into_place(tmp, filepath)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _safe_config(model):
    try:
        return model.get_config()
    except Exception:  # noqa: BLE001 -- a custom model without a configuration
        return None


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True, **kwargs):
    """Loads a model written by ``model.save(filepath)``: a Sequential model is rebuilt
    (compiled, with its optimizer state); other models load as their SavedModel.

    The model file is untrusted: its JSON types are checked, layers are made only from Keras
    layer classes (or ``custom_objects``), and a configuration that cannot be built raises
    ``tf.errors.DataLossError`` (a ValueError) naming the file.

    Raises:
        ValueError: Keras 3's "File not found" for a ``.keras`` path where nothing is.
        tf.errors.NotFoundError: no model was saved at ``filepath``.

    Example:
        >>> import tempfile, tapejax as tf
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
        >>> path = tempfile.mkdtemp() + '/model'
        >>> model.save(path)
        >>> tf.keras.models.load_model(path)(tf.ones([1, 3])).shape
        TensorShape([1, 2])
    """
    given = os.fspath(filepath)
    filepath = os.path.abspath(given)
    meta_file = os.path.join(filepath, _KERAS_FILE)
    if not os.path.exists(filepath) and str(given).endswith(".keras"):
        # Keras 3's message for a `.keras` file that is not there.
        raise ValueError(f"File not found: filepath={given}. Please ensure the file is an accessible `.keras` "
                         "zip file.")
    if not os.path.isfile(meta_file):
        raise _NotFoundError(f"No model saved at {filepath!r} (no {_KERAS_FILE}). Save it with "
                            "model.save(path) first; for weights only use model.load_weights(path).")

    def damaged(problem):
        return _DataLossError(f"The model file {meta_file!r} is corrupted or was not written by model.save: "
                             f"{problem}. Save the model again.")

    try:
        with open(meta_file, "rb") as fh:
            meta = json.loads(fh.read().decode("utf-8"))
    except (ValueError, RecursionError) as e:   # JSON and UTF-8 errors are ValueErrors
        raise damaged(f"its JSON does not parse ({type(e).__name__}: {str(e)[:200]})") from None
    if not isinstance(meta, dict) or meta.get("format") != "tapejax-keras":
        raise damaged("it is not a tapejax Keras model description")
    config = meta.get("config")
    if config is not None and not (isinstance(config, dict) and isinstance(config.get("layers", []), list)
                                   and isinstance(config.get("name"), (str, type(None)))):
        raise damaged("'config' must be an object with a list of 'layers'")
    if not config or "layers" not in config:
        registered = meta.get("registered_name")
        cls = get_registered_object(registered, custom_objects) if isinstance(registered, str) else None
        if cls is None and isinstance(meta.get("class_name"), str):
            cls = (custom_objects or {}).get(meta["class_name"])
        if isinstance(cls, type) and issubclass(cls, _layers.Layer):
            return _load_registered(cls, meta, filepath, damaged)
        if meta.get("saved_model") is True:
            return _saved_model.load(filepath)
        raise ValueError(f"The model at {filepath!r} ({str(meta.get('class_name'))[:80]}) has no configuration "
                         "to rebuild it from: re-create it in code and call model.load_weights(path + '/weights').")
    build_shape = meta.get("build_shape")
    if build_shape is not None and not (isinstance(build_shape, list) and len(build_shape) <= 16 and all(
            d is None or (type(d) is int and 0 <= d < 2 ** 31) for d in build_shape)):
        raise damaged("'build_shape' must list sizes (non-negative integers or null)")
    comp = meta.get("compile")
    if comp is not None and not (isinstance(comp, dict) and isinstance(comp.get("loss"), (str, dict, type(None)))
                                 and isinstance(comp.get("metrics") or [], list)
                                 and all(isinstance(m, (str, dict)) for m in comp.get("metrics") or [])
                                 and isinstance(comp.get("optimizer"), (dict, type(None)))):
        raise damaged("'compile' must be an object with a loss, metrics (names or configurations) and an "
                      "optimizer configuration")
    custom_objects = dict(custom_objects or {})
    layers = []
    functional = "input_layers" in config
    for i, entry in enumerate(config["layers"]):
        if not (isinstance(entry, dict) and isinstance(entry.get("class_name"), str)
                and isinstance(entry.get("config"), dict)):
            raise damaged(f"layer {i} is not a {{'class_name': ..., 'config': {{...}}}} entry")
        if functional:
            continue   # made and connected by Model.from_config below
        name = entry["class_name"]
        try:
            layers.append(layer_from_config(entry, custom_objects))
        except ValueError as e:
            if str(e).startswith("Unknown layer"):
                raise
            raise damaged(f"layer {i} ({name}) cannot be made from its configuration ({type(e).__name__}: "
                          f"{str(e)[:200]})") from None
        except Exception as e:  # noqa: BLE001 -- whatever a layer's constructor rejects
            raise damaged(f"layer {i} ({name}) cannot be made from its configuration ({type(e).__name__}: "
                          f"{str(e)[:200]})") from None
    try:
        if functional:
            model = _MODEL_CLASSES["Functional"].from_config(config, custom_objects)
        else:
            model = _MODEL_CLASSES["Sequential"](layers, name=config.get("name"))
        if build_shape is not None and not model.built:
            model.build(tuple(build_shape))
        legacy = filepath.endswith(_H5)
        if compile and comp:
            # Keras 3's legacy HDF5 loader builds the optimizer on the model's own trainable
            # variables (none for a Sequential model): the slots are not restored.
            _compile_from_config(model, comp, list(model._k_trainable) if legacy else None)
        if compile and legacy:   # what Keras 3's legacy HDF5 loader logs
            _absl_warning("Compiled the loaded model, but the compiled metrics have yet to be built. "
                          "`model.compile_metrics` will be empty until you train or evaluate the model." if comp else
                          "No training configuration found in the save file, so the model was *not* compiled. "
                          "Compile it manually.")
    except Exception as e:  # noqa: BLE001 -- a configuration whose parts do not fit together
        raise damaged(f"the model cannot be built from it ({type(e).__name__}: {str(e)[:200]})") from None
    _read_weights(model, os.path.join(filepath, "weights"), legacy).expect_partial()
    return model


def _compile_from_config(model, comp, var_list=None):
    """Keras 3's ``compile_from_config``: compile with the saved arguments, then build the
    optimizer on the (built) model's trainable variables (or ``var_list``), so its saved state
    loads now."""
    opt, loss = comp.get("optimizer"), comp.get("loss")
    model.compile(optimizer=_optimizers.deserialize(opt) if opt else "rmsprop",
                  loss=_losses.deserialize(loss) if isinstance(loss, dict) else loss,
                  metrics=[_metrics.deserialize(m) if isinstance(m, dict) else m
                           for m in comp.get("metrics") or []] or None,
                  weighted_metrics=[_metrics.deserialize(m) if isinstance(m, dict) else m
                                    for m in comp.get("weighted_metrics") or []] or None)
    if model.built:
        model.optimizer.build(model.trainable_variables if var_list is None else var_list)


def _load_registered(cls, meta, filepath, damaged):
    """A registered (or ``custom_objects``) subclassed model: ``cls.from_config``, built on its
    saved input shape, then its weights read."""
    model_config = meta.get("model_config")
    if not isinstance(model_config, dict):
        raise damaged("'model_config' must be an object")
    build_shape = meta.get("build_shape")
    if build_shape is not None and not (isinstance(build_shape, list) and len(build_shape) <= 16 and all(
            d is None or (type(d) is int and 0 <= d < 2 ** 31) for d in build_shape)):
        raise damaged("'build_shape' must list sizes (non-negative integers or null)")
    try:
        model = cls.from_config(dict(model_config))
        if build_shape is not None:
            model._k_build_from_config(tuple(build_shape))
    except Exception as e:  # noqa: BLE001 -- whatever the class's constructor or call rejects
        raise damaged(f"{cls.__name__} cannot be made from its configuration ({type(e).__name__}: "
                      f"{str(e)[:200]})") from None
    _Checkpoint(root=model).read(os.path.join(filepath, "weights")).expect_partial()
    return model
