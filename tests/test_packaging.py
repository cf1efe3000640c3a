"""Packaging: versions, the PEP 561 marker, the licence, extras, and what ``import tapejax`` loads."""
import inspect
import os
import re
import subprocess
import sys
from typing import Optional
import textwrap
from importlib import metadata

import tapejax as tf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _read(name):
    with open(os.path.join(ROOT, name), encoding="utf-8") as f:
        return f.read()


def _pyproject_field(name):
    m = re.search(rf'^{name} = "([^"]+)"', _read("pyproject.toml"), re.M)
    assert m, f"pyproject.toml has no {name}"
    return m.group(1)


def test_package_version_has_one_source():
    assert tf.version.TAPEJAX_VERSION == metadata.version("tapejax") == _pyproject_field("version")


def test_tensorflow_version_reproduced():
    assert tf.version.VERSION == tf.__version__ == "2.21.0"   # what TensorFlow code checks


def test_changelog_has_the_current_version():
    assert f"## [{tf.version.TAPEJAX_VERSION}]" in _read("CHANGELOG.md")


def test_py_typed_marker_is_shipped():
    assert os.path.isfile(os.path.join(os.path.dirname(tf.__file__), "py.typed"))
    assert re.search(r'\[tool\.setuptools\.package-data\]\s*\ntapejax = \["py\.typed"\]', _read("pyproject.toml"))


def test_main_entry_points_have_type_hints():
    assert inspect.signature(tf.constant).return_annotation is tf.Tensor
    assert inspect.signature(tf.convert_to_tensor).return_annotation is tf.Tensor
    hints = inspect.signature(tf.Variable.__init__).parameters
    assert hints["name"].annotation != inspect.Parameter.empty
    assert inspect.signature(tf.Variable.assign).return_annotation == Optional["Variable"]


def test_license_is_apache_2_full_text():
    text = _read("LICENSE")
    for part in ("Apache License", "Version 2.0, January 2004", "TERMS AND CONDITIONS FOR USE, REPRODUCTION, "
                 "AND DISTRIBUTION", "9. Accepting Warranty or Additional Liability.", "END OF TERMS AND CONDITIONS"):
        assert part in text
    assert _pyproject_field("license") == "Apache-2.0"


def test_extras_exist():
    extras = set(metadata.metadata("tapejax").get_all("Provides-Extra") or [])
    declared = re.findall(r"^(\w+) = \[", _read("pyproject.toml").split("[project.optional-dependencies]")[1], re.M)
    assert {"tensorboard", "docs", "notebooks", "test"} <= set(declared)
    # the installed metadata (an editable install of an older checkout may lag) has at least these
    assert {"tensorboard", "test"} <= extras


def test_import_does_not_load_flax_until_a_flax_layer_is_used():
    code = textwrap.dedent("""
        import sys
        import tapejax as tf
        print(sorted(m for m in ('flax', 'flax.linen', 'orbax.checkpoint', 'tensorboard') if m in sys.modules))
        model = tf.keras.Sequential([tf.keras.layers.Conv2D(2, 3, padding='same'), tf.keras.layers.MaxPooling2D(),
                                     tf.keras.layers.AveragePooling2D(), tf.keras.layers.Flatten(),
                                     tf.keras.layers.Dense(3)])
        print(model(tf.ones([1, 8, 8, 1])).shape, 'flax.linen' in sys.modules)
        import flax.linen as nn
        layer = tf.keras.layers.FlaxLayer(nn.Dense(4))
        print(layer(tf.ones([2, 3])).shape)
    """)
    env = dict(os.environ, PYTHONPATH=ROOT, JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.splitlines() == ["[]", "(1, 3) False", "(2, 4)"]
