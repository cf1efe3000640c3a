"""Documentation: every public name has a docstring, its examples run, the API reference builds.

* every public name of the user-facing modules (scripts/gen_api_docs.py's
  ``MODULES``) has a docstring; an op made with ``defop`` is documented by the
  function it wraps, or, for a lambda in the op table (one line per op), by
  that line. A failure lists the undocumented names.
* the docstring examples of every tapejax module, and the README's and docs/'s, run as
  doctests (``pytest`` collects only tests/, so they are run from here), with
  the project's doctest flags (NORMALIZE_WHITESPACE, ELLIPSIS, NUMBER).
* docs/api/ is generated from the docstrings and mentions every public name;
  ``mkdocs build --strict`` succeeds when mkdocs is installed.
"""
import doctest
import importlib
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import gen_api_docs  # noqa: E402

import tapejax  # noqa: E402
from tapejax._core import new_shapes  # noqa: E402

FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def _checker_and_flags():
    """pytest's doctest checker, which understands the NUMBER flag the project uses."""
    try:
        from _pytest.doctest import _get_checker, _get_number_flag
        return _get_checker(), FLAGS | _get_number_flag()
    except ImportError:  # an older/newer pytest: plain doctest
        return doctest.OutputChecker(), FLAGS


def _all_modules():
    names = ["tapejax"]
    for info in pkgutil.walk_packages(tapejax.__path__, "tapejax."):
        names.append(info.name)
    return sorted(names)


# ---------------------------------------------------------------------------
# every public name is documented
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("module_name", gen_api_docs.MODULES)
def test_every_public_name_has_a_docstring(module_name):
    names = gen_api_docs.public_names(module_name)
    assert names, f"{module_name} has no public names?"
    missing = [name for name, obj in names if gen_api_docs.doc_of(obj) is None]
    assert not missing, (
        f"{len(missing)} public name(s) of {module_name} have no docstring: {', '.join(missing)}. "
        "Give each a one-line summary (and Args/Returns/an example where it helps); "
        "an op made with defop is documented by the docstring of the function it wraps "
        "(or by its op-table line when that function is a lambda).")


def test_modules_have_docstrings():
    missing = [m for m in gen_api_docs.MODULES if not (importlib.import_module(m).__doc__ or "").strip()]
    assert not missing, f"modules without a docstring: {missing}"


# ---------------------------------------------------------------------------
# docstring examples run
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("module_name", _all_modules())
def test_docstring_examples(module_name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that save files write here
    # examples of global switches (enable_op_determinism) must not reach the tests after them
    monkeypatch.setattr(new_shapes, "run_new_shapes_on_host", new_shapes.run_new_shapes_on_host)
    module = importlib.import_module(module_name)
    checker, flags = _checker_and_flags()
    # DocTestFinder skips names a module only re-exports: each example runs once, where defined.
    tests = [t for t in doctest.DocTestFinder().find(module, module_name) if t.examples]
    report = []
    runner = doctest.DocTestRunner(checker=checker, optionflags=flags)
    before = set(vars(tapejax.Tensor))   # experimental_enable_numpy_behavior's example adds methods
    try:
        for test in tests:
            runner.run(test, out=report.append)
    finally:
        for name in set(vars(tapejax.Tensor)) - before:   # the tests after it see Tensors as before
            delattr(tapejax.Tensor, name)
    failures = report if runner.failures else []
    assert not failures, "".join(failures)[:8000]


@pytest.mark.parametrize("path", ["README.md", "docs/index.md", "docs/README_additions.md"])
def test_markdown_examples(path, tmp_path, monkeypatch):
    readme = ROOT / path
    if not readme.exists():
        pytest.skip(f"no {path}")
    monkeypatch.chdir(tmp_path)
    checker, flags = _checker_and_flags()
    test = doctest.DocTestParser().get_doctest(readme.read_text(), {}, path, str(readme), 0)
    report = []
    runner = doctest.DocTestRunner(checker=checker, optionflags=flags)
    runner.run(test, out=report.append)
    assert not runner.failures, "".join(report)[:8000]


# ---------------------------------------------------------------------------
# the API reference
# ---------------------------------------------------------------------------

def test_api_reference_covers_every_public_name(tmp_path, monkeypatch):
    monkeypatch.setattr(gen_api_docs, "OUT", tmp_path / "api")
    gen_api_docs.main()
    for module_name in gen_api_docs.MODULES:
        page = (tmp_path / "api" / gen_api_docs._file(module_name)).read_text()
        absent = [name for name, _ in gen_api_docs.public_names(module_name)
                  if f"`{gen_api_docs._tf_name(module_name, name)}`" not in page]
        assert not absent, f"{module_name}: not in the API page: {absent}"
    committed = ROOT / "docs" / "api"
    assert sorted(p.name for p in committed.glob("*.md")) == sorted(p.name for p in (tmp_path / "api").glob("*.md")), \
        "docs/api is stale: run python scripts/gen_api_docs.py"


def test_mkdocs_site_builds(tmp_path):
    pytest.importorskip("mkdocs")
    if not (ROOT / "mkdocs.yml").exists():
        pytest.skip("no mkdocs.yml")
    exe = shutil.which("mkdocs")
    cmd = [exe] if exe else [sys.executable, "-m", "mkdocs"]
    result = subprocess.run(cmd + ["build", "--strict", "--site-dir", str(tmp_path / "site")],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    assert (tmp_path / "site" / "index.html").exists()
