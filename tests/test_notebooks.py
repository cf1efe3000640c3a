"""The tutorial notebooks run top to bottom and print TensorFlow's numbers.

Every notebook in notebooks/ is executed in a fresh ``python3`` kernel (nbclient),
two at a time, so a broken notebook fails the build. Each notebook's key
outputs are then checked against what the TensorFlow originals print (the
seeds in ../shared/seeds), and its plots must have been rendered as PNGs.

Rebuild the saved notebooks (outputs included) with
``python scripts/build_notebooks.py``.
"""
import asyncio
import os
import re
import tempfile
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
NAMES = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
PARALLEL = 2  # kernels at a time: the notebooks are compile-bound, one core each
KERNEL_ENV = {
    "MPLBACKEND": "module://matplotlib_inline.backend_inline",  # plots -> image/png outputs
    "JAX_PLATFORMS": "cpu",
    # Compile-bound notebooks: JAX's persistent cache (gitignored) makes reruns
    # several times faster; the timings the notebooks print are taken after warm-up.
    "JAX_COMPILATION_CACHE_DIR": str(ROOT / ".pytest_cache" / "jax-compilation-cache"),
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
    "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
}

# What TensorFlow prints, per notebook: each string must appear in the outputs
# (whitespace-normalised), in this order.
EXPECTED = {
    "01_autodiff.ipynb": [
        "6.0",                                                    # dy_dx.numpy()
        "kernel, shape: (3, 2) bias, shape: (2,)",               # Keras 3 variable names
        "tf.Tensor(6.0, shape=(), dtype=float32) None None None",  # only x0 is watched
        "['x0:0']",
        "6.0",
        "dy/dx0: None dy/dx1: 0.9999546",
        "18.0",
        "[ 4. 108.] [2. 6.]",
        "4.0 -0.25", "3.75", "7.0",
        "tf.Tensor(1.0, shape=(), dtype=float32) None", "None",    # control flow
        "ResourceVariable : tf.Tensor(1.0, shape=(), dtype=float32) EagerTensor : None",   # TF's class names
        "tf.Tensor([0. 0.], shape=(2,), dtype=float32)",
    ],
    "02_advanced_autodiff.ipynb": [
        "dz/dx: tf.Tensor(4.0, shape=(), dtype=float32) dz/dy: None",   # stop_recording
        "dz/dx: tf.Tensor(4.0, shape=(), dtype=float32) dz/dy: None",   # reset
        "dz/dx: tf.Tensor(4.0, shape=(), dtype=float32) dz/dy: None",   # stop_gradient
        "tf.Tensor(2.0, shape=(), dtype=float32)",                      # clip_gradients
        "tf.Tensor(nan, shape=(), dtype=float32)",                      # naive log1pexp
        "tf.Tensor(1.0, shape=(), dtype=float32)",                      # custom log1pexp
        "Epoch 1 finished",
        "tf.Tensor(2.0, shape=(), dtype=float32)",                      # loaded SavedModel
        "1.0", "0.25",                                                  # two tapes
        "dy_dx: 3.0 d2y_dx2: 6.0",
        "[TensorShape([5, 10]), TensorShape([10])]",
        "(201,) (201,)",
        "TensorShape([7, 10])", "TensorShape([5, 10])", "TensorShape([7, 10, 5, 10])",
        "g.shape: (5, 10)", "delta:",
        "layer.kernel.shape: (5, 8) h.shape: (5, 8, 5, 8)",
        "TensorShape([7, 6])", "TensorShape([7, 6, 7, 5])",
        "(7, 6, 5) (7, 6, 5)", "TensorShape([7, 6, 5])",
        "j.shape: (7, 6, 7, 5)", "jb.shape: (7, 6, 5)",
    ],
    "03_custom_training_loop.ipynb": [
        "<tf.Tensor: shape=(), dtype=float32, numpy=6.0>",
        "<Variable path=my_model/dense/kernel, shape=(32, 32), dtype=float32",
        "Training loss (for one batch) at step 0:", "Seen so far: 64 samples",
        "Start of epoch 2",
        "Training acc over epoch:", "Validation acc:",
        "tf.function epoch:", "speed-up:",
        "first loss:",
    ],
    "04_split_model_gradients.ipynb": [
        "epoch 7: loss",
        "dLoss_dWeights2 valid: True", "dLoss_dBias2 valid: True",
        "dLoss_dWeights1 valid: True", "dLoss_dBias1 valid: True",
        "dLoss_dWeights0 valid: True", "dLoss_dBias0 valid: True",
        "weights2 valid: True", "weights1 valid: True", "weights0 valid: True",
    ],
    "05_from_tensorflow_to_jax.ipynb": [
        "det: -2.0",
        "ArrayImpl None",                                    # jnp code is not on the tape
        "Tensor tf.Tensor(0.5403023, shape=(), dtype=float32)",  # tapejax.numpy is
        "tf.Tensor([-0.99875236 0. 0.9805807 ], shape=(3,), dtype=float32) [-0.99875236 0. 0.9805807 ]",
        "[0.33333334, 0.33333334, 0.33333334]",              # d logsumexp = softmax
        "tf.Tensor([2. 3.], shape=(2,), dtype=float32)",
        "tf.Tensor([0.08333334 0.03703704], shape=(2,), dtype=float32)",
        "flax_layer/params/Dense_0/kernel', (8, 32)",
        "kernel', (8, 4)",                                 # an nnx module
        "step 299: loss",
        "tapejax eager", "tapejax tf.function", "jax.jit + optax",
    ],
}
PLOTS = {  # minimum number of rendered figures
    "01_autodiff.ipynb": 1,
    "02_advanced_autodiff.ipynb": 6,
    "03_custom_training_loop.ipynb": 1,
}


