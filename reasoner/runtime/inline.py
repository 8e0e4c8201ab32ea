"""Inlining generated functions into their callers: a network fused into one function per
input event type.

Every network edge is a Python call: a source calls its join probes, a probe its parent, the
parent a rule head. :func:`inline` rewrites a generated function (see
:mod:`reasoner.runtime.generated`) so that each call *statement* to another generated function
is replaced by that function's body, recursively, with every name renamed apart. The engine
fuses each event type's dispatcher this way; what is left calls out only to hand-written code
(stores, WHERE goals, aggregates) and hands derived events to the agenda, so the order in
which things happen is exactly that of the calls it replaces.

A function is inlined only when its body means the same in the caller: no ``return``, no
``break``/``continue`` outside its own loops, no nested scopes, no ``global``; and only while
the result stays within CPython's nesting limits and a size budget (deeper, it stays a call).

Fusing is a function of the sources and of what the names in them are bound to. The fuser
records what it asked of the functions it read (which names are globals, what each callee is:
a function read before, another generated function and its source, anything else); fusing a
function with the same source again replays those questions on the new functions and, when
every answer is the same, the fused source is the same: only the scope is built again.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from dataclasses import dataclass
from itertools import count
from types import FunctionType
from typing import Any

from reasoner.runtime.generated import define, generated_source

#: Indentation levels a fused function may reach (CPython's tokenizer allows 100).
MAX_DEPTH = 48
#: Nested loops a fused function may reach (CPython allows 20 nested blocks).
MAX_LOOPS = 12
#: Statements inlined into one function before the rest stay calls.
MAX_STATEMENTS = 4000


def inline(function: Callable[..., Any], label: str) -> Callable[..., Any]:
    """``function`` (generated) with every call statement to a generated function replaced
    by its body; ``function`` itself when there is nothing to inline.

    >>> from reasoner.runtime.generated import define
    >>> add = define("def add(x, y):\\n    out.append(x + y)\\n", "add", {"out": []})
    >>> twice = define("def twice(x):\\n    add(x, x)\\n    add(x, 1)\\n", "twice", {"add": add})
    >>> fused = inline(twice, "twice")
    >>> fused(3), add.__globals__["out"]
    (None, [6, 4])
    """
    root = _Body.of(function)
    if root is None:
        return function
    known = _fused.setdefault(root.source, [])
    recalled = _recall(known, function)
    if recalled is None:
        fuser = _Fuser()
        tree = fuser.instance(function, root, [], depth=1, loops=0, stack=(function,))
        # (compiled from text: no line numbers needed)
        fused = ast.unparse(tree) + "\n" if fuser.inlined else None
        known[:] = [(tuple(fuser.trace), fused), *known[: _KEPT - 1]]
        recalled = fused, fuser.scope
    if len(_fused) > 4096:
        _fused.clear()
    source, scope = recalled
    return function if source is None else define(source, label, scope)


#: Per source fused, the last fusions (at most ``_KEPT``): what the fuser asked (see
#: :func:`_replay`) and the fused source (None: nothing was inlined).
_fused: dict[str, list[tuple[tuple[tuple[Any, ...], ...], str | None]]] = {}
_KEPT = 8


def _recall(
    known: list[tuple[tuple[tuple[Any, ...], ...], str | None]], function: Callable[..., Any]
) -> tuple[str | None, dict[str, Any]] | None:
    """The fused source and scope of ``function`` from a fusion of its source it replays."""
    for trace, source in known:
        scope = _replay(trace, function)
        if scope is not None:
            return source, scope
    return None


def _replay(trace: tuple[tuple[Any, ...], ...], root: Callable[..., Any]) -> dict[str, Any] | None:
    """Ask the functions met from ``root`` what a fuser asked when it recorded ``trace``: the
    scope of the fused function when every answer is the same (so is every decision the fuser
    made, and the source it wrote), else None.

    ``trace`` holds, in the fuser's order: ``("instance",)`` when it copies the callee just
    resolved (first ``root``), ``("global", name, found)`` when it asks whether a name is one
    of that copy's globals, ``("call", callee, kind)`` when it resolves a callee."""
    functions: list[Callable[..., Any]] = []
    scope: dict[str, Any] = {}
    target: Any = root
    for entry in trace:
        if entry[0] == "instance":
            functions.append(target)
        elif entry[0] == "global":
            _, name, found = entry
            namespace = functions[-1].__globals__
            if (name in namespace) != found:
                return None
            if found:
                scope[f"_{len(functions) - 1}_{name}"] = namespace[name]
        else:
            target = _lookup(entry[1], scope)
            if _kind(target, functions) != entry[2]:
                return None
    return scope


