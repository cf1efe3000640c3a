"""tf.io (files, gfile, codecs, serialize_tensor) and tf.image, against TensorFlow 2.21's recorded
outputs (tests/data/tf_image_2.21.json, written by scripts/record_tf_image.py)."""
import json
import os
import pathlib

import numpy as np
import pytest

import tapejax as tf
from conftest import assert_close

DATA = json.loads((pathlib.Path(__file__).parent / "data" / "tf_image_2.21.json").read_text())
IMG = np.array(DATA["img"], np.float32)        # [5, 7, 3]
BATCH = np.array(DATA["batch"], np.float32)    # [2, 4, 6, 1]
U8 = np.array(DATA["u8"], np.uint8)


def want(key, dtype=None):
    return np.array(DATA[key], dtype)


# ---------------------------------------------------------------- resize

RESIZE_KEYS = [k for k in DATA if k.startswith("resize_") and k.count("_") == 3]


@pytest.mark.parametrize("key", RESIZE_KEYS)
def test_resize_matches_tensorflow(key):
    _, method, size, aa = key.split("_")
    h, w = map(int, size.split("x"))
    out = tf.image.resize(IMG, [h, w], method=method, antialias=aa == "True")
    assert out.dtype == tf.float32 and out.shape == (h, w, 3)
    assert_close(out, want(key), rtol=0, atol=1e-5)


def test_resize_batches_dtypes_and_options():
    # A batch resizes image by image.
    out = tf.image.resize(np.stack([IMG, IMG[::-1]]), [9, 4])
    assert_close(out[1], tf.image.resize(IMG[::-1], [9, 4]), atol=1e-6)
    # nearest keeps the dtype; the other methods give float32, also for uint8 and float64 inputs.
    assert tf.image.resize(U8, [3, 3], method="nearest").dtype == tf.uint8
    assert tf.image.resize(U8, [3, 3]).dtype == tf.float32
    assert tf.image.resize(IMG.astype(np.float64), [3, 3]).dtype == tf.float32
    assert_close(tf.image.resize(IMG, [10, 10], preserve_aspect_ratio=True), want("resize_preserve"), atol=1e-5)
    assert_close(tf.image.resize_with_pad(IMG, 8, 8), want("resize_pad"), atol=1e-5)
    assert tf.image.resize(IMG, [2, 2], method=tf.image.ResizeMethod.BICUBIC).shape == (2, 2, 3)
    with pytest.raises(ValueError, match="Resize method is not implemented: foo"):
        tf.image.resize(IMG, [3, 3], method="foo")
    with pytest.raises(NotImplementedError, match="'area'"):
        tf.image.resize(IMG, [3, 3], method="area")
    with pytest.raises(ValueError, match="3 or 4 dimensions"):
        tf.image.resize(IMG[0], [3, 3])


def test_resize_is_differentiable_and_works_in_functions():
    x = tf.Variable(IMG)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.image.resize(x, [10, 14]))
    g = tape.gradient(y, x)
    # Each output pixel's weights sum to 1, so the gradient sums to the number of outputs.
    assert_close(tf.reduce_sum(g), 10 * 14 * 3, rtol=1e-5)
    f = tf.function(lambda t: tf.image.resize(t, [9, 4], method="bicubic"))
    assert_close(f(tf.constant(IMG)), want("resize_bicubic_9x4_False"), atol=1e-5)


# ---------------------------------------------------------------- geometry

def test_flips_rotations_crops_and_pads():
    assert_close(tf.image.flip_left_right(IMG), want("flip_lr"))
    assert_close(tf.image.flip_up_down(BATCH), want("flip_ud"))
    for k in range(-1, 5):
        assert_close(tf.image.rot90(IMG, k), want(f"rot90_{k}"))
    assert_close(tf.image.rot90(BATCH, 1), want("rot90_batch"))
    assert_close(tf.image.central_crop(IMG, 0.5), want("central_crop"))
    assert_close(tf.image.crop_to_bounding_box(IMG, 1, 2, 3, 4), want("crop_bb"))
    assert_close(tf.image.pad_to_bounding_box(IMG, 1, 2, 8, 10), want("pad_bb"))
    assert_close(tf.image.resize_with_crop_or_pad(IMG, 3, 4), want("rwcop_small"))
    assert_close(tf.image.resize_with_crop_or_pad(IMG, 8, 10), want("rwcop_big"))
    assert_close(tf.image.resize_with_crop_or_pad(IMG, 3, 10), want("rwcop_mixed"))


