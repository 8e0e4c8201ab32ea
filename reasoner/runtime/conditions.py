"""WHERE conditions as one test over a node's value tuple.

Most conditions are numeric comparisons over the pattern's variables (``P2 > 1.2 * P1``).
Those become Python expressions over tuple positions, guarded by a type test: when every
variable they read holds a number, the expression is the comparison itself (``+ - *`` and
the comparisons mean the same on Python numbers as in :mod:`reasoner.knowledge.builtins`);
otherwise (a ``none`` reading, a string) the compiled goal decides, so the result is always
the goal's. A static-knowledge call on the pattern's variables is given their values (its
:attr:`~reasoner.knowledge.goals.Goal.ground` form). Other goals (``is``, disjunctions ...)
get the environment dictionary they are written against, built once per test.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import isfinite
from typing import Any

from reasoner.knowledge.goals import Goal
from reasoner.language.ast import Compound, Number, Term, Var
from reasoner.runtime.generated import define
from reasoner.values import NUMBER_TYPES

Values = tuple[Any, ...]

_COMPARE = {"<": "<", ">": ">", "=<": "<=", ">=": ">=", "=:=": "==", "=\\=": "!="}
_ARITHMETIC = {"+", "-", "*"}


def condition(
    goals: Sequence[Goal], names: Sequence[str], runtime: Any
) -> Callable[..., bool] | None:
    """All ``goals`` (in order) as one test on a node's values; None when there are none.

    Args:
        goals: the compiled WHERE conjuncts.
        names: the variable at each position of the values.
        runtime: read for ``runtime.knowledge`` at test time (it changes on refresh).
    Returns:
        ``check(values) -> bool``.

    >>> from reasoner.knowledge.goals import compile_goal
    >>> from reasoner.language.ast import Compound, Number, Var
    >>> twice = Compound(">", (Var("B"), Compound("*", (Number(2), Var("A")))))
    >>> class R: knowledge = None
    >>> check = condition([compile_goal(twice, {})], ["A", "B"], R())
    >>> check((1, 3)), check((2, 3)), check((1, "none"))
    (True, False, False)
    """
    if not goals:
        return None
    names = tuple(names)
    scope: dict[str, Any] = {"NUM": NUMBER_TYPES, "runtime": runtime, "names": names}
    # One exit (the engine inlines the test into its callers): each conjunct sets `ok`, and
    # the next one runs only while it holds.
    body: list[str] = []
    env = False  # whether the environment dict is built yet (once, for every general goal)
    for i, goal in enumerate(goals):
        pad = "    " * (i + 1)
        if i:
            body.append(f"{pad[4:]}if ok:")
        scope[f"goal{i}"] = goal.holds
        fast = _comparison(goal.term, names)
        if fast is None and goal.ground is not None and set(goal.ground[0]) <= set(names):
            # a static-knowledge call on the values themselves: no environment needed
            arguments = "".join(f"v[{names.index(n)}], " for n in goal.ground[0])
            scope[f"goal{i}"] = goal.ground[1]
            body.append(f"{pad}ok = goal{i}(({arguments}), runtime.knowledge)")
            continue
        if fast is None:
            if not env:
                body.append(f"{pad}env = dict(zip(names, v))\n{pad}kb = runtime.knowledge")
                env = True
            body.append(f"{pad}ok = goal{i}(env, kb)")
            continue
        expression, read = fast
        body += [f"{pad}x{p} = v[{p}]" for p in read]
        guard = " and ".join(f"x{p}.__class__ in NUM" for p in read) or "True"
        body.append(
            f"{pad}if {guard}:\n{pad}    ok = {expression}\n{pad}else:\n"
            f"{pad}    ok = goal{i}(dict(zip(names, v)), runtime.knowledge)"
        )
    source = "def check(v):\n" + "\n".join(body) + "\n    return ok\n"
    return define(source, "where", scope)


def _comparison(term: Term, names: tuple[str, ...]) -> tuple[str, list[int]] | None:
    """``term`` as a Python comparison over ``x<position>`` names, and the positions read;
    None when it is not a numeric comparison of ``+ - *`` over variables and numbers."""
    if not (isinstance(term, Compound) and term.functor in _COMPARE and len(term.args) == 2):
        return None
    read: list[int] = []
    left, right = (_arithmetic(a, names, read) for a in term.args)
    if left is None or right is None:
        return None
    return f"{left} {_COMPARE[term.functor]} {right}", read


def _arithmetic(term: Term, names: tuple[str, ...], read: list[int]) -> str | None:
    match term:
        case Var(name) if name in names:
            position = names.index(name)
            if position not in read:
                read.append(position)
            return f"x{position}"
        case Number(value) if type(value) is int or (type(value) is float and isfinite(value)):
            return repr(value)
        case Compound(op, (a, b)) if op in _ARITHMETIC:
            x, y = _arithmetic(a, names, read), _arithmetic(b, names, read)
            return None if x is None or y is None else f"({x} {op} {y})"
        case Compound("-", (a,)):
            x = _arithmetic(a, names, read)
            return None if x is None else f"(-{x})"
    return None
