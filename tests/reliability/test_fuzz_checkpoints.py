"""tf.train checkpoints are read as untrusted files (fuzzed with hypothesis).

Random bytes, truncated files, JSON values of the wrong type, huge declared shapes, bad dtypes
and paths leading outside the checkpoint folder must raise tapejax's ``tf.errors.DataLossError``
(a ``ValueError``) naming the checkpoint: never a raw ``KeyError`` / ``TypeError``, a huge
allocation or a wrong value. A ``CheckpointManager`` adopts (and deletes) only checkpoints inside
its own directory, whatever its ``checkpoint`` state file says.
"""
import copy
import json
import logging
import os
import shutil
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tapejax as tf

FUZZ = settings(max_examples=12, deadline=10_000, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
INDEX = os.path.join("index", "metadata")
GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"
K = "/.ATTRIBUTES/VARIABLE_VALUE"
VALUES = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "n": np.array([7, 8, 9], np.int32),
          "e": np.zeros((0, 2), np.float32)}


def _objects():
    return tf.train.Checkpoint(**{k: tf.Variable(np.zeros_like(v)) for k, v in VALUES.items()})


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    ckpt = tf.train.Checkpoint(**{k: tf.Variable(v) for k, v in VALUES.items()})
    path = ckpt.save(str(tmp_path_factory.mktemp("fuzzckpt") / "ckpt"))
    with open(os.path.join(path, INDEX)) as fh:
        index = json.load(fh)
    files = sorted(os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(path) for f in fs)
    return path, index, files


class _Copy:
    """A fresh copy of the checkpoint for one example (hypothesis reruns the test body)."""

    def __init__(self, path):
        self.tmp = tempfile.mkdtemp()
        self.dir = os.path.join(self.tmp, "ckpt-1")
        shutil.copytree(path, self.dir)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def file(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, data):
        with open(self.file(name), "wb") as fh:
            fh.write(data)

    def read(self, name):
        with open(self.file(name), "rb") as fh:
            return fh.read()

    def write_index(self, index):
        self.write(INDEX, json.dumps(index).encode())


def _read_all(path):
    """Everything a reader and a restore give, checked against the saved values."""
    reader = tf.train.load_checkpoint(path)
    assert sorted(reader.get_variable_to_shape_map()) == sorted([GRAPH, "save_counter" + K] + [k + K for k in VALUES])
    reader.get_variable_to_dtype_map()
    for k, v in VALUES.items():
        got = reader.get_tensor(k + K)
        assert got.dtype == v.dtype and got.shape == v.shape and np.array_equal(got, v)
    objects = _objects()
    objects.restore(path).assert_consumed()
    for k, v in VALUES.items():
        np.testing.assert_array_equal(getattr(objects, k).numpy(), v)


def _damaged(c, *, names=None):
    """Reading the copy must fail with DataLossError naming the checkpoint (and ``names``)."""
    with pytest.raises(tf.errors.DataLossError) as info:
        _read_all(c.dir)
    assert isinstance(info.value, ValueError)
    message = str(info.value)
    assert c.dir in message, message
    for name in names or ():
        assert name in message, message
    return message


def _reads_or_damaged(c):
    """The change was harmless (every value reads back exactly) or the read fails cleanly."""
    try:
        _read_all(c.dir)
    except tf.errors.DataLossError as e:
        assert isinstance(e, ValueError) and c.dir in str(e), str(e)


def test_an_intact_copy_reads_back(saved):
    with _Copy(saved[0]) as c:
        _read_all(c.dir)


@FUZZ
@given(data=st.data())
def test_random_bytes_in_any_file_fail_cleanly(saved, data):
    path, _, files = saved
    name = data.draw(st.sampled_from(files), label="file")
    junk = data.draw(st.binary(min_size=0, max_size=300), label="bytes")
    with _Copy(path) as c:
        c.write(name, junk)
        _reads_or_damaged(c)


@FUZZ
@given(data=st.data())
def test_truncated_files_fail_cleanly(saved, data):
    path, _, files = saved
    name = data.draw(st.sampled_from(files), label="file")
    with _Copy(path) as c:
        raw = c.read(name)
        c.write(name, raw[:data.draw(st.integers(0, max(0, len(raw) - 1)), label="keep")])
        _reads_or_damaged(c)


