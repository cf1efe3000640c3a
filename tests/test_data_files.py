"""tf.data file datasets and tf.io TFRecord files, against TensorFlow 2.21.

The fixtures in tests/data/ were written by TensorFlow (scripts/make_data_fixtures.py); the
expected values below are TensorFlow 2.21's printed outputs on them. String elements are
read through ``as_numpy_iterator`` or ``py()`` (``.numpy()`` where the element has it), so
the tests hold whether strings are NumPy arrays or string tensors.
"""
import collections
import gzip
import hashlib
import os
import shutil

import numpy as np
import pytest

import tapejax as tf
from tapejax.io import crc32c

Dataset = tf.data.Dataset
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
STRING_SPEC = "TensorSpec(shape=(), dtype=tf.string, name=None)"


def data(name):
    return os.path.join(DATA, name)


def py(x):
    """A string element as bytes (a Python value), whatever it is held in."""
    if hasattr(x, "numpy"):
        x = x.numpy()
    a = np.asarray(x)
    return a.item() if a.ndim == 0 else a.tolist()


def rows(ds):
    return list(ds.as_numpy_iterator())


# ---------------------------------------------------------------------------
# CRC32-C and TFRecord files
# ---------------------------------------------------------------------------

def test_crc32c_check_values():
    # The standard check value and RFC 3720 (iSCSI) B.4's test vectors.
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"") == 0
    assert crc32c(bytes(32)) == 0x8A9136AA
    assert crc32c(b"\xff" * 32) == 0x62A8AB43
    assert crc32c(bytes(range(32))) == 0x46DD794E
    assert crc32c(bytes(range(31, -1, -1))) == 0x113FDB5C


@pytest.mark.parametrize("n", [8191, 8192, 8193, 10007, 100_000, 1 << 20])
def test_crc32c_lanes_equal_the_bytewise_loop(n):
    from tapejax.io import _crc_python
    payload = np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8).tobytes()
    assert crc32c(payload) == _crc_python(payload, 0xFFFFFFFF) ^ 0xFFFFFFFF


def test_tfrecord_dataset_reads_tensorflows_file():
    ds = tf.data.TFRecordDataset([data("records.tfrecord")])
    assert repr(ds) == f"<TFRecordDatasetV2 element_spec={STRING_SPEC}>"
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    records = rows(ds)
    assert [len(r) for r in records] == [0, 1, 11, 256, 9000]
    assert records[:4] == [b"", b"a", b"hello world", bytes(range(256))]
    assert hashlib.sha256(records[4]).hexdigest() == \
        "9572328a5a9e2f7349d631860b1eb7eb19f94d07bae6e98f303cde886082c8ea"
    assert all(isinstance(r, bytes) for r in records)
    assert py(next(iter(ds.skip(2)))) == b"hello world"
    assert rows(tf.data.TFRecordDataset(data("records_gzip.tfrecord"), "GZIP")) == [b"g0", b"g1", b"g2"]
    assert rows(tf.data.TFRecordDataset(data("records_zlib.tfrecord"), compression_type="ZLIB")) == [b"z0", b"z1"]
    # TF 2.21: two files read in parallel interleave record by record.
    both = tf.data.TFRecordDataset([data("records_gzip.tfrecord")] * 2, "GZIP", num_parallel_reads=2)
    assert rows(both) == [b"g0", b"g0", b"g1", b"g1", b"g2", b"g2"]


@pytest.mark.parametrize("damage, message", [
    (lambda raw: raw[:30] + bytes([raw[30] ^ 1]) + raw[31:], "corrupted record at 28"),
    (lambda raw: bytes([raw[0] ^ 4]) + raw[1:], r"corrupted record at 0 \(Is this even a TFRecord file\?\)"),
    (lambda raw: raw[:-3], "truncated record at 332"),
    (lambda raw: raw[:-9000 - 4 - 12 + 5], "truncated record at 332"),  # ends inside a header
])
def test_tfrecord_damage_raises_data_loss_error(tmp_path, damage, message):
    # TF 2.21's messages on the same damage (TF stops silently at a partial header; tapejax raises).
    raw = open(data("records.tfrecord"), "rb").read()
    path = tmp_path / "bad.tfrecord"
    path.write_bytes(damage(raw))
    with pytest.raises(tf.errors.DataLossError, match=message):
        rows(tf.data.TFRecordDataset(str(path)))


