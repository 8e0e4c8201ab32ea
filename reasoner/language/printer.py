"""AST -> rule text in the papers' notation, such that ``parse(to_source(p)) == p``.

Operators are printed upper case (``SEQ``, ``WHERE``), negation as ``NOT(q).[p1, p2]``, labels and
rule properties in ETALIS's label form. Parentheses are added only where precedence needs them:
terms follow the Prolog operator table of ``docs/language.md``; patterns have three levels
(``WHERE``/``EVENT_MULTIPLY`` < binary operators < ``STAR_TIMES``).
"""

from __future__ import annotations

import re
from fractions import Fraction

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
    ListTerm,
    Multiply,
    Node,
    Not,
    Number,
    Pattern,
    PName,
    Program,
    RdfEvent,
    Star,
    StaticRule,
    String,
    Term,
    TimePoint,
    Var,
    Where,
    Window,
)
from reasoner.language.operators import OPERATORS

# (priority, type) of the infix operators the grammar knows.
_INFIX: dict[str, tuple[int, str]] = {
    ":-": (1200, "xfx"),
    ";": (1100, "xfy"),
    "->": (1050, "xfy"),
    ",": (1000, "xfy"),
    **{
        op: (700, "xfx")
        for op in [
            "=",
            "\\=",
            "==",
            "\\==",
            "<",
            ">",
            "=<",
            ">=",
            "=:=",
            "=\\=",
            "is",
            "@<",
            "@>",
            "@=<",
            "@>=",
            "=..",
        ]
    },
    "+": (500, "yfx"),
    "-": (500, "yfx"),
    "*": (400, "yfx"),
    "/": (400, "yfx"),
    "//": (400, "yfx"),
    "mod": (400, "yfx"),
    "rem": (400, "yfx"),
    "**": (200, "xfx"),
    "^": (200, "xfy"),
}
_PREFIX: dict[str, int] = {"\\+": 900, "-": 200}

_PLAIN_ATOM = re.compile(r"[a-z][A-Za-z0-9_]*\Z")
_PNAME_PART = re.compile(r"[A-Za-z0-9_]+\Z")
# Words the lexer reads as keywords where an event name could stand.
_PATTERN_KEYWORDS = frozenset({"not", "aggregate"})


def to_source(node: Node) -> str:
    """Print any AST node as rule text.

    Args:
        node: a term, pattern, statement or program.

    Returns:
        The text; a program gives one statement per line, each ending in a full stop.

    >>> to_source(Binary("seq", EventAtom("a"), EventAtom("b", (Var("X"),))))
    'a SEQ b(X)'
    """
    match node:
        case Program():
            return "".join(_statement(s) + "\n" for s in node.written)
        case Facts():
            return "\n".join(_statement(s) for s in node.rules)
        case EventRule() | StaticRule() | Directive() | RdfEvent():
            return _statement(node)
        case _ if isinstance(node, Pattern):
            return _pattern(node, 0)
        case _:
            return _term(node, 1200)


# ---------------------------------------------------------------------------- statements


def _statement(stmt: EventRule | StaticRule | Directive | RdfEvent) -> str:
    match stmt:
        case EventRule(head, body, label, properties, alarm=alarm):
            prefix = ""
            if properties:
                props = ", ".join(
                    f"property({_atom(name)}, {_term(value, 999)})" for name, value in properties
                )
                prefix = f"{_atom(label)}([{props}])" if label else f"[{props}]"
            elif label:
                prefix = _atom(label)
            if prefix:
                prefix += " 'rule:' "
            shown = _event(head)
            if alarm is not None:
                shown = f"{alarm.functor}({shown}, {_term(alarm.time, 999)})"
            return f"{prefix}{shown} <- {_pattern(body, 0)}."
        case StaticRule(head, ()):
            return f"{_term(head, 999)}."
        case StaticRule(head, body):
            goals = ", ".join(_term(g, 999) for g in body)
            return f"{_term(head, 999)} :- {goals}."
        case Directive(goal):
            return f":- {_term(goal, 1100)}."
        case RdfEvent(head, body):
            goals = ", ".join(_term(g, 999) for g in body)
            return f"rdf_event {_event(head)} :- {goals}."
    raise TypeError(f"not a statement: {stmt!r}")


# ------------------------------------------------------------------------------ patterns
# Levels: 0 = WHERE / EVENT_MULTIPLY, 1 = binary operators, 2 = STAR_TIMES operand (primary).


