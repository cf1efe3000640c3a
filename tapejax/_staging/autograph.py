"""AutoGraph: Python ``if``/``while``/``for`` on tensors inside ``tf.function`` become staged control flow.

The design is TensorFlow's (``tensorflow/python/autograph``): the function's
source is parsed, rewritten and compiled again with the original globals and
closure cells. The rewrite is syntactic and decides nothing; every decision is
made at run time (trace time) by the operators at the end of this module:

* ``if c:`` becomes ``ag__.if_stmt(c, if_body, else_body, get_state, set_state, names)``:
  a Python ``c`` runs one branch in Python; a tensor ``c`` runs ``tf.cond`` over
  both, whose outputs are the variables the branches assign and that are used later.
* ``while`` / ``for`` become ``ag__.while_stmt`` / ``ag__.for_stmt``: over a Python
  condition or iterable they are Python loops (they unroll while tracing); over a
  tensor condition, a tensor (axis 0), ``tf.range`` / ``range`` with tensor bounds,
  or a ``tf.data.Dataset`` they become one ``jax.lax.while_loop`` whose carry is
  the variables the body assigns and that are used later. A dataset's elements
  (in memory) are stacked and indexed by the loop counter; when they differ in
  shape (a last, smaller batch) or the dataset is infinite, the loop runs in
  Python while tracing, which gives the same result in a larger program.
* ``break``, ``continue`` and ``return`` are lowered first into flag variables
  and guarding ``if`` statements (so they work in staged loops); ``and``/``or``/
  ``not`` and ``a if c else b`` dispatch the same way, and every call goes
  through ``converted_call``, which converts user functions recursively.

Which variables a statement carries is decided by a liveness analysis of the
rewritten code, as in TensorFlow, so temporaries of a branch or loop body stay
local and do not need to be defined in every branch.
"""
import ast
import builtins
import functools
import inspect
import itertools
import os
import sysconfig
import textwrap
import traceback
import threading
import types
import warnings
import weakref

import jax
import jax.numpy as jnp
import jaxlib
import numpy as np

from . import control_flow as _control_flow
from .. import errors as _errors
from .._core import logs as _logs, state as _state
from .._core.tensor import Tensor, _TensorBase, to_array, is_tracer
from ..ops import logical_not
from ..ops import logical_and
from ..ops import logical_or
from ..ops.tensor_array import TensorArray, counted_loop, loop_counter
from .._core.dtypes import as_dtype
from .._core.dtypes import np_dtype
from ..ops import range as tf_range

_DO_NOT_CONVERT = "__tapejax_do_not_convert__"
_verbosity = [0]


# ---------------------------------------------------------------------------
# Source analysis: names stored / loaded, liveness, definite assignment
# ---------------------------------------------------------------------------

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _stored(node):
    """Names a statement (or list of them) binds in the current scope (not inside nested scopes)."""
    out = set()

    def visit(n):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
            return
        elif isinstance(n, (ast.Lambda,) + _COMPREHENSIONS):
            return
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                out.add((a.asname or a.name).split(".")[0])
        elif isinstance(n, ast.NamedExpr):
            out.add(n.target.id)
        for c in ast.iter_child_nodes(n):
            visit(c)

    for n in (node if isinstance(node, list) else [node]):
        visit(n)
    return out


def _loaded(node):
    """Names read anywhere in ``node``, nested scopes included (a closure reads them when called)."""
    nodes = node if isinstance(node, list) else [node]
    out = set()
    for n in nodes:
        for m in ast.walk(n):
            if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Load):
                out.add(m.id)
            elif isinstance(m, ast.AugAssign) and isinstance(m.target, ast.Name):
                out.add(m.target.id)
            elif isinstance(m, ast.For) and getattr(m, "_ag_extra_test", None) is not None:
                out |= _loaded(m._ag_extra_test)
    return out


def _live_in(stmts, out):
    """Names whose value, on entry to ``stmts``, may be read before being reassigned."""
    live = set(out)
    for s in reversed(stmts):
        live = _live_stmt(s, live)
    return live


def _loop_head(body, out, reads, kill=frozenset()):
    """Liveness at the head of a loop: a fixpoint over the back edge."""
    head = set(out) | reads
    while True:
        new = set(out) | reads | (_live_in(body, head) - set(kill))
        if new == head:
            return head
        head = new


def _live_stmt(s, out):
    if isinstance(s, ast.If):
        return _loaded(s.test) | _live_in(s.body, out) | _live_in(s.orelse, out)
    if isinstance(s, ast.While):
        return _loop_head(s.body, out | _live_in(s.orelse, out), _loaded(s.test))
    if isinstance(s, ast.For):
        extra = getattr(s, "_ag_extra_test", None)
        reads = _loaded(extra) if extra is not None else set()
        head = _loop_head(s.body, out | _live_in(s.orelse, out), reads, _stored(s.target))
        return head | _loaded(s.iter)
    if isinstance(s, (ast.Assign, ast.AnnAssign)):
        targets = s.targets if isinstance(s, ast.Assign) else [s.target]
        kill = {t.id for t in targets if isinstance(t, ast.Name)}
        for t in targets:
            if isinstance(t, (ast.Tuple, ast.List)):
                kill |= {e.id for e in t.elts if isinstance(e, ast.Name)}
        return (out - kill) | _loaded(s)
    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return (out - {s.name}) | _loaded(s)
    if isinstance(s, ast.Return):
        return _loaded(s)
    if isinstance(s, ast.With):
        targets = _stored([i.optional_vars for i in s.items if i.optional_vars is not None])
        return _loaded([i.context_expr for i in s.items]) | (_live_in(s.body, out) - targets)
    # with, try, expressions, raise, ...: nothing is killed (an over-approximation is safe).
    return out | _loaded(s)


def _assigned_surely(stmts):
    """Names every path through ``stmts`` assigns (the fall-through path)."""
    out = set()
    for s in stmts:
        if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Import, ast.ImportFrom,
                          ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out |= _stored(s)
        elif isinstance(s, ast.If):
            out |= _assigned_surely(s.body) & _assigned_surely(s.orelse)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            out |= _assigned_surely(s.body)
    return out


def _walk_scope(node):
    """Nodes of this function's own scope (nested defs, lambdas and classes not entered)."""
    todo = list(ast.iter_child_nodes(node))
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, _SCOPES):
            todo.extend(ast.iter_child_nodes(n))


def _in_scope(stmts, kind):
    """The nodes of ``kind`` in ``stmts``, not looking inside nested scopes."""
    out, todo = [], list(stmts)
    while todo:
        n = todo.pop()
        if isinstance(n, kind):
            out.append(n)
        if not isinstance(n, _SCOPES):
            todo.extend(ast.iter_child_nodes(n))
    return out


def _declare_globals(stmts, names):
    """``global names`` at the top of every function the rewrite made in ``stmts`` (branch and
    loop bodies): they assign the function's globals as the original statements did."""
    for n in _in_scope(stmts, (ast.FunctionDef,)):
        if not getattr(n, "_ag_own_scope", False):
            n.body.insert(0, ast.Global(names=names))
            _declare_globals(n.body[1:], names)


