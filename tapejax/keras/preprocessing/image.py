"""tf.keras.preprocessing.image: Keras 3's legacy ``ImageDataGenerator`` (deprecated in Keras,
still in TF 2.21), ``load_img`` and ``img_to_array``.

A port of ``keras/src/legacy/preprocessing/image.py`` (Apache 2.0) for channels-last images:
the same directory listing, batches, NumPy random draws (``np.random``, so a seeded program
draws what Keras draws) and affine transforms (``scipy.ndimage``, needed only for rotations,
shifts, shears and zooms). Featurewise statistics and ZCA whitening (``fit``) are not provided.
"""
import io as _pyio
import os
import threading

import numpy as np

_FORMATS = ("png", "jpg", "jpeg", "bmp", "ppm", "tif", "tiff")
_INTERPOLATION = {"nearest": 0, "bilinear": 2, "bicubic": 3, "hamming": 5, "box": 4, "lanczos": 1}


def load_img(path, color_mode="rgb", target_size=None, interpolation="nearest", keep_aspect_ratio=False):
    """Loads an image file as a PIL image (Keras's ``load_img``; needs Pillow).

    Example:
        >>> import os, tempfile, numpy as np, tapejax as tf
        >>> from PIL import Image
        >>> p = os.path.join(tempfile.mkdtemp(), "a.png")
        >>> Image.fromarray(np.zeros((4, 6, 3), np.uint8)).save(p)
        >>> tf.keras.preprocessing.image.load_img(p, target_size=(2, 3)).size
        (3, 2)
    """
    from PIL import Image   # Pillow is the optional tapejax[image] extra
    with open(path, "rb") as f:
        img = Image.open(_pyio.BytesIO(f.read()))
    mode = {"grayscale": "L", "rgba": "RGBA", "rgb": "RGB"}.get(color_mode)
    if mode is None:
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    if img.mode != mode and not (mode == "L" and img.mode in ("L", "I;16", "I")):
        img = img.convert(mode)
    if target_size is not None and img.size != (target_size[1], target_size[0]):
        if keep_aspect_ratio:
            raise NotImplementedError("keep_aspect_ratio=True is not provided by tapejax's load_img.")
        img = img.resize((target_size[1], target_size[0]), _INTERPOLATION[interpolation])
    return img


def img_to_array(img, data_format=None, dtype=None):
    """A PIL image as a float32 ``(height, width, channels)`` array (Keras's ``img_to_array``)."""
    x = np.asarray(img, dtype=dtype or "float32")
    return x[..., None] if x.ndim == 2 else x


def _affine(x, theta, tx, ty, shear, zx, zy, fill_mode, cval, order):
    """Keras's ``apply_affine_transform`` for a channels-last image."""
    m = np.eye(3)
    if theta != 0:
        t = np.deg2rad(theta)
        m = m @ np.array([[np.cos(t), -np.sin(t), 0], [np.sin(t), np.cos(t), 0], [0, 0, 1]])
    if tx != 0 or ty != 0:
        m = m @ np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]])
    if shear != 0:
        s = np.deg2rad(shear)
        m = m @ np.array([[1, -np.sin(s), 0], [0, np.cos(s), 0], [0, 0, 1]])
    if zx != 1 or zy != 1:
        m = m @ np.array([[zx, 0, 0], [0, zy, 0], [0, 0, 1]])
    if theta == 0 and tx == 0 and ty == 0 and shear == 0 and zx == 1 and zy == 1:
        return x
    try:
        import scipy.ndimage
    except ImportError:
        raise ImportError("Image transformations require SciPy. Install SciPy.") from None
    h, w = x.shape[0], x.shape[1]
    o_x, o_y = float(h) / 2 - 0.5, float(w) / 2 - 0.5
    m = np.array([[1, 0, o_x], [0, 1, o_y], [0, 0, 1]]) @ m @ np.array([[1, 0, -o_x], [0, 1, -o_y], [0, 0, 1]])
    m[:, [0, 1]] = m[:, [1, 0]]     # Keras builds the matrix in (x, y); arrays index (row, col)
    m[[0, 1]] = m[[1, 0]]
    channels = [scipy.ndimage.affine_transform(x[..., c], m[:2, :2], m[:2, 2], order=order, mode=fill_mode,
                                               cval=cval) for c in range(x.shape[-1])]
    return np.stack(channels, axis=-1)


