"""The Python rule API: build event patterns, rules and programs without rule text.

Every function returns the AST node (:mod:`reasoner.language.ast`) the parser returns for the
corresponding text, so a built program equals the parsed one and prints back as rule text
(:func:`reasoner.language.printer.to_source`)::

    >>> from reasoner.api.terms import variables
    >>> Pr1, Pr2, V1, V2 = variables("Pr1 Pr2 V1 V2")
    >>> r = rule("ce1", where(seq(event("stock", "GO", Pr1, V1), event("stock", "GO", Pr2, V2)),
    ...                       Pr1 < 1.20 * Pr2))
    >>> from reasoner.language.printer import to_source
    >>> to_source(r)
    'ce1 <- stock("GO", Pr1, V1) SEQ stock("GO", Pr2, V2) WHERE Pr1 < 1.2 * Pr2.'

Where a pattern is expected, a ``str`` is a 0-ary event (``"a"`` is ``a``) and a number a
time point. The binary operators take two or more patterns and nest them to the left, as the
text's ``a SEQ b SEQ c`` is ``(a SEQ b) SEQ c``. Names follow the text's keywords; those that
are Python keywords get a trailing underscore (``and_``, ``or_``, ``not_``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from itertools import chain
from typing import Protocol

from reasoner.api.terms import Expr, conj, term
from reasoner.language.ast import (
    UNITS,
    Aggregate,
    Atom,
    Binary,
    Compound,
    Directive,
    EventAtom,
    EventRule,
    Facts,
    Iri,
    Multiply,
    Not,
    Number,
    Pattern,
    PName,
    Program,
    RdfEvent,
    Star,
    Statement,
    StaticRule,
    String,
    Term,
    TimePoint,
    Var,
    Where,
    Window,
)
from reasoner.language.operators import OPERATORS, Operator
from reasoner.modes import Policy

__all__ = [
    "aggregate",
    "and_",
    "at",
    "clause",
    "cnot",
    "directive",
    "during",
    "equals",
    "event",
    "fact",
    "facts",
    "finishes",
    "fnot",
    "forall_seq",
    "meets",
    "multiply",
    "not_",
    "or_",
    "par",
    "pattern",
    "prefix",
    "program",
    "rdf_event",
    "rule",
    "seq",
    "star",
    "starts",
    "where",
    "within",
]

#: What a pattern argument may be: a pattern node, an event name, or a time point.
PatternLike = Pattern | str | int | float | Fraction
Size = int | float | Fraction


# ------------------------------------------------------------------------------ events


def event(name: str, *args: object) -> EventAtom:
    """An event ``name(args...)``, in a pattern or as a rule head.

    Args:
        name: the event name (``"wt:alert"`` for a prefixed one).
        args: terms (see :func:`reasoner.api.terms.term` for Python values).

    >>> event("stock", "GO", 101.5)
    EventAtom(name='stock', args=(String(value='GO'), Number(value=101.5)))
    """
    return EventAtom(name, tuple(term(a) for a in args))


def at(time: Size) -> TimePoint:
    """The time point ``time`` as a virtual event at ``[time, time]``.

    >>> at(6)
    TimePoint(value=6)
    """
    if isinstance(time, bool) or not isinstance(time, int | float | Fraction):
        raise TypeError(f"a time point is a number, not {time!r}")
    return TimePoint(time)


def pattern(value: PatternLike) -> Pattern:
    """Convert a pattern argument: a ``str`` is a 0-ary event, a number a time point.

    >>> pattern("a"), pattern(3)
    (EventAtom(name='a', args=()), TimePoint(value=3))
    """
    match value:
        case str():
            return EventAtom(value)
        case int() | float() | Fraction():
            return at(value)
        case _ if isinstance(value, Pattern):
            return value
    raise TypeError(f"{value!r} is not a pattern")


# ---------------------------------------------------------------------- binary operators


class BinaryBuilder(Protocol):
    """A binary operator's builder: two or more patterns, nested to the left."""

    def __call__(self, *patterns: PatternLike) -> Binary: ...


def _operator(keyword: Operator) -> BinaryBuilder:
    """The builder of one operator, named and documented from its record."""
    info = OPERATORS[keyword]

    def build(*patterns: PatternLike) -> Binary:
        if len(patterns) < 2:
            raise TypeError(f"{info.spelling} needs at least two patterns, got {len(patterns)}")
        out = Binary(keyword, pattern(patterns[0]), pattern(patterns[1]))
        for right in patterns[2:]:
            out = Binary(keyword, out, pattern(right))
        return out

    build.__name__ = build.__qualname__ = info.builder
    build.__doc__ = f"``p1 {info.spelling} p2 ...``: {info.meaning}"
    return build


