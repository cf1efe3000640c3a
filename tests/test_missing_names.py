"""A TensorFlow name tapejax does not provide raises an AttributeError naming what to use instead."""
import doctest
import importlib

import pytest

import tapejax as tf
from tapejax._missing import MISSING

# The TensorFlow names users reach for most that tapejax does not provide, with a word the
# message must contain: the alternative, or "not provided".
COMMON = [
    ("tapejax", "Graph", "tf.function"), ("tapejax", "Session", "GradientTape"),
    ("tapejax", "placeholder", "input_signature"), ("tapejax", "estimator", "Model.compile/fit"),
    ("tapejax", "lite", "tf.saved_model.save"), ("tapejax.image", "extract_patches", "conv_general_dilated_patches"),
    ("tapejax", "feature_column", "NumPy"),
    ("tapejax", "profiler", "jax.profiler"),
    ("tapejax.summary", "trace_on", "jax.profiler"),  # intro_to_modules.ipynb cell 16
    ("tapejax", "get_variable", "tf.Variable"), ("tapejax", "global_variables_initializer", "initialized"),
    ("tapejax.keras", "applications", "flax"),
    ("tapejax.keras.datasets", "imdb", "get_file"),
    ("tapejax.strings", "unicode_script", "unicodedata"),
]


@pytest.mark.parametrize("module, name, alternative", COMMON)
def test_missing_name_says_what_to_use(module, name, alternative):
    mod = importlib.import_module(module)
    with pytest.raises(AttributeError) as info:
        getattr(mod, name)
    message = str(info.value)
    assert f"has no attribute {name!r}" in message and "not provided by tapejax" in message
    assert alternative in message
    assert not hasattr(mod, name)
    assert getattr(mod, name, "default") == "default"


def test_every_listed_name_is_really_missing():
    for module, names in MISSING.items():
        mod = importlib.import_module(module)
        for name in names:
            assert name not in vars(mod), f"{module}.{name} is provided now: drop it from MISSING"


@pytest.mark.parametrize("mod", [tf, tf.keras, tf.data])
def test_private_and_unknown_names_get_a_plain_attribute_error(mod):
    for name in ("__path__" if mod is not tf.data else "__nope__", "__wrapped__", "_private", "not_a_tf_name"):
        if name in vars(mod):
            continue
        with pytest.raises(AttributeError, match=f"has no attribute '{name}'$"):
            getattr(mod, name)
    # doctest's and mock's probing of modules keeps working
    doctest.DocTestFinder().find(mod)


def test_provided_names_are_untouched():
    assert tf.keras.callbacks.EarlyStopping and tf.data.experimental.AUTOTUNE is tf.data.AUTOTUNE
    from tapejax import keras  # noqa: F401  (from-import of a submodule still works)