class ImageDataGenerator:
    """Batches of augmented images from arrays (:meth:`flow`) or class folders
    (:meth:`flow_from_directory`), as Keras 3's legacy ``ImageDataGenerator`` (channels last).

    Example:
        >>> import numpy as np, tapejax as tf
        >>> gen = tf.keras.preprocessing.image.ImageDataGenerator(rescale=1. / 255, horizontal_flip=True)
        >>> x, y = next(gen.flow(np.full((4, 8, 8, 3), 255.0), np.arange(4), batch_size=2, shuffle=False))
        >>> x.shape, float(x.max()), y.tolist()
        ((2, 8, 8, 3), 1.0, [0, 1])
    """

    def __init__(self, featurewise_center=False, samplewise_center=False, featurewise_std_normalization=False,
                 samplewise_std_normalization=False, zca_whitening=False, zca_epsilon=1e-6, rotation_range=0,
                 width_shift_range=0.0, height_shift_range=0.0, brightness_range=None, shear_range=0.0,
                 zoom_range=0.0, channel_shift_range=0.0, fill_mode="nearest", cval=0.0, horizontal_flip=False,
                 vertical_flip=False, rescale=None, preprocessing_function=None, data_format=None,
                 validation_split=0.0, interpolation_order=1, dtype=None):
        if featurewise_center or featurewise_std_normalization or zca_whitening:
            raise NotImplementedError("featurewise statistics and ZCA whitening (ImageDataGenerator.fit) are "
                                      "not provided by tapejax: normalize the arrays first, or use "
                                      "tf.keras.layers.Normalization.")
        if validation_split or brightness_range is not None or channel_shift_range:
            raise NotImplementedError("validation_split, brightness_range and channel_shift_range are not "
                                      "provided by tapejax's ImageDataGenerator.")
        if data_format not in (None, "channels_last"):
            raise NotImplementedError("tapejax's ImageDataGenerator takes channels-last images.")
        self.samplewise_center, self.samplewise_std_normalization = samplewise_center, samplewise_std_normalization
        self.rotation_range, self.width_shift_range, self.height_shift_range = rotation_range, width_shift_range, \
            height_shift_range
        self.shear_range, self.fill_mode, self.cval = shear_range, fill_mode, cval
        self.horizontal_flip, self.vertical_flip = horizontal_flip, vertical_flip
        self.rescale, self.preprocessing_function = rescale, preprocessing_function
        self.interpolation_order, self.dtype = interpolation_order, dtype or "float32"
        if np.isscalar(zoom_range):
            self.zoom_range = [1 - zoom_range, 1 + zoom_range]
        elif len(zoom_range) == 2:
            self.zoom_range = [zoom_range[0], zoom_range[1]]
        else:
            raise ValueError(f"`zoom_range` should be a float or a tuple or list of two floats. "
                             f"Received: {zoom_range}")

    def standardize(self, x):
        """Keras's per-image normalization: ``preprocessing_function``, ``rescale``, samplewise."""
        if self.preprocessing_function:
            x = self.preprocessing_function(x)
        if self.rescale:
            x *= self.rescale
        if self.samplewise_center:
            x -= np.mean(x, keepdims=True)
        if self.samplewise_std_normalization:
            x /= np.std(x, keepdims=True) + 1e-6
        return x

    def _shift(self, shift, size):
        try:
            t = np.random.choice(shift)
            t *= np.random.choice([-1, 1])
        except ValueError:
            t = np.random.uniform(-shift, shift)
        return t * size if np.max(shift) < 1 else t

    def get_random_transform(self, img_shape, seed=None):
        """The random parameters of one image's transform, drawn as Keras draws them."""
        if seed is not None:
            np.random.seed(seed)
        theta = np.random.uniform(-self.rotation_range, self.rotation_range) if self.rotation_range else 0
        tx = self._shift(self.height_shift_range, img_shape[0]) if self.height_shift_range else 0
        ty = self._shift(self.width_shift_range, img_shape[1]) if self.width_shift_range else 0
        shear = np.random.uniform(-self.shear_range, self.shear_range) if self.shear_range else 0
        if self.zoom_range[0] == 1 and self.zoom_range[1] == 1:
            zx, zy = 1, 1
        else:
            zx, zy = np.random.uniform(self.zoom_range[0], self.zoom_range[1], 2)
        flip_horizontal = (np.random.random() < 0.5) * self.horizontal_flip
        flip_vertical = (np.random.random() < 0.5) * self.vertical_flip
        return {"theta": theta, "tx": tx, "ty": ty, "shear": shear, "zx": zx, "zy": zy,
                "flip_horizontal": flip_horizontal, "flip_vertical": flip_vertical,
                "channel_shift_intensity": None, "brightness": None}

    def apply_transform(self, x, transform_parameters):
        """Applies ``get_random_transform``'s parameters to one ``(height, width, channels)`` image."""
        p = transform_parameters
        x = _affine(x, p.get("theta", 0), p.get("tx", 0), p.get("ty", 0), p.get("shear", 0), p.get("zx", 1),
                    p.get("zy", 1), self.fill_mode, self.cval, self.interpolation_order)
        if p.get("flip_horizontal", False):
            x = x[:, ::-1]
        if p.get("flip_vertical", False):
            x = x[::-1]
        return x

    def random_transform(self, x, seed=None):
        """A randomly transformed copy of one image."""
        return self.apply_transform(x, self.get_random_transform(x.shape, seed))

    def flow(self, x, y=None, batch_size=32, shuffle=True, sample_weight=None, seed=None, **kwargs):
        """Batches of transformed images from the array ``x`` (and labels ``y``), forever."""
        return _ArrayIterator(np.asarray(x), None if y is None else np.asarray(y), self, batch_size, shuffle, seed)

    def flow_from_directory(self, directory, target_size=(256, 256), color_mode="rgb", classes=None,
                            class_mode="categorical", batch_size=32, shuffle=True, seed=None,
                            follow_links=False, interpolation="nearest", keep_aspect_ratio=False, **kwargs):
        """Batches of images from one sub-folder per class of ``directory`` (sorted), forever;
        prints ``Found N images belonging to K classes.`` as Keras does."""
        return _DirectoryIterator(directory, self, tuple(target_size), color_mode, classes, class_mode, batch_size,
                                  shuffle, seed, follow_links, interpolation, keep_aspect_ratio)


