"""tf.keras.utils: ``to_categorical``, ``Progbar``, ``set_random_seed``, ``get_file``,
``timeseries_dataset_from_array``.

Example:
    >>> import tapejax as tf
    >>> tf.keras.utils.to_categorical([0, 2], num_classes=3)
    array([[1., 0., 0.],
           [0., 0., 1.]])
"""
import hashlib as _hashlib
import os as _os
import random as _pyrandom
import shutil as _shutil
import sys as _sys
import tarfile as _tarfile
import tempfile as _tempfile
import urllib.error as _urlerror
import urllib.parse as _urlparse
import urllib.request as _urlrequest
import warnings as _warnings
import zipfile as _zipfile

import numpy as np

from .. import random as _random
from ._progbar import Progbar as Progbar  # noqa: F401
from ._serialization import (  # noqa: F401 -- Keras 3 exports them here too
    deserialize_keras_object as deserialize_keras_object, serialize_keras_object as serialize_keras_object,
    register_keras_serializable as register_keras_serializable, get_registered_name as get_registered_name,
    get_registered_object as get_registered_object, get_custom_objects as get_custom_objects,
    CustomObjectScope as CustomObjectScope, custom_object_scope as custom_object_scope)
from ._sequence import pad_sequences as pad_sequences  # noqa: F401
from .. import data as _data, ops as _ops
from ..math import reduce_max
from ..ops import gather as _gather
from .backend import clear_session as clear_session  # noqa: F401 -- Keras 3 exports it here too
from .layers._base import KerasTensor as _KerasTensor, _leaves


