"""Warnings for rules that can never fire (or whose result nothing uses), proved from the rules
alone: an event read under a name no rule derives that looks like a typo of a known name, a
``WHERE`` whose comparisons with constants contradict each other, a window shorter than its
pattern's certain minimum duration, and (on request) a head no rule reads.

Each finding is ``(message, span, "warning")``, the form :func:`reasoner.language.check.check`
collects. Only certainties are reported: a name no rule derives is normally an input event, so it
is reported only when a close known name exists.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterator
from fractions import Fraction

from reasoner.language.ast import (
    Binary,
    Compound,
    EventAtom,
    EventRule,
    Multiply,
    Not,
    Number,
    Pattern,
    Program,
    Span,
    Term,
    TimePoint,
    Var,
    Where,
    Window,
)
from reasoner.language.operators import OPERATORS

_Problem = tuple[str, Span | None, str]
_Value = int | float | Fraction


def never_fires(program: Program, unread_heads: bool = False) -> Iterator[_Problem]:
    """The warnings of this module for ``program``, in file order per kind.

    Args:
        program: a parsed program.
        unread_heads: also warn about a head no rule of the program reads.

    >>> from reasoner.language.parser import parse
    >>> [m for m, _, _ in never_fires(parse("stockUp <- tick.\\nc <- stockup."))]
    ["event 'stockup' is read but no rule derives it: did you mean 'stockUp'?"]
    """
    yield from _typo_warnings(program)
    for rule in program.event_rules:
        yield from _where_warnings(rule.body, rule.span)
        yield from _window_warnings(rule)
    if unread_heads:
        yield from _unread_head_warnings(program)


# ------------------------------------------------------------------------- event names


def _read_atoms(p: Pattern) -> Iterator[EventAtom]:
    from reasoner.language.check import PATTERN_GOALS, _event_atoms

    for atom in _event_atoms(p):
        if (atom.name, len(atom.args)) not in PATTERN_GOALS:
            yield atom


def _typo_warnings(program: Program) -> Iterator[_Problem]:
    derived = {r.head.name for r in program.event_rules} | {m.head.name for m in program.rdf_events}
    read = [(atom, rule) for rule in program.event_rules for atom in _read_atoms(rule.body)]
    known = derived | {atom.name for atom, _ in read}
    warned: set[str] = set()
    for atom, rule in read:
        name = atom.name
        if name in derived or name in warned:
            continue
        same_case = sorted(k for k in known if k != name and k.lower() == name.lower())
        close = same_case or difflib.get_close_matches(name, sorted(derived), n=1, cutoff=0.8)
        if close:
            warned.add(name)
            yield (
                f"event '{name}' is read but no rule derives it: did you mean '{close[0]}'?",
                atom.span or rule.span,
                "warning",
            )


def _unread_head_warnings(program: Program) -> Iterator[_Problem]:
    read = {atom.name for rule in program.event_rules for atom in _read_atoms(rule.body)}
    warned: set[str] = set()
    for rule in program.event_rules:
        name = rule.head.name
        if name not in read and name not in warned:
            warned.add(name)
            yield (f"no rule reads event '{name}'", rule.head.span or rule.span, "warning")


# ------------------------------------------------------------------ contradictory WHERE

#: Comparison -> the same comparison with its operands swapped.
_SWAPPED = {
    "<": ">",
    ">": "<",
    "=<": ">=",
    ">=": "=<",
    "=:=": "=:=",
    "=\\=": "=\\=",
    "=": "=",
    "==": "==",
}
#: Comparisons read as numeric equality when one side is a number (a unification that fails on
#: 5 = 5.0 is still no weaker than =:=, so treating it so never reports a satisfiable WHERE).
_EQUALITIES = frozenset({"=:=", "=", "=="})


def _where_warnings(p: Pattern, where: Span | None) -> Iterator[_Problem]:
    match p:
        case Where(inner, condition):
            conflict = _contradiction(condition)
            if conflict is not None:
                first, second = conflict
                yield (
                    f"WHERE can never hold: {_show(first)} and {_show(second)} contradict",
                    second.span or p.span or where,
                    "warning",
                )
            yield from _where_warnings(inner, where)
        case Binary(_, left, right):
            yield from _where_warnings(left, where)
            yield from _where_warnings(right, where)
        case Not(negated, left, right):
            for part in (negated, left, right):
                yield from _where_warnings(part, where)
        case Window(inner) | Multiply(inner):
            yield from _where_warnings(inner, where)


def _conjuncts(goal: Term) -> Iterator[Term]:
    match goal:
        case Compound(",", (first, second)):
            yield from _conjuncts(first)
            yield from _conjuncts(second)
        case _:
            yield goal


def _constraint(goal: Term) -> tuple[str, str, _Value] | None:
    """``(variable, op, constant)`` for a comparison of a variable with a number, else None."""
    match goal:
        case Compound(op, (Var(name), Number(value))) if op in _SWAPPED and _finite(value):
            return name, op, value
        case Compound(op, (Number(value), Var(name))) if op in _SWAPPED and _finite(value):
            return name, _SWAPPED[op], value
    return None


def _finite(value: _Value) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


def _holds(op: str, a: _Value, b: _Value) -> bool:
    if op in _EQUALITIES:
        return a == b
    return {"<": a < b, ">": a > b, "=<": a <= b, ">=": a >= b, "=\\=": a != b}[op]


def _contradiction(condition: Term) -> tuple[Compound, Compound] | None:
    """Two comparisons of the condition's top-level conjunction that no value satisfies both
    (or one constant comparison twice, when it is false on its own), else None.

    Every goal is a constraint on one variable; a variable's constraints are satisfiable
    together iff some value meets them all, tested at each constant and between neighbours
    (the only places where the truth of a set of such comparisons changes).
    """
    seen: dict[str, list[tuple[str, _Value, Compound]]] = {}
    for goal in _conjuncts(condition):
        match goal:
            case Compound(op, (Number(a), Number(b))) if op in _SWAPPED and not _holds(op, a, b):
                return goal, goal
        found = _constraint(goal)
        if found is None or not isinstance(goal, Compound):
            continue
        name, op, value = found
        earlier = seen.setdefault(name, [])
        earlier.append((op, value, goal))
        if not _satisfiable([(o, v) for o, v, _ in earlier]):
            culprit = next(g for o, v, g in earlier if not _satisfiable([(o, v), (op, value)]))
            return culprit, goal
    return None


def _satisfiable(constraints: list[tuple[str, _Value]]) -> bool:
    points = sorted({Fraction(v) for _, v in constraints})
    candidates = [points[0] - 1, points[-1] + 1, *points]
    candidates += [(a + b) / 2 for a, b in zip(points, points[1:], strict=False)]
    return any(all(_holds(op, x, Fraction(v)) for op, v in constraints) for x in candidates)


def _show(term: Term) -> str:
    from reasoner.language.printer import to_source  # printer imports the parser: keep lazy

    return to_source(term)


# ---------------------------------------------------------------------------- windows

#: Operators whose occurrence runs from the left's start to the right's end, end to end.
_CHAINED = frozenset({"seq", "meets"})


def _window_warnings(rule: EventRule) -> Iterator[_Problem]:
    yield from _nested_window_warnings(rule.body, rule.span)
    from reasoner.language.check import WINDOW_PROPERTIES

    for name, value in rule.properties:
        if name in WINDOW_PROPERTIES and isinstance(value, Number):
            least = minimum_duration(rule.body)
            if least > value.value:
                yield (_too_short(value.value, least), rule.span, "warning")


def _nested_window_warnings(p: Pattern, where: Span | None) -> Iterator[_Problem]:
    match p:
        case Window(inner, size):
            least = minimum_duration(inner)
            if least > size:
                yield (_too_short(size, least), p.span or where, "warning")
            yield from _nested_window_warnings(inner, where)
        case Binary(_, left, right):
            yield from _nested_window_warnings(left, where)
            yield from _nested_window_warnings(right, where)
        case Not(negated, left, right):
            for part in (negated, left, right):
                yield from _nested_window_warnings(part, where)
        case Where(inner) | Multiply(inner):
            yield from _nested_window_warnings(inner, where)


def _too_short(size: _Value, least: _Value) -> str:
    return (
        f"window {_number(size)} is shorter than its pattern's minimum duration "
        f"{_number(least)}: the pattern can never fire"
    )


def _number(value: _Value) -> str:
    return _show(Number(value))


def minimum_duration(p: Pattern) -> _Value:
    """A duration every occurrence of ``p`` certainly lasts at least (0 when nothing is sure).

    Events may be instantaneous; the certainty comes from time points (an occurrence covers
    every time point it contains) and from ``SEQ``/``MEETS`` chaining their operands' durations.

    >>> from reasoner.language.parser import parse
    >>> minimum_duration(parse("h <- 0 SEQ a SEQ 3.").event_rules[0].body)
    3
    """
    least, _ = _extent(p)
    return least


def _extent(p: Pattern) -> tuple[_Value, tuple[_Value, _Value] | None]:
    """The certain minimum duration of ``p`` and the earliest and latest time points every
    occurrence certainly covers (None when none)."""
    match p:
        case TimePoint(value):
            return 0, (value, value)
        case Binary("or", left, right):
            return min(_extent(left)[0], _extent(right)[0]), None
        case Binary(op, left, _) if OPERATORS[op].negation:
            return _extent(left)
        case Binary(op, left, right):
            (lmin, lpts), (rmin, rpts) = _extent(left), _extent(right)
            points = _hull(lpts, rpts)
            least = lmin + rmin if op in _CHAINED else max(lmin, rmin)
            return max(least, points[1] - points[0] if points else 0), points
        case Not(_, left, right):
            (lmin, lpts), (rmin, rpts) = _extent(left), _extent(right)
            points = _hull(lpts, rpts)
            return max(lmin + rmin, points[1] - points[0] if points else 0), points
        case Where(inner) | Window(inner) | Multiply(inner):
            return _extent(inner)
    return 0, None


def _hull(
    a: tuple[_Value, _Value] | None, b: tuple[_Value, _Value] | None
) -> tuple[_Value, _Value] | None:
    if a is None or b is None:
        return a or b
    return min(a[0], b[0]), max(a[1], b[1])
