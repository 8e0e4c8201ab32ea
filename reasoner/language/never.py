"""Warnings for rules that can never fire (or whose result nothing uses), proved from the rules
alone: an event read under a name no rule derives that looks like a typo of a known name, a
``WHERE`` whose comparisons with constants contradict each other, a window shorter than its
pattern's certain minimum duration, a negation that its own bounds always satisfy (``p FNOT q``
where every ``p`` contains a ``q`` ending before it does; ``NOT(3).[0, 6]``), and (on request) a
head no rule reads. The name checks see the rule files checked together: a name derived in one
file may be read in another.

Each finding is ``(message, span, "warning")``, the form :func:`reasoner.language.check.check`
collects. Only certainties are reported: a name no rule derives is normally an input event, so it
is reported only when a close known name exists.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
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
    conjuncts,
    walk,
)
from reasoner.language.operators import OPERATORS

_Problem = tuple[str, Span | None, str]
_Value = int | float | Fraction


def never_fires(
    program: Program, unread_heads: bool = False, others: Program | None = None
) -> Iterator[_Problem]:
    """The warnings of this module for ``program``, in file order per kind.

    Args:
        program: a parsed program.
        unread_heads: also warn about a head no rule of the program (or of ``others``) reads.
        others: rules checked together with ``program`` (other files): the events they derive
            and read count as known names; their own problems are not reported.

    >>> from reasoner.language.parser import parse
    >>> [m for m, _, _ in never_fires(parse("stockUp <- tick.\\nc <- stockup."))]
    ["event 'stockup' is read but no rule derives it: did you mean 'stockUp'?"]
    """
    whole = program if others is None else program + others
    yield from _typo_warnings(program, whole)
    for rule in program.event_rules:
        yield from _where_warnings(rule.body, rule.span)
        yield from _window_warnings(rule)
        yield from _negation_warnings(rule.body, rule.span)
    if unread_heads:
        yield from _unread_head_warnings(program, whole)


# ------------------------------------------------------------------------- event names


def _read_atoms(p: Pattern) -> Iterator[EventAtom]:
    from reasoner.language.check import PATTERN_GOALS

    for atom in walk(p):
        if isinstance(atom, EventAtom) and (atom.name, len(atom.args)) not in PATTERN_GOALS:
            yield atom


def _typo_warnings(program: Program, whole: Program) -> Iterator[_Problem]:
    derived = {r.head.name for r in whole.event_rules} | {m.head.name for m in whole.rdf_events}
    read = [(atom, rule) for rule in program.event_rules for atom in _read_atoms(rule.body)]
    known = derived | {atom.name for rule in whole.event_rules for atom in _read_atoms(rule.body)}
    warned: set[str] = set()
    for atom, rule in read:
        name = atom.name
        if name in derived or name in warned:
            continue
        same_case = sorted(k for k in known if k != name and k.lower() == name.lower())
        close = same_case or _closest(name, derived)
        if close:
            warned.add(name)
            yield (
                f"event '{name}' is read but no rule derives it: did you mean '{close[0]}'?",
                atom.span or rule.span,
                "warning",
            )


def _closest(name: str, known: set[str]) -> list[str]:
    """The known name a typo of ``name`` would be: at most one edit (a letter inserted, dropped,
    changed, or two swapped) per four letters, two at most; [] when none is that close."""
    limit = min(2, len(name) // 4)
    scored = sorted((_edits(name, k), k) for k in known)
    return [k for d, k in scored[:1] if 0 < d <= limit]


def _edits(a: str, b: str) -> int:
    """The optimal string alignment distance: insertions, deletions, substitutions and swaps
    of neighbours."""
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            row[j] = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


def _unread_head_warnings(program: Program, whole: Program) -> Iterator[_Problem]:
    read = {atom.name for rule in whole.event_rules for atom in _read_atoms(rule.body)}
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


def _where_warnings(body: Pattern, where: Span | None) -> Iterator[_Problem]:
    for p in walk(body):
        if isinstance(p, Where) and (conflict := _contradiction(p.condition)) is not None:
            first, second = conflict
            yield (
                f"WHERE can never hold: {_show(first)} and {_show(second)} contradict",
                second.span or p.span or where,
                "warning",
            )


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
    for goal in conjuncts(condition):
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


def _show(term: Term | EventAtom) -> str:
    from reasoner.language.printer import to_source  # printer imports the parser: keep lazy

    return to_source(term)


# ---------------------------------------------------------------------------- windows

#: Operators whose occurrence runs from the left's start to the right's end, end to end.
_CHAINED = frozenset({"seq", "forall_seq", "meets"})


def _window_warnings(rule: EventRule) -> Iterator[_Problem]:
    yield from _nested_window_warnings(rule.body, rule.span)
    from reasoner.language.check import WINDOW_PROPERTIES

    for name, value in rule.properties:
        if name in WINDOW_PROPERTIES and isinstance(value, Number):
            least = minimum_duration(rule.body)
            if least > value.value:
                yield (_too_short(value.value, least), rule.span, "warning")


def _nested_window_warnings(body: Pattern, where: Span | None) -> Iterator[_Problem]:
    for p in walk(body):
        if isinstance(p, Window) and (least := minimum_duration(p.pattern)) > p.size:
            yield (_too_short(p.size, least), p.span or where, "warning")


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


# -------------------------------------------------------------- negations their bounds satisfy


def _negation_warnings(body: Pattern, where: Span | None) -> Iterator[_Problem]:
    """``p CNOT q`` / ``p FNOT q`` where every occurrence of ``p`` contains a ``q`` that ends
    before ``p`` does (so that ``q`` always blocks it), and ``NOT(t).[p1, p2]`` (or
    ``(p1 SEQ p2) CNOT t``) with the time point ``t`` certainly strictly between ``p1`` and
    ``p2``. (``NOT(a).[a, b]`` is fine: the bound's own ``a`` is not strictly between.)"""
    for p in walk(body):
        match p:
            case Not(negated, left, right) | Binary("cnot", Binary("seq", left, right), negated):
                yield from _gap_warnings(p, negated, left, right, where)
            case Binary("cnot" | "fnot" as op, kept, EventAtom() as negated):
                bound = _bound_variables(kept)
                inside = next((a for a in _parts(kept)[1] if _covers(negated, a, bound)), None)
                if inside is not None:
                    yield (
                        f"{op.upper()} {_show(negated)} blocks every occurrence: the "
                        f"{_show(inside)}{_at(inside.span)} inside it ends before it does: "
                        "the pattern can never fire",
                        negated.span or p.span or where,
                        "warning",
                    )


def _gap_warnings(
    p: Pattern, negated: Pattern, left: Pattern, right: Pattern, where: Span | None
) -> Iterator[_Problem]:
    last, first = _latest_end(left), _earliest_start(right)
    if not isinstance(negated, TimePoint) or last is None or first is None:
        return
    if last < negated.value < first:
        point = _number(negated.value)
        written = f"NOT({point})" if isinstance(p, Not) else f"CNOT {point}"
        yield (
            f"{written} blocks every occurrence: the time point lies "
            f"strictly between its bounds (the first ends by {_number(last)}, the second "
            f"starts at {_number(first)} or later): the pattern can never fire",
            negated.span or p.span or where,
            "warning",
        )


def _at(span: Span | None) -> str:
    return "" if span is None else f" at {span.line}:{span.column}"


def _bound_variables(p: Pattern) -> frozenset[str]:
    from reasoner.language.check import bound_variables  # check imports this module

    return bound_variables(p)


def _covers(negated: EventAtom, atom: EventAtom, bound: frozenset[str]) -> bool:
    """Whether every ``atom`` occurrence (with the bindings of a pattern binding ``bound``) is
    also an occurrence of ``negated``: same name and arity, each argument the same term or a
    variable of ``negated`` alone (unbound outside it, not repeated)."""
    if (negated.name, len(negated.args)) != (atom.name, len(atom.args)):
        return False
    names = [a.name for a in negated.args if isinstance(a, Var) and a.name != "_"]
    return all(
        mine == theirs
        or (
            isinstance(mine, Var)
            and (mine.name == "_" or (mine.name not in bound and names.count(mine.name) == 1))
        )
        for mine, theirs in zip(negated.args, atom.args, strict=True)
    )


#: Operators whose left operand ends strictly before the occurrence does.
_LEFT_ENDS_FIRST = frozenset({"seq", "forall_seq", "during", "starts"})


def _parts(p: Pattern) -> tuple[list[EventAtom], list[EventAtom]]:
    """The event atoms every occurrence of ``p`` is made of, and those of them that certainly
    end strictly before the occurrence ends."""
    match p:
        case EventAtom():
            return [p], []
        case Binary("or", _, _):
            return [], []
        case Binary(op, left, _) if OPERATORS[op].negation:
            return _parts(left)
        case Binary(_, left, right) | Not(_, left, right):
            (lin, learly), (rin, rearly) = _parts(left), _parts(right)
            ends_first = isinstance(p, Not) or (isinstance(p, Binary) and p.op in _LEFT_ENDS_FIRST)
            first = lin if ends_first else []
            return lin + rin, learly + rearly + first
        case Where(inner) | Window(inner) | Multiply(inner):
            return _parts(inner)
    return [], []


def _latest_end(p: Pattern) -> _Value | None:
    """A time every occurrence of ``p`` certainly ends by (None: unknown)."""
    match p:
        case TimePoint(value):
            return value
        case Binary("finishes" | "equals", left, right):
            return _either(min, _latest_end(left), _latest_end(right))
        case Binary("and" | "par" | "or", left, right):
            return _both(max, _latest_end(left), _latest_end(right))
        case Binary(op, left, _) if OPERATORS[op].negation:
            return _latest_end(left)
        case Binary(_, _, right) | Not(_, _, right):
            return _latest_end(right)
        case Where(inner) | Window(inner) | Multiply(inner):
            return _latest_end(inner)
    return None


def _earliest_start(p: Pattern) -> _Value | None:
    """A time every occurrence of ``p`` certainly starts at or after (None: unknown)."""
    match p:
        case TimePoint(value):
            return value
        case Binary("starts" | "equals", left, right):
            return _either(max, _earliest_start(left), _earliest_start(right))
        case Binary("and" | "par" | "or", left, right):
            return _both(min, _earliest_start(left), _earliest_start(right))
        case Binary("during" | "finishes", _, right):
            return _earliest_start(right)
        case Binary(_, left, _) | Not(_, left, _):
            return _earliest_start(left)
        case Where(inner) | Window(inner) | Multiply(inner):
            return _earliest_start(inner)
    return None


def _either(
    pick: Callable[[_Value, _Value], _Value], a: _Value | None, b: _Value | None
) -> _Value | None:
    """Two bounds of one time, either of which may be unknown: the tighter known one."""
    if a is None or b is None:
        return a if b is None else b
    return pick(a, b)


def _both(
    pick: Callable[[_Value, _Value], _Value], a: _Value | None, b: _Value | None
) -> _Value | None:
    """A bound of a time that is one of two (unknown if either is)."""
    return None if a is None or b is None else pick(a, b)
