"""tf.keras.utils.get_file and tf.keras.datasets (mnist, fashion_mnist, cifar10, cifar100), offline: origins are
file:// URLs and the cache is a temporary directory.

Expected messages were recorded from TF 2.21 (Keras 3.15) running the same calls
(/tmp/guides/t3/rec_ds.py in the session that added them); the progress-bar lines are left out
(tapejax's Progbar prints one line per update when stdout is not a terminal)."""
import gzip
import hashlib
import os

import numpy as np
import pytest

import tapejax as tf
from tapejax.keras import utils as kutils
from tapejax.keras.datasets import mnist as mnist_module


def _npz(path):
    np.savez(path, x_train=np.zeros((2, 28, 28), "uint8"), y_train=np.array([1, 2], "uint8"),
             x_test=np.ones((1, 28, 28), "uint8"), y_test=np.array([3], "uint8"))
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def _cache(tmp_path, name="cache"):
    # an existing, writable folder: Keras (and get_file) falls back to /tmp/.keras otherwise
    d = tmp_path / name
    d.mkdir(exist_ok=True)
    return str(d)


def _lines(capsys):
    return [l for l in capsys.readouterr().out.splitlines() if l and "/step" not in l]


def test_get_file_downloads_once_then_uses_the_cache(tmp_path, capsys):
    src = str(tmp_path / "src.npz")
    h = _npz(src)
    d = _cache(tmp_path)
    p = tf.keras.utils.get_file("a.npz", origin="file://" + src, file_hash=h, cache_dir=d)
    assert os.path.relpath(p, d) == os.path.join("datasets", "a.npz")
    assert _lines(capsys) == [f"Downloading data from file://{src}"]
    assert tf.keras.utils.get_file("a.npz", origin="file://" + src, file_hash=h, cache_dir=d) == p
    assert _lines(capsys) == []                       # cached: nothing printed
    # fname defaults to the origin's base name; cache_subdir names the folder
    p = tf.keras.utils.get_file(origin="file://" + src, cache_dir=d, cache_subdir="sub")
    assert os.path.relpath(p, d) == os.path.join("sub", "src.npz")


def test_get_file_replaces_a_cached_file_whose_hash_differs(tmp_path, capsys):
    src = str(tmp_path / "src.npz")
    h = _npz(src)
    d = tmp_path / "cache"
    (d / "datasets").mkdir(parents=True)
    (d / "datasets" / "a.npz").write_text("junk")
    p = tf.keras.utils.get_file("a.npz", origin="file://" + src, file_hash=h, cache_dir=str(d))
    assert _lines(capsys) == [
        "A local file was found, but it seems to be incomplete or outdated because the auto file hash "
        f"does not match the original value of {h} so we will re-download the data.",
        f"Downloading data from file://{src}"]
    assert open(p, "rb").read() == open(src, "rb").read()


def test_get_file_errors_as_keras(tmp_path):
    src = str(tmp_path / "src.npz")
    _npz(src)
    d = _cache(tmp_path)
    with pytest.raises(ValueError) as e:
        tf.keras.utils.get_file("b.npz", origin="file://" + src, file_hash="0" * 64, cache_dir=d)
    assert str(e.value) == ("Incomplete or corrupted file detected. The auto file hash does not match the "
                            "provided value of " + "0" * 64 + ".")
    assert os.path.exists(os.path.join(d, "datasets", "b.npz"))     # Keras keeps it, as here
    with pytest.raises(Exception) as e:
        tf.keras.utils.get_file("c.npz", origin=f"file://{tmp_path}/missing.npz", cache_dir=d)
    assert type(e.value) is Exception
    assert str(e.value) == (f"URL fetch failure on file://{tmp_path}/missing.npz: None -- [Errno 2] No such "
                            f"file or directory: '{tmp_path}/missing.npz'")
    assert not os.path.exists(os.path.join(d, "datasets", "c.npz"))
    with pytest.raises(ValueError, match=r'^Please specify the "origin" argument \(URL of the file to download\)\.$'):
        tf.keras.utils.get_file("c.npz", cache_dir=d)
    with pytest.raises(ValueError) as e:
        tf.keras.utils.get_file("x/c.npz", origin="file://" + src, cache_dir=d)
    assert str(e.value) == ("Paths are no longer accepted as the `fname` argument. To specify the file's parent "
                            "directory, use the `cache_dir` argument. Received: fname=x/c.npz")