def to_categorical(x, num_classes=None):
    """One-hot encodes class ids, as ``keras.utils.to_categorical``.

    A trailing dimension of size 1 is replaced by the classes: labels of shape ``(n, 1)`` give
    ``(n, num_classes)``.

    Args:
        x: integer class ids (an array-like, or a Tensor).
        num_classes: the number of classes; by default ``max(x) + 1``.

    Returns:
        A float64 numpy array (as Keras), or a float32 Tensor for a Tensor input.

    Raises:
        IndexError: an id is ``num_classes`` or more.

    Example:
        >>> import numpy as np, tapejax as tf
        >>> tf.keras.utils.to_categorical(np.array([[1], [0]]), 3).shape
        (2, 3)
        >>> tf.keras.utils.to_categorical(tf.constant([1, 0]), 2)
        <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
        array([[0., 1.],
               [1., 0.]], dtype=float32)>
    """
    if _ops.is_tensor(x):
        if x.shape.rank and x.shape.rank > 1 and x.shape[-1] == 1:
            x = _ops.squeeze(x, axis=-1)
        x = _ops.cast(x, "int32")
        if num_classes is None:
            num_classes = int(reduce_max(x)) + 1
        return _ops.one_hot(x, num_classes)
    x = np.array(x, dtype="int64")
    shape = x.shape
    if len(shape) > 1 and shape[-1] == 1:
        shape = shape[:-1]
    x = x.reshape(-1)
    num_classes = int(np.max(x)) + 1 if not num_classes else num_classes
    out = np.zeros((x.shape[0], num_classes))
    out[np.arange(x.shape[0]), x] = 1
    return out.reshape(shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    """Normalizes ``x`` to unit ``order``-norm along ``axis`` (Keras 3's ``keras.utils.normalize``).

    A NumPy array stays NumPy (a zero norm leaves zeros); a tensor goes through Keras's
    ``ops.normalize`` (``x * min(rsqrt(sum(x**2)), 1e7)`` for ``order=2``).

    Example:
        >>> import tapejax as tf, numpy as np
        >>> tf.keras.utils.normalize(np.array([[3., 4.], [0., 0.]]))
        array([[0.6, 0.8],
               [0. , 0. ]])
    """
    if isinstance(x, np.ndarray):
        norm = np.atleast_1d(np.linalg.norm(x, order, axis))
        norm[norm == 0] = 1
        axis = axis or -1
        return x / np.expand_dims(norm, axis)
    if not isinstance(order, int) or not order >= 1:
        raise ValueError(f"Argument `order` must be an int >= 1. Received: order={order}")
    x = _ops.convert_to_tensor(x)
    if x.shape.rank == 0:
        x = _ops.expand_dims(x, 0)
    if order == 2:
        inv = _ops.minimum(_ops.rsqrt(_ops.reduce_sum(_ops.square(x), axis=axis, keepdims=True)),
                           _ops.cast(1.0 / 1e-7, x.dtype))
        return x * inv
    norm = _ops.norm(x, ord=order, axis=axis, keepdims=True)
    return x / _ops.maximum(norm, _ops.cast(1e-7, x.dtype))


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    """Packs data as Keras's ``fit`` reads it: ``x``; ``(x,)`` for a tuple or list ``x`` alone;
    ``(x, y)``; ``(x, y, sample_weight)`` (Keras 3's ``keras.utils.pack_x_y_sample_weight``).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.utils.pack_x_y_sample_weight(1, 2), tf.keras.utils.pack_x_y_sample_weight([1, 2])
        ((1, 2), ([1, 2],))
    """
    if y is None:
        return (x,) if isinstance(x, (tuple, list)) else x
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


def unpack_x_y_sample_weight(data):
    """Unpacks ``x``, ``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)`` (a list too) into
    ``(x, y, sample_weight)`` with None for what is missing.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.utils.unpack_x_y_sample_weight((1, 2))
        (1, 2, None)
    """
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return (data, None, None)
    if len(data) == 1:
        return (data[0], None, None)
    if len(data) == 2:
        return (data[0], data[1], None)
    if len(data) == 3:
        return (data[0], data[1], data[2])
    raise ValueError("Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, "
                     f"found: {data}")


def is_keras_tensor(x):
    """Whether ``x`` is a symbolic Keras tensor (the output of ``tf.keras.Input`` or of a layer on one).

    Example:
        >>> import tapejax as tf
        >>> tf.keras.utils.is_keras_tensor(tf.keras.Input((2,))), tf.keras.utils.is_keras_tensor(tf.constant(1.))
        (True, False)
    """
    return isinstance(x, _KerasTensor)


def set_random_seed(seed):
    """Seeds Python's ``random``, NumPy and ``tf.random`` at once (``tf.keras.utils.set_random_seed``).

    Unseeded Keras initializers take their seed from Python's ``random`` when they are
    made, so a model built after this call has TensorFlow 2.21 / Keras 3's weights.

    Args:
        seed: an int.

    Raises:
        ValueError: ``seed`` is not an int.

    Example:
        >>> import tapejax as tf
        >>> tf.keras.utils.set_random_seed(0)
        >>> layer = tf.keras.layers.Dense(2)
        >>> layer.build((None, 2))
        >>> layer.kernel.numpy()
        array([[ 0.03841865, -0.46770066],
               [ 0.83014286, -0.96362484]], dtype=float32)
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"Expected `seed` argument to be an integer. Received: seed={seed!r} "
                         f"(of type {type(seed)}).")
    _pyrandom.seed(int(seed))
    np.random.seed(int(seed))
    _random.set_seed(int(seed))


# Keras 3 reads $KERAS_HOME once, when it is imported; so does this module.
_KERAS_HOME = _os.path.expanduser(_os.environ.get("KERAS_HOME") or _os.path.join("~", ".keras"))


def _hasher(algorithm, file_hash):
    # Keras: "auto" means sha256 for a 64-digit hash, md5 otherwise (legacy).
    if algorithm == "sha256" or (algorithm == "auto" and file_hash is not None and len(file_hash) == 64):
        return _hashlib.sha256()
    return _hashlib.md5()


def _file_matches(path, file_hash, algorithm):
    hasher = _hasher(algorithm, file_hash)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(65535), b""):
            hasher.update(chunk)
    return hasher.hexdigest() == str(file_hash)


def _download(origin, target):
    """``urlretrieve`` with Keras's progress bar and error message; no partial file is left."""
    print(f"Downloading data from {origin}")
    bar, done = [], []

    def hook(block_num, block_size, total_size):
        total = None if total_size == -1 else total_size
        if not bar:
            bar.append(Progbar(total))
        current = block_num * block_size
        if total is None:
            bar[0].update(current)
        elif current < total:
            bar[0].update(current)
        elif not done:
            bar[0].update(bar[0].target)
            done.append(True)

    error_msg = "URL fetch failure on {}: {} -- {}"
    try:
        try:
            _urlrequest.urlretrieve(origin, target, hook)
        except _urlerror.HTTPError as e:
            raise Exception(error_msg.format(origin, e.code, e.msg))
        except _urlerror.URLError as e:
            raise Exception(error_msg.format(origin, e.errno, e.reason))
    except (Exception, KeyboardInterrupt):
        if _os.path.exists(target):
            _os.remove(target)
        raise


def get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None, cache_subdir="datasets",
             hash_algorithm="auto", extract=False, archive_format="auto", cache_dir=None,
             force_download=False):
    """Downloads a file from a URL unless it is already in the cache (``keras.utils.get_file``).

    The file goes to ``cache_dir/cache_subdir/fname``: by default ``~/.keras/datasets/fname``
    (``$KERAS_HOME``, read at import, replaces ``~/.keras``; an unwritable cache falls back to ``/tmp/.keras``).
    A cached file is used as it is, unless ``file_hash`` is given and does not match, when it
    is downloaded again. Archives (tar, tar.gz, tar.bz2, zip) are unpacked with ``extract=True``.

    Args:
        fname: the local file name; by default the last part of ``origin``'s path. With
            ``extract=True``, the extraction directory's name.
        origin: the URL (``https://``, ``file://``...).
        untar: deprecated, as ``extract=True`` with ``archive_format='tar'``.
        md5_hash: deprecated, as ``file_hash`` with ``hash_algorithm='md5'``.
        file_hash: the expected sha256 (or md5) hex digest of the file.
        cache_subdir: the subdirectory of ``cache_dir`` (or an absolute path).
        hash_algorithm: ``'auto'`` (sha256 for a 64-digit hash, else md5), ``'sha256'`` or ``'md5'``.
        extract: whether to unpack the archive; the extraction directory is returned.
        archive_format: ``'auto'`` (tar then zip), ``'tar'``, ``'zip'``, or a list of them.
        cache_dir: the cache root; by default ``$KERAS_HOME`` or ``~/.keras``.
        force_download: download even when the file is cached.

    Returns:
        The path of the file (or of the extraction directory).

    Raises:
        ValueError: no ``origin``; ``fname`` holds a directory; the downloaded file does not
            match ``file_hash``.
        Exception: the download failed (``URL fetch failure on <origin>: <errno> -- <reason>``),
            as Keras raises it.

    Example:
        >>> import hashlib, os, tempfile, tapejax as tf
        >>> d = tempfile.mkdtemp()
        >>> with open(os.path.join(d, "data.txt"), "w") as f:
        ...     _ = f.write("hello")
        >>> h = hashlib.sha256(b"hello").hexdigest()
        >>> path = tf.keras.utils.get_file("copy.txt", origin="file://" + d + "/data.txt",
        ...                                file_hash=h, cache_dir=d)  # doctest: +ELLIPSIS
        Downloading data from file://.../data.txt
        ...
        >>> os.path.relpath(path, d), open(path).read()
        ('datasets/copy.txt', 'hello')
    """
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to download).')
    if cache_dir is None:
        cache_dir = _KERAS_HOME
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    base = _os.path.expanduser(cache_dir)
    if not _os.access(base, _os.W_OK):
        base = _os.path.join("/tmp" if _os.path.isdir("/tmp") else _tempfile.gettempdir(), ".keras")
    datadir = _os.path.join(base, cache_subdir)
    _os.makedirs(datadir, exist_ok=True)

    provided = fname
    fname = _os.fspath(fname) if fname is not None else None
    if not fname:
        fname = _os.path.basename(_urlparse.urlsplit(origin).path)
        if not fname:
            raise ValueError(f"Can't parse the file name from the origin provided: '{origin}'."
                             "Please specify the `fname` argument.")
    elif _os.sep in fname:
        raise ValueError("Paths are no longer accepted as the `fname` argument. To specify the file's "
                         f"parent directory, use the `cache_dir` argument. Received: fname={fname}")

    if extract or untar:
        if provided and "." in fname:
            target = _os.path.join(datadir, fname)
            extraction_dir = _os.path.join(datadir, f"{fname[:fname.find('.')]}_extracted")
        else:
            extraction_dir = _os.path.join(datadir, fname)
            target = _os.path.join(datadir, f"{fname}_archive")
    else:
        target = _os.path.join(datadir, fname)

    download = True
    if not force_download and _os.path.exists(target):
        download = False
        if file_hash is not None and not _file_matches(target, file_hash, hash_algorithm):
            print("A local file was found, but it seems to be incomplete or outdated because the "
                  f"{hash_algorithm} file hash does not match the original value of {file_hash} so we "
                  "will re-download the data.")
            download = True
    if download:
        _download(origin, target)
        if _os.path.exists(target) and file_hash is not None and \
                not _file_matches(target, file_hash, hash_algorithm):
            raise ValueError(f"Incomplete or corrupted file detected. The {hash_algorithm} file hash does "
                             f"not match the provided value of {file_hash}.")

    if extract or untar:
        if not _extract(target, extraction_dir, "tar" if untar else archive_format):
            _warnings.warn("Could not extract archive.", stacklevel=2)
        return extraction_dir
    return target


