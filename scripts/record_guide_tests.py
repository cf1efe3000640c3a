"""Records TensorFlow's printed output for the two tf.function guides and writes their tests.

    python scripts/record_guide_tests.py /path/to/tensorflow-docs [/path/to/tf/bin/python]

reads site/en/guide/function.ipynb and site/en/guide/intro_to_graphs.ipynb from a checkout
of github.com/tensorflow/docs, runs every code cell in order with real TensorFlow (the
second argument, default /tmp/tf/bin/python) and writes tests/test_guide_function.py and
tests/test_guide_intro_to_graphs.py: the cells, TF's output, the plan (which cells a cell
depends on), the strict xfails and the skip list below. Edit the tables here, rerun.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TMP = tempfile.mkdtemp()

# cell: (cells run before it, ignore numbers: False / True / "final" (see guide_harness))
PLAN_FUNCTION = {
 2: ([], False), 3: ([], False), 4: ([3], False), 5: ([3], False),
 7: ([], False), 8: ([7], False), 9: ([7, 8], False),
 10: ([2], False), 11: ([], False), 12: ([], False), 13: ([], False), 14: ([], False), 15: ([], False),
 16: ([7], False), 17: ([7], False), 18: ([7, 16], False), 19: ([7, 16], False), 20: ([2, 7, 16], False),
 21: ([], False), 22: ([2, 21], False), 25: ([], "final"), 27: ([], False), 29: ([], True),
 30: ([], False), 31: ([], False), 32: ([31], False), 33: ([31, 32], False), 34: ([], False),
 35: ([], False), 36: ([], False), 37: ([], False), 38: ([], False), 39: ([], False), 40: ([2, 39], False),
 41: ([], False), 42: ([2], False), 43: ([], False), 44: ([], False), 45: ([44], False), 46: ([], False),
 47: ([46], False), 48: ([], False), 49: ([48], False), 50: ([48], False), 51: ([48, 50], False),
 52: ([48], False), 53: ([48, 52], False), 54: ([2], False), 55: ([], False), 56: ([2], False),
 57: ([2, 56], False), 58: ([], False),
}
PLAN_INTRO = {
 2: ([], False), 3: ([], False), 4: ([], False), 7: ([], False), 8: ([7], False), 9: ([7, 8], False),
 10: ([], False), 11: ([10], True), 12: ([10, 11], True), 13: ([], False), 14: ([10, 11, 12, 13], True),
 15: ([13], False), 16: ([], False), 17: ([10, 11, 16], False), 18: ([], False),
 19: ([10, 11, 16, 17, 18], False), 20: ([18], False), 21: ([], False), 22: ([], False), 23: ([], False),
 24: ([1, 23], True), 25: ([1, 23], True), 26: ([], False), 27: ([26], False),
}


def record(nb_path, out_json):
    """Runs the notebook's code cells in order with real TensorFlow; per cell, the merged fd 1 + fd 2
    output (tf.print writes to fd 2), the repr of a final expression like a notebook, Python-level
    stderr (tracebacks of the guide's assert_raises) kept apart."""
    import ast, io, linecache, os, tempfile, time
    nb = json.load(open(nb_path))
    cells = [("".join(c["source"]), c.get("metadata", {}).get("id")) for c in nb["cells"] if c["cell_type"] == "code"]
    ns = {"__name__": "__main__"}
    results = []
    real_stdout_fd = os.dup(1)
    pyerr = io.StringIO()
    for i, (src, cid) in enumerate(cells):
        tmp = tempfile.TemporaryFile(mode="w+b")
        sys.stdout.flush(); sys.stderr.flush()
        os.dup2(tmp.fileno(), 1); os.dup2(tmp.fileno(), 2)
        sys.stdout = io.TextIOWrapper(os.fdopen(os.dup(1), "wb"), line_buffering=True, write_through=True)
        sys.stderr = pyerr
        err = None
        try:
            tree = ast.parse(src)
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            fname = f"<guide cell {i}>"
            linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
            exec(compile(tree, fname, "exec"), ns)
            if last is not None:
                v = eval(compile(last, fname, "eval"), ns)
                if v is not None:
                    print(repr(v))
        except BaseException as e:
            err = f"{type(e).__name__}: {e}"
        sys.stdout.flush()
        time.sleep(0.05)
        os.dup2(real_stdout_fd, 1); os.dup2(real_stdout_fd, 2)
        tmp.seek(0)
        out = tmp.read().decode()
        results.append({"i": i, "id": cid, "src": src, "out": out, "err": err, "pyerr": pyerr.getvalue()})
        pyerr.seek(0); pyerr.truncate()
    json.dump(results, open(out_json, "w"), indent=1)



AG = "AutoGraph: Python {what} on a tensor inside tf.function (being added by the AutoGraph work)"
FUNCTION_XFAIL = {
 21: "ConcreteFunction's Output Type for an input of unknown rank: TensorFlow prints shape=<unknown>; tapejax traces an unknown rank at rank 0 (JAX has no unknown ranks)",
}
FUNCTION_SKIP = {
 0: "license header", 1: "`import tensorflow as tf` (the tests bind tf to tapejax)",
 6: "timing benchmark of a 1x200x200x100 Conv2D: it only prints timings, and takes minutes on a 2-core CI machine",
 23: "needs a tf.Graph object (graph.as_graph_def())", 24: "ConcreteFunction.inference_fn (a TF graph internal)",
 26: "tf.autograph.to_code prints TensorFlow's generated graph code, an implementation detail",
 28: "needs a tf.Graph object (counts graph nodes)",
}
INTRO_XFAIL = {}
INTRO_SKIP = {
 0: "license header", 1: "imports (`import tensorflow as tf`); tests bind tf to tapejax (the other imports are re-run where needed)",
 5: "tf.autograph.to_code prints TensorFlow's generated graph code, an implementation detail",
 6: "needs a tf.Graph object (graph.as_graph_def())",
}

EXTRA = {"intro": """

def test_ops_the_guide_relies_on_as_tensorflow():
    # Cells 12 and 21 with fixed values (TF 2.21's outputs): an integer mean stays integer
    # and truncates; an eager out-of-range gather raises instead of clamping.
    assert repr(tf.reduce_mean(tf.constant([[1, 2], [3, -6]]), axis=1)) == (
        "<tf.Tensor: shape=(2,), dtype=int32, numpy=array([ 1, -1], dtype=int32)>")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\\[0\\] = -1 is not in \\[0, 2\\)"):
        tf.gather(tf.constant([1.0, 2.0]), [-1])
"""}


def lit(s):
    assert "'''" not in s and not s.endswith("\\"), s
    return "r'''" + s + "'''"

def gen(nb, P, XF, SK, title, path, intro):
    res = json.load(open(os.path.join(TMP, f"{nb}_tf.json")))
    used = set()
    for t, (pre, _) in P.items():
        used |= set(pre) | {t}
    assert not (set(P) & set(SK))
    assert set(P) | set(SK) == {r["i"] for r in res}, sorted({r["i"] for r in res} - set(P) - set(SK))
    out = []
    out.append(f'"""{title}\n\n{intro}\n\nCells not run, and why:\n')
    for i, why in sorted(SK.items()):
        out.append(f"- cell {i}: {why}")
    out.append('"""\nimport pytest\n\n' + ('import tapejax as tf\n' if nb in EXTRA else '') + 'from guide_harness import assert_same_output, run_cells\n')
    out.append("# The notebook's code cells, unchanged (cell 1's `import tensorflow as tf` is the harness's tf = tapejax).")
    out.append("CELLS = {")
    for i in sorted(used):
        src = res[i]["src"]
        if i == 1:
            src = src.replace("import tensorflow as tf\n", "").replace("import tensorflow as tf", "")
        out.append(f"    {i}: {lit(src)},")
    out.append("}\n")
    out.append("# What each cell printed with TensorFlow 2.21 (CPU), recorded with the same harness.")
    out.append("TF_OUTPUT = {")
    for t in P:
        out.append(f"    {t}: {lit(res[t]['out'])},")
    out.append("}\n")
    out.append("# cell: (cells run before it in the same namespace, ignore numbers (random values / timings))")
    out.append("PLAN = {")
    for t, (pre, mask) in P.items():
        out.append(f"    {t}: ({pre}, {mask!r}),")
    out.append("}\n")
    out.append("XFAIL = {")
    for t, why in XF.items():
        out.append(f"    {t}: {why!r},")
    out.append("}\n\n")
    out.append('''@pytest.mark.parametrize("cell", [
    pytest.param(c, id=f"cell{c:02d}", marks=[pytest.mark.xfail(strict=True, reason=XFAIL[c])] if c in XFAIL else [])
    for c in PLAN])
def test_cell(cell):
    before, mask_numbers = PLAN[cell]
    printed = run_cells(CELLS, before + [cell], cell)
    assert_same_output(printed, TF_OUTPUT[cell], mask_numbers=mask_numbers)
''')
    open(path, "w").write("\n".join(out) + EXTRA.get(nb, ""))



def main():
    docs = sys.argv[1]
    tf_python = sys.argv[2] if len(sys.argv) > 2 else "/tmp/tf/bin/python"
    for nb, name in [("function", "function"), ("intro", "intro_to_graphs")]:
        subprocess.run([tf_python, __file__, "--record", os.path.join(docs, "site/en/guide", name + ".ipynb"),
                        os.path.join(TMP, nb + "_tf.json")], check=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    gen("function", PLAN_FUNCTION, FUNCTION_XFAIL, FUNCTION_SKIP,
        'TensorFlow\'s guide "Better performance with tf.function" (site/en/guide/function.ipynb), cell by cell.',
        os.path.join(ROOT, "tests", "test_guide_function.py"),
        "Every code cell runs unchanged with ``tf`` bound to tapejax, after the cells it depends on, and\n"
        "what it prints must equal what TensorFlow 2.21 printed (see guide_harness). Cells that need\n"
        "work in progress elsewhere are strict xfails naming the missing feature.")
    gen("intro", PLAN_INTRO, INTRO_XFAIL, INTRO_SKIP,
        'TensorFlow\'s guide "Introduction to graphs and tf.function" (site/en/guide/intro_to_graphs.ipynb), cell by cell.',
        os.path.join(ROOT, "tests", "test_guide_intro_to_graphs.py"),
        "Every code cell runs unchanged with ``tf`` bound to tapejax, after the cells it depends on, and\n"
        "what it prints must equal what TensorFlow 2.21 printed (see guide_harness). Cells that need\n"
        "work in progress elsewhere are strict xfails naming the missing feature.")


if __name__ == "__main__":
    if sys.argv[1] == "--record":
        record(sys.argv[2], sys.argv[3])
    else:
        main()