seq = _operator("seq")
forall_seq = _operator("forall_seq")
and_ = _operator("and")
par = _operator("par")
or_ = _operator("or")
equals = _operator("equals")
meets = _operator("meets")
during = _operator("during")
starts = _operator("starts")
finishes = _operator("finishes")
cnot = _operator("cnot")
fnot = _operator("fnot")


# ------------------------------------------------------------------ other pattern forms


def not_(negated: PatternLike, left: PatternLike, right: PatternLike) -> Not:
    """``NOT(negated).[left, right]``: ``left SEQ right`` with no ``negated`` in between.

    >>> not_("ce2", "ce1", "ce1").negated
    EventAtom(name='ce2', args=())
    """
    return Not(pattern(negated), pattern(left), pattern(right))


def where(p: PatternLike, *conditions: object) -> Where:
    """``p WHERE c1, c2, ...``: ``p`` when every static condition holds.

    >>> from reasoner.api.terms import var
    >>> where("a", var("X") > 1).condition.functor
    '>'
    """
    return Where(pattern(p), term(conj(*conditions)))


def within(p: PatternLike, size: Size, unit: str | None = None) -> Window:
    """The window ``(p).size``: occurrences of ``p`` lasting at most ``size``.

    Args:
        p: the pattern.
        size: a positive number, in stream time units without ``unit``.
        unit: ``"s"``, ``"min"``, ``"h"`` or ``"d"``: ``size`` is then converted to seconds,
            as ``(p).30min`` is.

    >>> within("a", 30, "min")
    Window(pattern=EventAtom(name='a', args=()), size=1800, unit='min')
    """
    if unit is None:
        return Window(pattern(p), size)
    if unit not in UNITS:
        raise ValueError(f"unknown window unit {unit!r} (expected one of {', '.join(UNITS)})")
    return Window(pattern(p), size * UNITS[unit], unit)


def multiply(p: PatternLike, *goals: object) -> Multiply:
    """``p EVENT_MULTIPLY g1, g2, ...``: one occurrence per solution of the goals."""
    return Multiply(pattern(p), term(conj(*goals)))


def star(p: PatternLike) -> Star:
    """``p STAR_TIMES``: zero or more repetitions (only as the right operand of ``seq``)."""
    return Star(pattern(p))


def aggregate(
    function: str | Expr,
    p: PatternLike,
    result: Expr,
    window: tuple[str, Size] | None = None,
) -> Aggregate:
    """``aggregate(function, p, Result[, window])`` (see ``docs/language.md``).

    Args:
        function: ``"count"``, or ``compound("sum", X)`` (also ``avg``, ``min``, ``max``).
        p: the aggregated pattern.
        result: the variable that receives the value.
        window: ``("count", N)`` for the last N values or ``("time", seconds)``.

    >>> from reasoner.api.terms import var
    >>> aggregate("count", "b", var("N")).function
    Atom(name='count')
    """
    result_term = term(result)
    if not isinstance(result_term, Var):
        raise TypeError(f"the aggregate's result must be a variable, not {result!r}")
    if window is not None and window[0] not in ("count", "time"):
        raise ValueError(f"expected ('count', N) or ('time', D) as the window, not {window!r}")
    fn = Atom(function) if isinstance(function, str) else term(function)
    return Aggregate(fn, pattern(p), result_term, window)


# ---------------------------------------------------------------------------- statements


def rule(
    head: EventAtom | str,
    body: PatternLike,
    *,
    label: str | None = None,
    window: Size | None = None,
    policy: Policy | None = None,
    properties: Mapping[str, object] | Iterable[tuple[str, object]] = (),
) -> EventRule:
    """An event rule ``head <- body.`` with ETALIS's optional label and properties.

    Args:
        head: the derived event (a ``str`` is a 0-ary event).
        body: the pattern.
        label: the rule label (``r1 'rule:' ...``).
        window: the rule window, property ``event_rule_window``.
        policy: ``unrestricted``, ``recent`` or ``chronological``, property
            ``consumption_policy``.
        properties: further ``(name, value)`` properties, after those two.

    >>> rule("c", seq("a", "b"), window=10).properties
    (('event_rule_window', Number(value=10)),)
    """
    props: list[tuple[str, Term]] = []
    if window is not None:
        props.append(("event_rule_window", term(window)))
    if policy is not None:
        props.append(("consumption_policy", Atom(policy)))
    items = properties.items() if isinstance(properties, Mapping) else properties
    props += [(name, term(value)) for name, value in items]
    return EventRule(_head(head), pattern(body), label, tuple(props))


def fact(head: object) -> StaticRule:
    """A fact ``head.`` (a ``str`` is an atom).

    >>> from reasoner.api.terms import compound
    >>> fact(compound("driver", "d1", 3)).body
    ()
    """
    return StaticRule(_clause_head(head))