def _callee(expression: ast.expr) -> tuple[str, ...] | None:
    """A callee the fuser can resolve: a global, or an attribute of one."""
    if isinstance(expression, ast.Name):
        return (expression.id,)
    if isinstance(expression, ast.Attribute) and isinstance(expression.value, ast.Name):
        return (expression.value.id, expression.attr)
    return None


def _lookup(callee: tuple[str, ...] | None, scope: dict[str, Any]) -> Any:
    """What a callee names now in the fused scope (None: nothing known)."""
    if callee is None:
        return None
    owner = scope.get(callee[0])
    if len(callee) == 1 or owner is None:
        return owner
    return getattr(owner, callee[1], None)


def _kind(target: Any, functions: list[Callable[..., Any]]) -> tuple[Any, ...] | None:
    """All the fuser's decisions depend on about a callee: which function read before it is,
    or whether it is a function and its generated source."""
    if target is None:
        return None
    for k, function in enumerate(functions):
        if function is target:
            return ("read", k)
    if type(target) is not FunctionType:
        return ("other",)
    return ("source", generated_source(target))


#: What a pasted body may not contain: a return, a nested scope, a global declaration.
_SCOPED = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.Global,
    ast.Nonlocal,
    ast.Return,
    ast.Yield,
    ast.YieldFrom,
    ast.Await,
)


@dataclass(frozen=True, slots=True)
class _Body:
    """What inlining a generated function's source needs to know (worked out once per source:
    the many nodes of one shape share it)."""

    source: str
    params: tuple[str, ...]
    assigned: frozenset[str]
    locals: frozenset[str]
    size: int  # statements, the definition's own included
    depth: int
    loops: int
    #: "statement": the body can replace a call statement; "value": all but its last
    #: statement (``return <value>``) can go before a statement testing the call's value.
    inlinable: str | None

    @staticmethod
    def of(function: Any) -> _Body | None:
        source = generated_source(function)
        return None if source is None else _body(source)


@functools.lru_cache(maxsize=4096)
def _body(source: str) -> _Body | None:
    tree = ast.parse(source).body[0]
    if not isinstance(tree, ast.FunctionDef):
        return None
    args = tree.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs:
        return None
    params = tuple(a.arg for a in args.args)
    assigned: set[str] = set()
    size = 1
    contained = []  # per statement: whether it means the same pasted into another function
    for statement in tree.body:
        nodes = list(ast.walk(statement))
        assigned.update(
            node.id
            for node in nodes
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)
        )
        size += sum(isinstance(node, ast.stmt) for node in nodes)
        contained.append(
            not any(isinstance(node, _SCOPED) for node in nodes) and not _escapes(statement)
        )
    depth, loops = _nesting(tree.body)
    last = tree.body[-1]
    inlinable = (
        "statement"
        if all(contained)
        else "value"
        if isinstance(last, ast.Return) and last.value is not None and all(contained[:-1])
        else None
    )
    return _Body(
        source,
        params,
        frozenset(assigned),
        frozenset({*params, *assigned}),
        size,
        depth,
        loops,
        inlinable,
    )