class _Iterator:
    """Keras's legacy ``Iterator``: index batches, reshuffled (``np.random.permutation``) at
    the start of every pass."""

    def __init__(self, n, batch_size, shuffle, seed):
        self.n, self.batch_size, self.shuffle, self.seed = n, batch_size, shuffle, seed
        self.batch_index, self.total_batches_seen, self.index_array = 0, 0, None
        self.lock = threading.Lock()
        self.index_generator = self._flow_index()

    def _set_index_array(self):
        self.index_array = np.random.permutation(self.n) if self.shuffle else np.arange(self.n)

    def __len__(self):
        return (self.n + self.batch_size - 1) // self.batch_size

    def _flow_index(self):
        self.batch_index = 0
        while True:
            if self.seed is not None:
                np.random.seed(self.seed + self.total_batches_seen)
            if self.batch_index == 0:
                self._set_index_array()
            current = 0 if self.n == 0 else (self.batch_index * self.batch_size) % self.n
            self.batch_index = self.batch_index + 1 if self.n > current + self.batch_size else 0
            self.total_batches_seen += 1
            yield self.index_array[current:current + self.batch_size]

    def __iter__(self):
        return self

    def __next__(self):
        with self.lock:
            index_array = next(self.index_generator)
        return self._batch(index_array)


