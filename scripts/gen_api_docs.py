"""Writes the API reference (docs/api/*.md) from the docstrings of tapejax's public names.

    python scripts/gen_api_docs.py          # writes docs/api/
    mkdocs build                            # optional: the site (mkdocs.yml at the repo root)

Introspection, not static analysis: most of tapejax's functions are ops made by
``tapejax.extend.defop`` from a JAX function (``sin = defop(jnp.sin)``), and
what documents them is the function they wrap. tests/test_docs.py uses
:func:`public_names` and :func:`doc_of` to require a docstring for every public
name.
"""
import importlib
import inspect
import re
import sys
import textwrap
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "api"

MODULES = [
    "tapejax", "tapejax.math", "tapejax.nn", "tapejax.linalg", "tapejax.random",
    "tapejax.keras.layers", "tapejax.keras.models", "tapejax.keras.optimizers",
    "tapejax.keras.losses", "tapejax.keras.metrics", "tapejax.keras.callbacks",
    "tapejax.keras.utils", "tapejax.keras.mixed_precision", "tapejax.keras.initializers", "tapejax.keras.saving",
    "tapejax.keras.constraints",
    "tapejax.keras.datasets.mnist", "tapejax.keras.datasets.fashion_mnist",
    "tapejax.data", "tapejax.io", "tapejax.train", "tapejax.saved_model", "tapejax.extend",
    "tapejax.autograph", "tapejax.summary", "tapejax.debugging", "tapejax.dtypes", "tapejax.config",
    "tapejax.strings", "tapejax.ragged", "tapejax.sparse", "tapejax.image", "tapejax.nest", "tapejax.compat",
    "tapejax.signal", "tapejax.lookup", "tapejax.lookup.experimental", "tapejax.audio", "tapejax.sets", "tapejax.test",
    "tapejax.queue",
]


def _is_op(obj):
    from tapejax.extend import Op
    return isinstance(obj, Op)


def public_names(module_name):
    """``[(name, object)]``: the module's ``__all__``, else its non-underscore
    callables defined in tapejax (modules, constants and imported helpers such as
    ``typing.Any`` are not API entries)."""
    mod = importlib.import_module(module_name)
    names = getattr(mod, "__all__", None)
    out = []
    for name in names if names is not None else sorted(dir(mod)):
        if name.startswith("_"):
            continue
        obj = getattr(mod, name)
        if isinstance(obj, types.ModuleType) or not callable(obj):
            continue
        if _is_op(obj) or getattr(obj, "__module__", "").startswith("tapejax"):
            out.append((name, obj))
    return out


def _table_entry(op):
    """The op-table line defining ``op`` when its function is a lambda there, else ``None``.

    The op table is data, one line per op (DESIGN.md, style 3): for
    ``squared_difference = defop(lambda x, y: jnp.square(x - y), ...)`` that line
    is the documentation.
    """
    fn = _unchecked(op)
    if getattr(fn, "__name__", "") != "<lambda>" or not getattr(fn, "__module__", "").startswith("tapejax"):
        return None
    try:
        return inspect.getsource(fn).strip()
    except (OSError, TypeError):
        return None


def doc_of(obj):
    """The docstring documenting ``obj`` (an op: the function it wraps, or its
    op-table line), or ``None``."""
    if _is_op(obj):
        doc = getattr(obj.fn, "__doc__", None)
        entry = _table_entry(obj)
        if not (doc and doc.strip()) and entry:
            m = re.search(r"lambda (.*?)(?:, name=|,?\s*\Z)", entry, re.S)   # a row may span lines
            summary = f"`lambda {' '.join(m.group(1).split())}`" if m else "an op-table entry"
            return f"Defined in the op table: {summary}.\n\n```python\n{entry}\n```"
    elif inspect.isclass(obj) or inspect.isroutine(obj):
        doc = obj.__doc__
    else:  # a callable instance: its own docstring, not its class's
        doc = obj.__doc__ if obj.__doc__ != type(obj).__doc__ else None
    return inspect.cleandoc(doc) if doc and doc.strip() else None


_SECTIONS = {"Args", "Arguments", "Returns", "Yields", "Raises", "Example", "Examples",
             "Attributes", "Note", "Notes", "Warning", "See also"}
_ITEM = re.compile(r"^(\*{0,2}[\w.]+(?: \(.*?\))?):\s*(.*)$")


def _rst_to_md(text):
    """RST roles and literals as markdown: ``x`` and :func:`x` become `x`."""
    text = re.sub(r":(?:func|class|meth|attr|mod|obj|data|exc):`~?([^`]+)`", r"`\1`", text)
    return re.sub(r"``([^`]+)``", r"`\1`", text)


def _fence(lines):
    return ["```python", *lines, "```"]