def _extract(path, to, archive_format):
    formats = {"auto": ["tar", "zip"], None: []}.get(archive_format, archive_format)
    formats = [formats] if isinstance(formats, str) else list(formats or [])
    for kind in formats:
        opener, is_archive = ((_tarfile.open, _tarfile.is_tarfile) if kind == "tar"
                              else (_zipfile.ZipFile, _zipfile.is_zipfile))
        if not is_archive(path):
            continue
        try:
            with opener(path) as archive:
                if kind == "tar":
                    archive.extractall(to, filter="data")
                else:
                    archive.extractall(to)
        except (_tarfile.TarError, RuntimeError, KeyboardInterrupt, _zipfile.BadZipFile):
            if _os.path.exists(to):
                _shutil.rmtree(to) if _os.path.isdir(to) else _os.remove(to)
            raise
        return True
    return False


# ---------------------------------------------------------------------------
# plot_model: Keras 3's model diagram (pydot and graphviz, both optional)
# ---------------------------------------------------------------------------

def _check_timeseries_arguments(n, start_index, end_index, sampling_rate, sequence_stride):
    # Keras 3's checks, in its order (a 0 start/end index is not checked, as there).
    if start_index:
        if start_index < 0:
            raise ValueError(f"`start_index` must be 0 or greater. Received: start_index={start_index}")
        if start_index >= n:
            raise ValueError("`start_index` must be lower than the length of the data. Received: "
                             f"start_index={start_index}, for data of length {n}")
    if end_index:
        if start_index and end_index <= start_index:
            raise ValueError("`end_index` must be higher than `start_index`. Received: "
                             f"start_index={start_index}, and end_index={end_index} ")
        if end_index >= n:
            raise ValueError("`end_index` must be lower than the length of the data. Received: "
                             f"end_index={end_index}, for data of length {n}")
        if end_index <= 0:
            raise ValueError(f"`end_index` must be higher than 0. Received: end_index={end_index}")
    for name, value in (("sampling_rate", sampling_rate), ("sequence_stride", sequence_stride)):
        if value <= 0:
            raise ValueError(f"`{name}` must be higher than 0. Received: {name}={value}")
        if value >= n:
            raise ValueError(f"`{name}` must be lower than the length of the data. Received: {name}={value}, "
                             f"for data of length {n}")