class _ArrayIterator(_Iterator):
    def __init__(self, x, y, generator, batch_size, shuffle, seed):
        if x.ndim != 4:
            raise ValueError(f"Input data in `NumpyArrayIterator` should have rank 4. You passed an array with shape "
                             f"{x.shape}")
        self.x, self.y, self.generator = x.astype(generator.dtype), y, generator
        super().__init__(len(x), batch_size, shuffle, seed)

    def _batch(self, index_array):
        batch_x = np.zeros((len(index_array),) + self.x.shape[1:], dtype=self.generator.dtype)
        for i, j in enumerate(index_array):
            x = self.generator.apply_transform(self.x[j], self.generator.get_random_transform(self.x[j].shape))
            batch_x[i] = self.generator.standardize(x)
        return batch_x if self.y is None else (batch_x, self.y[index_array])


class _DirectoryIterator(_Iterator):
    def __init__(self, directory, generator, target_size, color_mode, classes, class_mode, batch_size, shuffle, seed,
                 follow_links, interpolation, keep_aspect_ratio):
        if class_mode not in ("categorical", "binary", "sparse", "input", None):
            raise ValueError(f"Invalid class_mode: {class_mode}; expected one of: "
                             "{'categorical', 'binary', 'sparse', 'input', None}")
        self.generator, self.directory, self.target_size = generator, directory, target_size
        self.color_mode, self.class_mode = color_mode, class_mode
        self.interpolation, self.keep_aspect_ratio = interpolation, keep_aspect_ratio
        self.image_shape = target_size + ({"rgba": 4, "rgb": 3, "grayscale": 1}[color_mode],)
        if not classes:
            classes = sorted(d for d in os.listdir(directory) if os.path.isdir(os.path.join(directory, d)))
        self.num_classes, self.class_indices = len(classes), dict(zip(classes, range(len(classes))))
        self.filenames, labels = [], []
        for c in classes:
            for root, _, files in sorted(os.walk(os.path.join(directory, c), followlinks=follow_links),
                                         key=lambda t: t[0]):
                for fname in sorted(files):
                    if fname.lower().endswith(_FORMATS):
                        self.filenames.append(os.path.join(c, os.path.relpath(os.path.join(root, fname),
                                                                              os.path.join(directory, c))))
                        labels.append(self.class_indices[c])
        self.samples, self.classes = len(self.filenames), np.array(labels, dtype="int32")
        print(f"Found {self.samples} images belonging to {self.num_classes} classes.")
        self.filepaths = [os.path.join(directory, f) for f in self.filenames]
        super().__init__(self.samples, batch_size, shuffle, seed)

    def _batch(self, index_array):
        dtype = self.generator.dtype
        batch_x = np.zeros((len(index_array),) + self.image_shape, dtype=dtype)
        for i, j in enumerate(index_array):
            img = load_img(self.filepaths[j], self.color_mode, self.target_size, self.interpolation,
                           self.keep_aspect_ratio)
            x = img_to_array(img)
            img.close()
            x = self.generator.apply_transform(x, self.generator.get_random_transform(x.shape))
            batch_x[i] = self.generator.standardize(x)
        if self.class_mode == "input":
            return batch_x, batch_x.copy()
        if self.class_mode in ("binary", "sparse"):
            return batch_x, self.classes[index_array].astype(dtype)
        if self.class_mode == "categorical":
            batch_y = np.zeros((len(batch_x), self.num_classes), dtype=dtype)
            batch_y[np.arange(len(index_array)), self.classes[index_array]] = 1.0
            return batch_x, batch_y
        return batch_x


__all__ = ["ImageDataGenerator", "load_img", "img_to_array"]
