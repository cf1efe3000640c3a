"""Writes the small file fixtures of tests/test_data_files.py with TensorFlow 2.21.

Run with a Python that has TensorFlow (it is not a dependency): ``python scripts/make_data_fixtures.py``.
The TFRecord files are TensorFlow's own output, so the tests check tapejax's reader against it.
"""
import gzip
import os

import numpy as np
import tensorflow as tf

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "data")


def path(name):
    return os.path.join(HERE, name)


RECORDS = [b"", b"a", b"hello world", bytes(range(256)),
           np.random.default_rng(0).integers(0, 256, 9000, dtype=np.uint8).tobytes()]

with tf.io.TFRecordWriter(path("records.tfrecord")) as w:
    for r in RECORDS:
        w.write(r)
with tf.io.TFRecordWriter(path("records_gzip.tfrecord"), tf.io.TFRecordOptions(compression_type="GZIP")) as w:
    for r in [b"g0", b"g1", b"g2"]:
        w.write(r)
with tf.io.TFRecordWriter(path("records_zlib.tfrecord"), "ZLIB") as w:
    for r in [b"z0", b"z1"]:
        w.write(r)

with open(path("lines_a.txt"), "wb") as f:
    f.write(b"alpha\nbeta\n\ngamma\r\ndelta")
with open(path("lines_b.txt"), "wb") as f:
    f.write(b"one\ntwo\n")
with gzip.GzipFile(path("lines_c.txt.gz"), "wb", mtime=0) as f:
    f.write(b"x1\nx2\n")

with open(path("people.csv"), "w") as f:
    f.write('name,age,height,city,label\n'
            '"Smith, John",34,1.82,Paris,1\n'
            'Ann,,1.65,"say ""hi""",0\n'
            'Bob,27,,Berlin,1\n'
            'Eve,45,1.70,,0\n'
            'Zed,51,1.91,Oslo,1\n')
with open(path("people_more.csv"), "w") as f:
    f.write('name,age,height,city,label\n'
            'Kim,19,1.60,Rome,0\n'
            'Lou,62,1.75,Lima,1\n')