def facts(predicate: str, rows: Iterable[Sequence[object]]) -> Facts:
    """Ground facts ``predicate(v1, ..., vn).``, one per row, as one table: what :func:`fact`
    gives for each row, without a node per fact (a large fact set given from Python).

    Values as :func:`~reasoner.api.terms.term` converts them (a ``str`` is a string, a
    number a number, an :class:`~reasoner.values.IRI` an IRI), or constant terms (``atom``,
    ``pname``). Raises TypeError for another value (a list, a compound: use :func:`fact`).

    >>> table = facts("near", [("KSLC", "KPVU"), ("KPVU", "KSLC")])
    >>> from reasoner.language.printer import to_source
    >>> print(to_source(table))
    near("KSLC", "KPVU").
    near("KPVU", "KSLC").
    """
    args = tuple(map(tuple, rows))
    arities = set(map(len, args))
    types = set(map(type, chain.from_iterable(args)))
    if len(arities) == 1 and len(types) == 1 and _PLAIN.get(types.pop()) == "s":
        kinds = ("s" * arities.pop(),) * len(args)  # (strings only: no loop of ours)
    else:
        rows_ = [_row(values) for values in args]
        kinds, args = tuple(k for k, _ in rows_), tuple(v for _, v in rows_)
    return Facts((predicate,) * len(args), kinds, args)


def _row(values: tuple[object, ...]) -> tuple[str, tuple[object, ...]]:
    kind = "".join([_PLAIN.get(type(v), "?") for v in values])
    return (kind, values) if "?" not in kind else _constants(values)


#: The kinds (FACT_KINDS) of the Python values a fact table stores as they are.
_PLAIN: dict[type, str] = {str: "s", int: "n", float: "n", Fraction: "n"}


def _constants(values: tuple[object, ...]) -> tuple[str, tuple[object, ...]]:
    """The kinds and stored values of a row holding terms or IRIs."""
    kinds, out = "", []
    for value in values:
        stored: object
        match term(value) if not isinstance(value, bool) else value:
            case Atom(name) if name != "[]":
                kinds, stored = kinds + "a", name
            case String(text):
                kinds, stored = kinds + "s", text
            case Number(number):
                kinds, stored = kinds + "n", number
            case Iri(iri):
                kinds, stored = kinds + "i", iri
            case PName(prefix, local):
                kinds, stored = kinds + "p", f"{prefix}:{local}"
            case _:
                raise TypeError(f"{value!r} is not a constant (use fact() for other terms)")
        out.append(stored)
    return kinds, tuple(out)


def clause(head: object, *body: object) -> StaticRule:
    """A Horn clause ``head :- g1, ..., gn.``"""
    if not body:
        raise TypeError("a clause needs at least one goal (use fact() for a fact)")
    return StaticRule(_clause_head(head), tuple(term(g) for g in body))


def directive(goal: object) -> Directive:
    """A directive ``:- goal.`` (also ETALIS's directive facts such as ``print_trigger``)."""
    return Directive(term(goal))


def prefix(name: str, iri: str) -> Directive:
    """``:- prefix(name, 'iri').``, after which ``name:local`` is an IRI.

    >>> prefix("wt", "http://etalis.example.org/ontology/weather#").goal.functor
    'prefix'
    """
    return Directive(Compound("prefix", (Atom(name), Atom(iri))))


def rdf_event(head: EventAtom | str, *goals: object) -> RdfEvent:
    """``rdf_event head :- g1, ..., gn.``: one ``head`` event per solution of the goals over
    an input RDF graph (see ``docs/rdf-streams.md``).

    >>> from reasoner.api.terms import compound, pname, variables
    >>> S, V = variables("S V")
    >>> rdf_event(event("reading", S, V), compound("rdf", S, pname("ex:value"), V)).head.name
    'reading'
    """
    if not goals:
        raise TypeError("an rdf_event mapping needs at least one goal")
    return RdfEvent(_head(head), tuple(term(g) for g in goals))


def program(*statements: Statement | Program | Iterable[Statement]) -> Program:
    """A program for ``Engine``: statements, in order; programs (parsed rule files, say) and
    other iterables of statements are spliced in.

    >>> len(program(rule("c", seq("a", "b"))).event_rules)
    1
    """
    out: list[Statement] = []
    for item in statements:
        if isinstance(item, EventRule | StaticRule | Directive | RdfEvent | Facts):
            out.append(item)
        elif isinstance(item, Program):
            out.extend(item.statements)
        else:
            out.extend(item)
    return Program(tuple(out))


def _head(head: EventAtom | str) -> EventAtom:
    if isinstance(head, str):
        return EventAtom(head)
    if isinstance(head, EventAtom):
        return head
    raise TypeError(f"a rule head is an event, not {head!r}")


def _clause_head(head: object) -> Term:
    value = Atom(head) if isinstance(head, str) else term(head)
    if not isinstance(value, Atom | Compound | PName):
        raise TypeError(f"a clause head is an atom or a compound term, not {head!r}")
    return value