def _contains(stmts, kinds, stop=()):
    """Whether ``stmts`` contain a node of ``kinds`` in this scope, not looking inside ``stop`` nodes."""
    todo = list(stmts)
    while todo:
        n = todo.pop()
        if isinstance(n, kinds):
            return True
        if isinstance(n, _SCOPES + tuple(stop)):
            continue
        todo.extend(ast.iter_child_nodes(n))
    return False


# ---------------------------------------------------------------------------
# AST building helpers
# ---------------------------------------------------------------------------

def _unplaced(node):
    """A parsed template without positions: it takes those of the statement it replaces."""
    for n in ast.walk(node):
        for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if hasattr(n, attr):
                delattr(n, attr)
    return node


def _place(node, stmt):
    """Gives generated code the position of the keyword of the statement it replaces (``if``,
    ``for``, ``while``), so that a traceback points there."""
    if getattr(stmt, "lineno", None) is None:
        return node     # fix_missing_locations gives it its parent's position
    word = {ast.If: 2, ast.For: 3, ast.While: 5}.get(type(stmt), 1)
    for n in ast.walk(node):
        if "lineno" in n._attributes and getattr(n, "lineno", None) is None:
            n.lineno = n.end_lineno = stmt.lineno
            n.col_offset, n.end_col_offset = stmt.col_offset, stmt.col_offset + word
    return node


def _expr(src):
    return _unplaced(ast.parse(src, mode="eval").body)


def _stmt(src):
    return [_unplaced(s) for s in ast.parse(textwrap.dedent(src)).body]


def _name(id_, load=True, raw=False):
    n = ast.Name(id=id_, ctx=ast.Load() if load else ast.Store())
    if raw:
        n._ag_raw = True
    return n


def _not(e):
    return ast.UnaryOp(op=ast.Not(), operand=e)


def _and(a, b):
    return ast.BoolOp(op=ast.And(), values=[a, b])


def _assign(name, value):
    return ast.Assign(targets=[_name(name, load=False)], value=value)


def _def(name, args, body):
    f = _stmt(f"def {name}({', '.join(args)}):\n    pass")[0]
    f.body = body or [ast.Pass()]
    return f


def _tuple(names):
    """A tuple of the variables themselves: get_state must see an Undefined value, not fail on it."""
    return ast.Tuple(elts=[_name(n, raw=True) for n in names], ctx=ast.Load())


def _strs(names):
    return ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())


# ---------------------------------------------------------------------------
# Lowering: return, break, continue -> flags and guards
# ---------------------------------------------------------------------------

def _always_returns(stmts):
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    return False


def _rewrite_conditional_returns(stmts):
    """``if c: return a`` followed by more code -> the code moves into ``else`` (TensorFlow's
    ConditionalReturnRewriter), so both branches of a tensor ``if`` return."""
    out = []
    for i, s in enumerate(stmts):
        for field in ("body", "orelse", "finalbody"):
            if hasattr(s, field) and not isinstance(s, _SCOPES):
                setattr(s, field, _rewrite_conditional_returns(getattr(s, field)))
        if isinstance(s, ast.Try):
            for h in s.handlers:
                h.body = _rewrite_conditional_returns(h.body)
        out.append(s)
        rest = stmts[i + 1:]
        if isinstance(s, ast.If) and rest:
            body_ret, else_ret = _always_returns(s.body), _always_returns(s.orelse)
            if body_ret and else_ret:
                return out
            if body_ret:
                s.orelse = _rewrite_conditional_returns(s.orelse + rest)
                return out
            if else_ret:
                s.body = _rewrite_conditional_returns(s.body + rest)
                return out
    return out


class _Lowering:
    """Replaces a jump statement by ``flag = True`` and guards what follows it with ``if not flag``."""

    def __init__(self, kind, flag, value_name=None):
        self.kind = kind                 # ast.Return, ast.Break or ast.Continue
        self.flag = flag
        self.value_name = value_name     # retval_ for returns
        # Loops a jump cannot cross: a break/continue belongs to its innermost loop.
        self.stop = () if kind is ast.Return else (ast.For, ast.While, ast.AsyncFor)

    def has(self, stmts):
        return _contains(stmts, self.kind, self.stop)

    def block(self, stmts):
        out = []
        for i, s in enumerate(stmts):
            if not self.has([s]):
                out.append(s)
                continue
            ends = self.ends(s)
            out.extend(self.stmt(s))
            rest = stmts[i + 1:]
            if rest:
                if ends:
                    break   # dead code after the jump
                guard = ast.If(test=_not(_name(self.flag)), body=self.block(rest), orelse=[])
                out.append(_place(guard, rest[0]))
            break
        return out

    def ends(self, s):
        return isinstance(s, self.kind) or (isinstance(s, ast.If) and self.ends_block(s.body)
                                            and self.ends_block(s.orelse))

    def ends_block(self, stmts):
        return bool(stmts) and any(self.ends(s) for s in stmts)

    def stmt(self, s):
        if isinstance(s, self.kind):
            out = [_assign(self.flag, ast.Constant(True))]
            if self.value_name is not None:
                out.append(_assign(self.value_name, s.value or ast.Constant(None)))
            return [_place(a, s) for a in out]
        if isinstance(s, (ast.For, ast.While, ast.AsyncFor)):
            # Only returns cross loops: the loop also stops once the flag is set, and skips its else.
            s.body = self.block(s.body)
            if s.orelse:
                s.orelse = [ast.If(test=_not(_name(self.flag)), body=self.block(s.orelse), orelse=[])]
            if isinstance(s, ast.While):
                s.test = _and(_not(_name(self.flag)), s.test)
            else:
                extra = getattr(s, "_ag_extra_test", None)
                cond = _not(_name(self.flag))
                s._ag_extra_test = cond if extra is None else _and(extra, cond)
            return [s]
        for field in ("body", "orelse", "finalbody"):
            if hasattr(s, field):
                setattr(s, field, self.block(getattr(s, field)))
        if isinstance(s, ast.Try):
            for h in s.handlers:
                h.body = self.block(h.body)
        return [s]


def _lower_returns(fnode):
    fnode.body = _rewrite_conditional_returns(fnode.body)
    nested = any(_contains(s.body + getattr(s, "orelse", []), ast.Return)
                 for s in _walk_scope(fnode) if isinstance(s, (ast.If, ast.For, ast.While)))
    if not nested:
        return
    low = _Lowering(ast.Return, "do_return", "retval_")
    body = low.block(fnode.body)
    fnode.body = [_place(x, fnode) for x in _stmt("do_return = False\nretval_ = ag__.UndefinedReturnValue()")]
    fnode.body += body + [_place(ast.Return(value=ast.Call(func=_expr("ag__.retval"), args=[_name("retval_")],
                                                           keywords=[])), fnode)]