def test_tfrecord_writer_writes_tensorflows_bytes(tmp_path):
    records = rows(tf.data.TFRecordDataset(data("records.tfrecord")))
    path = tmp_path / "out.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as w:
        for r in records:
            w.write(r)
    assert path.read_bytes() == open(data("records.tfrecord"), "rb").read()
    for options in ["GZIP", tf.io.TFRecordOptions(compression_type="ZLIB"), tf.io.TFRecordOptions("GZIP")]:
        w = tf.io.TFRecordWriter(str(path), options)
        w.write("text is UTF-8")
        w.write(b"\x00bytes")
        w.flush()
        w.close()
        kind = tf.io.TFRecordOptions.get_compression_type_string(options)
        assert rows(tf.data.TFRecordDataset(str(path), kind)) == [b"text is UTF-8", b"\x00bytes"]
    assert gzip.open(str(path)).read(8)  # the GZIP file is a real gzip stream
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unsupported compression_type 'LZ4'"):
        tf.io.TFRecordOptions("LZ4")


def test_reader_errors_name_the_problem(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="nope.tfrecord; No such file or directory"):
        rows(tf.data.TFRecordDataset(str(tmp_path / "nope.tfrecord")))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Unsupported compression_type 'BAD'"):
        tf.data.TextLineDataset(data("lines_a.txt"), compression_type="BAD")
    with pytest.raises(TypeError, match=r"must contain `tf.string` elements. Got a dataset of `tf.int64`"):
        tf.data.TextLineDataset(Dataset.range(3))
    with pytest.raises(TypeError, match="must contain `tf.string` elements"):
        tf.data.TFRecordDataset([1, 2])


# ---------------------------------------------------------------------------
# Text lines, fixed-length records, list_files
# ---------------------------------------------------------------------------

def test_text_line_dataset_matches_tensorflow():
    ds = tf.data.TextLineDataset([data("lines_a.txt"), data("lines_b.txt")])
    assert repr(ds) == f"<TextLineDatasetV2 element_spec={STRING_SPEC}>"
    assert int(ds.cardinality()) == -2
    # TF 2.21: '\r\n' endings lose the '\r' too; an empty line is an element; no final newline needed.
    assert rows(ds) == [b"alpha", b"beta", b"", b"gamma", b"delta", b"one", b"two"]
    assert py(next(iter(ds))) == b"alpha"
    assert rows(tf.data.TextLineDataset(data("lines_c.txt.gz"), compression_type="GZIP")) == [b"x1", b"x2"]
    files = Dataset.from_tensor_slices([data("lines_b.txt"), data("lines_a.txt")])
    assert rows(tf.data.TextLineDataset(files))[:3] == [b"one", b"two", b"alpha"]
    parallel = tf.data.TextLineDataset([data("lines_a.txt"), data("lines_b.txt")], num_parallel_reads=2)
    assert rows(parallel) == [b"alpha", b"one", b"beta", b"two", b"", b"gamma", b"delta"]  # TF 2.21's order
    import pathlib
    assert rows(tf.data.TextLineDataset(pathlib.Path(data("lines_b.txt")))) == [b"one", b"two"]
    # Lines batch into a string vector.
    batch = next(iter(tf.data.TextLineDataset(data("lines_b.txt")).batch(2)))
    assert py(batch) == [b"one", b"two"]


def test_fixed_length_record_dataset():
    ds = tf.data.FixedLengthRecordDataset(data("lines_b.txt"), 3, header_bytes=1, footer_bytes=1)
    assert repr(ds) == f"<FixedLengthRecordDatasetV2 element_spec={STRING_SPEC}>"
    assert rows(ds) == [b"ne\n", b"two"]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"body length 8 bytes, which is not an exact "
                                                             r"multiple of the record length \(3 bytes\)"):
        rows(tf.data.FixedLengthRecordDataset(data("lines_b.txt"), 3))


def test_list_files_sorts_then_shuffles_by_default():
    txt = [data("lines_a.txt").encode(), data("lines_b.txt").encode()]
    fixed = Dataset.list_files(data("*.txt"), shuffle=False)
    assert rows(fixed) == txt and int(fixed.cardinality()) == 2
    assert repr(fixed) == f"<_TensorSliceDataset element_spec={STRING_SPEC}>"   # recorded from TF 2.21
    # Several patterns: one sorted list, as TF's MatchingFiles.
    assert rows(Dataset.list_files([data("lines_b*.txt"), data("lines_a*")], shuffle=False)) == txt
    everything = sorted(f.encode() for f in (data(n) for n in os.listdir(DATA)) if "lines" in f)
    orders = {tuple(rows(Dataset.list_files(data("lines*"), seed=s))) for s in range(12)}
    assert all(sorted(o) == everything for o in orders)
    assert len(orders) > 1                             # shuffled by default, the seed picks the order
    seeded = Dataset.list_files(data("lines*"), seed=3)
    assert rows(Dataset.list_files(data("lines*"), seed=3)) == rows(seeded)
    with pytest.raises(tf.errors.InvalidArgumentError, match="No files matched pattern: .*zzz"):
        Dataset.list_files(data("*.zzz"))


