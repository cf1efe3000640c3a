"""tf.keras.callbacks: hooks that ``Model.fit`` / ``evaluate`` / ``predict`` call, with Keras 3's rules.

Example:
    >>> import numpy as np, tapejax as tf
    >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
    >>> model.compile(optimizer=tf.keras.optimizers.SGD(0.0), loss='mse')
    >>> stop = tf.keras.callbacks.EarlyStopping(monitor='loss', patience=2)
    >>> h = model.fit(np.ones((8, 2)), np.ones((8, 1)), epochs=10, callbacks=[stop], verbose=0)
    >>> len(h.history['loss'])   # a learning rate of 0 never improves: stopped after 3 epochs
    3
"""
import collections
import csv
import json
import math
import os
import shutil
import time
import warnings

import numpy as np

from ..checkpoint import DataLossError as _DataLossError
from .. import summary as summary
from ._progbar import Progbar
from ._repr import KerasObjectRepr as _KerasObjectRepr


_KERAS_MODULES = {name: "keras.src.callbacks." + module for name, module in {
    "Callback": "callback", "CallbackList": "callback_list", "History": "history",
    "ProgbarLogger": "progbar_logger", "EarlyStopping": "early_stopping", "ModelCheckpoint": "model_checkpoint",
    "BackupAndRestore": "backup_and_restore", "CSVLogger": "csv_logger", "LambdaCallback": "lambda_callback",
    "LearningRateScheduler": "learning_rate_scheduler", "ReduceLROnPlateau": "reduce_lr_on_plateau",
    "TensorBoard": "tensorboard", "TerminateOnNaN": "terminate_on_nan"}.items()}


class Callback(_KerasObjectRepr):
    """Base class: override the ``on_*`` methods you need. ``self.model`` is the model being
    trained and ``self.params`` holds ``epochs``, ``steps`` and ``verbose``.

    ``on_train_batch_begin/end`` and ``on_test_batch_*`` / ``on_predict_batch_*`` default
    to ``on_batch_begin/end``, as in Keras.

    Example:
        >>> import numpy as np, tapejax as tf
        >>> class Count(tf.keras.callbacks.Callback):
        ...     def on_train_begin(self, logs=None):
        ...         self.batches = 0
        ...     def on_train_batch_end(self, batch, logs=None):
        ...         self.batches += 1
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
        >>> model.compile(optimizer='sgd', loss='mse')
        >>> c = Count()
        >>> _ = model.fit(np.ones((10, 2)), np.ones((10, 1)), batch_size=4, epochs=2, callbacks=[c], verbose=0)
        >>> c.batches
        6
    """

    _keras_modules = _KERAS_MODULES

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_batch_begin(self, batch, logs=None):
        pass

    def on_batch_end(self, batch, logs=None):
        pass

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs)

    def on_test_begin(self, logs=None):
        pass

    def on_test_end(self, logs=None):
        pass

    def on_test_batch_begin(self, batch, logs=None):
        pass

    def on_test_batch_end(self, batch, logs=None):
        pass

    def on_predict_begin(self, logs=None):
        pass

    def on_predict_end(self, logs=None):
        pass

    def on_predict_batch_begin(self, batch, logs=None):
        pass

    def on_predict_batch_end(self, batch, logs=None):
        pass


class History(Callback):
    """What ``fit`` returns: ``history`` maps each logged name to one value per epoch.

    Example:
        >>> import numpy as np, tapejax as tf
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
        >>> model.compile(optimizer='sgd', loss='mse')
        >>> sorted(model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=2, verbose=0).history)
        ['loss']
    """

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)


class LambdaCallback(Callback):
    """A callback made of functions: ``on_epoch_begin(epoch, logs)``, ``on_epoch_end(epoch, logs)``,
    ``on_train_batch_begin(batch, logs)``, ``on_train_batch_end(batch, logs)``,
    ``on_train_begin(logs)``, ``on_train_end(logs)`` (and any other ``on_*`` by keyword).

    Example:
        >>> import numpy as np, tapejax as tf
        >>> seen = []
        >>> cb = tf.keras.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: seen.append(epoch))
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
        >>> model.compile(optimizer='sgd', loss='mse')
        >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=3, callbacks=[cb], verbose=0)
        >>> seen
        [0, 1, 2]
    """

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None, on_train_end=None,
                 on_train_batch_begin=None, on_train_batch_end=None, **kwargs):
        super().__init__()
        given = dict(kwargs, on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end,
                     on_train_begin=on_train_begin, on_train_end=on_train_end,
                     on_train_batch_begin=on_train_batch_begin, on_train_batch_end=on_train_batch_end)
        for name, fn in given.items():
            if fn is not None:
                if not (name.startswith("on_") and hasattr(Callback, name)):
                    raise ValueError(f"LambdaCallback got {name}=..., which is not a callback hook. "
                                     "Hooks are named on_epoch_end, on_train_batch_end, ...")
                setattr(self, name, fn)