def _pattern(p: Pattern, level: int) -> str:
    match p:
        case EventAtom():
            return _event(p)
        case TimePoint(value):
            return _number(value)
        case Window(inner, size, unit):
            return f"({_pattern(inner, 0)}).{_window_size(size, unit)}"
        case Not(negated, left, right):
            return f"NOT({_pattern(negated, 0)}).[{_pattern(left, 1)}, {_pattern(right, 1)}]"
        case Aggregate(function, inner, result, window):
            extra = ""
            if window is not None:
                extra = f", {window[0]}({_number(window[1])})"
            return f"aggregate({_term(function, 999)}, {_pattern(inner, 1)}, {result.name}{extra})"
        case Star(inner):
            return f"{_pattern(inner, 2)} STAR_TIMES"
        case Binary(op, left, right):
            text = f"{_pattern(left, 1)} {OPERATORS[op].spelling} {_pattern(right, 2)}"
            return _wrap(text, level > 1)
        case Where(inner, condition):
            return _wrap(f"{_pattern(inner, 0)} WHERE {_term(condition, 1000)}", level > 0)
        case Multiply(inner, goal):
            return _wrap(f"{_pattern(inner, 0)} EVENT_MULTIPLY {_term(goal, 1000)}", level > 0)
    raise TypeError(f"not a pattern: {p!r}")


def _wrap(text: str, needed: bool) -> str:
    return f"({text})" if needed else text


def _event(e: EventAtom) -> str:
    name = _functor(e.name)
    if e.name.lower() in _PATTERN_KEYWORDS and not name.startswith("'"):
        name = _quote(e.name)
    if not e.args:
        return name
    return f"{name}({', '.join(_term(a, 999) for a in e.args)})"


def _window_size(size: int | float | Fraction, unit: str | None) -> str:
    if unit is None:
        return _number(size)
    amount = Fraction(size) / UNITS[unit]
    if amount.denominator == 1:
        return f"{amount.numerator}{unit}"
    return f"{float(amount)!r}{unit}"


# --------------------------------------------------------------------------------- terms


def _term(t: Term, max_priority: int) -> str:
    match t:
        case Var(name):
            return name
        case Number(value):
            return _number(value)
        case String(value):
            escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
            return f'"{escaped}"'
        case Iri(value):
            return f"<{value}>"
        case PName(prefix, local):
            return f"{prefix}:{local}"
        case Atom(name):
            return _atom(name)
        case ListTerm(items, tail):
            inner = ", ".join(_term(i, 999) for i in items)
            if tail is not None:
                inner += f" | {_term(tail, 999)}"
            return f"[{inner}]"
        case Compound(functor, (left, right)) if functor in _INFIX:
            priority, kind = _INFIX[functor]
            left_max = priority if kind == "yfx" else priority - 1
            right_max = priority if kind == "xfy" else priority - 1
            sep = ", " if functor == "," else f" {functor} "
            text = f"{_term(left, left_max)}{sep}{_term(right, right_max)}"
            return _wrap(text, priority > max_priority)
        case Compound(functor, (operand,)) if functor in _PREFIX:
            priority = _PREFIX[functor]
            if isinstance(operand, Number):
                # `-1` would read back as the number -1: keep the compound visible.
                return _wrap(f"{functor}({_term(operand, 1200)})", priority > max_priority)
            text = f"{functor} {_term(operand, priority)}"
            return _wrap(text, priority > max_priority)
        case Compound(functor, args):
            return f"{_functor(functor)}({', '.join(_term(a, 999) for a in args)})"
    raise TypeError(f"not a term: {t!r}")


def _number(value: int | float | Fraction) -> str:
    if isinstance(value, Fraction):
        return f"{value.numerator}r{value.denominator}"
    return repr(value)


def _functor(name: str) -> str:
    """A functor: plain, prefixed (``wt:speed``) or quoted."""
    prefix, sep, local = name.partition(":")
    if (sep and _PLAIN_ATOM.match(prefix) and _PNAME_PART.match(local)) or _PLAIN_ATOM.match(name):
        return name
    return _quote(name)


def _atom(name: str) -> str:
    if _PLAIN_ATOM.match(name) or name in ("[]", "!"):
        return name
    return _quote(name)


def _quote(name: str) -> str:
    escaped = name.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
    return f"'{escaped}'"