def test_list_files_feeds_a_reader_with_interleave(tmp_path):
    for i in range(3):
        (tmp_path / f"part{i}.txt").write_text("".join(f"{i}-{j}\n" for j in range(2)))
    files = Dataset.list_files(str(tmp_path / "*.txt"), shuffle=False)
    ds = files.interleave(tf.data.TextLineDataset, cycle_length=3, num_parallel_calls=tf.data.AUTOTUNE)
    assert rows(ds) == [b"0-0", b"1-0", b"2-0", b"0-1", b"1-1", b"2-1"]


# ---------------------------------------------------------------------------
# CSV
# ---------------------------------------------------------------------------

def test_csv_dataset_matches_tensorflow():
    defaults = [tf.string, [np.int32(-1)], [0.5], ["?"], tf.int64]
    ds = tf.data.experimental.CsvDataset(data("people.csv"), defaults, header=True)
    spec = ", ".join(f"TensorSpec(shape=(), dtype=tf.{t}, name=None)"
                     for t in ["string", "int32", "float32", "string", "int64"])
    assert repr(ds) == f"<CsvDatasetV2 element_spec=({spec})>"
    got = rows(ds)
    assert got == [(b"Smith, John", 34, np.float32(1.82), b"Paris", 1),
                   (b"Ann", -1, np.float32(1.65), b'say "hi"', 0),
                   (b"Bob", 27, np.float32(0.5), b"Berlin", 1),
                   (b"Eve", 45, np.float32(1.7), b"?", 0),
                   (b"Zed", 51, np.float32(1.91), b"Oslo", 1)]
    assert [np.asarray(v).dtype for v in got[0][1:3]] == [np.int32, np.float32]
    assert np.asarray(got[0][4]).dtype == tf.int64.as_numpy_dtype
    picked = tf.data.experimental.CsvDataset(data("people.csv"), [tf.constant([-1], tf.int32), [""]], header=True,
                                             select_cols=[1, 3])
    assert rows(picked) == [(34, b"Paris"), (-1, b'say "hi"'), (27, b"Berlin"), (45, b""), (51, b"Oslo")]
    excluded = tf.data.experimental.CsvDataset(data("people.csv"), [tf.string, [0]], header=True,
                                               exclude_cols=[1, 2, 3])
    assert rows(excluded)[0] == (b"Smith, John", 1)


def test_csv_dataset_errors_match_tensorflow():
    required = [tf.string, tf.int32, tf.float32, tf.string, tf.int64]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Field 1 is required but missing in record!"):
        rows(tf.data.experimental.CsvDataset(data("people.csv"), required, header=True))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Field 1 in record is not a valid int32: age"):
        rows(tf.data.experimental.CsvDataset(data("people.csv"), required, header=False))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expect 3 fields but have 5"):
        rows(tf.data.experimental.CsvDataset(data("people.csv"), [tf.string] * 3, header=True))
    with pytest.raises(TypeError, match="float32, float64, int32, int64 or string"):
        tf.data.experimental.CsvDataset(data("people.csv"), [tf.bool])