_UP = ("acc", "auc", "precision", "recall", "f1", "iou")
_DOWN = ("loss", "error", "crossentropy", "hinge", "divergence", "poisson", "mse", "mae", "mape", "msle",
         "squared", "absolute", "logcosh")


def _direction(callback, monitor, mode):
    """+1 to maximise ``monitor``, -1 to minimise it (``mode='auto'`` infers it from the name)."""
    if mode == "max":
        return 1
    if mode == "min":
        return -1
    name = monitor[4:] if monitor.startswith("val_") else monitor
    if any(k in name for k in _UP):
        return 1
    if any(k in name for k in _DOWN):
        return -1
    raise ValueError(
        f"{type(callback).__name__} callback received monitor={monitor!r}, but tapejax cannot tell whether "
        "that metric should be maximized or minimized. Pass mode='max' to monitor the highest value, "
        "or mode='min' for the lowest.")


def _check_mode(callback, mode):
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"{type(callback).__name__} mode '{mode}' is unknown, fallback to auto mode.", stacklevel=3)
        return "auto"
    return mode


def _monitored(callback, logs):
    value = (logs or {}).get(callback.monitor)
    if value is None:
        warnings.warn(f"{type(callback).__name__} is conditioned on metric `{callback.monitor}` which is not "
                      f"available. Available metrics are: {','.join(list(logs or {}))}", stacklevel=3)
    return value