def test_geometry_errors_are_tensorflows():
    with pytest.raises(ValueError, match=r"central_fraction must be within \(0, 1\]"):
        tf.image.central_crop(IMG, 0.0)
    with pytest.raises(ValueError, match="height must be >= target \\+ offset."):
        tf.image.crop_to_bounding_box(IMG, 3, 2, 3, 4)
    with pytest.raises(ValueError, match="offset_width must be >= 0"):
        tf.image.pad_to_bounding_box(IMG, 0, -1, 8, 10)
    with pytest.raises(ValueError, match="width must be <= target - offset"):
        tf.image.pad_to_bounding_box(IMG, 0, 0, 8, 5)


def test_random_flips():
    # The stateless flips equal TensorFlow's for the same seed.
    assert_close(tf.image.stateless_random_flip_left_right(BATCH, seed=(1, 2)), want("rflip_seeded"))
    # Seeded stateful flips repeat after tf.random.set_seed, and each image is itself or its mirror.
    batch = np.arange(64, dtype=np.float32).reshape(16, 1, 4, 1)
    tf.random.set_seed(3)
    a = tf.image.random_flip_left_right(batch, seed=5).numpy()
    tf.random.set_seed(3)
    b = tf.image.random_flip_left_right(batch, seed=5).numpy()
    assert_close(a, b)
    flipped = [np.array_equal(a[i], batch[i, :, ::-1]) for i in range(16)]
    kept = [np.array_equal(a[i], batch[i]) for i in range(16)]
    assert all(f or k for f, k in zip(flipped, kept)) and any(flipped) and any(kept)
    up = tf.image.random_flip_up_down(IMG, seed=1).numpy()
    assert np.array_equal(up, IMG) or np.array_equal(up, IMG[::-1])


# ---------------------------------------------------------------- dtypes and colour

def test_convert_image_dtype_matches_tensorflow():
    assert_close(tf.image.convert_image_dtype(U8, tf.float32), want("cid_u8_f32", np.float32), rtol=0, atol=0)
    out = tf.image.convert_image_dtype(IMG * 1.2 - 0.1, tf.uint8, saturate=True)
    assert out.dtype == tf.uint8 and np.array_equal(out.numpy(), want("cid_f32_u8"))
    assert np.array_equal(tf.image.convert_image_dtype(IMG, tf.uint8).numpy(), want("cid_f32_u8_nosat"))
    assert np.array_equal(tf.image.convert_image_dtype(U8, tf.int32).numpy(), want("cid_u8_i32"))
    big = tf.constant([[0, 2 ** 24, 2 ** 31 - 1]], tf.int32)
    assert np.array_equal(tf.image.convert_image_dtype(big, tf.uint8).numpy(), want("cid_i32_u8"))
    assert np.array_equal(tf.image.convert_image_dtype(IMG, tf.int16).numpy(), want("cid_f32_i16"))
    assert_close(tf.image.convert_image_dtype(IMG, tf.float16).numpy().astype(np.float32), want("cid_f32_f16", np.float32),
                 rtol=0, atol=0)
    i16 = tf.constant([[-32768, 0, 32767]], tf.int16)
    assert_close(tf.image.convert_image_dtype(i16, tf.float32), want("cid_i16_f32", np.float32), rtol=0, atol=0)
    x = tf.constant(IMG)
    assert tf.image.convert_image_dtype(x, tf.float32) is not None