async def _run(name, limit):
    async with limit:
        nb = nbformat.read(NOTEBOOKS / name, as_version=4)
        # Keras initializers without a seed draw one from Python's `random` (as Keras 3 does):
        # seeded here, so a check at the edge of its tolerance (notebook 04's allclose of two
        # gradient computations, True in TensorFlow's output) cannot fail one run in many.
        nb.cells.insert(0, nbformat.v4.new_code_cell("import random; random.seed(0)"))
        with tempfile.TemporaryDirectory() as cwd:  # the SavedModel example writes files
            start = time.perf_counter()
            try:
                await nbclient.NotebookClient(
                    nb, timeout=600, kernel_name="python3",
                    resources={"metadata": {"path": cwd}}).async_execute()
                error = None
            except Exception as e:  # noqa: BLE001 -- reported by that notebook's test
                error = f"{type(e).__name__}: {e}"
            return name, nb, error, time.perf_counter() - start


@pytest.fixture(scope="module")
def executed(request):
    """``{name: (executed notebook, error or None, seconds)}``: the selected notebooks
    (``-k``), each run once, ``PARALLEL`` at a time."""
    names = sorted({item.callspec.params["name"] for item in request.session.items
                    if getattr(item, "originalname", None) == "test_notebook_runs_and_matches_tensorflow"
                    and hasattr(item, "callspec")}) or NAMES
    saved = {k: os.environ.get(k) for k in KERNEL_ENV}
    for k, v in KERNEL_ENV.items():  # the kernels inherit it; a caller's setting wins
        os.environ.setdefault(k, v)

    async def run_all():
        limit = asyncio.Semaphore(PARALLEL)
        return await asyncio.gather(*(_run(name, limit) for name in names))

    try:
        results = asyncio.run(run_all())
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    for name, _, error, seconds in results:
        print(f"{name}: {seconds:.1f}s{' FAILED' if error else ''}")
    return {name: (nb, error, seconds) for name, nb, error, seconds in results}


def _outputs(nb):
    """All text a reader sees under the code cells, whitespace-normalised, and the PNG count."""
    texts, pngs = [], 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if out.output_type == "stream" and out.name == "stdout":
                texts.append(out.text)
            elif out.output_type in ("execute_result", "display_data"):
                texts.append(out.data.get("text/plain", ""))
                pngs += "image/png" in out.data
    return " ".join(" ".join(texts).split()), pngs


def _check_outputs(name, nb):
    text, pngs = _outputs(nb)
    pos = 0
    for want in EXPECTED[name]:
        want = " ".join(want.split())
        found = text.find(want, pos)
        assert found >= 0, (f"{name}: expected {want!r} (TensorFlow's output) after position {pos}; "
                            f"outputs from there: {text[pos:pos + 600]!r}")
        pos = found + len(want)
    assert pngs >= PLOTS.get(name, 0), f"{name}: {pngs} plots rendered, expected {PLOTS.get(name, 0)}"
    return text


def test_every_notebook_is_checked():
    assert NAMES == sorted(EXPECTED), "notebooks/ and EXPECTED disagree: add the new notebook's key outputs"


@pytest.mark.parametrize("name", NAMES)
def test_saved_notebook_has_outputs(name):
    """The committed file holds real outputs (a reader on GitHub sees them) and differs
    from TensorFlow's code only in the import line."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    sources = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "import tapejax as tf" in sources
    assert "import tensorflow" not in sources
    assert all(c.get("execution_count") for c in nb.cells if c.cell_type == "code"), \
        f"{name}: not executed; run python scripts/build_notebooks.py"
    _check_outputs(name, nb)


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_and_matches_tensorflow(name, executed):
    nb, error, _ = executed[name]
    assert error is None, f"{name} failed to run:\n{error}"
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.output_type == "error"]
    assert not errors, f"{name}: {errors[0].ename}: {errors[0].evalue}"
    text = _check_outputs(name, nb)
    # The timing cells ran and printed their numbers; how fast they are is measured by
    # benchmarks/bench_notebooks.py (tests assert no timings).
    if name.startswith("03"):
        assert re.search(r"speed-up: [\d.]+x", text), f"{name}: the timing cell printed no speed-up"
    if name.startswith("05"):
        assert re.search(r"tapejax tf.function +[\d.]+ ms/step +\([\d.]+x", text), \
            f"{name}: the timing cell printed no tf.function step time"