def _lower_loop_jumps(stmts, counter):
    """Lowers break/continue of every loop in ``stmts`` (innermost loops first)."""
    out = []
    for s in stmts:
        if isinstance(s, _SCOPES):
            out.append(s)
            continue
        for field in ("body", "orelse", "finalbody"):
            if hasattr(s, field):
                setattr(s, field, _lower_loop_jumps(getattr(s, field), counter))
        if isinstance(s, ast.Try):
            for h in s.handlers:
                h.body = _lower_loop_jumps(h.body, counter)
        if isinstance(s, (ast.For, ast.While)):
            out.extend(_lower_one_loop(s, counter))
        else:
            out.append(s)
    return out


def _lower_one_loop(loop, counter):
    pre, post = [], []
    cont = _Lowering(ast.Continue, f"continue__{next(counter)}")
    if cont.has(loop.body):
        loop.body = [_place(_assign(cont.flag, ast.Constant(False)), loop)] + cont.block(loop.body)
    brk = _Lowering(ast.Break, f"break__{next(counter)}")
    if brk.has(loop.body):
        pre.append(_assign(brk.flag, ast.Constant(False)))
        loop.body = brk.block(loop.body)
        if isinstance(loop, ast.While):
            loop.test = _and(_not(_name(brk.flag)), loop.test)
        else:
            extra = getattr(loop, "_ag_extra_test", None)
            cond = _not(_name(brk.flag))
            loop._ag_extra_test = cond if extra is None else _and(extra, cond)
        if loop.orelse:
            post.append(ast.If(test=_not(_name(brk.flag)), body=loop.orelse, orelse=[]))
            loop.orelse = []
    elif loop.orelse:
        post, loop.orelse = loop.orelse, []
    return [_place(x, loop) for x in pre + [loop] + post]


# ---------------------------------------------------------------------------
# Expressions: calls, and/or/not, conditional expressions
# ---------------------------------------------------------------------------

_UNCONVERTIBLE = (ast.Yield, ast.YieldFrom, ast.Await, ast.Match)
_UNWRAPPED_CALLS = {"super", "locals", "globals", "vars", "eval", "exec", "__import__"}


