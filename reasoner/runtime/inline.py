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
    fuser = _Fuser()
    tree = fuser.instance(function, root, [], depth=1, loops=0, stack=(function,))
    if not fuser.inlined:
        return function
    source = ast.unparse(tree)  # (compiled from text: no line numbers needed)
    return define(source + "\n", label, fuser.scope)


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
        tree = _Renamer(names, globals_, prefix, self.scope).visit(copied)
        assert isinstance(tree, ast.FunctionDef)
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
        target = self.resolve(call.func)
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

    def resolve(self, expression: ast.expr) -> Any:
        """What a callee expression (a global, or an attribute of one) names now."""
        if isinstance(expression, ast.Name):
            return self.scope.get(expression.id)
        if isinstance(expression, ast.Attribute) and isinstance(expression.value, ast.Name):
            owner = self.scope.get(expression.value.id)
            return getattr(owner, expression.attr, None) if owner is not None else None
        return None


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

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.names:
            renamed = self.names[node.id]
            if isinstance(renamed, ast.Constant):
                return ast.Constant(renamed.value)
            node.id = renamed
        elif node.id in self.globals:
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