class EarlyStopping(Callback):
    """Stops training when ``monitor`` has not improved for ``patience`` epochs (Keras 3's rules:
    improving means beating the best value by more than ``min_delta``; with ``baseline``, only
    epochs that also beat it reset the wait; ``restore_best_weights`` puts back the best epoch's
    weights at the end).

    Example:
        >>> import numpy as np, tapejax as tf
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
        >>> model.compile(optimizer=tf.keras.optimizers.SGD(0.0), loss='mse')
        >>> cb = tf.keras.callbacks.EarlyStopping(monitor='loss', patience=3)
        >>> h = model.fit(np.ones((4, 2)), np.zeros((4, 1)), epochs=10, callbacks=[cb], verbose=0)
        >>> len(h.history['loss']), cb.stopped_epoch
        (4, 3)
    """

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        self.monitor = monitor
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.min_delta = abs(min_delta)
        self.restore_best_weights = restore_best_weights
        self.start_from_epoch = start_from_epoch
        self.mode = _check_mode(self, mode)
        self._sign = None
        self.wait = 0
        self.stopped_epoch = 0
        self.best_weights = None
        self.best_epoch = 0
        self.best = None

    def _is_improvement(self, value, reference):
        return self._sign * (value - reference) > self.min_delta

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.stopped_epoch = 0
        self.best_weights = None
        self.best_epoch = 0

    def on_epoch_end(self, epoch, logs=None):
        if self._sign is None:
            self._sign = _direction(self, self.monitor, self.mode)
            self.best = -self._sign * math.inf
        current = _monitored(self, logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print(f"Restoring model weights from the end of the best epoch: {self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)


def _learning_rate(optimizer):
    lr = getattr(optimizer, "learning_rate", None)
    if lr is None:
        raise ValueError(f"The optimizer {optimizer!r} has no learning_rate to read or set.")
    return float(np.asarray(lr.numpy() if hasattr(lr, "numpy") else lr))


class LearningRateScheduler(Callback):
    """Sets the optimizer's learning rate at the start of every epoch to ``schedule(epoch, lr)``
    (or ``schedule(epoch)``), and logs it as ``learning_rate``.

    Example:
        >>> import numpy as np, tapejax as tf
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
        >>> model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss='mse')
        >>> cb = tf.keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5)
        >>> h = model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=3, callbacks=[cb], verbose=0)
        >>> [round(v, 4) for v in h.history['learning_rate']]
        [0.05, 0.025, 0.0125]
    """

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self.model.optimizer
        try:
            lr = self.schedule(epoch, _learning_rate(optimizer))
        except TypeError:  # the old one-argument API
            lr = self.schedule(epoch)
        if hasattr(lr, "numpy"):
            lr = lr.numpy()
        if not isinstance(lr, (float, np.floating)) and not (isinstance(lr, np.ndarray) and lr.ndim == 0):
            raise ValueError(f"The output of the `schedule` function should be a float. Got: {lr!r}")
        optimizer.learning_rate = float(lr)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {float(lr)}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = _learning_rate(self.model.optimizer)


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by ``factor`` when ``monitor`` has not improved (by more than
    ``min_delta``) for ``patience`` epochs, then waits ``cooldown`` epochs; never below ``min_lr``.

    Example:
        >>> import numpy as np, tapejax as tf
        >>> # Zero inputs and weights: the loss cannot move, so the rate is halved each epoch after the first.
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, use_bias=False, kernel_initializer='zeros',
        ...                                                    input_shape=(2,))])
        >>> model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss='mse')
        >>> cb = tf.keras.callbacks.ReduceLROnPlateau(monitor='loss', factor=0.5, patience=1)
        >>> h = model.fit(np.zeros((4, 2)), np.ones((4, 1)), epochs=3, callbacks=[cb], verbose=0)
        >>> [round(v, 4) for v in h.history['learning_rate']], round(float(model.optimizer.learning_rate), 4)
        ([0.1, 0.1, 0.05], 0.025)
    """

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0.0, **kwargs):
        super().__init__()
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Received factor={factor}")
        self.monitor = monitor
        self.factor = factor
        self.patience = patience
        self.verbose = verbose
        self.mode = _check_mode(self, mode)
        self.min_delta = min_delta
        self.cooldown = cooldown
        self.min_lr = min_lr
        self._reset()

    def _reset(self):
        # Keras's rule for this callback: 'auto' maximises only names containing "acc".
        self._sign = 1 if self.mode == "max" or (self.mode == "auto" and "acc" in self.monitor) else -1
        self.best = -self._sign * math.inf
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs=None):
        self._reset()

    def in_cooldown(self):
        return self.cooldown_counter > 0

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        logs["learning_rate"] = _learning_rate(self.model.optimizer)
        current = _monitored(self, logs)
        if current is None:
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._sign * (current - self.best) > self.min_delta:
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                old = _learning_rate(self.model.optimizer)
                if old > np.float32(self.min_lr):
                    new = max(old * self.factor, self.min_lr)
                    self.model.optimizer.learning_rate = new
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


class TerminateOnNaN(Callback):
    """Stops training as soon as a batch's loss is NaN or infinite.

    Example:
        >>> import numpy as np, tapejax as tf
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
        >>> model.compile(optimizer='sgd', loss='mse')
        >>> x = np.array([[np.nan, 1.0]] * 4, 'float32')
        >>> h = model.fit(x, np.ones((4, 1)), batch_size=2, epochs=5, verbose=0,
        ...               callbacks=[tf.keras.callbacks.TerminateOnNaN()])
        Batch 0: Invalid loss, terminating training
        >>> len(h.history['loss'])
        1
    """

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


class ModelCheckpoint(Callback):
    """Saves the model (``model.save``) or its weights (``save_weights_only=True``,
    ``model.save_weights``) after every epoch, every ``save_freq`` batches (an int), or only
    when ``monitor`` improves (``save_best_only=True``). ``filepath`` may hold ``{epoch}``,
    ``{batch}`` (batch-level saving) and log names: ``'ckpt-{epoch:02d}-{loss:.2f}.keras'``.
    As in Keras 3 it must end in ``.weights.h5`` with ``save_weights_only=True``, else in
    ``.keras`` or ``.h5`` (tapejax writes its own format under those names).

    Example:
        >>> import os, tempfile, numpy as np, tapejax as tf
        >>> d = tempfile.mkdtemp()
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
        >>> model.compile(optimizer='sgd', loss='mse')
        >>> cb = tf.keras.callbacks.ModelCheckpoint(d + '/w-{epoch:02d}.weights.h5', save_weights_only=True)
        >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=2, callbacks=[cb], verbose=0)
        >>> sorted(os.listdir(d))
        ['w-01.weights.h5', 'w-02.weights.h5']
    """

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", save_freq="epoch", initial_value_threshold=None):
        super().__init__()
        self.filepath = os.fspath(filepath)
        self.monitor = monitor
        self.verbose = verbose
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.mode = _check_mode(self, mode)
        self.best = initial_value_threshold
        self.save_freq = save_freq
        self._sign = None
        self._current_epoch = 0
        self._batches_seen_since_last_saving = 0
        self._last_batch_seen = None
        if save_freq != "epoch" and not isinstance(save_freq, int):
            raise ValueError(f"Unrecognized save_freq: {save_freq}. Expected save_freq are 'epoch' or integer values")
        if save_weights_only and not self.filepath.endswith(".weights.h5"):
            raise ValueError("When using `save_weights_only=True` in `ModelCheckpoint`, the filepath provided must "
                             f"end in `.weights.h5` (Keras weights format). Received: filepath={self.filepath}")
        if not save_weights_only and not self.filepath.endswith((".keras", ".h5")):
            raise ValueError("The filepath provided must end in `.keras` (Keras model format). "
                             f"Received: filepath={self.filepath}")

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        # Keras counts batches across epochs: a new epoch restarts the batch index.
        new_epoch = self._last_batch_seen is None or batch <= self._last_batch_seen
        self._batches_seen_since_last_saving += batch + 1 if new_epoch else batch - self._last_batch_seen
        self._last_batch_seen = batch
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            self._save_model(self._current_epoch, batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save_model(epoch, None, logs)

    def _should_save(self, epoch, logs, path):
        if not self.save_best_only:
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: saving model to {path}")
            return True
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Can save best model only with {self.monitor} available.", stacklevel=3)
            return True
        if self._sign is None:
            self._sign = _direction(self, self.monitor, self.mode)
        best = "None" if self.best is None else f"{self.best:.5f}"
        if self.best is None or self._sign * (current - self.best) > 0:
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {best} to {current:.5f}, "
                      f"saving model to {path}")
            self.best = current
            return True
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {best}")
        return False

    def _save_model(self, epoch, batch, logs):
        logs = logs or {}
        try:
            if batch is None or "batch" in logs:
                path = self.filepath.format(epoch=epoch + 1, **logs)
            else:
                path = self.filepath.format(epoch=epoch + 1, batch=batch + 1, **logs)
        except KeyError as e:
            raise KeyError(f'Failed to format this callback filepath: "{self.filepath}". Reason: {e}') from None
        if not self._should_save(epoch, logs, path):
            return
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(path, overwrite=True)
        else:
            self.model.save(path, overwrite=True)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: finished saving model to {path}")


class CSVLogger(Callback):
    """Streams each epoch's logs to a CSV file (Keras 3's format: an ``epoch`` column, then the
    log names sorted; ``val_`` columns are added, ``NA`` until validation runs).

    Example:
        >>> import os, tempfile, numpy as np, tapejax as tf
        >>> path = os.path.join(tempfile.mkdtemp(), 'log.csv')
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, kernel_initializer='zeros',
        ...                                                    input_shape=(2,))])
        >>> model.compile(optimizer=tf.keras.optimizers.SGD(0.0), loss='mse')
        >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=2, verbose=0,
        ...               callbacks=[tf.keras.callbacks.CSVLogger(path)])
        >>> print(open(path).read())
        epoch,loss,val_loss
        0,1.0,NA
        1,1.0,NA
        <BLANKLINE>
    """

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.sep = separator
        self.filename = os.fspath(filename)
        self.append = append
        self.writer = None
        self.keys = None
        self.append_header = True
        self.csv_file = None

    def on_train_begin(self, logs=None):
        mode = "w"
        if self.append:
            if os.path.exists(self.filename):
                with open(self.filename) as f:
                    self.append_header = not f.readline()
            mode = "a"
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()
        self.csv_file = open(self.filename, mode, newline="")
        self.writer = None
        self.keys = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs)
            # With validation_freq > 1 the first epoch has no val_ logs: make room for them.
            if self.keys and not any(k.startswith("val_") for k in self.keys):
                self.keys += [f"val_{k}" for k in self.keys]
        if self.writer is None:
            class Dialect(csv.excel):
                delimiter = self.sep
            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch"] + self.keys, dialect=Dialect)
            if self.append_header:
                self.writer.writeheader()
        row = collections.OrderedDict(epoch=epoch)
        row.update((k, _csv_value(logs.get(k, "NA"))) for k in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()
        self.writer = None


def _csv_value(v):
    if isinstance(v, str) or (isinstance(v, np.ndarray) and v.ndim == 0):
        return v
    if isinstance(v, collections.abc.Iterable):
        return f'"[{", ".join(map(str, v))}]"'
    return v


class BackupAndRestore(Callback):
    """Backs up training (weights, optimizer state and the epoch reached) to ``backup_dir`` so an
    interrupted ``fit`` resumes where it stopped: the next ``fit`` with this callback restores
    the backup and starts at the epoch after the last one completed. The backup is deleted when
    training ends normally (``delete_checkpoint=True``).

    Args:
        backup_dir: the directory of the backup.
        save_freq: ``'epoch'``, or a number of batches between backups.
        double_checkpoint: keep the previous backup too, used when the last one is unreadable.
        delete_checkpoint: delete the backup when training completes.

    Example:
        >>> import tempfile, numpy as np, tapejax as tf
        >>> backup = tempfile.mkdtemp() + '/backup'
        >>> class Interrupt(tf.keras.callbacks.Callback):
        ...     def on_epoch_begin(self, epoch, logs=None):
        ...         if epoch == 2:
        ...             raise RuntimeError('interrupted')
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
        >>> model.compile(optimizer='sgd', loss='mse')
        >>> x, y = np.ones((4, 2)), np.ones((4, 1))
        >>> try:
        ...     model.fit(x, y, epochs=4, verbose=0, callbacks=[tf.keras.callbacks.BackupAndRestore(backup), Interrupt()])
        ... except RuntimeError:
        ...     pass
        >>> h = model.fit(x, y, epochs=4, verbose=0, callbacks=[tf.keras.callbacks.BackupAndRestore(backup)])
        >>> h.epoch
        [2, 3]
    """

    def __init__(self, backup_dir, save_freq="epoch", double_checkpoint=False, delete_checkpoint=True):
        super().__init__()
        if not backup_dir:
            raise ValueError("Empty `backup_dir` argument passed")
        if save_freq != "epoch" and not isinstance(save_freq, int):
            raise ValueError(f"Invalid value for argument `save_freq`. Received: save_freq={save_freq}. "
                             "Expected either 'epoch' or an integer value.")
        self.backup_dir = os.fspath(backup_dir)
        self.save_freq = save_freq
        self.double_checkpoint = double_checkpoint
        self.delete_checkpoint = delete_checkpoint
        self._batches_since_saving = 0
        self._last_batch_seen = 0
        self._current_epoch = 0

    def _paths(self, suffix=""):
        folder = os.path.join(self.backup_dir, "latest" + suffix)
        return folder, os.path.join(folder, "weights"), os.path.join(folder, "training_metadata.json")

    def on_train_begin(self, logs=None):
        try:
            self._restore("")
        except (OSError, ValueError):
            if not (self.double_checkpoint and os.path.exists(self._paths(".bkp")[2])):
                raise
            self._restore(".bkp")   # the last backup was cut off while being written

    def _restore(self, suffix):
        _, weights, metadata = self._paths(suffix)
        if not os.path.exists(metadata):
            return
        if not self.model.built:
            raise ValueError("To use the BackupAndRestore callback, your model must be built before you call "
                             f"`fit()`. Model {self.model.name} is unbuilt. You can build it beforehand by "
                             "calling it on a batch of data.")
        try:
            with open(metadata, "rb") as f:
                epoch = json.loads(f.read().decode("utf-8"))["epoch"]
        except (ValueError, RecursionError, KeyError, TypeError):   # TypeError: not a JSON object
            epoch = None
        if type(epoch) is not int or epoch < 0:
            raise _DataLossError(f"The backup metadata {metadata!r} is corrupted (no epoch number); delete "
                                f"{self.backup_dir!r} to start training from the beginning.")
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is not None and not optimizer.built:
            # As Keras 3: the optimizer's variables must exist for its saved state to load.
            optimizer.build(self.model.trainable_variables)
        self.model.load_weights(weights)
        self.model._initial_epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        self._current_epoch = epoch + 1
        self._last_batch_seen = 0
        if self.save_freq == "epoch":
            self._save()

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq == "epoch":
            return
        self._batches_since_saving += batch + 1 if batch <= self._last_batch_seen else batch - self._last_batch_seen
        self._last_batch_seen = batch
        if self._batches_since_saving >= self.save_freq:
            self._batches_since_saving = 0
            self._save()

    def _save(self):
        folder, weights, metadata = self._paths()
        if self.double_checkpoint and os.path.exists(metadata):
            previous = self._paths(".bkp")[0]
            shutil.rmtree(previous, ignore_errors=True)
            shutil.copytree(folder, previous)
        os.makedirs(folder, exist_ok=True)
        if os.path.exists(metadata):
            os.remove(metadata)   # no metadata while the weights are half written
        self.model.save_weights(weights, overwrite=True)
        with open(metadata, "w") as f:
            json.dump({"epoch": self._current_epoch, "batch": self._last_batch_seen}, f)

    def on_train_end(self, logs=None):
        if self.delete_checkpoint and os.path.exists(self.backup_dir):
            shutil.rmtree(self.backup_dir)


class TensorBoard(Callback):
    """Logs training to TensorBoard, as Keras 3: epoch scalars ``epoch_<name>`` under
    ``log_dir/train`` (with ``epoch_learning_rate``) and ``log_dir/validation``; with
    ``update_freq=N`` batch scalars ``batch_<name>`` every N batches; with ``histogram_freq``,
    weight histograms; ``evaluate`` logs ``evaluation_<name>_vs_iterations``.

    Needs the tensorboard package (``pip install tapejax[tensorboard]``).

    Example:
        >>> import os, tempfile, numpy as np, tapejax as tf
        >>> logs = tempfile.mkdtemp()
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
        >>> model.compile(optimizer='sgd', loss='mse')
        >>> _ = model.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=2, verbose=0, validation_split=0.5,
        ...               callbacks=[tf.keras.callbacks.TensorBoard(logs)])
        >>> sorted(os.listdir(logs))
        ['train', 'validation']
    """

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0, embeddings_freq=0,
                 embeddings_metadata=None):
        super().__init__()
        summary._tensorboard()   # fail now, with the install line, when tensorboard is missing
        if update_freq == "batch":
            update_freq = 1
        if update_freq != "epoch" and not isinstance(update_freq, int):
            raise ValueError(f"Unrecognized update_freq: {update_freq!r}. Expected 'epoch', 'batch' or an integer.")
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = histogram_freq
        self.update_freq = update_freq
        self.write_steps_per_second = write_steps_per_second
        self._writers = {}
        self._global_train_batch = 0
        self._epoch_start = None
        self._epoch_batches = 0

    def _writer(self, kind):
        if kind not in self._writers:
            self._writers[kind] = summary.create_file_writer(os.path.join(self.log_dir, kind))
        return self._writers[kind]

    def _scalars(self, kind, values, step, prefix="", suffix=""):
        with self._writer(kind).as_default(), summary.record_if(True):
            for name, value in values.items():
                summary.scalar(prefix + name + suffix, float(np.asarray(value)), step=step)

    def on_train_begin(self, logs=None):
        self._global_train_batch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_start = time.time()
        self._epoch_batches = 0

    def on_train_batch_end(self, batch, logs=None):
        self._global_train_batch += 1
        self._epoch_batches += 1
        if isinstance(self.update_freq, int) and self._global_train_batch % self.update_freq == 0:
            self._scalars("train", logs or {}, self._global_train_batch, "batch_")

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        train = {k: v for k, v in logs.items() if not k.startswith("val_")}
        val = {k[4:]: v for k, v in logs.items() if k.startswith("val_")}
        lr = getattr(getattr(self.model, "optimizer", None), "learning_rate", None)
        if lr is not None and "learning_rate" not in train:
            train["learning_rate"] = float(np.asarray(lr.numpy() if hasattr(lr, "numpy") else lr))
        if self.write_steps_per_second and self._epoch_start is not None:
            train["steps_per_second"] = self._epoch_batches / max(time.time() - self._epoch_start, 1e-9)
        if train:
            self._scalars("train", train, epoch, "epoch_")
        if val:
            self._scalars("validation", val, epoch, "epoch_")
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            with self._writer("train").as_default(), summary.record_if(True):
                for layer in self.model.layers:
                    for w in layer.weights:
                        # Keras 3 tags weights by path (dense/kernel/histogram)
                        summary.histogram(getattr(w, "path", w.name).replace(":", "_") + "/histogram", w,
                                          step=epoch)

    def on_test_end(self, logs=None):
        iterations = getattr(getattr(self.model, "optimizer", None), "iterations", None)
        if iterations is not None and logs:
            self._scalars("validation", logs, int(np.asarray(iterations)), "evaluation_", "_vs_iterations")

    def on_train_end(self, logs=None):
        for w in self._writers.values():
            w.close()
        self._writers = {}


class ProgbarLogger(Callback):
    """Prints the progress of ``fit``/``evaluate``/``predict`` with a ``Progbar``, as Keras 3:
    ``Epoch i/n`` (when there are several epochs), then a bar redrawn per batch (``verbose=1``)
    or one line per epoch (``verbose=2``). ``fit`` adds one unless ``verbose=0`` or one is given.

    Example:
        >>> import numpy as np, tapejax as tf
        >>> model = tf.keras.Sequential([tf.keras.layers.Dense(1, kernel_initializer='zeros',
        ...                                                    input_shape=(2,))])
        >>> model.compile(optimizer=tf.keras.optimizers.SGD(0.0), loss='mse')
        >>> _ = model.fit(np.ones((8, 2)), np.ones((8, 1)), batch_size=4, epochs=2, verbose=2)
        Epoch 1/2
        2/2 - ...s - ...s/step - loss: 1.0000
        Epoch 2/2
        2/2 - ...s - ...s/step - loss: 1.0000
    """

    def __init__(self):
        super().__init__()
        self.seen = 0
        self.progbar = None
        self.target = None
        self.verbose = 1
        self.epochs = 1
        self._called_in_fit = False

    def set_params(self, params):
        super().set_params(params)
        verbose = params.get("verbose", 1)
        self.verbose = 1 if verbose == "auto" else verbose
        self.epochs = params.get("epochs", 1)
        self.target = params.get("steps")

    def on_train_begin(self, logs=None):
        self._called_in_fit = True   # validation inside fit stays silent

    def on_test_begin(self, logs=None):
        if not self._called_in_fit:
            self._reset()

    def on_predict_begin(self, logs=None):
        self._reset()

    def on_epoch_begin(self, epoch, logs=None):
        self._reset()
        if self.verbose and self.epochs > 1:
            print(f"Epoch {epoch + 1}/{self.epochs}", flush=True)

    def on_train_batch_end(self, batch, logs=None):
        self._update(batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        if not self._called_in_fit:
            self._update(batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._update(batch, None)    # the outputs are not metrics

    def on_epoch_end(self, epoch, logs=None):
        self._finalize(logs)

    def on_test_end(self, logs=None):
        if not self._called_in_fit:
            self._finalize(logs)

    def on_predict_end(self, logs=None):
        self._finalize(logs)

    def _reset(self):
        self.seen = 0
        self.progbar = Progbar(target=self.target, verbose=self.verbose, unit_name="step", stateless_metrics=())

    def _update(self, batch, logs):
        if self.progbar is None:
            self._reset()
        self.seen = batch + 1
        if self.verbose == 1:
            self.progbar.update(self.seen, list((logs or {}).items()), finalize=False)

    def _finalize(self, logs):
        if self.progbar is None:
            self._reset()
        if self.target is None:   # a dataset of unknown length: its length is known now
            self.target = self.progbar.target = self.seen
        self.progbar.update(self.target, list((logs or {}).items()), finalize=True)


class CallbackList:
    """The callbacks of one ``fit`` / ``evaluate`` / ``predict`` call, called in order.

    Example:
        >>> import tapejax as tf
        >>> seen = []
        >>> cbs = tf.keras.callbacks.CallbackList(
        ...     [tf.keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: seen.append(logs))], epochs=1)
        >>> cbs.call("on_epoch_end", 0, {"loss": 0.5})
        >>> seen, cbs.callbacks[0].params
        ([{'loss': 0.5}], {'epochs': 1})
    """

    def __init__(self, callbacks=None, model=None, **params):
        self.callbacks = list(callbacks or [])
        for cb in self.callbacks:   # duck-typed callbacks (no base class) get plain attributes
            if model is not None:
                if hasattr(cb, "set_model"):
                    cb.set_model(model)
                else:
                    cb.model = model
            if hasattr(cb, "set_params"):
                cb.set_params(params)

    def call(self, hook, *args):
        for cb in self.callbacks:
            fn = getattr(cb, hook, None)
            if fn is not None:
                fn(*args)
