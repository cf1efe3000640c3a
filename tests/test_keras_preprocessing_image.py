"""tf.keras.preprocessing.image (Keras 3's legacy ImageDataGenerator) as TF 2.21 runs it: the
tf.data guide's flow_from_directory cells. Expected values recorded from TF 2.21 with the same code."""
import os

import numpy as np
import pytest

import tapejax as tf

Image = pytest.importorskip("PIL.Image")
pytest.importorskip("scipy.ndimage")


def _folders(tmp_path):
    rng = np.random.RandomState(0)
    for c in ["cats", "dogs"]:
        os.makedirs(tmp_path / c)
        for k in range(3):
            Image.fromarray((rng.rand(12, 10, 3) * 255).astype("uint8")).save(tmp_path / c / f"{k}.png")
    (tmp_path / "cats" / "notes.txt").write_text("x")
    return str(tmp_path)


def test_flow_from_directory_draws_and_transforms_as_keras(tmp_path, capsys):
    d = _folders(tmp_path)
    np.random.seed(3)
    gen = tf.keras.preprocessing.image.ImageDataGenerator(rescale=1. / 255, rotation_range=20, horizontal_flip=True,
                                                          zoom_range=0.1, width_shift_range=0.1)
    it = gen.flow_from_directory(d, target_size=(8, 8), batch_size=4)
    assert capsys.readouterr().out == "Found 6 images belonging to 2 classes.\n"
    x, y = next(it)
    assert (x.shape, x.dtype) == ((4, 8, 8, 3), np.float32)
    assert y.tolist() == [[0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0]]
    np.testing.assert_allclose(x[:, 3, 4, 0], [0.81877, 0.57929, 0.18287, 0.35531], atol=1e-5)
    assert it.class_indices == {'cats': 0, 'dogs': 1}
    x2, y2 = next(it)
    assert x2.shape == (2, 8, 8, 3) and y2.tolist() == [[1.0, 0.0], [1.0, 0.0]]
    assert np.random.random() == 0.22505450483983191      # NumPy's generator drawn as Keras draws it
    xa, ya = next(gen.flow(np.arange(32, dtype=np.float32).reshape(2, 4, 4, 1), np.array([5, 6]), batch_size=2,
                           seed=1))
    np.testing.assert_allclose(xa[0, :, :, 0], [[0.02347, 0.0161, 0.00774, 0.0025], [0.03921, 0.03085, 0.0225, 0.01415],
                                                [0.05396, 0.04561, 0.03726, 0.02934],
                                                [0.0554, 0.05199, 0.04857, 0.04556]], atol=1e-5)
    assert ya.tolist() == [5, 6]


def test_the_guide_wraps_it_in_from_generator(tmp_path):
    d = _folders(tmp_path)
    img_gen = tf.keras.preprocessing.image.ImageDataGenerator(rescale=1. / 255, rotation_range=20)
    ds = tf.data.Dataset.from_generator(lambda: img_gen.flow_from_directory(d, batch_size=4),
                                        output_types=(tf.float32, tf.float32), output_shapes=([4, 256, 256, 3], [4, 2]))
    images, labels = next(iter(ds))
    assert images.shape == (4, 256, 256, 3) and labels.shape == (4, 2) and images.dtype == tf.float32