def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1, sampling_rate=1,
                                  batch_size=128, shuffle=False, seed=None, start_index=None, end_index=None):
    """A dataset of sliding windows over a timeseries (``keras.utils.timeseries_dataset_from_array``).

    Window ``i`` holds ``data[start + p, start + p + sampling_rate, ...]`` (``sequence_length``
    steps) for ``p = i * sequence_stride``, between ``start_index`` and ``end_index``; its target
    is ``targets[start + p]``. Windows are batched (``batch_size=None``: single windows), shuffled
    with ``shuffle=True`` (the start positions with NumPy's ``RandomState(seed)``, then within a
    buffer of ``8 * batch_size``), as Keras 3 builds it with ``tf.data``: the same elements,
    element_spec (the window length unknown), cardinality and printed class.

    Args:
        data: an array (or tensor) of timesteps, first axis time.
        targets: an array of one target per timestep, or None (the dataset yields windows only).
        sequence_length: the number of timesteps in a window.
        sequence_stride: the step between two windows' starts.
        sampling_rate: the step between two timesteps within a window.
        batch_size: windows per batch, or None.
        shuffle, seed: shuffle the windows (a seed for a reproducible order).
        start_index, end_index: the part of ``data`` the windows are taken from.

    Returns:
        A ``tf.data.Dataset`` of windows, or of ``(windows, targets)``.

    Raises:
        ValueError: an index, stride or rate out of range (Keras's messages).

    Example:
        >>> import numpy as np, tapejax as tf
        >>> ds = tf.keras.utils.timeseries_dataset_from_array(np.arange(6), np.arange(6) * 10,
        ...                                                    sequence_length=3, batch_size=2)
        >>> ds.element_spec
        (TensorSpec(shape=(None, None), dtype=tf.int64, name=None), TensorSpec(shape=(None,), dtype=tf.int64, name=None))
        >>> [(x.numpy().tolist(), y.numpy().tolist()) for x, y in ds]
        [([[0, 1, 2], [1, 2, 3]], [0, 10]), ([[2, 3, 4], [3, 4, 5]], [20, 30])]
    """
    n = len(data)
    _check_timeseries_arguments(n, start_index, end_index, sampling_rate, sequence_stride)
    start = 0 if start_index is None else start_index
    end = n if end_index is None else end_index
    num_seqs = end - start - (sequence_length - 1) * sampling_rate
    if targets is not None:
        num_seqs = min(num_seqs, len(targets))
    index_dtype = "int32" if num_seqs < 2147483647 else "int64"
    positions = np.arange(0, num_seqs, sequence_stride, dtype=index_dtype)
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(positions)
    steps = _ops.convert_to_tensor(data[start:end])
    offsets = (np.arange(sequence_length) * sampling_rate).astype(index_dtype)

    def sequences(array, take, item_shape):
        ds = _data.Dataset.from_tensor_slices(positions).map(take, num_parallel_calls=_data.AUTOTUNE)
        # Keras gathers tf.range(p, p + length * rate, rate): TensorFlow knows no window length.
        spec = _data.TensorSpec(item_shape + tuple(array.shape[1:]), array.dtype)
        out = ds._derive(ds._make, ds._card, lambda: spec, ds._index)
        out._REPR = ds._REPR
        return out

    dataset = sequences(steps, lambda p: _gather(steps, p + offsets), (None,))
    if targets is not None:
        target_steps = _ops.convert_to_tensor(targets[start:end])
        dataset = _data.Dataset.zip((dataset, sequences(target_steps, lambda p: _gather(target_steps, p), ())))
    dataset = dataset.prefetch(_data.AUTOTUNE)
    if batch_size is not None:
        if shuffle:
            dataset = dataset.shuffle(buffer_size=batch_size * 8, seed=seed)
        return dataset.batch(batch_size)
    return dataset.shuffle(buffer_size=1024, seed=seed) if shuffle else dataset