def test_colour_adjustments_match_tensorflow():
    assert_close(tf.image.rgb_to_grayscale(IMG), want("gray"), atol=1e-6)
    assert np.array_equal(tf.image.rgb_to_grayscale(U8).numpy(), want("gray_u8"))
    assert_close(tf.image.grayscale_to_rgb(BATCH), want("g2rgb"))
    assert_close(tf.image.adjust_brightness(IMG, 0.3), want("bright"), atol=1e-6)
    assert np.array_equal(tf.image.adjust_brightness(U8, 0.3).numpy(), want("bright_u8"))
    assert_close(tf.image.adjust_contrast(IMG, 1.7), want("contrast"), atol=1e-6)
    assert np.array_equal(tf.image.adjust_contrast(U8, 1.7).numpy(), want("contrast_u8"))
    assert_close(tf.image.per_image_standardization(IMG), want("std"), atol=1e-5)
    out = tf.image.per_image_standardization(U8)
    assert out.dtype == tf.float32
    assert_close(out, want("std_u8"), atol=1e-5)
    assert_close(tf.image.per_image_standardization(BATCH), want("std_batch"), atol=1e-5)


def test_colour_ops_have_gradients_where_tf_has_them():
    x = tf.Variable(IMG)
    with tf.GradientTape(persistent=True) as tape:
        y = tf.reduce_sum(tf.image.adjust_brightness(tf.image.rgb_to_grayscale(x), 0.1) ** 2)
        z = tf.reduce_sum(tf.image.adjust_contrast(x, 2.0))
    g = tape.gradient(y, x)
    assert g.shape == IMG.shape and np.all(np.isfinite(g.numpy())) and np.abs(g.numpy()).sum() > 0
    with pytest.raises(LookupError, match="AdjustContrastv2"):     # TF 2.21: no registered gradient
        tape.gradient(z, x)


# ---------------------------------------------------------------- tf.io

def test_read_and_write_file(tmp_path):
    path = tmp_path / "sub" / "f.bin"
    tf.io.write_file(str(path), b"\x00\x01abc")
    assert path.read_bytes() == b"\x00\x01abc"
    assert tf.io.read_file(str(path)).numpy() == b"\x00\x01abc"
    tf.io.write_file(path, tf.io.read_file(path))      # a read string tensor writes back
    assert path.read_bytes() == b"\x00\x01abc"
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        tf.io.read_file(str(tmp_path / "missing"))
    with pytest.raises(tf.errors.UnimplementedError, match="gs"):
        tf.io.read_file("gs://bucket/file")


def test_gfile(tmp_path):
    g = tf.io.gfile
    d = str(tmp_path / "a" / "b")
    g.makedirs(d)
    assert g.exists(d) and g.isdir(d)
    with g.GFile(os.path.join(d, "x.txt"), "w") as f:
        f.write("one\ntwo\n")
    with g.GFile(os.path.join(d, "x.txt")) as f:
        assert [line for line in f] == ["one\n", "two\n"]
    with g.GFile(os.path.join(d, "y.bin"), "wb") as f:
        f.write(b"\xff")
    assert sorted(g.listdir(d)) == ["x.txt", "y.bin"]
    assert g.glob(os.path.join(d, "*.txt")) == [os.path.join(d, "x.txt")]
    g.copy(os.path.join(d, "x.txt"), os.path.join(d, "z.txt"))
    with pytest.raises(tf.errors.AlreadyExistsError):
        g.copy(os.path.join(d, "x.txt"), os.path.join(d, "z.txt"))
    g.copy(os.path.join(d, "y.bin"), os.path.join(d, "z.txt"), overwrite=True)
    g.rename(os.path.join(d, "z.txt"), os.path.join(d, "w.bin"))
    assert sorted(g.listdir(d)) == ["w.bin", "x.txt", "y.bin"]
    g.remove(os.path.join(d, "w.bin"))
    assert not g.exists(os.path.join(d, "w.bin"))
    with pytest.raises(tf.errors.NotFoundError):
        g.remove(os.path.join(d, "w.bin"))
    with pytest.raises(tf.errors.NotFoundError):
        g.GFile(os.path.join(d, "nope"))
    with pytest.raises(tf.errors.NotFoundError):
        g.listdir(str(tmp_path / "nope"))
    assert [w[0] for w in g.walk(str(tmp_path / "a"))] == [str(tmp_path / "a"), d]
    g.rmtree(str(tmp_path / "a"))
    assert not g.exists(str(tmp_path / "a"))


