"""Runs TensorFlow guide notebook cells unchanged with ``tf`` bound to tapejax, and compares
what they print with what TensorFlow 2.21 printed (recorded with the same harness on real TF).

A cell's printed output is its stdout plus, like a notebook, the repr of a final expression.
Comparison ignores memory addresses, module paths of exception classes, TF's kernel location
decorations of op errors, and float digits past float32 precision; ``mask_numbers`` ignores
numbers altogether (random values, timings).
"""
import ast
import contextlib
import io
import linecache
import re

import jax

import tapejax

_NUM = re.compile(r"(?<![\w.])-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w])")


def run_cells(cells, names, target):
    """Runs ``cells[n]`` for n in ``names`` in one namespace; returns what ``target`` printed."""
    ns = {"__name__": "__main__", "tf": tapejax}
    out, err = io.StringIO(), io.StringIO()
    start = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        for n in names:
            if n == target:
                jax.effects_barrier()
                start = out.tell()
            _run(cells[n], f"<guide cell {n}>", ns)
        jax.effects_barrier()
    return out.getvalue()[start:]


def _run(src, fname, ns):
    # AutoGraph-style tools read a function's source: register it like a file.
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    tree = ast.parse(src)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, fname, "exec"), ns)
    if last is not None:
        value = eval(compile(last, fname, "eval"), ns)
        if value is not None:
            print(repr(value))


def error_text(fn):
    """``"ExceptionClass: message"`` of what ``fn()`` raises ("no error" if nothing), as a
    notebook shows it (tests compare class and message)."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the test compares class and message
        return f"{type(e).__name__}: {e}"
    return "no error"


def normalize(text):
    text = re.sub(r"0x[0-9a-fA-F]+", "0x?", text)
    # TensorFlow's runtime decorates op errors with where the kernel ran.
    text = re.sub(r"\{\{function_node [^}]*\}\} ", "", text)
    text = re.sub(r" \[Op:\w+\]", "", text)
    text = re.sub(r"<class '(?:[\w]+\.)*(\w+)'>", r"<class '\1'>", text)
    return text.rstrip()


def assert_same_output(actual, expected, mask_numbers=False, rtol=1e-5):
    """``mask_numbers``: False, True (ignore numbers), or "final" (ignore numbers and compare only
    the final expression's repr: what is printed before it depends on random values)."""
    a, e = normalize(actual), normalize(expected)
    if mask_numbers == "final":
        a, e = a[a.rfind("\n<") + 1:], e[e.rfind("\n<") + 1:]
    a_nums, e_nums = _NUM.findall(a), _NUM.findall(e)
    a_text, e_text = _NUM.sub("#", a), _NUM.sub("#", e)
    if mask_numbers:
        # numpy pads numbers to a common width (a space for the sign of a positive first number),
        # and wraps differently in scientific notation (a random draw near 0): with the numbers
        # gone, so is the layout.
        a_text, e_text = (re.sub(r"\[ ", "[", re.sub(r" ?([,\]])", r"\1", re.sub(r"\s+", " ", t)))
                          for t in (a_text, e_text))
    assert a_text == e_text, f"printed output differs.\n--- tapejax:\n{actual}\n--- TensorFlow:\n{expected}"
    if mask_numbers:
        return
    for x, y in zip(a_nums, e_nums):
        fx, fy = float(x), float(y)
        assert abs(fx - fy) <= rtol * max(abs(fx), abs(fy)) + 1e-7, (
            f"number {x} differs from TensorFlow's {y}.\n--- tapejax:\n{actual}\n--- TensorFlow:\n{expected}")