def _pydot():
    """pydot (or Keras's fallbacks pydot_ng, pydotplus), or None."""
    for name in ("pydot", "pydot_ng", "pydotplus"):
        try:
            return __import__(name)
        except ImportError:
            continue
    return None


def _graph_edges(model):
    """(source layer, destination layer) pairs: a functional model's connections, else a chain."""
    graph = getattr(model, "_k_graph", None)
    layers = list(model.layers)
    if graph is None:
        return list(zip(layers, layers[1:]))
    edges = []
    for node in graph[2]:
        for leaf in _leaves(list(node.args) + list(node.kwargs.values())):
            if isinstance(leaf, _KerasTensor):
                src = leaf._k_node.layer if leaf._k_node is not None else getattr(leaf, "_k_input_layer", None)
                if src is not None and (src, node.layer) not in edges:
                    edges.append((src, node.layer))
    return edges


def model_to_dot(model, show_shapes=False, show_dtype=False, show_layer_names=True, rankdir="TB",
                 expand_nested=False, dpi=200, subgraph=False, show_layer_activations=False, show_trainable=False,
                 **kwargs):
    """The model's layers and connections as a ``pydot.Dot`` graph (``keras.utils.model_to_dot``).

    One node per layer, labelled ``name (ClassName)`` (with its output shape and dtype when asked),
    one edge per connection. Keras 3 draws HTML tables in the nodes; tapejax writes plain labels.

    Raises:
        ImportError: without pydot (TensorFlow's message).

    Example:
        >>> import tapejax as tf
        >>> model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2, name="d")])
        >>> try:
        ...     dot = tf.keras.utils.model_to_dot(model)
        ... except ImportError:
        ...     pass
    """
    pydot = _pydot()
    if pydot is None:
        raise ImportError("You must install pydot (`pip install pydot`) for `plot_model` to work.")
    dot = pydot.Dot()
    dot.set("rankdir", rankdir)
    dot.set("concentrate", True)
    dot.set("dpi", dpi)
    dot.set_node_defaults(shape="record")
    for layer in model.layers:
        label = f"{layer.name} ({type(layer).__name__})" if show_layer_names else type(layer).__name__
        if show_shapes and getattr(layer, "_k_output_shape", None) is not None:
            label += f"|{tuple(layer._k_output_shape)}"
        if show_dtype:
            label += f"|{layer.dtype}"
        if show_trainable:
            label += f"|Trainable: {'Y' if layer.trainable else 'N'}"
        dot.add_node(pydot.Node(str(id(layer)), label=label.replace(":", "\\:")))
    for src, dst in _graph_edges(model):
        edge = pydot.Edge(str(id(src)), str(id(dst)))
        edge.set("penwidth", "2")
        dot.add_edge(edge)
    return dot