class _Expressions(ast.NodeTransformer):
    """Rewrites the expressions of one function; nested functions are converted on their own."""

    def __init__(self, converter):
        self.converter = converter

    def visit_FunctionDef(self, node):
        if _contains(node.body, _UNCONVERTIBLE):
            node._ag_own_scope = True   # a nested generator runs as written
        else:
            self.converter.function(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        return node

    def visit_For(self, node):
        self.generic_visit(node)
        if isinstance(node.iter, ast.Call) and _is_ag_call(node.iter):
            # tf.range(n) with a tensor n is staged, not materialized.
            node.iter.keywords.append(ast.keyword(arg="iterated", value=ast.Constant(True)))
        if getattr(node, "_ag_extra_test", None) is not None:
            node._ag_extra_test = self.visit(node._ag_extra_test)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id in _UNWRAPPED_CALLS:
            return node
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "ag__":
            return node
        args = ast.Tuple(elts=node.args, ctx=ast.Load())
        if node.keywords:
            kw = ast.Dict(keys=[ast.Constant(k.arg) if k.arg else None for k in node.keywords],
                          values=[k.value for k in node.keywords])
        else:
            kw = ast.Constant(None)
        func = _expr("ag__.converted_call")
        for n in [*ast.walk(func), args, kw]:
            # Python 3.11 reports a method call at its attribute's line: the user's line here.
            ast.copy_location(n, node)
        return ast.copy_location(ast.Call(func=func, args=[f, args, kw], keywords=[]), node)

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        fn = "ag__.and_" if isinstance(node.op, ast.And) else "ag__.or_"
        out = node.values[-1]
        for v in reversed(node.values[:-1]):
            out = ast.Call(func=_expr(fn), args=[_lambda(v), _lambda(out)], keywords=[])
        return ast.copy_location(out, node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(ast.Call(func=_expr("ag__.not_"), args=[node.operand], keywords=[]), node)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return ast.copy_location(
            ast.Call(func=_expr("ag__.if_exp"), args=[node.test, _lambda(node.body), _lambda(node.orelse)],
                     keywords=[]), node)


def _lambda(body):
    lam = _expr("lambda: None")
    lam.body = body
    return lam


# ---------------------------------------------------------------------------
# Control flow: if / while / for -> ag__ operators over body functions
# ---------------------------------------------------------------------------

class _Converter:
    def __init__(self):
        self.counter = itertools.count(1)
        self.globals = frozenset()   # the names the function being converted declares `global`

    # -- one function (each nested def is its own scope) ----------------------

    def function(self, fnode):
        fnode._ag_own_scope = True
        _lower_returns(fnode)
        fnode.body = _lower_loop_jumps(fnode.body, self.counter)
        ex = _Expressions(self)
        fnode.body = [ex.visit(s) for s in fnode.body]
        params = {a.arg for a in fnode.args.args + fnode.args.posonlyargs + fnode.args.kwonlyargs}
        params |= {a.arg for a in (fnode.args.vararg, fnode.args.kwarg) if a is not None}
        self.maybe_undefined = set()
        outer, self.globals = self.globals, frozenset(
            n for g in _in_scope(fnode.body, ast.Global) for n in g.names)
        try:
            fnode.body = self.block(fnode.body, set(), set(params))
        finally:
            globals_, self.globals = self.globals, outer
        if globals_:
            _declare_globals(fnode.body, sorted(globals_))
        _LoadChecks(self.maybe_undefined).visit_body(fnode)

    def block(self, stmts, live_out, defined):
        lives = [None] * len(stmts)
        live = set(live_out)
        for i in range(len(stmts) - 1, -1, -1):
            lives[i] = live
            live = _live_stmt(stmts[i], live)
        out = []
        defined = set(defined)
        for s, lo in zip(stmts, lives):
            if isinstance(s, ast.If):
                out.extend(self.if_(s, lo, defined))
            elif isinstance(s, ast.While):
                out.extend(self.while_(s, lo, defined))
            elif isinstance(s, ast.For):
                out.extend(self.for_(s, lo, defined))
            else:
                for field in ("body", "orelse", "finalbody"):
                    if hasattr(s, field) and not isinstance(s, _SCOPES):
                        setattr(s, field, self.block(getattr(s, field), lo | _loaded(s), defined))
                if isinstance(s, ast.Try):
                    for h in s.handlers:
                        h.body = self.block(h.body, lo | _loaded(s), defined)
                out.append(s)
            defined |= _assigned_surely([s])
        return out

    def _state(self, names, defined):
        """The undefined-placeholders and get_state/set_state functions for ``names``."""
        names = sorted(names)
        pre = []
        for n in names:
            if n not in defined:
                self.maybe_undefined.add(n)
                pre += _stmt(f"if '{n}' not in locals():\n    {n} = ag__.Undefined('{n}')")
        k = next(self.counter)
        get, put = f"get_state_{k}", f"set_state_{k}"
        g = _def(get, [], [ast.Return(value=_tuple(names))])
        s = _def(put, ["vars_"], [ast.Nonlocal(names=names),
                                  ast.Assign(targets=[ast.Tuple(elts=[_name(n, load=False) for n in names],
                                                                ctx=ast.Store())], value=_name("vars_"))]
                 if names else [])
        return pre, [g, s], get, put, k

    @staticmethod
    def _nonlocal(names):
        return [ast.Nonlocal(names=sorted(names))] if names else []

    def if_(self, s, live_out, defined):
        modified = _stored(s.body) | _stored(s.orelse)
        names = (modified & (live_out | _live_in(s.body, live_out) | _live_in(s.orelse, live_out))) - self.globals
        pre, fns, get, put, k = self._state(names, defined)
        inner = defined | names
        body = self._nonlocal(names) + self.block(s.body, live_out, inner)
        orelse = self._nonlocal(names) + self.block(s.orelse, live_out, inner)
        call = ast.Call(func=_expr("ag__.if_stmt"),
                        args=[s.test, _name(f"if_body_{k}"), _name(f"else_body_{k}"), _name(get), _name(put),
                              _strs(sorted(names))], keywords=[])
        stmts = pre + [_def(f"if_body_{k}", [], body), _def(f"else_body_{k}", [], orelse)] + fns
        return [_place(x, s) for x in stmts + [ast.Expr(call)]]

    def _options(self, body):
        """``tf.autograph.experimental.set_loop_options(...)`` at the top of a loop body -> kwargs."""
        opts = ast.Dict(keys=[], values=[])
        rest = []
        for st in body:
            call = st.value if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) else None
            f = call.args[0] if call is not None and call.args and _is_ag_call(call) else None
            if getattr(f, "attr", getattr(f, "id", None)) == "set_loop_options":
                kw = call.args[2]
                if isinstance(kw, ast.Dict):
                    opts.keys.extend(kw.keys)
                    opts.values.extend(kw.values)
                continue
            rest.append(st)
        return opts, rest

    def while_(self, s, live_out, defined):
        opts, s.body = self._options(s.body)
        head = _live_stmt(s, live_out)
        names = (_stored(s.body) & (head | _live_in(s.body, head))) - self.globals
        pre, fns, get, put, k = self._state(names, defined)
        body = self._nonlocal(names) + self.block(s.body, head, defined | names)
        stmts = pre + [_def(f"loop_test_{k}", [], [ast.Return(value=s.test)]),
                       _def(f"loop_body_{k}", [], body)] + fns
        call = ast.Call(func=_expr("ag__.while_stmt"),
                        args=[_name(f"loop_test_{k}"), _name(f"loop_body_{k}"), _name(get), _name(put),
                              _strs(sorted(names)), opts], keywords=[])
        return [_place(x, s) for x in stmts + [ast.Expr(call)]]

    def for_(self, s, live_out, defined):
        opts, s.body = self._options(s.body)
        head = _live_stmt(s, live_out)
        extra = getattr(s, "_ag_extra_test", None)
        target = _stored(s.target)
        names = ((_stored(s.body) | target) & (head | (_live_in(s.body, head) - target))) - self.globals
        pre, fns, get, put, k = self._state(names, defined)
        body = (self._nonlocal(names)
                + [ast.Assign(targets=[s.target], value=_name("itr"))]
                + self.block(s.body, head, defined | names | _stored(s.target)))
        stmts = pre + [_def(f"loop_body_{k}", ["itr"], body)]
        if extra is not None:
            stmts.append(_def(f"extra_test_{k}", [], [ast.Return(value=extra)]))
        stmts += fns
        call = ast.Call(func=_expr("ag__.for_stmt"),
                        args=[s.iter, _name(f"extra_test_{k}") if extra is not None else ast.Constant(None),
                              _name(f"loop_body_{k}"), _name(get), _name(put), _strs(sorted(names)), opts],
                        keywords=[])
        return [_place(x, s) for x in stmts + [ast.Expr(call)]]


def _is_ag_call(call):
    f = call.func
    return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "ag__" \
        and f.attr == "converted_call"


class _LoadChecks(ast.NodeTransformer):
    """Reads of a possibly undefined variable go through ``ag__.ld`` (UnboundLocalError, as Python)."""

    def __init__(self, names):
        self.names = names

    def visit_body(self, fnode):
        fnode.body = [self.visit(s) for s in fnode.body]

    def visit_FunctionDef(self, node):
        if getattr(node, "_ag_own_scope", False):
            return node
        return self.generic_visit(node)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.names and not getattr(node, "_ag_raw", False):
            return ast.copy_location(ast.Call(func=_expr("ag__.ld"), args=[node], keywords=[]), node)
        return node


class _Unsupported(Exception):
    pass


# ---------------------------------------------------------------------------
# Converting a Python function
# ---------------------------------------------------------------------------

_converted = weakref.WeakKeyDictionary()     # function -> converted function (itself when not converted)
_factories = {}                              # code object -> (factory code, source)
_generated = set()                           # code objects of converted code (never converted again)
_owners = {}                                 # converted code object -> the converted function it is in
_warned = set()
_lock = threading.RLock()


def _internal_dirs():
    paths = sysconfig.get_paths()
    dirs = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    dirs.add(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # the tapejax package
    return tuple(os.path.abspath(d) + os.sep for d in dirs if d)


_INTERNAL = _internal_dirs()


def _is_user_function(fn):
    if not isinstance(fn, types.FunctionType) or getattr(fn, _DO_NOT_CONVERT, False):
        return False
    code = fn.__code__
    if code in _generated or code.co_flags & (
            inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        return False
    fname = code.co_filename
    if fname.startswith("<"):
        return True     # doctest, notebook, exec'd code: tried (a warning if its source is missing)
    return not os.path.abspath(fname).startswith(_INTERNAL)


def convert(fn):
    """The AutoGraph-converted version of a callable (``fn`` itself when it is not converted).

    Plain functions, bound methods and objects with a ``__call__`` method are
    converted when their code is user code. Library code (tapejax, jax, numpy,
    the standard library, installed packages), functions marked with
    ``do_not_convert``, generators, classes and already converted functions are
    returned unchanged. When the source cannot be read or transformed, a warning
    says so once and ``fn`` runs as it is, as in TensorFlow.
    """
    if isinstance(fn, type) or getattr(fn, _DO_NOT_CONVERT, False):   # tf.function objects too
        return fn
    if isinstance(fn, types.FunctionType):
        return _convert_function(fn)
    if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
        conv = _convert_function(fn.__func__)
        return fn if conv is fn.__func__ else types.MethodType(conv, fn.__self__)
    if isinstance(fn, functools.partial):
        conv = convert(fn.func)
        return fn if conv is fn.func else functools.partial(conv, *fn.args, **fn.keywords)
    call = getattr(type(fn), "__call__", None)
    if isinstance(call, types.FunctionType) and _is_user_function(call):
        conv = _convert_function(call)
        return fn if conv is call else types.MethodType(conv, fn)
    return fn


def _convert_function(fn):
    if not _is_user_function(fn):
        return fn
    with _lock:
        try:
            return _converted[fn]
        except KeyError:
            pass
        try:
            new = _convert(fn)
        except Exception as e:  # noqa: BLE001 - any failure means: run it unconverted, as TF does
            new = fn
            key = fn.__code__
            if key not in _warned:
                _warned.add(key)
                warnings.warn(
                    f"AutoGraph could not transform {fn!r} and will run it as-is.\nCause: {e}\n"
                    "To silence this warning, decorate the function with "
                    "@tf.autograph.experimental.do_not_convert", stacklevel=3)
        _converted[fn] = new
        return new


def _source_node(fn):
    """The function's definition, parsed, with its indentation in the file (dedented for parsing)."""
    try:
        # From the code object: inspect.getsource(fn) would follow a decorator's __wrapped__.
        raw = inspect.getsource(fn.__code__)
    except (OSError, TypeError) as e:
        raise _Unsupported(f"its source code is not available ({e})") from None
    src = textwrap.dedent(raw)
    indent = len(raw) - len(raw.lstrip(" \t")) - (len(src) - len(src.lstrip(" \t")))
    return _definition(fn, src), indent


def _definition(fn, src):
    if fn.__name__ != "<lambda>":
        try:
            tree = ast.parse(src)
        except SyntaxError as e:
            raise _Unsupported(f"its source could not be parsed ({e})") from None
        code = fn.__code__
        args = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name:
                a = node.args
                if [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs] == args:
                    return node
        raise _Unsupported("its definition was not found in its source")
    tree = None
    for cand in (src, src.strip().rstrip(",;"), "(" + src.strip().rstrip(",;") + ")"):
        try:
            tree = ast.parse(cand)
            break
        except SyntaxError:
            continue
    if tree is None:
        raise _Unsupported("the source of the lambda could not be parsed on its own")
    args = list(fn.__code__.co_varnames[:fn.__code__.co_argcount])
    lams = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and [a.arg for a in n.args.args] == args]
    if len(lams) != 1:
        raise _Unsupported("several lambdas with the same arguments share its source line")
    lam = lams[0]
    f = _def(fn.__name__.replace("<lambda>", "lambda__"), [], [ast.Return(value=lam.body)])
    f.args = lam.args
    return f


def _transform(fn):
    node, indent = _source_node(fn)
    node.decorator_list = []    # @tf.function itself, among others
    if _contains(node.body, _UNCONVERTIBLE):
        raise _Unsupported("generators, coroutines and `match` statements are not converted")
    node.name = "tf__" + node.name.replace("<lambda>", "lambda")
    _Converter().function(node)
    freevars = list(fn.__code__.co_freevars)
    factory = _def("create_converted_entity_factory", [], [])
    inner = _def("create_converted_entity", ["ag__"] + freevars, [node, ast.Return(value=_name(node.name))])
    factory.body = [inner, ast.Return(value=_name(inner.name))]
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    # Positions in the user's file: tracebacks through converted code show the user's lines.
    ast.increment_lineno(module, fn.__code__.co_firstlineno - 1)
    for n in ast.walk(module):
        if getattr(n, "col_offset", None) is not None:
            n.col_offset += indent
            if getattr(n, "end_col_offset", None) is not None:
                n.end_col_offset += indent
    return module, node


def _convert(fn):
    entry = _factories.get(fn.__code__)
    if entry is None:
        # One transformation per code object; closures and defaults are bound per function.
        module, node = _transform(fn)
        code = compile(module, fn.__code__.co_filename, "exec")
        _generated.update(_nested_codes(code))
        for c in _nested_codes(code):
            if c.co_name.startswith("tf__"):
                _owners.update((n, c) for n in _nested_codes(c))
        entry = _factories[fn.__code__] = (code, ast.unparse(node))
        if _verbosity[0] >= 3:
            _logs.info("AutoGraph converted %s:\n%s", fn.__qualname__, entry[1])
    code, source = entry
    ns = {}
    exec(code, fn.__globals__, ns)  # noqa: S102 - the user's own function, rewritten
    make = ns["create_converted_entity_factory"]()
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    new = make(_ag, *[cells[n].cell_contents if _cell_full(cells[n]) else None for n in fn.__code__.co_freevars])
    # The converted function shares the original closure cells, so it sees later rebinding.
    closure = tuple(cells[n] if n in cells else types.CellType(_ag) for n in new.__code__.co_freevars)
    out = types.FunctionType(new.__code__, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    out.__kwdefaults__ = fn.__kwdefaults__
    functools.update_wrapper(out, fn)
    del out.__wrapped__     # the cache maps fn -> out weakly; out must not keep fn alive
    out._ag_source = source
    setattr(out, _DO_NOT_CONVERT, True)
    return out


def _nested_codes(code):
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _nested_codes(c)


def _cell_full(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


# ---------------------------------------------------------------------------
# Run-time operators (the ``ag__`` module of converted code)
# ---------------------------------------------------------------------------

class Undefined:
    """The value of a variable that is not defined yet (it may be defined in a branch or loop)."""

    __slots__ = ("symbol_name",)

    def __init__(self, symbol_name):
        self.symbol_name = symbol_name

    def __repr__(self):
        return f"Undefined({self.symbol_name!r})"


class UndefinedReturnValue:
    """The return value of a function that has not returned yet."""

    __slots__ = ()


def ld(v):
    """A read of a possibly undefined variable."""
    if isinstance(v, Undefined):
        raise UnboundLocalError(f"'{v.symbol_name}' is used before assignment")
    return v


def retval(v):
    return None if isinstance(v, UndefinedReturnValue) else v


def _is_tensor(x):
    return isinstance(x, _TensorBase) or is_tracer(x)


def not_(x):
    if _is_tensor(x):
        return logical_not(x)
    return not x


def and_(a, b):
    a = a()
    if _is_tensor(a):
        return logical_and(a, b())
    return a and b()


def or_(a, b):
    a = a()
    if _is_tensor(a):
        return logical_or(a, b())
    return a or b()


def if_exp(cond, if_true, if_false):
    if _is_tensor(cond):
        return _control_flow.cond(cond, if_true, if_false)
    return if_true() if cond else if_false()


def _spec(x):
    """(structure, [(shape, dtype)]) of a value carried by control flow."""
    # A TensorArray is one leaf: its layout may be completed by the first iteration (the loop
    # learns its element shape), which is not a change of the variable.
    leaves, tree = jax.tree_util.tree_flatten(x, is_leaf=lambda t: isinstance(t, (_TensorBase, TensorArray)))
    specs = []
    for leaf in leaves:
        if isinstance(leaf, TensorArray):
            specs.append(((), np.dtype(leaf.dtype)))
            continue
        a = leaf._value if isinstance(leaf, _TensorBase) else to_array(leaf)
        specs.append((tuple(a.shape), np.dtype(a.dtype)))
    return tree, specs


def _fmt_shape(s):
    return "(" + ", ".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"


# -- if ----------------------------------------------------------------------

def if_stmt(cond, body, orelse, get_state, set_state, names):
    """``if cond: body() else: orelse()``; ``tf.cond`` over both when ``cond`` is a tensor."""
    if not _is_tensor(cond):
        if cond:
            body()
        else:
            orelse()
        return
    _check_scalar(cond, "an `if`")
    init = get_state()
    results = {}
    nones = []

    def branch(fn, which):
        def run():
            set_state(init)
            fn()
            out = get_state()
            for n, v in zip(names, out):
                if isinstance(v, UndefinedReturnValue):
                    raise ValueError(f"the {which} branch must also have a return statement.")
                if isinstance(v, Undefined):
                    raise ValueError(f"'{n}' must also be initialized in the {which} branch")
            # None is reported once both branches ran (a missing value in the other one comes first).
            nones.extend((n, which) for n, v in zip(names, out) if v is None)
            results[which] = out
            return tuple(False if v is None else v for v in out)
        return run

    try:
        final = _control_flow.cond(cond, branch(body, "main"), branch(orelse, "else"))
    except TypeError:
        if len(results) == 2 and not nones:
            _check_branches(names, results["main"], results["else"])
        if not nones:
            raise
    if nones:
        raise ValueError(f"'{nones[0][0]}' is None at the end of the {nones[0][1]} branch.")
    set_state(final)


def _check_scalar(cond, what):
    shape = np.shape(cond._value if isinstance(cond, _TensorBase) else cond)
    if shape != ():
        raise ValueError(f"The condition of {what} must be a scalar boolean tensor, got shape "
                         f"{_fmt_shape(shape)}. Reduce it first: tf.reduce_any(c) or tf.reduce_all(c).")


def _check_branches(names, a, b):
    for n, x, y in zip(names, a, b):
        (ta, sa), (tb, sb) = _spec(x), _spec(y)
        if ta != tb:
            raise TypeError(f"'{n}' must have the same nested structure in the main and else branches: "
                            f"{ta} and {tb}.")
        for (sha, dta), (shb, dtb) in zip(sa, sb):
            if dta != dtb:
                raise TypeError(f"'{n}' has dtype {_dt(dta)} in the main branch, but dtype {_dt(dtb)} "
                                "in the else branch")
            if sha != shb:
                raise ValueError(
                    f"'{n}' has shape {_fmt_shape(sha)} in the main branch, but shape {_fmt_shape(shb)} in "
                    "the else branch. tapejax compiles with XLA, whose branches must agree on shapes: "
                    "pad or reshape the values so that both branches give the same shape.")


def _dt(d):
    return as_dtype(d).name


# -- loops -------------------------------------------------------------------

class _StagedRange:
    """``tf.range`` / ``range`` with tensor bounds, as the iterable of a ``for``: a staged counter."""

    def __init__(self, start, limit, delta, dtype):
        self.start, self.limit, self.delta, self.dtype = start, limit, delta, dtype


def _range_args(args, kwargs):
    args = list(args)
    if "limit" not in kwargs and len(args) == 1:
        args = [0] + args
    start = kwargs.get("start", args[0] if args else 0)
    limit = kwargs.get("limit", args[1] if len(args) > 1 else None)
    delta = kwargs.get("delta", args[2] if len(args) > 2 else 1)
    return start, limit, delta, kwargs.get("dtype")


def while_stmt(test, body, get_state, set_state, names, opts):
    """``while test(): body()``; one ``jax.lax.while_loop`` when ``test()`` is a tensor."""
    t = test()
    if not _is_tensor(t):
        while t:
            body()
            t = test()
            if _is_traced(t):
                raise NotImplementedError(
                    "The condition of this Python while loop became a tensor after an iteration (a "
                    "variable it reads was assigned a tensor in the loop). Make the condition a "
                    "tensor from the start, e.g. `i = tf.constant(0)`, so the loop is staged.")
        return
    _check_scalar(t, "a `while` loop")
    _staged_loop(lambda i: test(), lambda i: body(), get_state, set_state, names, opts,
                 opts.get("maximum_iterations"))


def for_stmt(iter_, extra_test, body, get_state, set_state, names, opts):
    """``for x in iter_: body(x)``; staged over a tensor, a staged range or a ``tf.data.Dataset``."""
    if isinstance(iter_, _StagedRange):
        return _for_range(iter_, extra_test, body, get_state, set_state, names, opts)
    elements_of = getattr(iter_, "_autograph_elements", None)   # a tf.data.Dataset
    elements = None if elements_of is None else elements_of()
    infinite = elements_of is not None and elements is None
    if elements is not None:
        stacked = _stack(elements)
        if stacked is None:     # elements of different shapes: a loop unrolled over them gives TF's result
            iter_ = elements
        else:
            return _for_arrays(stacked, len(elements), extra_test, body, get_state, set_state, names, opts)
    if _is_tensor(iter_):
        x = iter_ if isinstance(iter_, _TensorBase) else Tensor(iter_)
        if not x.shape:
            raise TypeError("Cannot iterate over a scalar tensor.")
        return _for_arrays(x._value, x.shape[0], extra_test, body, get_state, set_state, names, opts)
    for itr in iter_:
        if extra_test is not None:
            go = extra_test()
            if _is_tensor(go) and infinite:
                raise NotImplementedError(
                    "A `for` loop over an infinite tf.data.Dataset inside tf.function runs while tracing, "
                    "so it cannot stop on a tensor condition (break/return). Bound it first: "
                    "`for x in dataset.take(n):`.")
            if _is_tensor(go):
                raise NotImplementedError(
                    "break and return statements which depend on a TF condition are not supported in "
                    "Python for loops. Did you intend to make it a TF loop? Iterate over a tensor or "
                    "tf.range(n) instead of a Python range or list so that the loop is staged.")
            if not go:
                break
        body(itr)


def _stack(elements):
    if not elements:
        return None
    trees = [jax.tree_util.tree_flatten(e, is_leaf=lambda t: isinstance(t, _TensorBase)) for e in elements]
    tree0 = trees[0][1]
    if any(t != tree0 for _, t in trees) or not all(isinstance(x, _TensorBase) for x in trees[0][0]):
        return None
    cols = list(zip(*[leaves for leaves, _ in trees]))
    if any(len({(x.shape, x.dtype) for x in col}) != 1 for col in cols):
        return None
    return jax.tree_util.tree_unflatten(tree0, [jnp.stack([x._value for x in col]) for col in cols])


def _for_arrays(stacked, n, extra_test, body, get_state, set_state, names, opts):
    def element(i):
        return jax.tree_util.tree_map(lambda a: loop_counter(Tensor(a[i])), stacked)

    limit = n if opts.get("maximum_iterations") is None else min(n, int(opts["maximum_iterations"]))
    test = (lambda i: i < n) if extra_test is None else (lambda i: jnp.logical_and(i < n, to_array(extra_test())))
    largest = None
    if extra_test is None and limit and isinstance(stacked, (np.ndarray, jax.Array)) and not is_tracer(stacked) \
            and stacked.ndim == 1 and stacked.dtype.kind in "iu":
        largest = int(np.max(np.asarray(stacked)[:limit]))   # a loop over integers known now
    with counted_loop(largest):
        _staged_loop(test, lambda i: body(element(i)), get_state, set_state, names, opts, limit)


def _for_range(r, extra_test, body, get_state, set_state, names, opts):
    start, limit, delta = (to_array(v) for v in (r.start, r.limit, r.delta))
    dtype = r.dtype or jnp.result_type(start, limit, delta)
    dtype = np_dtype(dtype)
    start, limit, delta = (jnp.asarray(v).astype(dtype) for v in (start, limit, delta))

    def value(i):
        return loop_counter(Tensor(start + delta * i.astype(dtype)))

    def in_range(i):
        v = start + delta * i.astype(dtype)
        return jnp.where(delta > 0, v < limit, v > limit)

    test = in_range if extra_test is None else (lambda i: jnp.logical_and(in_range(i), to_array(extra_test())))
    with counted_loop(None if extra_test is not None else _largest(r, opts.get("maximum_iterations"))):
        _staged_loop(test, lambda i: body(value(i)), get_state, set_state, names, opts,
                     opts.get("maximum_iterations"))


def _largest(r, maximum_iterations):
    """The largest value of a staged range whose bounds are known while tracing (a static shape,
    ``tf.shape(x)[0]``), or None."""
    bounds = []
    for v in (r.start, r.limit, r.delta):
        b = v if not isinstance(v, _TensorBase) else (_state.known_value(v) if _is_traced(v) else v.numpy())
        if b is None or is_tracer(b) or np.ndim(b) or np.asarray(b).dtype.kind not in "iu":
            return None
        bounds.append(int(b))
    if bounds[2] == 0:
        return None       # tf.range raises its own error
    values = range(*bounds)[:maximum_iterations]
    return max(values) if values else None


def _staged_loop(test, body, get_state, set_state, names, opts, limit):
    """One jax.lax.while_loop over the loop variables ``names`` and an iteration counter."""
    init = list(get_state())
    for n, v in zip(names, init):
        if isinstance(v, UndefinedReturnValue):
            raise NotImplementedError(
                "a return statement cannot be placed inside this TensorFlow loop; this may happen if a "
                "return statement depends on a static Python condition such as a hyperparameter")
    missing = [k for k, v in enumerate(init) if isinstance(v, Undefined) or v is None]
    if missing:
        init = _placeholders(init, missing, body, get_state, set_state, names)

    def cond_fn(i, *lv):
        set_state(lv)
        return test(i._value if isinstance(i, _TensorBase) else i)

    def body_fn(i, *lv):
        # The carry, not ``init``: the loop may have completed it (a TensorArray's element shape).
        before = [_spec(v) for v in lv]
        set_state(lv)
        body(i._value)
        new = get_state()
        for n, b, v in zip(names, before, new):
            _check_loop_var(n, b, v, opts)
        return (i + 1,) + tuple(new)

    lv = (Tensor(jnp.asarray(0, jnp.int32)),) + tuple(init)
    final = _control_flow._traced_loop(cond_fn, body_fn, lv, lambda f, lv: f(*lv),
                                       lambda new, lv: tuple(new), limit)
    set_state(tuple(final[1:]))


def _check_loop_var(n, before, v, opts):
    if isinstance(v, (Undefined, UndefinedReturnValue)) or v is None:
        raise ValueError(f"'{n}' must be defined before the loop, and keep a tensor value in every iteration.")
    (tb, sb), (ta, sa) = before, _spec(v)
    if tb != ta:
        raise TypeError(f"'{n}' does not have the same nested structure after one iteration: {tb} before "
                        f"the loop, {ta} after it.")
    for (shb, dtb), (sha, dta) in zip(sb, sa):
        if dtb != dta:
            raise TypeError(f"'{n}' has dtype {_dt(dtb)} before the loop, but dtype {_dt(dta)} after one "
                            "iteration")
        if shb != sha:
            msg = (f"'{n}' has shape {_fmt_shape(shb)} before the loop, but shape {_fmt_shape(sha)} after one "
                   "iteration. ")
            if opts.get("shape_invariants") is None:
                msg += "Use tf.autograph.experimental.set_loop_options to set shape invariants. "
            raise ValueError(msg + "tapejax compiles loops with XLA, which keeps the shape of a loop variable "
                             "fixed (also under shape_invariants): pad it to its largest size and keep a "
                             "length or a mask alongside it.")


def _placeholders(init, missing, body, get_state, set_state, names):
    """Zeros with the shape and dtype one iteration gives a variable first defined inside the loop
    (TensorFlow does the same)."""
    writes = _state.Scope()  # the probe's writes never reach the Variables
    trees = {}

    def probe():
        set_state(init)
        with writes:
            body(jnp.asarray(0, jnp.int32))
        out = get_state()
        arrays = []
        for k in missing:
            v = out[k]
            if isinstance(v, (Undefined, UndefinedReturnValue)) or v is None:
                raise _StillUndefined(f"'{names[k]}' is still undefined after one iteration")
            leaves, trees[k] = jax.tree_util.tree_flatten(v, is_leaf=lambda t: isinstance(t, _TensorBase))
            arrays.append([x._value if isinstance(x, _TensorBase) else to_array(x) for x in leaves])
        return arrays

    try:
        try:
            shapes = jax.eval_shape(probe)
        finally:
            set_state(init)
    except (UnboundLocalError, _StillUndefined) as e:
        n = str(e).split("'")[1]
        raise ValueError(f"'{n}' must be defined before the loop\nNote: AutoGraph tried to define it "
                         f"automatically, but ran into a {type(e).__name__}: {e}") from None
    out = list(init)
    for k, sds in zip(missing, shapes):
        out[k] = jax.tree_util.tree_unflatten(trees[k], [Tensor(jnp.zeros(s.shape, s.dtype)) for s in sds])
    return out


class _StillUndefined(Exception):
    pass


# -- calls -------------------------------------------------------------------

def converted_call(f, args, kwargs, iterated=False):
    """Calls ``f(*args, **kwargs)``, converting ``f`` first when it is a user function."""
    kwargs = kwargs or {}
    if iterated and (f is tf_range or _is_range(f) and any(_is_traced(a) for a in list(args) + list(kwargs.values()))):
        r = _StagedRange(*_range_args(args, kwargs))   # a tf.range (or a range of tensors): a staged counter
        if isinstance(r.delta, (int, float)) and r.delta == 0:
            return tf_range(*args, **kwargs)            # raises TensorFlow's error for a zero delta
        return r
    if f is builtins.range and any(_is_tensor(a) for a in args):
        return tf_range(*args)
    return convert(f)(*args, **kwargs)


def _is_range(f):
    return f is tf_range or f is builtins.range


def _is_traced(x):
    return is_tracer(x._value if isinstance(x, _TensorBase) else x)


class _AgModule:
    """What converted code calls ``ag__``."""

    Undefined = Undefined
    UndefinedReturnValue = UndefinedReturnValue
    ld = staticmethod(ld)
    retval = staticmethod(retval)
    not_ = staticmethod(not_)
    and_ = staticmethod(and_)
    or_ = staticmethod(or_)
    if_exp = staticmethod(if_exp)
    if_stmt = staticmethod(if_stmt)
    while_stmt = staticmethod(while_stmt)
    for_stmt = staticmethod(for_stmt)
    converted_call = staticmethod(converted_call)


_ag = _AgModule()


# ---------------------------------------------------------------------------
# Public helpers (tf.autograph)
# ---------------------------------------------------------------------------

def do_not_convert(func=None):
    """Marks a function so AutoGraph runs it as written (``tf.autograph.experimental.do_not_convert``).

    Example:
        >>> import tapejax as tf
        >>> @tf.autograph.experimental.do_not_convert
        ... def python_only(x):
        ...     return [x] * 2
        >>> tf.autograph.to_code(python_only) is None
        True
    """
    if func is None:
        return do_not_convert
    try:
        setattr(func, _DO_NOT_CONVERT, True)
        return func
    except (AttributeError, TypeError):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            return func(*args, **kwargs)
        setattr(wrapper, _DO_NOT_CONVERT, True)
        return wrapper


def set_loop_options(parallel_iterations=None, swap_memory=None, maximum_iterations=None,
                     shape_invariants=None):
    """Options of the loop whose body starts with this call (``tf.autograph.experimental.set_loop_options``).

    AutoGraph reads the call from the source: ``maximum_iterations`` bounds a staged
    loop; ``shape_invariants``, ``parallel_iterations`` and ``swap_memory`` are
    accepted (XLA loops keep the shapes of their variables fixed). Outside a
    converted loop the call does nothing.

    Example:
        >>> import tapejax as tf
        >>> @tf.function
        ... def count(n):
        ...     i = tf.constant(0)
        ...     while i < n:
        ...         tf.autograph.experimental.set_loop_options(maximum_iterations=3)
        ...         i += 1
        ...     return i
        >>> print(count(tf.constant(10)).numpy())
        3
    """
    return None


def to_graph(entity, recursive=True, experimental_optional_features=None):
    """The converted Python function, with staged control flow (``tf.autograph.to_graph``).

    Example:
        >>> import tapejax as tf
        >>> def f(x):
        ...     return x if x > 0 else -x
        >>> g = tf.autograph.to_graph(f)
        >>> print(tf.function(g)(tf.constant(-2.0)).numpy())
        2.0
    """
    return convert(entity)


def to_code(entity, recursive=True, experimental_optional_features=None):
    """The source of the converted function, as a string (``tf.autograph.to_code``).

    Returns ``None`` for a function that is not converted (``do_not_convert``, library code).

    Example:
        >>> import tapejax as tf
        >>> def f(x):
        ...     if x > 0:
        ...         x = x * 2
        ...     return x
        >>> print(tf.autograph.to_code(f))  # doctest: +ELLIPSIS
        def tf__f(x):
            def if_body_1():
                nonlocal x
                x = x * 2
        ...
            ag__.if_stmt(x > 0, if_body_1, else_body_1, get_state_1, set_state_1, ('x',))
            return x
    """
    fn = entity.__func__ if isinstance(entity, types.MethodType) else entity
    conv = _convert_function(fn) if isinstance(fn, types.FunctionType) else fn
    return getattr(conv, "_ag_source", None) if conv is not fn else None


def set_verbosity(level, alsologtostdout=False):
    """Sets how much AutoGraph logs (``tf.autograph.set_verbosity``); level 3+ logs converted code."""
    _verbosity[0] = int(level)


def trace(*args):
    """Prints its arguments at trace time (``tf.autograph.trace``)."""
    print(*args)


# ---------------------------------------------------------------------------
# Errors raised while tracing converted code ("in user code:")
# ---------------------------------------------------------------------------

class StagingError(Exception):
    """Raised during the staging (i.e. Python execution) of converted code: what an error of a
    type that cannot be rebuilt from a message becomes, with TensorFlow's "in user code:" text."""


# TensorFlow rebuilds these (exactly these types) from the new message; others become a StagingError.
_STRING_CONSTRUCTOR_ERRORS = (AssertionError, AttributeError, NameError, NotImplementedError, RuntimeError,
                              StopIteration, TypeError, UnboundLocalError, ValueError, StagingError)
_JAX_DIRS = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (jax, jaxlib))
_TAPEJAX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _converted_name(code):
    """The user's name of a converted function a frame runs in (``tf__f.<locals>.if_body`` -> ``f``)."""
    for part in getattr(code, "co_qualname", code.co_name).split("."):
        if part.startswith("tf__"):
            name = part[4:]
            return "<lambda>" if name == "lambda" else name
    return code.co_name


def _hidden(filename):
    # TensorFlow leaves its own frames out; tapejax and JAX stand in for TensorFlow here.
    path = os.path.abspath(filename)
    return path.startswith(_TAPEJAX_DIR) or path.startswith(_JAX_DIRS)


def user_code_error(error):
    """``error``, raised while a ``tf.function`` traced converted code, rewritten as TensorFlow
    rewrites it: the same type (or StagingError) whose message starts ``in user code:`` and lists
    the user's frames (converted ones marked ``*``, the first frame a converted call entered
    marked ``**``), then the original ``Type: message``. None when no converted code ran."""
    frames = []   # [filename, lineno, name, line, marker, converted function or None]
    entered = False    # the frame before this one was a converted call (TensorFlow marks it **)
    new_call = False   # a converted call was entered since the last frame kept
    for fs, (frame, _) in zip(traceback.extract_tb(error.__traceback__), traceback.walk_tb(error.__traceback__)):
        code = frame.f_code
        if code in _generated:
            owner = _owners.get(code, code)
            if frames and frames[-1][5] is owner and not new_call:
                frames.pop()   # TensorFlow keeps one frame per converted call: its innermost line
            frames.append([fs.filename, fs.lineno, _converted_name(code), fs.line, "  *", owner])
            entered = new_call = False
            continue
        if not frames:
            continue   # the tf.function machinery before the user's code
        if fs.filename == __file__ and code.co_name == "converted_call":
            entered = new_call = True
            continue
        if not _hidden(fs.filename):
            frames.append([fs.filename, fs.lineno, fs.name, fs.line, "  **" if entered else "", None])
            new_call = False
        entered = False
    if not frames:
        return None
    lines = ["in user code:", ""]
    for filename, lineno, name, line, marker, _ in frames:
        lines.append(f'    File "{filename}", line {lineno}, in {name}{marker}')
        lines.append("        " + (line.strip() if line else "<source unavailable>"))
    lines.append("")
    lines.extend("    " + m for m in f"{type(error).__name__}: {error}".split("\n"))
    lines.append("")
    message = "\n".join(lines)
    kind = type(error)
    if kind.__module__.startswith(("tapejax.", "jax.", "jax")) and not issubclass(kind, _errors.OpError):
        # tapejax's and JAX's own refinements (TensorFlow has none): the builtin they refine.
        kind = next((k for k in kind.__mro__ if k in _STRING_CONSTRUCTOR_ERRORS), kind)
    if kind in _STRING_CONSTRUCTOR_ERRORS or kind.__init__ is Exception.__init__:
        new = kind(message)
    elif isinstance(error, _errors.OpError):
        new = kind(getattr(error, "node_def", None), getattr(error, "op", None), message)
    else:
        new = StagingError(message)
    new.__suppress_context__ = True
    new._tapejax_in_user_code = True
    return new.with_traceback(error.__traceback__)