class _Fuser:
    """Builds one fused function: its scope, and a serial number per inlined body."""

    def __init__(self) -> None:
        self.scope: dict[str, Any] = {}
        self.serial = count()
        self.statements = 0
        self.inlined = 0
        self.functions: list[Callable[..., Any]] = []  # those copied, in order
        self.trace: list[tuple[Any, ...]] = []  # what was asked of them (see _replay)

    def instance(
        self,
        function: Callable[..., Any],
        body: _Body,
        bound: list[tuple[str, ast.expr]],
        *,
        depth: int,
        loops: int,
        stack: tuple[Callable[..., Any], ...],
    ) -> ast.FunctionDef:
        """A renamed copy of ``body``'s definition, its own calls inlined; ``bound`` maps
        parameters to the caller's argument expressions (names are substituted)."""
        prefix = f"_{next(self.serial)}_"
        self.functions.append(function)
        self.trace.append(("instance",))
        globals_: dict[str, Any] = function.__globals__
        names: dict[str, str | ast.Constant] = {name: prefix + name for name in body.locals}
        preamble: list[ast.stmt] = []
        for name, argument in bound:
            if isinstance(argument, ast.Name | ast.Constant) and name not in body.assigned:
                # the caller's variable or constant, read as is
                names[name] = argument.id if isinstance(argument, ast.Name) else argument
            else:
                target = ast.Name(prefix + name, ast.Store())
                preamble.append(ast.Assign(targets=[target], value=argument, lineno=0))
        copied = ast.parse(body.source).body[0]  # (parsing again is faster than a deep copy)
        renamer = _Renamer(names, globals_, prefix, self.scope)
        tree = renamer.visit(copied)
        assert isinstance(tree, ast.FunctionDef)
        self.trace += [("global", name, found) for name, found in renamer.asked.items()]
        tree.body = preamble + self.block(tree.body, depth, loops, stack)
        return tree

    def block(
        self,
        statements: list[ast.stmt],
        depth: int,
        loops: int,
        stack: tuple[Callable[..., Any], ...],
    ) -> list[ast.stmt]:
        """``statements`` with their call statements inlined, at nesting ``depth``."""
        out: list[ast.stmt] = []
        for statement in statements:
            out.extend(self.statement(statement, depth, loops, stack))
        return out

    def statement(
        self,
        statement: ast.stmt,
        depth: int,
        loops: int,
        stack: tuple[Callable[..., Any], ...],
    ) -> list[ast.stmt]:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            fused = self.call(statement.value, "statement", depth, loops, stack)
            if fused is not None:
                return fused.body
        if isinstance(statement, ast.If) and isinstance(statement.test, ast.Call):
            fused = self.call(statement.test, "value", depth, loops, stack)
            if fused is not None:
                *before, last = fused.body
                assert isinstance(last, ast.Return) and last.value is not None
                statement.test = last.value
                return [*before, *self.statement(statement, depth, loops, stack)]
        inner = loops + isinstance(statement, ast.For | ast.While)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(statement, field, None)
            if block:
                setattr(statement, field, self.block(block, depth + 1, inner, stack))
        for handler in getattr(statement, "handlers", ()):
            handler.body = self.block(handler.body, depth + 1, inner, stack)
        return [statement]

    def call(
        self,
        call: ast.Call,
        kind: str,
        depth: int,
        loops: int,
        stack: tuple[Callable[..., Any], ...],
    ) -> ast.FunctionDef | None:
        """The body replacing ``call`` (a statement, or an if's test), renamed and with its own
        calls inlined; None when the callee is not a generated function that can go here."""
        if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        callee = _callee(call.func)
        target = _lookup(callee, self.scope)
        self.trace.append(("call", callee, _kind(target, self.functions)))
        if target is None or target in stack:
            return None
        if type(target) is not FunctionType:
            return None
        body = _Body.of(target)
        if body is None or body.inlinable != kind or len(body.params) != len(call.args):
            return None
        if depth + body.depth > MAX_DEPTH or loops + body.loops > MAX_LOOPS:
            return None
        if self.statements + body.size > MAX_STATEMENTS:
            return None
        self.statements += body.size
        self.inlined += 1
        return self.instance(
            target,
            body,
            list(zip(body.params, call.args, strict=True)),
            depth=depth,
            loops=loops,
            stack=(*stack, target),
        )


class _Renamer(ast.NodeTransformer):
    """Renames a body's locals (``names``) and globals (``prefix`` + name, recorded in the
    fused scope); builtins keep their names."""

    def __init__(
        self,
        names: dict[str, str | ast.Constant],
        globals_: dict[str, Any],
        prefix: str,
        scope: dict[str, Any],
    ) -> None:
        self.names = names
        self.globals = globals_
        self.prefix = prefix
        self.scope = scope
        self.asked: dict[str, bool] = {}  # whether each other name is a global

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.names:
            renamed = self.names[node.id]
            if isinstance(renamed, ast.Constant):
                return ast.Constant(renamed.value)
            node.id = renamed
        elif self.asked.setdefault(node.id, node.id in self.globals):
            self.scope[self.prefix + node.id] = self.globals[node.id]
            node.id = self.prefix + node.id
        return node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        renamed = self.names.get(node.arg)
        if isinstance(renamed, str):
            node.arg = renamed
        return node


def _escapes(node: ast.AST) -> bool:
    """Whether a break or continue in ``node`` leaves it (is not inside a loop of its own)."""
    if isinstance(node, ast.Break | ast.Continue):
        return True
    if isinstance(node, ast.For | ast.While):
        return any(_escapes(s) for s in node.orelse)  # the loop's own body may break
    return any(_escapes(child) for child in ast.iter_child_nodes(node))


def _nesting(statements: list[ast.stmt]) -> tuple[int, int]:
    """The deepest indentation and loop nesting inside ``statements``."""
    depth = loops = 0
    for statement in statements:
        is_loop = isinstance(statement, ast.For | ast.While)
        blocks = [getattr(statement, f, None) or [] for f in ("body", "orelse", "finalbody")]
        blocks += [h.body for h in getattr(statement, "handlers", ())]
        for block in blocks:
            if block:
                d, n = _nesting(block)
                depth = max(depth, d + 1)
                loops = max(loops, n + is_loop)
    return depth, loops