def test_a_flipped_bit_in_the_values_is_detected(saved):
    """Every single-bit flip in any data file: DataLossError (the checksum or orbax), never a wrong value."""
    path, _, files = saved
    data = [f for f in files if f.startswith("state" + os.sep) and "/d/" in f.replace(os.sep, "/")]
    assert data
    with _Copy(path) as c:
        for name in data:
            raw = c.read(name)
            for pos in range(0, len(raw), 17):
                flipped = bytearray(raw)
                flipped[pos] ^= 0x10
                c.write(name, bytes(flipped))
                _reads_or_damaged(c)
            c.write(name, raw)
        _read_all(c.dir)


def test_a_wrong_checksum_is_detected(saved):
    path, _, _ = saved
    with _Copy(path) as c:
        sums = json.loads(c.read("checksums.json"))
        sums["w"] = (sums["w"] + 1) % 2**32
        c.write("checksums.json", json.dumps(sums).encode())
        _damaged(c, names=["Checksum mismatch", "w" + K])
        for bad in ([1, 2], "x", {"w": "0x1"}):
            c.write("checksums.json", json.dumps(bad).encode())
            _damaged(c)


_WRONG = st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False), st.text(max_size=5),
                   st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
# field of the index -> the values of the wrong form (the rest are right)
_FIELDS = {
    ("variables",): lambda v: not isinstance(v, dict),
    ("version",): lambda v: type(v) is not int or not 1 <= v <= 2,
    ("kinds",): lambda v: not (isinstance(v, dict) and all(isinstance(x, str) for x in v.values())),
    ("aliases",): lambda v: not (isinstance(v, dict) and all(isinstance(x, str) for x in v.values())),
    ("checksums",): lambda v: v is not None and v != "checksums.json",
    ("variables", "w"): lambda v: True,
    ("variables", "w", "shape"): lambda v: True,
    ("variables", "w", "dtype"): lambda v: True,
    ("variables", "w", "key"): lambda v: v is not None and v != ["w"],
    ("variables", "e", "shape"): lambda v: v != [0, 2],
    ("variables", "n", "name"): lambda v: not isinstance(v, str),
    ("variables", "n", "trainable"): lambda v: not isinstance(v, bool),
}


@FUZZ
@given(data=st.data())
def test_index_fields_of_the_wrong_json_type_raise_data_loss_naming_the_field(saved, data):
    path, index, _ = saved
    field = data.draw(st.sampled_from(sorted(_FIELDS)), label="field")
    value = data.draw(_WRONG.filter(_FIELDS[field]), label="value")
    bad = copy.deepcopy(index)
    node = bad
    for part in field[:-1]:
        node = node[part]
    node[field[-1]] = value
    with _Copy(path) as c:
        c.write_index(bad)
        message = _damaged(c)
        assert repr(field[-1]) in message or field[-1] in message, message


@pytest.mark.parametrize("field", ["variables", "w", "key", "shape", "dtype"])
def test_missing_index_fields_raise_data_loss(saved, field):
    path, index, _ = saved
    bad = copy.deepcopy(index)
    if field == "variables":
        del bad["variables"]
    elif field == "w":
        bad["variables"] = []
    else:
        del bad["variables"]["w"][field]
    with _Copy(path) as c:
        c.write_index(bad)
        assert field in _damaged(c, names=[c.file(INDEX)]) or field == "w"


def test_an_index_that_is_not_a_json_object_raises_data_loss(saved):
    path, _, _ = saved
    with _Copy(path) as c:
        for text in (b"[1, 2]", b"null", b'"index"', b"{", b"\xff\xfe\x00"):
            c.write(INDEX, text)
            _damaged(c)


@FUZZ
@given(shape=st.lists(st.integers(0, 2**62), min_size=1, max_size=6).filter(lambda s: s != [2, 3]))
def test_a_huge_declared_shape_is_never_allocated(saved, shape):
    path, index, _ = saved
    bad = copy.deepcopy(index)
    bad["variables"]["w"]["shape"] = shape
    with _Copy(path) as c:
        c.write_index(bad)
        _damaged(c, names=["w" + K])


@pytest.mark.parametrize("shape", [[2**40, 2**40], [2**31, 2**31, 2**31], [1 << 62], [3]])
def test_an_entry_without_stored_value_must_be_empty(saved, shape):
    path, index, _ = saved
    bad = copy.deepcopy(index)
    bad["variables"]["e"]["shape"] = shape   # "key": null: nothing on disk, the shape would be the value
    with _Copy(path) as c:
        c.write_index(bad)
        _damaged(c, names=["size 0", c.file(INDEX)])


