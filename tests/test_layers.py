"""The house plan: tapejax's imports run downward through its layers (docs/ARCHITECTURE.md).

    leaves (errors, version, _missing) <- _core <- extend <- ops <- _staging <- namespaces
        <- {data, distribute, train, saved_model} <- keras <- tapejax/__init__

A module may import from its own layer and the layers below it, never from a layer above, and
never inside a function: a function-local import of a tapejax module is how a cycle gets dodged,
so it is not allowed anywhere in the package (the layers make it unnecessary). Within a layer,
module-level imports must not form a cycle.
"""
import ast
import pathlib

import pytest

PKG = pathlib.Path(__file__).resolve().parents[1] / "tapejax"

LAYERS = [
    ("leaves", ["tapejax.errors", "tapejax.version", "tapejax._missing"]),
    ("_core", ["tapejax._core"]),
    ("extend", ["tapejax.extend"]),
    ("ops", ["tapejax.ops"]),
    ("_staging", ["tapejax._staging"]),
    ("namespaces", ["tapejax.math", "tapejax.nn", "tapejax.linalg", "tapejax.random", "tapejax.strings",
                    "tapejax.numpy", "tapejax.dtypes", "tapejax.debugging", "tapejax.image", "tapejax.io",
                    "tapejax.sparse", "tapejax.ragged", "tapejax.summary", "tapejax.config",
                    "tapejax.autodiff", "tapejax.autograph", "tapejax.types", "tapejax.experimental",
                    "tapejax.nest", "tapejax.compat", "tapejax.test", "tapejax._init_ops", "tapejax.queue"]),
    ("services", ["tapejax.data", "tapejax.distribute", "tapejax.checkpoint", "tapejax.train",
                  "tapejax.saved_model"]),
    ("keras", ["tapejax.keras"]),
    ("package", ["tapejax"]),
]

# Known violations still being removed (issue 15). This list only shrinks: an entry that no longer
# occurs fails the test, so it must be deleted when its import is fixed.
KNOWN = set()
KNOWN_CYCLES = set()
KNOWN_LONG = set()


def _module_name(path):
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _rank(mod):
    best = None
    for rank, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if mod == p or mod.startswith(p + "."):
                if best is None or len(p) > best[1]:
                    best = (rank, len(p))
    assert best is not None, f"{mod} is in no layer: add it to LAYERS in {__file__}"
    return best[0]


def _imports():
    """(module, imported module, line, is_local) for every tapejax import in the package."""
    out = []
    for path in sorted(PKG.rglob("*.py")):
        mod = _module_name(path)
        pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        tree = ast.parse(path.read_text())
        local = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                 for n in ast.walk(f)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = pkg.split(".")[:len(pkg.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if not target.startswith("tapejax"):
                    continue
                names = [f"{target}.{a.name}" for a in node.names]
                # `from . import x` imports the submodule x when there is one
                targets = [n for n in names if _exists(n)] or [target]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.split(".")[0] == "tapejax"]
            else:
                continue
            for t in targets:
                out.append((mod, t, node.lineno, id(node) in local))
    return out


def _exists(mod):
    p = PKG.parent / pathlib.Path(*mod.split("."))
    return p.with_suffix(".py").exists() or (p / "__init__.py").exists()


IMPORTS = _imports()


def _violations():
    found = set()
    for mod, target, line, is_local in IMPORTS:
        if target == "tapejax" and mod != "tapejax":
            found.add((mod, target, "imports the package root"))
        elif _rank(target) > _rank(mod):
            found.add((mod, target, f"upward: {LAYERS[_rank(mod)][0]} imports {LAYERS[_rank(target)][0]}"))
        elif is_local:
            found.add((mod, target, "function-local import"))
    return found


def test_every_module_has_a_layer():
    for path in PKG.rglob("*.py"):
        _rank(_module_name(path))


def test_imports_run_downward():
    found = _violations()
    new = sorted(found - KNOWN)
    assert not new, "imports against the house plan:\n" + "\n".join(f"  {m} -> {t}: {why}" for m, t, why in new)
    gone = sorted(KNOWN - found)
    assert not gone, "fixed, delete from KNOWN:\n" + "\n".join(map(str, gone))


def test_no_import_cycles():
    graph = {}
    for mod, target, _, is_local in IMPORTS:
        if not is_local and target != mod and not mod.startswith(target + "."):
            graph.setdefault(mod, set()).add(target)
    state = {}

    def visit(m, stack):
        state[m] = 1
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                cycle = " -> ".join(stack[stack.index(t):] + [t])
                if not any(k in cycle for k in KNOWN_CYCLES):
                    raise AssertionError("import cycle: " + cycle)
            if t not in state:
                visit(t, stack + [t])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])


@pytest.mark.parametrize("layer", ["_core"])
def test_core_functions_are_short(layer):
    """No function in the core is longer than 60 lines: each does one thing, readably."""
    long = []
    for path in (PKG / layer).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > 60 and f"{_module_name(path)}.{node.name}" not in KNOWN_LONG:
                    long.append(f"{_module_name(path)}.{node.name}: {n} lines")
    assert not long, "\n".join(sorted(long))


def test_services_do_not_know_keras():
    """Below Keras nothing knows Keras: no Keras module names, no Keras private attributes
    (``_k_...``). Keras objects reach checkpoints and SavedModels through the trackable protocol
    (``_trackable_children``, ``checkpoint.tracking.apply_deferred``, ``_default_save_signature``)."""
    found = []
    for path in sorted(PKG.rglob("*.py")):
        mod = _module_name(path)
        if not _rank("tapejax._core") <= _rank(mod) < _rank("tapejax.keras"):
            continue   # the leaves: _missing's table of names not provided lists Keras's too
        for node in ast.walk(ast.parse(path.read_text())):
            name = node.attr if isinstance(node, ast.Attribute) else \
                node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
            if name.startswith(("_k_", "tapejax.keras")):
                found.append(f"{mod}:{node.lineno}: {name}")
    assert not found, "Keras known below Keras:\n" + "\n".join(found)
