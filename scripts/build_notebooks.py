"""Writes notebooks/*.ipynb from the cell lists in scripts/notebook_cells.py and executes them.

The notebooks are the TensorFlow tutorials in ../shared/seeds with one change,
the import line (``import tapejax as tf``). Keeping their cells here as Python
makes them reviewable in diffs and reproducible: rebuild them all with

    python scripts/build_notebooks.py            # all notebooks
    python scripts/build_notebooks.py 02 05      # only those whose name starts so

Each notebook is executed top to bottom (nbclient, kernel ``python3``) in a
temporary working directory (the SavedModel example writes files) and saved with
its outputs, plots included as inline PNGs.
"""
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from notebook_cells import NOTEBOOKS as CELLS  # noqa: E402

KERNEL_ENV = {
    # Plots become image/png outputs of the cell that draws them.
    "MPLBACKEND": "module://matplotlib_inline.backend_inline",
    "JAX_PLATFORMS": "cpu",
    # The notebooks are compile-bound (every new shape compiles an XLA program):
    # JAX's persistent cache makes reruns several times faster. Timings printed
    # by the notebooks are taken after warm-up, so they do not depend on it.
    "JAX_COMPILATION_CACHE_DIR": str(ROOT / ".pytest_cache" / "jax-compilation-cache"),
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
    "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
}


def make_notebook(cells):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    for kind, source in cells:
        source = source.strip("\n")
        nb.cells.append(nbformat.v4.new_markdown_cell(source) if kind == "md"
                        else nbformat.v4.new_code_cell(source))
    return nb


def execute(nb, timeout=600):
    """Runs ``nb`` in place in a fresh python3 kernel, in a temporary directory."""
    for k, v in KERNEL_ENV.items():
        os.environ.setdefault(k, v)
    with tempfile.TemporaryDirectory() as cwd:
        NotebookClient(nb, timeout=timeout, kernel_name="python3", coalesce_streams=True,
                       resources={"metadata": {"path": cwd}}).execute()
    return nb


def main(prefixes):
    NOTEBOOKS.mkdir(exist_ok=True)
    for name, cells in CELLS.items():
        if prefixes and not any(name.startswith(p) for p in prefixes):
            continue
        t = time.perf_counter()
        nb = execute(make_notebook(cells))
        # Ids must be stable across rebuilds for readable diffs.
        for i, cell in enumerate(nb.cells):
            cell["id"] = f"{name[:2]}-{i:03d}"
            cell.metadata.pop("execution", None)  # timestamps: noise in diffs
        nbformat.write(nb, NOTEBOOKS / name)
        print(f"{name}: executed in {time.perf_counter() - t:.1f}s")


if __name__ == "__main__":
    main(sys.argv[1:])
