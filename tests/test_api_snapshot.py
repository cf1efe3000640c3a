"""The public API only grows: every public name of tapejax and its TF namespaces, recorded in
tests/data/api_snapshot.json, still exists, is still the same kind of thing (function, Op,
class, module...), and a public function keeps its signature (TensorFlow's).

The snapshot is taken in a fresh interpreter: ``tapejax.numpy`` fills its namespace lazily, so
what other tests touched must not leak into it. After adding names on purpose, record again:
``python tests/test_api_snapshot.py --record`` (additions are allowed; removals fail).
"""
import inspect
import json
import pathlib
import subprocess
import sys
import types

SNAPSHOT = pathlib.Path(__file__).parent / "data" / "api_snapshot.json"
MODULES = ["tapejax", "tapejax.math", "tapejax.math.special", "tapejax.nn", "tapejax.linalg", "tapejax.dtypes", "tapejax.numpy",
           "tapejax.experimental.numpy", "tapejax.random", "tapejax.strings", "tapejax.signal", "tapejax.lookup", "tapejax.lookup.experimental", "tapejax.audio", "tapejax.sets"]


def _kind(obj):
    from tapejax.extend import Op  # noqa: the snapshot runs in its own process
    if isinstance(obj, types.ModuleType):
        return "module"
    if isinstance(obj, Op):
        return "Op"
    if isinstance(obj, type):
        return "class"
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType)):
        return "function"
    return type(obj).__name__


def _signature(obj):
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return None


def take():
    import importlib
    api = {}
    for name in MODULES:
        mod = importlib.import_module(name)
        entries = {}
        for attr in sorted(a for a in dir(mod) if not a.startswith("_")):
            obj = getattr(mod, attr)
            kind = _kind(obj)
            entries[attr] = {"kind": kind, "signature": _signature(obj) if kind == "function" else None}
        api[name] = entries
    return api


def _fresh():
    code = f"import json, sys; sys.path.insert(0, {str(pathlib.Path(__file__).parent)!r}); " \
           "import test_api_snapshot as s; print(json.dumps(s.take()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_public_api_only_grows():
    old = json.loads(SNAPSHOT.read_text())
    new = _fresh()
    problems = []
    for mod, entries in old.items():
        for name, rec in entries.items():
            now = new.get(mod, {}).get(name)
            if now is None:
                problems.append(f"{mod}.{name}: removed")
            elif now["kind"] != rec["kind"]:
                problems.append(f"{mod}.{name}: was a {rec['kind']}, now a {now['kind']}")
            elif now["signature"] != rec["signature"]:
                problems.append(f"{mod}.{name}: signature {rec['signature']} became {now['signature']}")
    assert not problems, "public API changed:\n" + "\n".join(problems)


if __name__ == "__main__":
    if sys.argv[1:] == ["--record"]:
        SNAPSHOT.write_text(json.dumps(_fresh(), indent=1, sort_keys=True) + "\n")
