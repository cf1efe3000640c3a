"""Records TensorFlow's tf.image outputs for tests/test_io_image.py (run with TensorFlow 2.21 from the
repository root: python scripts/record_tf_image.py). TensorFlow is not a dependency of tapejax."""
import tensorflow as tf, numpy as np, json
rng = np.random.default_rng(0)
img = rng.uniform(0, 1, (5, 7, 3)).astype("float32")
batch = rng.uniform(0, 1, (2, 4, 6, 1)).astype("float32")
out = {"img": img.tolist(), "batch": batch.tolist()}
for m in ["bilinear", "nearest", "bicubic", "area", "lanczos3", "gaussian", "mitchellcubic", "lanczos5"]:
    for size in [(9, 4), (3, 11), (10, 14)]:
        for aa in [False, True]:
            try:
                r = tf.image.resize(img, size, method=m, antialias=aa)
                out[f"resize_{m}_{size[0]}x{size[1]}_{aa}"] = r.numpy().tolist()
            except Exception as e:
                print(m, aa, e)
out["resize_pad"] = tf.image.resize_with_pad(img, 8, 8).numpy().tolist()
out["resize_preserve"] = tf.image.resize(img, (10, 10), preserve_aspect_ratio=True).numpy().tolist()
out["flip_lr"] = tf.image.flip_left_right(img).numpy().tolist()
out["flip_ud"] = tf.image.flip_up_down(batch).numpy().tolist()
out["central_crop"] = tf.image.central_crop(img, 0.5).numpy().tolist()
out["crop_bb"] = tf.image.crop_to_bounding_box(img, 1, 2, 3, 4).numpy().tolist()
out["pad_bb"] = tf.image.pad_to_bounding_box(img, 1, 2, 8, 10).numpy().tolist()
out["rwcop_small"] = tf.image.resize_with_crop_or_pad(img, 3, 4).numpy().tolist()
out["rwcop_big"] = tf.image.resize_with_crop_or_pad(img, 8, 10).numpy().tolist()
out["rwcop_mixed"] = tf.image.resize_with_crop_or_pad(img, 3, 10).numpy().tolist()
u8 = (img * 255).astype("uint8")
out["u8"] = u8.tolist()
out["cid_u8_f32"] = tf.image.convert_image_dtype(u8, tf.float32).numpy().tolist()
out["cid_f32_u8"] = tf.image.convert_image_dtype(img * 1.2 - 0.1, tf.uint8, saturate=True).numpy().tolist()
out["cid_f32_u8_nosat"] = tf.image.convert_image_dtype(img, tf.uint8).numpy().tolist()
out["cid_u8_i32"] = tf.image.convert_image_dtype(u8, tf.int32).numpy().tolist()
out["cid_i32_u8"] = tf.image.convert_image_dtype(tf.constant([[0, 2**24, 2**31-1]], tf.int32), tf.uint8).numpy().tolist()
out["cid_f32_i16"] = tf.image.convert_image_dtype(img, tf.int16).numpy().tolist()
out["cid_f32_f16"] = tf.image.convert_image_dtype(img, tf.float16).numpy().astype("float32").tolist()
out["cid_i16_f32"] = tf.image.convert_image_dtype(tf.constant([[-32768, 0, 32767]], tf.int16), tf.float32).numpy().tolist()
out["gray"] = tf.image.rgb_to_grayscale(img).numpy().tolist()
out["gray_u8"] = tf.image.rgb_to_grayscale(u8).numpy().tolist()
out["g2rgb"] = tf.image.grayscale_to_rgb(tf.constant(batch)).numpy().tolist()
out["bright"] = tf.image.adjust_brightness(img, 0.3).numpy().tolist()
out["bright_u8"] = tf.image.adjust_brightness(u8, 0.3).numpy().tolist()
out["contrast"] = tf.image.adjust_contrast(img, 1.7).numpy().tolist()
out["contrast_u8"] = tf.image.adjust_contrast(u8, 1.7).numpy().tolist()
out["std"] = tf.image.per_image_standardization(img).numpy().tolist()
out["std_u8"] = tf.image.per_image_standardization(u8).numpy().tolist()
out["std_batch"] = tf.image.per_image_standardization(batch).numpy().tolist()
for k in range(-1, 5):
    out[f"rot90_{k}"] = tf.image.rot90(img, k).numpy().tolist()
out["rot90_batch"] = tf.image.rot90(batch, 1).numpy().tolist()
out["rflip_seeded"] = tf.image.stateless_random_flip_left_right(batch, seed=(1, 2)).numpy().tolist()
out["serialized"] = list(tf.io.serialize_tensor(tf.constant([[1.5, 2.0]])).numpy())
out = {k: v for k, v in out.items() if not any(m in k for m in ("_area_", "_gaussian_", "_mitchellcubic_"))}


def _f32(v):
    if isinstance(v, list):
        return [_f32(x) for x in v]
    return float(np.format_float_positional(np.float32(v), unique=True)) if isinstance(v, float) else v


json.dump({k: _f32(v) for k, v in out.items()}, open("tests/data/tf_image_2.21.json", "w"), separators=(",", ":"))
