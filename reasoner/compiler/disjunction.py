"""Alternative bodies for ORs whose branches bind different variables.

An OR node passes on only the variables both branches bind. That is exact unless a variable
bound by one branch only is also used outside the OR (``(a(X) OR b(Y)) AND d(X)`` must join
``a``'s X with ``d``'s but leave ``b`` free to pair with any ``d``). Such an OR is lifted out
of the rule: the rule gets one body per branch. Inside a negated pattern that cannot be done,
so it is reported as an error.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import fields, is_dataclass, replace
from typing import Any

from reasoner.errors import Diagnostic, RuleCompileError
from reasoner.language.ast import Binary, EventAtom, Not, Pattern, Var
from reasoner.language.check import bound_variables
from reasoner.language.operators import OPERATORS


def alternatives(head: EventAtom, body: Pattern) -> list[Pattern]:
    """``body`` split into alternatives until no OR hides a variable used outside it.

    >>> from reasoner.language.parser import parse
    >>> rule = parse("d(X) <- (a(X) OR b(Y)) AND c(X).").event_rules[0]
    >>> [str(b.op) + " " + b.left.name for b in alternatives(rule.head, rule.body)]
    ['and a', 'and b']
    """
    done: list[Pattern] = []
    todo = [body]
    while todo:
        current = todo.pop()
        uses = _var_counts((head, current))
        target = next(_unsafe_ors(current, uses, negated=False), None)
        if target is None:
            done.append(current)
        else:
            todo.extend(_replace(current, target, branch) for branch in (target.right, target.left))
    return done


def _unsafe_ors(p: object, uses: Counter[str], *, negated: bool) -> Iterator[Binary]:
    """ORs (pre-order) whose one-sided variables occur outside them; raises for one inside a
    negated pattern."""
    if isinstance(p, Binary) and p.op == "or":
        one_sided = bound_variables(p.left) ^ bound_variables(p.right)
        inside = _var_counts(p)
        if any(uses[v] > inside[v] for v in one_sided):
            if negated:
                raise RuleCompileError(
                    [
                        Diagnostic(
                            "an OR inside a negated pattern must bind the same variables in both "
                            "branches when they are used outside it",
                            p.span,
                        )
                    ]
                )
            yield p
            return
    match p:
        case Not(negated_pattern, left, right):
            yield from _unsafe_ors(negated_pattern, uses, negated=True)
            yield from _unsafe_ors(left, uses, negated=negated)
            yield from _unsafe_ors(right, uses, negated=negated)
        case Binary(op, left, right) if OPERATORS[op].negation:
            yield from _unsafe_ors(left, uses, negated=negated)
            yield from _unsafe_ors(right, uses, negated=True)
        case _ if is_dataclass(p) and not isinstance(p, type):
            for f in fields(p):
                child = getattr(p, f.name)
                if isinstance(child, Pattern):
                    yield from _unsafe_ors(child, uses, negated=negated)


def _replace(p: Pattern, target: Pattern, by: Pattern) -> Pattern:
    """``p`` with the sub-pattern ``target`` (by identity) replaced by ``by``."""
    if p is target:
        return by
    changes: dict[str, Any] = {
        f.name: _replace(child, target, by)
        for f in fields(p)
        if isinstance(child := getattr(p, f.name), Pattern)
    }
    return replace(p, **changes) if changes else p


def _var_counts(node: object) -> Counter[str]:
    """How often each named variable occurs in an AST node."""
    counts: Counter[str] = Counter()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Var):
            if item.name != "_":
                counts[item.name] += 1
        elif isinstance(item, tuple):
            stack.extend(item)
        elif is_dataclass(item) and not isinstance(item, type):
            stack.extend(getattr(item, f.name) for f in fields(item) if f.name != "span")
    return counts