def plot_model(model, to_file="model.png", show_shapes=False, show_dtype=False, show_layer_names=False,
               rankdir="TB", expand_nested=False, dpi=200, show_layer_activations=False, show_trainable=False,
               splines="ortho", **kwargs):
    """Draws the model's layers and connections to ``to_file`` with pydot and graphviz, as
    Keras 3's ``plot_model`` (its checks and messages); returns an IPython ``Image`` when IPython
    is installed.

    Raises:
        ValueError: the model is not built.
        ImportError: without pydot, or without graphviz's ``dot`` (TensorFlow's messages; in an
            IPython session the message is printed instead, as Keras does).

    Example:
        >>> import tapejax as tf
        >>> try:
        ...     tf.keras.utils.plot_model(tf.keras.Sequential([tf.keras.layers.Dense(2)]))
        ... except ValueError as e:
        ...     print(str(e)[:34])
        This model has not yet been built.
    """
    if not model.built:
        raise ValueError("This model has not yet been built. Build the model first by calling `build()` or by "
                         "calling the model on a batch of data.")
    pydot = _pydot()
    problem = None
    if pydot is None:
        problem = "You must install pydot (`pip install pydot`) for `plot_model` to work."
    else:
        try:
            pydot.Dot.create(pydot.Dot())
        except (OSError, getattr(pydot, "PydotException", OSError)):
            problem = ("You must install graphviz (see instructions at https://graphviz.gitlab.io/download/) for "
                       "`plot_model` to work.")
    if problem is not None:
        if "IPython.core.magics.namespace" in _sys.modules:
            print(problem)
            return None
        raise ImportError(problem)
    if kwargs.pop("layer_range", None) is not None:
        raise ValueError("Argument `layer_range` is no longer supported.")
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments: {kwargs}")
    dot = model_to_dot(model, show_shapes=show_shapes, show_dtype=show_dtype, show_layer_names=show_layer_names,
                       rankdir=rankdir, dpi=dpi, show_trainable=show_trainable)
    dot.set("splines", splines)
    to_file = str(to_file)
    extension = _os.path.splitext(to_file)[1][1:] or "png"
    dot.write(to_file, format=extension)
    if extension != "pdf":
        try:
            from IPython import display
            return display.Image(filename=to_file)
        except ImportError:
            pass
    return None
