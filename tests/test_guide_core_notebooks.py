"""What TensorFlow 2.21 prints in the core guides (site/en/guide/core/*_core.ipynb) and the
"Random number generation" guide, where tapejax printed something else.

Expected strings and numbers were recorded from TensorFlow 2.21 (CPU) running the same code.
"""
import logging
import os
import subprocess
import sys

import numpy as np
import pytest

import tapejax as tf
from tapejax import distribute as _distribute

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

_MIRRORED_EAGER = (
    "Using MirroredStrategy eagerly has significant overhead currently. We will be working on "
    "improving this in the future, but for now please wrap `call_for_each_replica` or "
    "`experimental_run` or `run` inside a tf.function to get the best performance.")


def _run_fresh(code):
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    env.pop("XLA_FLAGS", None)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def test_mirrored_strategy_eager_run_warns_the_first_five_times(caplog, monkeypatch):
    monkeypatch.setattr(_distribute, "_EAGER_RUN_WARNINGS", [0])
    strategy = tf.distribute.MirroredStrategy(["cpu:0"])

    def warnings_during(call):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="tensorflow"):
            call()
        return [r.getMessage() for r in caplog.records if r.name == "tensorflow"]

    assert warnings_during(lambda: strategy.run(lambda: tf.constant(1.0))) == [_MIRRORED_EAGER]
    # A tf.function, strategy.run inside one, and the other strategies: no warning (as in TF).
    def one():
        return tf.constant(1.0)

    assert warnings_during(lambda: strategy.run(tf.function(one))) == []
    assert warnings_during(tf.function(lambda: strategy.run(one))) == []
    assert warnings_during(lambda: tf.distribute.OneDeviceStrategy("cpu:0").run(lambda: tf.constant(1.0))) == []
    assert warnings_during(lambda: tf.distribute.get_strategy().run(lambda: tf.constant(1.0))) == []
    counts = [len(warnings_during(lambda: strategy.run(lambda: tf.constant(1.0)))) for _ in range(6)]
    assert counts == [1, 1, 1, 1, 0, 0]