def to_markdown(doc):
    """A Google-style docstring as markdown: sections as headings, Args as lists,
    examples as fenced code."""
    out, lines, i = [], doc.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        head = line.strip().rstrip(":")
        if line.strip().endswith(":") and head in _SECTIONS and not line.startswith(" "):
            body = []
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith(" ")):
                body.append(lines[i])
                i += 1
            body = textwrap.dedent("\n".join(body)).strip("\n").splitlines()
            out += ["", f"**{head}**", ""]
            if head.startswith("Example"):
                out += _fence(body) if any(b.lstrip().startswith(">>>") for b in body) else body
            elif head in ("Args", "Arguments", "Raises", "Attributes"):
                for b in body:
                    m = _ITEM.match(b)
                    if m and not b.startswith(" "):
                        out.append(f"- `{m.group(1)}`: {_rst_to_md(m.group(2))}")
                    elif b.strip():
                        out[-1] += " " + _rst_to_md(b.strip())
            else:
                out += [_rst_to_md(b) for b in body]
            out.append("")
            continue
        if line.lstrip().startswith(">>>"):  # a doctest outside an Example section
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i])
                i += 1
            out += _fence(textwrap.dedent("\n".join(block)).splitlines())
            continue
        out.append(_rst_to_md(line))
        i += 1
    return "\n".join(out).strip()


def _signature(obj):
    target = obj.fn if _is_op(obj) else obj
    try:
        return str(inspect.signature(target))
    except (TypeError, ValueError):
        return "(...)"


def _tf_name(module_name, name):
    return "tf" + module_name[len("tapejax"):] + "." + name


def _unchecked(op):
    """The op's own function (an op whose inputs share one dtype wraps it in the dtype check)."""
    return op.fn.__wrapped__ if getattr(op.fn, "dtype_checked", False) else op.fn


def _wrapped(obj):
    fn = _unchecked(obj)
    mod = getattr(fn, "__module__", None) or ""
    qual = getattr(fn, "__qualname__", getattr(fn, "__name__", ""))
    if "<lambda>" in qual or mod.startswith("tapejax"):
        return None
    mod = mod.replace("jax._src.numpy", "jax.numpy").replace("jax._src.nn.functions", "jax.nn")
    return f"{mod}.{qual}"


def _entry(module_name, name, obj):
    lines = [f"### `{_tf_name(module_name, name)}`", ""]
    kind = "class" if inspect.isclass(obj) else "op" if _is_op(obj) else "function"
    lines += ["```python", f"{kind} {_tf_name(module_name, name)}{_signature(obj)}", "```", ""]
    doc = doc_of(obj)
    if _is_op(obj):
        wrapped = _wrapped(obj)
        lines.append(f"Tape op `{obj.name}`" + (f" wrapping `{wrapped}`" if wrapped else "")
                     + ": recorded on every tape watching an input; its gradient "
                     + ("is a hand-written rule." if obj.vjp is not None else "comes from JAX."))
        lines.append("")
        if doc and wrapped:  # JAX's long docstring: its summary is enough here
            doc = doc.split("\n\n")[0]
    lines.append(to_markdown(doc) if doc else "*Undocumented.*")
    lines.append("")
    if inspect.isclass(obj):
        for mname, member in sorted(vars(obj).items()):
            if mname.startswith("_") or not (inspect.isfunction(member) or isinstance(member, property)):
                continue
            mdoc = member.__doc__
            if not mdoc:
                continue
            sig = _signature(member).replace("(self, ", "(").replace("(self)", "()") \
                if inspect.isfunction(member) else ""
            lines += [f"#### `{name}.{mname}{sig}`", "", to_markdown(inspect.cleandoc(mdoc)), ""]
    return lines


def _page(module_name):
    mod = importlib.import_module(module_name)
    title = _tf_name(module_name, "")[:-1] if module_name != "tapejax" else "tf"
    lines = [f"# `{title}`", "", f"`{module_name}`" + (" (`import tapejax as tf`)" if title == "tf" else ""), ""]
    if mod.__doc__:
        lines += [to_markdown(inspect.cleandoc(mod.__doc__)), ""]
    entries = public_names(module_name)
    lines += ["| name | summary |", "|---|---|"]
    for name, obj in entries:
        doc = doc_of(obj)
        summary = _rst_to_md(doc.split("\n")[0]).replace("|", "\\|") if doc else ""
        lines.append(f"| [`{name}`](#{_anchor(module_name, name)}) | {summary} |")
    lines.append("")
    for name, obj in entries:
        lines += _entry(module_name, name, obj)
    return "\n".join(lines)


def _anchor(module_name, name):
    return _tf_name(module_name, name).replace(".", "").lower()


def _file(module_name):
    return (module_name.replace("tapejax", "tf", 1) or "tf") + ".md"


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    index = ["# API reference", "",
             "Generated from the docstrings by `python scripts/gen_api_docs.py`. "
             "Write `import tapejax as tf`; the names below are the ones TensorFlow code uses.", ""]
    for module_name in MODULES:
        (OUT / _file(module_name)).write_text(_page(module_name) + "\n")
        n = len(public_names(module_name))
        index.append(f"- [`{_tf_name(module_name, '')[:-1]}`]({_file(module_name)}): {n} names")
    (OUT / "index.md").write_text("\n".join(index) + "\n")
    print(f"wrote {len(MODULES) + 1} pages to {OUT}")


if __name__ == "__main__":
    sys.exit(main())
