"""Records TensorFlow's printed output for the cells of tests/test_strings.py, test_ragged.py and
test_sparse.py, and writes it into their ``TF_OUTPUT`` tables.

    python scripts/record_text_tests.py [tests/test_strings.py ...]     (default: all three)

Each test module lists ``CELLS`` (code, unchanged from the TensorFlow guides where named so) and
``PLAN`` (cell: cells run before it in the same namespace). Every planned cell runs with real
TensorFlow (``$TF_PYTHON``, default /tmp/tf/bin/python) as ``tests/guide_harness.run_cells`` runs it with
tapejax: its stdout, plus the repr of a final expression. The block between the
``# TF_OUTPUT`` and ``# end TF_OUTPUT`` markers is rewritten.
"""
import importlib.util
import json
import os
import pprint
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILES = ["tests/test_strings.py", "tests/test_ragged.py", "tests/test_sparse.py"]

RUNNER = r'''
import ast, contextlib, io, json, sys
import tensorflow as tf
cells, plan = json.load(sys.stdin)

def run(src, ns):
    tree = ast.parse(src)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, "<cell>", "exec"), ns)
    if last is not None:
        value = eval(compile(last, "<cell>", "eval"), ns)
        if value is not None:
            print(repr(value))

out = {}
for name, before in plan.items():
    ns = {"__name__": "__main__", "tf": tf}
    with contextlib.redirect_stdout(io.StringIO()):
        for b in before:
            run(cells[b], ns)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        run(cells[name], ns)
    out[name] = buf.getvalue()
json.dump(out, sys.stdout)
'''


def record(path, tf_python):
    text = open(path).read()
    spec = importlib.util.spec_from_file_location("cases", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cells, plan = module.CELLS, {k: list(v[0]) for k, v in module.PLAN.items()}
    res = subprocess.run([tf_python, "-c", RUNNER], input=json.dumps([cells, plan]), capture_output=True,
                         text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    if res.returncode:
        sys.exit(f"{path}: TensorFlow run failed:\n{res.stderr[-3000:]}")
    outputs = json.loads(res.stdout.strip().splitlines()[-1])
    start = text.index("# TF_OUTPUT")
    end = text.index("# end TF_OUTPUT")
    block = ("# TF_OUTPUT: recorded with TensorFlow 2.21 by scripts/record_text_tests.py (do not edit by hand)\n"
             "TF_OUTPUT = " + pprint.pformat(outputs, width=110, sort_dicts=False) + "\n")
    open(path, "w").write(text[:start] + block + text[end:])
    print(f"{path}: {len(outputs)} cells recorded")


if __name__ == "__main__":
    tf_python = os.environ.get("TF_PYTHON", "/tmp/tf/bin/python")
    sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]
    for f in sys.argv[1:] or FILES:
        record(os.path.join(ROOT, f), tf_python)