def test_make_csv_dataset_matches_tensorflow():
    ds = tf.data.experimental.make_csv_dataset(data("people.csv"), batch_size=2, label_name="label",
                                               shuffle=False, num_epochs=1)
    col = "TensorSpec(shape=(None,), dtype=tf.{}, name=None)"
    # Python's repr of the OrderedDict (3.12 writes OrderedDict({...})), as TensorFlow prints it
    spec = collections.OrderedDict([("name", "S"), ("age", "I"), ("height", "F"), ("city", "S")])
    want = "(" + repr(spec) + f", {col.format('int32')})"
    for k, dt in (("'S'", "string"), ("'I'", "int32"), ("'F'", "float32")):
        want = want.replace(k, col.format(dt))
    assert repr(ds.element_spec) == want
    got = rows(ds)
    assert [type(f) for f, _ in got] == [collections.OrderedDict] * 3
    assert [list(f) for f, _ in got][0] == ["name", "age", "height", "city"]
    first, label = got[0]
    assert first["name"].tolist() == [b"Smith, John", b"Ann"] and first["name"].dtype == object
    np.testing.assert_array_equal(first["age"], np.array([34, 0], np.int32))      # missing int -> 0
    assert first["age"].dtype == np.int32 and first["height"].dtype == np.float32
    np.testing.assert_array_equal(got[1][0]["height"], np.array([0.0, 1.7], np.float32))
    assert got[1][0]["city"].tolist() == [b"Berlin", b""]
    assert [lab.tolist() for _, lab in got] == [[1, 0], [1, 0], [1]]
    # Tensors, when iterated (the features dict keeps its order).
    features, label = next(iter(ds))
    assert list(features) == ["name", "age", "height", "city"] and label.dtype == tf.int32

    # select_columns keeps file order; two files, two epochs, no shuffling: TF 2.21's batches.
    two = tf.data.experimental.make_csv_dataset(data("people*.csv"), batch_size=3, select_columns=["age", "name"],
                                                shuffle=False, num_epochs=2)
    assert [(f["name"].tolist(), f["age"].tolist()) for f in rows(two)] == [
        ([b"Smith, John", b"Ann", b"Bob"], [34, 0, 27]), ([b"Eve", b"Zed", b"Kim"], [45, 51, 19]),
        ([b"Lou", b"Smith, John", b"Ann"], [62, 34, 0]), ([b"Bob", b"Eve", b"Zed"], [27, 45, 51]),
        ([b"Kim", b"Lou"], [19, 62])]

    forever = tf.data.experimental.make_csv_dataset(data("people.csv"), batch_size=4, shuffle=False)
    assert int(forever.cardinality()) == tf.data.INFINITE_CARDINALITY
    assert [s.shape.as_list() for s in forever.element_spec.values()] == [[4]] * 5    # drop_remainder
    assert [f["age"].tolist() for f in rows(forever.take(3))] == [[34, 0, 27, 45], [51, 34, 0, 27], [45, 51, 34, 0]]
    once = tf.data.experimental.make_csv_dataset(data("people.csv"), batch_size=4, shuffle=False, num_epochs=1)
    assert int(once.cardinality()) == tf.data.UNKNOWN_CARDINALITY

    given = tf.data.experimental.make_csv_dataset(data("people.csv"), batch_size=5, label_name="label",
                                                  column_defaults=["", 0, 0.0, "?", 0], shuffle=False, num_epochs=1)
    (f, label), = rows(given)
    assert f["city"].tolist() == [b"Paris", b'say "hi"', b"Berlin", b"?", b"Oslo"] and label.tolist() == [1, 0, 1, 0, 1]


def test_make_csv_dataset_shuffles_rows_by_default():
    ds = tf.data.experimental.make_csv_dataset(data("people*.csv"), batch_size=7, num_epochs=1, shuffle_seed=1)
    names = [n for f in rows(ds) for n in f["name"].tolist()]
    assert sorted(names) == sorted([b"Smith, John", b"Ann", b"Bob", b"Eve", b"Zed", b"Kim", b"Lou"])
    orders = {tuple(n for f in rows(tf.data.experimental.make_csv_dataset(
        data("people*.csv"), batch_size=7, num_epochs=1, shuffle_seed=s)) for n in f["name"].tolist())
        for s in range(6)}
    assert len(orders) > 1


def test_make_csv_dataset_errors_match_tensorflow(tmp_path):
    make = tf.data.experimental.make_csv_dataset
    with pytest.raises(ValueError, match=r"`label_name` provided must be one of the columns: \['name', 'age', "
                                         r"'height', 'city', 'label'\]. Received: nope."):
        make(data("people.csv"), batch_size=2, label_name="nope")
    with pytest.raises(ValueError, match="No files match `file_pattern`"):
        make(data("nothing*.csv"), batch_size=2)
    with pytest.raises(ValueError, match="Expected `column_names` or `header`"):
        make(data("people.csv"), batch_size=2, header=False)
    with pytest.raises(ValueError, match="must be of one of the columns"):
        make(data("people.csv"), batch_size=2, select_columns=["zzz"])
    other = tmp_path / "other.csv"
    shutil.copy(data("people.csv"), tmp_path / "a.csv")
    other.write_text("name,age\nx,1\n")
    with pytest.raises(ValueError, match="same column names"):
        make(str(tmp_path / "*.csv"), batch_size=2)


def test_snapshot_keeps_the_elements_and_prints_as_tensorflow(tmp_path):
    """csv tutorial cell 40 (``Dataset.snapshot`` was missing). TF 2.21: the same elements and
    cardinality, printed as a ``_MapDataset``."""
    import tapejax as tf
    ds = tf.data.Dataset.range(3).snapshot(str(tmp_path / "snap"))
    assert repr(ds) == "<_MapDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    assert [int(x) for x in ds.repeat(2)] == [0, 1, 2, 0, 1, 2] and int(ds.cardinality()) == 3
    with pytest.raises(NotImplementedError, match="reader_func and shard_func"):
        tf.data.Dataset.range(3).snapshot(str(tmp_path), reader_func=lambda d: d)
