"""Ground fact lines read without lark: the parser's fast path for fact files.

A line holding one ground fact ``f(c1, ..., cn).`` (constants only: atoms, quoted atoms,
strings, numbers, IRIs, prefixed names; a ``%`` comment may follow) is recognised by one
regular expression per line, and a run of such lines becomes one
:class:`~reasoner.language.ast.Facts` table. Everything else (rules, directives, facts with
variables or compound arguments, a line holding two statements, block comments) is left to
lark, which also decides whether a run really starts a statement (:func:`scan`).
:func:`fact_rules` turns a table back into the :class:`~reasoner.language.ast.StaticRule`
nodes lark builds, spans included. This module does not import lark: a file of facts only is
read without it (:meth:`Scan.program`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from reasoner.language.ast import (
    Atom,
    Compound,
    Facts,
    Iri,
    Number,
    PName,
    Program,
    Span,
    StaticRule,
    String,
    Term,
)

#: ETALIS facts that configure the system rather than state knowledge (name, arity).
DIRECTIVE_FACTS = frozenset(
    {
        ("print_trigger", 1),
        ("print_event", 1),
        ("external_trigger", 1),
        ("spy_event", 1),
        ("persistent_event", 1),
        ("persistent_rule", 1),
        ("set_etalis_flag", 2),
        ("event_consumption_policy", 1),
        ("garbage_control", 1),
        ("garbage_window", 1),
        ("garbage_window_step", 1),
        ("out_of_order", 1),
        ("revision_flag", 1),
        ("rule_sharing", 1),
        ("logging", 1),
        ("logging_to_file", 1),
        ("etalis_justification", 1),
        ("store_fired_events", 1),
        ("module", 2),
        ("use_module", 1),
        ("prefix", 2),
        ("event_rule_property", 3),
    }
)

#: Facts whose one argument is the statement (``db(F).``, ``prolog(H :- B).``): left to lark.
WRAPPERS = frozenset({"db", "prolog", "static"})

# The terminals of grammar/etalis.lark a ground fact is made of, as written there (a quoted
# text or a string that spans lines is left to lark: spans here are within one line).
_WS = r"[ \t\f\r]*"  # lark's common.WS but the newline
_ATOM = r"[a-z][A-Za-z0-9_]*"
_PNAME = r"[a-z][A-Za-z0-9_]*:[A-Za-z0-9_]+"
_QUOTED = r"'(?:\\.|''|[^'\\\n])*'"
_STRING = r'"(?:\\.|[^"\\\n])*"'
_NUMBER = r"-?(?:\d+r\d+|\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+)"
_IRI = r'<[A-Za-z][A-Za-z0-9+.\-]*:[^\s<>"]*>'
# A token is matched as lark's lexer matches it: the first of the terminals that matches (PNAME
# before ATOM_NAME: lark gives it the higher priority), then never taken back: atomic groups.
_CONSTANT = rf"(?>{_PNAME}|{_ATOM}|{_QUOTED}|{_STRING}|{_NUMBER}|{_IRI})"
_FACT = re.compile(
    rf"{_WS}(?P<f>(?>{_PNAME}|{_ATOM}|{_QUOTED}))\((?P<a>{_WS}{_CONSTANT}{_WS}"
    rf"(?:,{_WS}{_CONSTANT}{_WS})*)\){_WS}(?P<end>\.){_WS}(?:%.*)?"
)
_ARGS = rf"{_WS}({_CONSTANT}){_WS}"
#: Every line of a text, as a match each: a fact of 1 to 4 arguments (its functor and their
#: texts in groups), or the line (in the last group).
_LINES = re.compile(
    rf"^(?:{_WS}((?>{_PNAME}|{_ATOM}|{_QUOTED}))\({_ARGS}(?:,{_ARGS}(?:,{_ARGS}(?:,{_ARGS})?)?)?"
    rf"\){_WS}\.{_WS}(?:%.*)?|(.*))$",
    re.MULTILINE,
)
#: The arguments of a fact line: each one's text (its kind told by its first character).
_TOKEN = re.compile(rf"{_WS}({_CONSTANT}){_WS}(?:,|$)")
#: A line that holds no statement: blank, or a ``%`` comment.
_NOTHING = re.compile(rf"{_WS}(?:%.*)?")
_RULE_CHANGE = re.compile(r"(ins|del)_(event|static)_rule$")


def number_value(text: str) -> int | float | Fraction:
    """The value of a NUMBER or NEG_NUMBER token (ZeroDivisionError for ``1r0``).

    >>> number_value("3"), number_value("-1r2"), number_value("2.5e1")
    (3, Fraction(-1, 2), 25.0)
    """
    if "r" in text:
        num, den = text.split("r")
        return Fraction(int(num), int(den))
    if any(c in text for c in ".eE"):
        return float(text)
    return int(text)


def unquote(text: str, quote: str) -> str:
    """The text of a quoted atom (``quote`` ``'``) or a string (``"``): doubled quotes and
    backslash escapes resolved.

    >>> unquote("'it''s\\\\n'", "'")
    "it's\\n"
    """
    body = text[1:-1].replace(quote * 2, quote)
    if "\\" not in body:
        return body
    out: list[str] = []
    escapes = {"n": "\n", "t": "\t", "\\": "\\", "'": "'", '"': '"'}
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            out.append(escapes.get(body[i + 1], body[i + 1]))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Scan:
    """A text's fact lines: ``runs`` (the line number of each run's first fact, and its table)
    and whether every other line holds nothing (``only_facts``)."""

    runs: tuple[tuple[int, Facts], ...]
    only_facts: bool

    def program(self, text: str) -> Program | None:
        """The program of a text of ground fact lines only (blank and ``%`` comment lines
        aside), read without lark; None for any other text."""
        if not self.only_facts or not self.runs:
            return None
        return Program(tuple(table for _, table in self.runs), source=text)


#: The fewest facts a run must hold to become a table: shorter runs are left to lark (they
#: parse in a few milliseconds), so a program's few facts stay statements of their own.
MIN_RUN = 16


def scan(text: str, file: str | None = None, min_run: int = MIN_RUN) -> Scan:
    """Find the runs of at least ``min_run`` ground fact lines of ``text`` (lines holding
    nothing may sit between the facts of a run). A run is a table of facts only if it starts
    a statement: the caller checks that with lark unless :attr:`Scan.only_facts` (nothing but
    those runs, blank lines and ``%`` comments: every fact line then does).

    >>> text = "p(a, 1).\\n% note\\np('b c', 2).\\nq(X) :- p(X, _).\\nr(<http://x.org/>).\\n"
    >>> found = scan(text, min_run=1)
    >>> [(line, len(table)) for line, table in found.runs], found.only_facts
    ([(1, 2), (5, 1)], False)
    """
    runs: list[tuple[int, Facts]] = []
    builder = _TableBuilder(file, text)
    only_facts = True
    start = -1  # the index of the current run's first line, -1 outside a run
    # (one pass of the regex engine reads every line: a fact of up to 4 arguments in groups)
    for index, (functor, a1, a2, a3, a4, line) in enumerate(_LINES.findall(text)):
        if functor:
            row = _make_row(functor, [t for t in (a1, a2, a3, a4) if t], builder)
        else:
            row = _row(line, builder) if "(" in line else None
        if row is not None:
            if start < 0:
                start = index
            builder.rows.append(row)
            builder.lines.append(index + 1)
        elif functor or _NOTHING.fullmatch(line) is None:  # (a fact the parser reads otherwise)
            only_facts = False
            if start >= 0:
                only_facts = builder.close(start, runs, min_run) and only_facts
                start = -1
    if start >= 0:
        only_facts = builder.close(start, runs, min_run) and only_facts
    return Scan(tuple(runs), only_facts)


_Row = tuple[str, str, tuple[object, ...]]


def _row(line: str, builder: _TableBuilder) -> _Row | None:
    """The functor, argument kinds and values of a ground fact line; None for another line."""
    match = _FACT.fullmatch(line)
    if match is None:
        return None
    return _make_row(match["f"], _TOKEN.findall(match["a"]), builder)


def _make_row(functor: str, tokens: list[str], builder: _TableBuilder) -> _Row | None:
    """The row of a fact: its functor and its arguments' texts as written; None if the
    parser reads it otherwise."""
    names = builder.names
    kinds = ""
    values: list[object] = []
    for token in tokens:
        first = token[0]
        if first == "'":
            kinds += "a"
            if token.count("'") > 2 or "\\" in token:
                token = unquote(token, "'")
                if token == "[]":
                    return None  # (the empty list, whose value is ())
            else:
                token = token[1:-1]
            values.append(names.setdefault(token, token))
        elif first in _LOWER:
            kinds += "p" if ":" in token else "a"
            values.append(names.setdefault(token, token))
        elif first == '"':
            kinds += "s"
            values.append(unquote(token, '"'))
        elif first == "<":
            kinds += "i"
            values.append(token[1:-1])
        else:
            try:
                values.append(number_value(token))
            except ZeroDivisionError:
                return None  # (lark refuses 1r0 with its message)
            kinds += "n"
    name = builder.functors.get((functor, len(values)))
    if name is None:
        name = builder.functors[(functor, len(values))] = _functor(functor, len(values))
    if not name:
        return None
    return name, names.setdefault(kinds, kinds), tuple(values)


def _functor(written: str, arity: int) -> str:
    """The name of a fact's functor as written (quoted or not); ``""`` for a fact the parser
    reads otherwise: a directive fact, a wrapper (``db(F)``), a rule change."""
    name = unquote(written, "'") if written[0] == "'" else written
    if (name, arity) in DIRECTIVE_FACTS or name in WRAPPERS and arity == 1:
        return ""
    if _RULE_CHANGE.match(name):
        return ""  # (lark reads `ins_event_rule(` as one token)
    return name


_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")


class _TableBuilder:
    """Collects the rows of one run at a time; names (functors, atoms, kinds) are shared
    strings, so that a table holds each once and its pickle writes each once."""

    def __init__(self, file: str | None, text: str) -> None:
        self.file, self.text = file, text
        self.names: dict[str, str] = {}
        self.functors: dict[tuple[str, int], str] = {}  # (as written, arity) -> name or ""
        self.rows: list[_Row] = []
        self.lines: list[int] = []

    def close(self, start: int, runs: list[tuple[int, Facts]], min_run: int) -> bool:
        """End the run collected since the last call (its first line at index ``start``): a
        table added to ``runs`` if it holds ``min_run`` facts or more. Returns whether it
        does (a shorter run's lines are left to lark)."""
        long_enough = len(self.rows) >= min_run
        if long_enough:
            functors, kinds, args = zip(*self.rows, strict=True)
            # (the whole text: the program's source too, so a cache entry holds it once)
            table = Facts(functors, kinds, args, tuple(self.lines), self.text, self.file)
            runs.append((start + 1, table))
        self.rows, self.lines = [], []
        return long_enough


def without_first(table: Facts) -> Facts:
    """``table`` but its first fact (which lark reads after all: :func:`scan`)."""
    return Facts(
        table.functors[1:], table.kinds[1:], table.args[1:], table.lines[1:], table.text, table.file
    )


def facts_without(table: Facts, rules: set[StaticRule]) -> Facts | None:
    """``table`` without the facts equal to one of ``rules``; None if none is left."""
    gone = table_of(r for r in rules if table_of((r,)) is not None)
    if gone is None:
        return table
    rows = set(zip(gone.functors, gone.kinds, gone.args, strict=True))
    keep = [
        i
        for i, row in enumerate(zip(table.functors, table.kinds, table.args, strict=True))
        if row not in rows
    ]
    if len(keep) == len(table):
        return table
    if not keep:
        return None
    lines = tuple(table.lines[i] for i in keep) if table.lines else ()
    return Facts(
        tuple(table.functors[i] for i in keep),
        tuple(table.kinds[i] for i in keep),
        tuple(table.args[i] for i in keep),
        lines,
        table.text,
        table.file,
    )


# ------------------------------------------------------------------------- tables -> AST


def fact_rules(table: Facts) -> tuple[StaticRule, ...]:
    """The facts of a table as the parser's :class:`StaticRule` nodes; with spans when the
    table keeps its text (one read of each fact's line)."""
    if table.text is None:
        return tuple(
            StaticRule(Compound(f, tuple(map(_term, k, a))))
            for f, k, a in zip(table.functors, table.kinds, table.args, strict=True)
        )
    lines = table.text.split("\n")
    return tuple(_located(lines[line - 1], line, table.file) for line in table.lines)


def _term(kind: str, value: object, span: Span | None = None) -> Term:
    match kind:
        case "a":
            return Atom(str(value), span)
        case "s":
            return String(str(value), span)
        case "n":
            return Number(value, span)  # type: ignore[arg-type]
        case "i":
            return Iri(str(value), span)
    prefix, local = str(value).split(":", 1)
    return PName(prefix, local, span)


def _located(text: str, line: int, file: str | None) -> StaticRule:
    """The fact on ``text`` (line ``line``) with lark's spans: each token's, the compound's
    from its functor to ``)``, the statement's to the full stop."""
    match = _FACT.fullmatch(text)
    assert match is not None  # (the table was read from this line)
    builder = _TableBuilder(file, text)
    row = _row(text, builder)
    assert row is not None
    functor, kinds, values = row
    offset = match.start("a")
    args = []
    for kind, value, arg in zip(kinds, values, _TOKEN.finditer(match["a"]), strict=True):
        start, end = arg.span(1)
        args.append(
            _term(kind, value, Span(file, line, offset + start + 1, line, offset + end + 1))
        )
    first = match.start("f") + 1
    head = Compound(functor, tuple(args), Span(file, line, first, line, match.end("a") + 2))
    return StaticRule(head, (), Span(file, line, first, line, match.end("end") + 1))


def table_of(rules: Iterable[StaticRule]) -> Facts | None:
    """The table of ground facts equal to ``rules`` (each ``f(c1, ..., cn).`` with constant
    arguments), or None if one is not such a fact. Spans are not kept."""
    rows = []
    for rule in rules:
        head = rule.head
        if rule.body or not isinstance(head, Compound) or not head.args:
            return None
        kinds: list[str] = []
        values: list[object] = []
        for arg in head.args:
            match arg:
                case Atom(name) if name != "[]":
                    kinds.append("a")
                    values.append(name)
                case String(value) | Iri(value):
                    kinds.append("s" if isinstance(arg, String) else "i")
                    values.append(value)
                case Number(value):
                    kinds.append("n")
                    values.append(value)
                case PName(prefix, local):
                    kinds.append("p")
                    values.append(f"{prefix}:{local}")
                case _:
                    return None
        rows.append((head.functor, "".join(kinds), tuple(values)))
    if not rows:
        return None
    functors, kinds_, args = zip(*rows, strict=True)
    return Facts(functors, kinds_, args)