def test_serialize_and_parse_tensor():
    # The bytes TensorFlow 2.21 writes for tf.constant([[1.5, 2.0]]).
    assert tf.io.serialize_tensor(tf.constant([[1.5, 2.0]])).numpy() == bytes(DATA["serialized"])
    for value in (np.arange(6, dtype=np.int32).reshape(2, 3), np.float64(3.25), np.array([True, False]),
                  np.zeros((0, 2), np.float32), np.array([[1 + 2j]], np.complex64), np.uint8([7, 255])):
        s = tf.io.serialize_tensor(value)
        back = tf.io.parse_tensor(s, tf.as_dtype(value.dtype))
        assert back.dtype == tf.as_dtype(value.dtype) and back.shape == np.shape(value)
        assert np.array_equal(back.numpy(), value)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Type mismatch between parsed tensor \(float\) "
                                                              r"and dtype \(int32\)"):
        tf.io.parse_tensor(tf.io.serialize_tensor(tf.constant(1.0)), tf.int32)


def test_image_codecs_round_trip():
    pytest.importorskip("PIL")
    png = tf.io.encode_png(U8)
    assert png.numpy()[:8] == b"\x89PNG\r\n\x1a\n"
    assert np.array_equal(tf.io.decode_png(png).numpy(), U8)
    assert np.array_equal(tf.io.decode_image(png).numpy(), U8)
    assert_close(tf.io.decode_image(png, dtype=tf.float32), U8 / 255.0, atol=1e-7)
    gray = tf.io.decode_png(png, channels=1)
    assert gray.shape == (5, 7, 1)
    rgba = tf.io.decode_png(png, channels=4)
    assert rgba.shape == (5, 7, 4) and np.all(rgba.numpy()[..., 3] == 255)
    smooth = np.tile(np.linspace(0, 255, 16, dtype=np.uint8)[None, :, None], (16, 1, 3))
    jpg = tf.io.encode_jpeg(smooth, quality=95)
    assert bool(tf.io.is_jpeg(jpg)) and not bool(tf.io.is_jpeg(png))
    dec = tf.io.decode_jpeg(jpg).numpy()
    assert dec.shape == (16, 16, 3) and np.abs(dec.astype(int) - smooth).max() <= 6
    with pytest.raises(tf.errors.InvalidArgumentError, match="corrupt"):
        tf.io.decode_png(b"not an image")


def test_string_scalar_repr_keeps_trailing_nul_bytes():
    # The tf.io.serialize_tensor docstring, recorded from TF 2.21: the repr shows every byte
    # (NumPy's fixed-width bytes scalar dropped the trailing b'\x00's).
    assert repr(tf.io.serialize_tensor(tf.constant(1))) == \
        "<tf.Tensor: shape=(), dtype=string, numpy=b'\\x08\\x03\\x12\\x00\"\\x04\\x01\\x00\\x00\\x00'>"
    assert repr(tf.constant(b"a\x00")) == "<tf.Tensor: shape=(), dtype=string, numpy=b'a\\x00'>"


def test_gfile_glob_patterns_and_iterables_as_tf(tmp_path, monkeypatch):
    # The tf.io.gfile.glob docstring and TF 2.21's paths (recorded): an iterable of patterns, './'
    # before matches of a pattern with no directory, a wildcard-free pattern as given.
    for name in ("a.py", "b.py", "c.txt"):
        (tmp_path / name).write_text("")
    monkeypatch.chdir(tmp_path)
    assert tf.io.gfile.glob("*.py") == ["./a.py", "./b.py"]
    assert tf.io.gfile.glob(iter({"*.txt"})) == ["./c.txt"]
    assert tf.io.gfile.glob(["*.txt", "*.py"]) == ["./c.txt", "./a.py", "./b.py"]
    assert tf.io.gfile.glob("a.py") == ["a.py"] and tf.io.gfile.glob("zz.py") == []
    assert tf.io.gfile.glob(str(tmp_path / "*.py")) == [str(tmp_path / "a.py"), str(tmp_path / "b.py")]
    monkeypatch.chdir(tmp_path.parent)
    assert tf.io.gfile.glob(tmp_path.name + "/*.py") == [tmp_path.name + "/a.py", tmp_path.name + "/b.py"]
