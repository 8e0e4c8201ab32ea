"""Pure rewrites of event patterns: put terms for variables, replace the pattern at a path, leave
an event out, and walk the positive part (what an occurrence is made of: not a negated pattern,
not inside an aggregate). Each returns a new pattern and never changes its input.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace

from reasoner.language.ast import (
    Aggregate,
    Binary,
    Compound,
    EventAtom,
    ListTerm,
    Multiply,
    Not,
    Pattern,
    Term,
    Var,
    Where,
    Window,
    conjunction,
    conjuncts,
    subpatterns,
    with_subpatterns,
)
from reasoner.language.operators import OPERATORS
from reasoner.values import Time

#: A pattern's place in another: the :func:`subpatterns` index at each level.
Path = tuple[int, ...]


def substitute(p: Pattern, mapping: Mapping[str, Term]) -> Pattern:
    """``p`` with ``mapping[name]`` for each variable ``name`` it maps (aggregates left whole).

    >>> from reasoner.language.ast import Number, dump
    >>> dump(substitute(EventAtom("a", (Var("X"),)), {"X": Number(1)}))
    'EventAtom(name=a, args=[Number(value=1)])'
    """
    match p:
        case EventAtom(_, args):
            return replace(p, args=tuple(substitute_term(a, mapping) for a in args))
        case Where(inner, condition):
            return Where(substitute(inner, mapping), substitute_term(condition, mapping), p.span)
        case Multiply(inner, goal):
            return Multiply(substitute(inner, mapping), substitute_term(goal, mapping), p.span)
        case Aggregate():
            return p
    return with_subpatterns(p, [substitute(q, mapping) for q in subpatterns(p)])


def substitute_term(t: Term, mapping: Mapping[str, Term]) -> Term:
    """``t`` with ``mapping[name]`` for each variable ``name`` it maps."""
    match t:
        case Var(name) if name in mapping:
            return mapping[name]
        case Compound(functor, args):
            return Compound(functor, tuple(substitute_term(a, mapping) for a in args), t.span)
        case ListTerm(items, tail):
            rest = None if tail is None else substitute_term(tail, mapping)
            return ListTerm(tuple(substitute_term(i, mapping) for i in items), rest, t.span)
    return t


def negated_side(p: Pattern) -> int | None:
    """The index (in :func:`subpatterns`) of ``p``'s negated pattern, if it has one."""
    if isinstance(p, Not):
        return 0
    if isinstance(p, Binary) and OPERATORS[p.op].negation:
        return 1
    return None


def positive(p: Pattern) -> Iterator[Pattern]:
    """The patterns an occurrence of ``p`` is made of: not under a negation or an aggregate."""
    yield p
    if isinstance(p, Aggregate):
        return
    skip = negated_side(p)
    for i, q in enumerate(subpatterns(p)):
        if i != skip:
            yield from positive(q)


def positive_nodes(
    p: Pattern, path: Path = (), window: Time | None = None
) -> Iterator[tuple[Path, Pattern, Time | None]]:
    """Every positive sub-pattern with its path and its tightest enclosing window."""
    if isinstance(p, Window):
        window = p.size if window is None else min(window, p.size)
    yield path, p, window
    if isinstance(p, Aggregate):
        return
    skip = negated_side(p)
    for i, q in enumerate(subpatterns(p)):
        if i != skip:
            yield from positive_nodes(q, (*path, i), window)


def replace_at(p: Pattern, path: Path, new: Pattern) -> Pattern:
    """``p`` with ``new`` in place of the pattern at ``path``."""
    if not path:
        return new
    inner = list(subpatterns(p))
    inner[path[0]] = replace_at(inner[path[0]], path[1:], new)
    return with_subpatterns(p, inner)


def without(p: Pattern, atom: EventAtom) -> Pattern | None:
    """``p`` with ``atom`` left out (None when nothing remains); conditions that need a
    variable only ``atom`` bound go with it."""
    if p is atom:
        return None
    match p:
        case Binary(op, left, right) if OPERATORS[op].negation:
            kept = without(left, atom)
            return None if kept is None else replace(p, left=kept)
        case Binary(_, left, right) | Not(_, left, right):
            a, b = without(left, atom), without(right, atom)
            if a is None or b is None:
                return a if b is None else b
            return replace(p, left=a, right=b)
        case Where(inner, condition):
            kept = without(inner, atom)
            if kept is None:
                return None
            from reasoner.language.check import bound_variables, condition_bindings

            bound = bound_variables(kept)
            parts = [c for c in conjuncts(condition) if not condition_bindings(c, bound)[1]]
            return Where(kept, conjunction(parts), p.span) if parts else kept
        case Window(inner) | Multiply(inner):
            kept = without(inner, atom)
            if kept is None:
                return None
            from reasoner.language.check import bound_variables, condition_bindings

            if isinstance(p, Multiply) and condition_bindings(p.goal, bound_variables(kept))[1]:
                return kept
            return with_subpatterns(p, [kept])
    return p