def test_get_file_extracts_archives(tmp_path):
    import tarfile
    (tmp_path / "payload.txt").write_text("hi")
    arc = str(tmp_path / "arc.tar.gz")
    with tarfile.open(arc, "w:gz") as t:
        t.add(str(tmp_path / "payload.txt"), arcname="payload.txt")
    d = _cache(tmp_path)
    out = tf.keras.utils.get_file("arc.tar.gz", origin="file://" + arc, extract=True, cache_dir=d)
    assert out == os.path.join(d, "datasets", "arc_extracted")
    assert open(os.path.join(out, "payload.txt")).read() == "hi"


def test_mnist_load_data_reads_the_cached_npz(tmp_path, monkeypatch):
    src = str(tmp_path / "src.npz")
    h = _npz(src)
    monkeypatch.setattr(kutils, "_KERAS_HOME", _cache(tmp_path, "home"))
    monkeypatch.setattr(mnist_module, "_ORIGIN", "file://" + src)
    monkeypatch.setattr(mnist_module, "_SHA256", h)
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
    assert x_train.shape == (2, 28, 28) and x_train.dtype == np.uint8
    assert y_train.tolist() == [1, 2] and y_test.tolist() == [3] and x_test.sum() == 28 * 28
    assert os.path.exists(tmp_path / "home" / "datasets" / "mnist.npz")


def test_fashion_mnist_reads_cached_idx_files_offline(tmp_path, monkeypatch):
    home = tmp_path / "home"
    folder = home / "datasets" / "fashion-mnist"
    folder.mkdir(parents=True)

    def write(name, header, data):
        with gzip.open(folder / name, "wb") as f:
            f.write(header + data.tobytes())
    labels, images = np.array([7, 1, 9], "uint8"), np.arange(3 * 28 * 28, dtype="uint32").astype("uint8")
    for prefix in ("train", "t10k"):
        write(f"{prefix}-labels-idx1-ubyte.gz", b"\0" * 8, labels)
        write(f"{prefix}-images-idx3-ubyte.gz", b"\0" * 16, images)
    monkeypatch.setattr(kutils, "_KERAS_HOME", str(home))
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.fashion_mnist.load_data()
    assert x_train.shape == (3, 28, 28) and y_train.tolist() == [7, 1, 9]
    np.testing.assert_array_equal(x_test.reshape(-1), images)


def test_other_keras_datasets_say_what_to_use():
    with pytest.raises(AttributeError, match="get_file"):
        tf.keras.datasets.imdb


def _cifar_archive(tmp_path, folder, batches):
    """A CIFAR-format tar.gz (pickled dicts of bytes keys, numpy data): ``batches`` is
    ``{name: {key: value}}``. Returns (path, sha256)."""
    import io
    import pickle
    import tarfile
    arc = str(tmp_path / f"{folder}.tar.gz")
    with tarfile.open(arc, "w:gz") as t:
        for name, d in batches.items():
            b = pickle.dumps({k.encode(): v for k, v in d.items()}, protocol=4)
            info = tarfile.TarInfo(f"{folder}/{name}")
            info.size = len(b)
            t.addfile(info, io.BytesIO(b))
    return arc, hashlib.sha256(open(arc, "rb").read()).hexdigest()