@pytest.mark.parametrize("dtype", ["object", "O", "str", "<U3", "V8", "datetime64", "float", "nonsense",
                                   "float64", "int32", "bfloat16"])
def test_bad_or_mismatched_dtypes_raise_data_loss(saved, dtype):
    path, index, _ = saved
    bad = copy.deepcopy(index)
    bad["variables"]["w"]["dtype"] = dtype
    with _Copy(path) as c:
        c.write_index(bad)
        _damaged(c, names=["w"])


@pytest.mark.parametrize("field,value", [
    ("checksums", "../../../etc/passwd"), ("checksums", "/etc/passwd"), ("checksums", ".."),
    ("key", ["..", "w"]), ("key", ["../../w"]), ("key", "/w"), ("key", []), ("key", [""]),
])
def test_paths_in_the_index_stay_inside_the_checkpoint(saved, field, value):
    path, index, _ = saved
    bad = copy.deepcopy(index)
    if field == "checksums":
        bad["checksums"] = value
    else:
        bad["variables"]["w"]["key"] = value
    with _Copy(path) as c:
        c.write_index(bad)
        _damaged(c, names=[c.file(INDEX)])


def test_a_key_naming_another_stored_value_is_caught(saved):
    """Well-formed but pointing at another value (int32 [3] for float32 [2, 3]): caught before reading."""
    path, index, _ = saved
    bad = copy.deepcopy(index)
    bad["variables"]["w"]["key"] = ["n"]
    with _Copy(path) as c:
        c.write_index(bad)
        _damaged(c, names=["w" + K])


# ---------------------------------------------------------------------------
# The CheckpointManager's state file
# ---------------------------------------------------------------------------

def _manager(directory, max_to_keep=1):
    return tf.train.CheckpointManager(tf.train.Checkpoint(v=tf.Variable(1.0)), directory, max_to_keep=max_to_keep)


@pytest.mark.parametrize("relative", [False, True])
def test_the_manager_never_adopts_or_deletes_paths_outside_its_directory(tmp_path, caplog, relative):
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "data.txt").write_text("keep me")
    directory = tmp_path / "ckpts"
    directory.mkdir()
    os.symlink(outside, directory / "ckpt-9")   # inside by name, outside once resolved
    named = "../precious" if relative else str(outside)
    (directory / "checkpoint").write_text(
        f'model_checkpoint_path: "{named}"\nall_model_checkpoint_paths: "{named}"\n'
        'all_model_checkpoint_paths: "ckpt-9"\n')
    with caplog.at_level(logging.WARNING, logger="tapejax"):
        manager = _manager(str(directory))
    assert "outside the manager's directory" in caplog.text and "precious" in caplog.text
    assert manager.checkpoints == [] and manager.latest_checkpoint is None
    assert manager.restore_or_initialize() is None
    for _ in range(3):
        manager.save()
    assert (outside / "data.txt").read_text() == "keep me"
    assert os.path.islink(directory / "ckpt-9")
    assert [os.path.basename(p) for p in manager.checkpoints] == ["ckpt-3"]
    assert "precious" not in (directory / "checkpoint").read_text()


def test_the_manager_keeps_adopting_its_own_checkpoints(tmp_path):
    directory = str(tmp_path / "ckpts")
    first = _manager(directory, max_to_keep=2)
    for _ in range(2):
        first.save()
    again = _manager(directory, max_to_keep=2)
    assert again.checkpoints == first.checkpoints and again.latest_checkpoint == first.latest_checkpoint
    again.save(checkpoint_number=5)
    assert [os.path.basename(p) for p in again.checkpoints] == ["ckpt-2", "ckpt-5"]
    assert not os.path.exists(os.path.join(directory, "ckpt-1"))


@pytest.mark.parametrize("text", [b"\xff\xfe\x80garbage", b'all_model_checkpoint_timestamps: "soon"\n',
                                  b"last_preserved_timestamp: x\n"])
def test_a_garbled_state_file_raises_data_loss_naming_it(tmp_path, text):
    (tmp_path / "checkpoint").write_bytes(text)
    with pytest.raises(tf.errors.DataLossError, match="checkpoint state file") as info:
        _manager(str(tmp_path))
    assert str(tmp_path / "checkpoint") in str(info.value)