def test_cifar10_reads_keras_batches_channels_last(tmp_path, monkeypatch):
    # Keras's layout (TF 2.21, Keras 3.15, on a full-size archive of random batches): pixel
    # (row r, column c, channel ch) of image i is data[i, ch*1024 + r*32 + c]; batches 1-5 in
    # order, then test_batch; uint8 images and (N, 1) uint8 labels; the archive is unpacked into
    # ~/.keras/datasets/cifar-10-batches-py-target (the download kept as ..._archive).
    from tapejax.keras.datasets import cifar10 as cifar10_module
    rows = {}
    for i, name in enumerate([f"data_batch_{k}" for k in range(1, 6)] + ["test_batch"]):
        data = ((np.arange(2 * 3072) * (i + 3)) % 251).astype("uint8").reshape(2, 3072)
        rows[name] = {"batch_label": b"x", "labels": [i, 9 - i], "data": data, "filenames": [b"a", b"b"]}
    arc, h = _cifar_archive(tmp_path, "cifar-10-batches-py", rows)
    home = _cache(tmp_path, "home")
    monkeypatch.setattr(kutils, "_KERAS_HOME", home)
    monkeypatch.setattr(cifar10_module, "_ORIGIN", "file://" + arc)
    monkeypatch.setattr(cifar10_module, "_SHA256", h)
    (x_train, y_train), (x_test, y_test) = tf.keras.datasets.cifar10.load_data()
    assert (x_train.shape, x_train.dtype, y_train.shape, y_train.dtype) == ((10, 32, 32, 3), np.uint8, (10, 1), np.uint8)
    assert (x_test.shape, x_test.dtype, y_test.shape, y_test.dtype) == ((2, 32, 32, 3), np.uint8, (2, 1), np.uint8)
    assert y_train[:, 0].tolist() == [0, 9, 1, 8, 2, 7, 3, 6, 4, 5] and y_test[:, 0].tolist() == [5, 4]
    for x, names in ((x_train, [f"data_batch_{k}" for k in range(1, 6)]), (x_test, ["test_batch"])):
        data = np.concatenate([rows[n]["data"] for n in names])
        for i, r, c, ch in [(0, 0, 0, 0), (1, 31, 30, 2), (len(data) - 1, 5, 7, 1), (1, 0, 1, 1)]:
            assert x[i, r, c, ch] == data[i, ch * 1024 + r * 32 + c]
    assert sorted(os.listdir(os.path.join(home, "datasets"))) == [
        "cifar-10-batches-py-target", "cifar-10-batches-py-target_archive"]


def test_cifar100_label_modes_as_keras(tmp_path, monkeypatch):
    # Recorded from TF 2.21 (Keras 3.15) on this same archive: int64 (N, 1) labels (Keras does not
    # cast them), uint8 channels-last images.
    from tapejax.keras.datasets import cifar100 as cifar100_module

    def part(n, seed):
        return {"filenames": [b"f"] * n, "fine_labels": [(seed * 13 + i) % 100 for i in range(n)],
                "coarse_labels": [(seed + i) % 20 for i in range(n)],
                "data": (np.arange(n * 3072) * (seed + 7) % 251).astype(np.uint8).reshape(n, 3072)}
    arc, h = _cifar_archive(tmp_path, "cifar-100-python", {"train": part(3, 1), "test": part(2, 2)})
    monkeypatch.setattr(kutils, "_KERAS_HOME", _cache(tmp_path, "home"))
    monkeypatch.setattr(cifar100_module, "_ORIGIN", "file://" + arc)
    monkeypatch.setattr(cifar100_module, "_SHA256", h)
    for mode, train_labels, test_labels in [("fine", [[13], [14], [15]], [[26], [27]]),
                                            ("coarse", [[1], [2], [3]], [[2], [3]])]:
        (xt, yt), (xs, ys) = tf.keras.datasets.cifar100.load_data(label_mode=mode)
        assert (xt.shape, xt.dtype, yt.shape, yt.dtype) == ((3, 32, 32, 3), np.uint8, (3, 1), np.int64)
        assert (xs.shape, xs.dtype, ys.shape, ys.dtype) == ((2, 32, 32, 3), np.uint8, (2, 1), np.int64)
        assert yt.tolist() == train_labels and ys.tolist() == test_labels
        assert xt[1, 0, :3].tolist() == [[229, 138, 47], [237, 146, 55], [245, 154, 63]]
        assert xt[2, 31, 31].tolist() == [108, 17, 177] and xs[1, 4, 5].tolist() == [231, 160, 89]
    with pytest.raises(ValueError) as e:
        tf.keras.datasets.cifar100.load_data(label_mode="x")
    assert str(e.value) == '`label_mode` must be one of `"fine"`, `"coarse"`. Received: label_mode=x.'


def test_cifar_refuses_pickled_code(tmp_path, monkeypatch):
    from tapejax.keras.datasets import cifar100 as cifar100_module
    arc, h = _cifar_archive(tmp_path, "cifar-100-python", {"train": {"data": os.system}, "test": {}})
    monkeypatch.setattr(kutils, "_KERAS_HOME", _cache(tmp_path, "home"))
    monkeypatch.setattr(cifar100_module, "_ORIGIN", "file://" + arc)
    monkeypatch.setattr(cifar100_module, "_SHA256", h)
    import pickle
    with pytest.raises(pickle.UnpicklingError, match=r"^Refusing to deserialize `posix.system` while loading a Keras "
                                                     r"dataset\. The file may be corrupted or malicious\.$"):
        tf.keras.datasets.cifar100.load_data()
