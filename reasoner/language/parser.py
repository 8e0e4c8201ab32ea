"""Rule text -> :class:`~reasoner.language.ast.Program`.

The only module that imports lark. The grammar (``grammar/etalis.lark``) is LALR(1) with lark's
contextual lexer, which keeps parsing linear in the file size; :class:`_ToAst` builds the AST
nodes as the parser reduces (no parse tree is built, nor lark's positions propagated through
it: a large rule set parses in about 40% less time), and ETALIS's conventions (``db(F).``,
labelled rules, ``event_rule_property/3``, directive facts) are applied by :func:`_statements`.
Every lark error becomes a :class:`~reasoner.errors.RuleSyntaxError` whose message says, in
words, what was expected.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import threading
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any, TypeVar, cast

import lark
from lark import Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from reasoner.errors import Diagnostic, RuleSyntaxError
from reasoner.language.ast import (
    ALARMS,
    PATTERN_GOALS,
    UNITS,
    Aggregate,
    Alarm,
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
    Not,
    Number,
    Pattern,
    PName,
    Program,
    RdfEvent,
    Span,
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
from reasoner.language.facts import (
    DIRECTIVE_FACTS,
    Scan,
    number_value,
    scan,
    unquote,
    without_first,
)
from reasoner.language.loader import cache_dir
from reasoner.language.messages import describe_expected
from reasoner.language.operators import keyword_operator, keywords


def parse(text: str, file: str | None = None, found: Scan | None = None) -> Program:
    """Parse rule text into a :class:`Program`.

    Args:
        text: the rules, in the papers' notation or ETALIS's (or both).
        file: the file name used in spans and error messages.

    Returns:
        The program; ``program.source`` holds ``text``.

    Raises:
        RuleSyntaxError: the text does not parse; the diagnostic names the line and column and
            says what was expected.

    >>> parse("c(X) <- a(X) SEQ b(X).").event_rules[0].body.op
    'seq'
    """
    found = found or scan(text, file)
    tables = found.program(text)
    if tables is not None:
        return tables
    if found.runs and MARKER not in text:
        program = _with_tables(text, file, found.runs)
        if program is not None:
            return program
    return _parse(text, file)


#: The statement a run of fact lines is replaced by while lark reads the rest of the text:
#: a quoted atom no rule text holds, numbered after the run.
MARKER = "\x01facts"


def _with_tables(
    text: str, file: str | None, runs: tuple[tuple[int, Facts], ...]
) -> Program | None:
    """``text`` parsed with each run of fact lines as its table (:func:`_marked`); a run whose
    marker does not come back as a statement of its own (it was inside a block comment, or
    continued a statement) is read by lark on the next try. None when lark refuses the text:
    the caller parses it whole, for its error."""
    for _ in range(3):
        program, missed = _marked(text, file, runs)
        if program is not None or not missed:
            return program
        kept = []  # a missed run's first fact goes to lark; the others may still be a table
        for number, (first, table) in enumerate(runs):
            if number not in missed:
                kept.append((first, table))
            elif len(table) > 1:
                kept.append((table.lines[1], without_first(table)))
        runs = tuple(kept)
        if not runs:
            break
    return None


def _marked(
    text: str, file: str | None, runs: tuple[tuple[int, Facts], ...]
) -> tuple[Program | None, set[int]]:
    """Lark reads ``text`` with each run replaced by a marker statement on its first line and
    blank lines (every other line and column stays where it was); each marker that comes back
    as a statement of its own, on its line, is replaced by its table. Returns the program, or
    None and the runs whose markers did not come back (none: lark refused the text)."""
    lines = text.split("\n")
    for number, (first, table) in enumerate(runs):
        lines[first - 1] = f"'{MARKER}{number}'."
        for line in table.lines[1:]:
            lines[line - 1] = ""
    try:
        program = _parse("\n".join(lines), file)
    except RuleSyntaxError:
        return None, set()
    statements = list(program.statements)
    missed = set(range(len(runs)))
    for index, statement in enumerate(statements):
        match statement:
            case StaticRule(Atom(name), (), span) if name.startswith(MARKER) and span:
                number = int(name[len(MARKER) :])
                if runs[number][0] == span.line:
                    statements[index] = runs[number][1]
                    missed.discard(number)
    if missed:
        return None, missed
    return Program(tuple(statements), source=text), set()


def _parse(text: str, file: str | None) -> Program:
    """``text`` parsed by lark."""
    parser, builder = _parser_and_builder()
    with _PARSING:  # the parser has one builder, which keeps the state of one parse
        builder.begin(file, text)
        try:
            raws = cast(list[_Raw], parser.parse(text))  # what the builder's `start` returns
            return Program(_statements(raws, builder), source=text)
        except UnexpectedInput as exc:
            raise RuleSyntaxError([syntax_diagnostic(exc, text, file, _expected)]) from exc
        finally:
            builder.end()


_PARSING = threading.Lock()


def _parser() -> lark.Lark:
    return _parser_and_builder()[0]


@functools.cache
def _parser_and_builder() -> tuple[lark.Lark, _ToAst]:
    builder = _ToAst()
    return build_parser(grammar_cache(), builder), builder


def build_parser(cache: str | bool = False, builder: _ToAst | None = None) -> lark.Lark:
    """The LALR parser of the rule language.

    Args:
        cache: a file where lark keeps the built parser between processes (it checks that
            the grammar and options are still the same, and rebuilds the file otherwise; a
            file it cannot read or write only costs the time to build), or False.
        builder: the AST builder the parser calls at each reduction (no parse tree is
            built), or None for lark's parse tree.
    Returns:
        The parser.
    """
    grammar = (Path(__file__).parent / "grammar" / "etalis.lark").read_text(encoding="utf-8")
    operators = "|".join(keywords())
    return lark.Lark(
        grammar.replace("(?i:OPERATORS)", f"(?i:{operators})"),
        parser="lalr",
        lexer="contextual",
        keep_all_tokens=True,  # the builder's spans cover the brackets too
        maybe_placeholders=False,
        transformer=builder,
        cache=cache,
    )


def grammar_cache(name: str = "grammar") -> str | bool:
    """Where the built parser is kept (:func:`~reasoner.language.loader.cache_dir`); False if
    it cannot be made. ``name`` tells the grammars apart (the EP-SPARQL parser keeps its own).

    Building the parser takes about 0.15 s, loading it 0.01 s."""
    folder = cache_dir("")
    if folder is None:
        return False
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    return str(folder / f"{name}-lark-{lark.__version__}-python-{python}.pickle")


# ------------------------------------------------------------------------------ errors


def syntax_diagnostic(
    exc: UnexpectedInput,
    text: str,
    file: str | None,
    describe: Callable[[set[str]], str],
    end: str = "the end of the file",
    quotes_close_by: str = "the end of the file",
) -> Diagnostic:
    """A lark error -> the diagnostic at ``file:line:col`` saying what was expected and what was
    found (the rule and the EP-SPARQL parsers' one way of reporting bad syntax).

    Args:
        exc: lark's error.
        text: the source.
        file: its name.
        describe: lark's names of the terminals the parser could accept -> ``"expected ..."``
            in the language's words (``""`` when there is nothing to say).
        end: the end of the source, in words.
        quotes_close_by: where an opened quote has to be closed, in words.
    """
    lines = text.splitlines() or [""]
    line, column = getattr(exc, "line", None), getattr(exc, "column", None)
    unterminated = False
    if isinstance(exc, UnexpectedToken):
        at_end = exc.token.type == "$END"
        found = end if at_end else f"'{exc.token}'"
        expected = set(exc.accepts or exc.expected)
    elif isinstance(exc, UnexpectedCharacters):
        char = text[exc.pos_in_stream or 0]
        at_end, found, unterminated = False, f"'{char}'", char in "'\""
        expected = set(exc.allowed or ())
    else:
        at_end, found, expected = True, end, set(getattr(exc, "expected", ()) or ())
    if at_end or not line or line < 1:
        line, column = len(lines), len(lines[-1]) + 1
    if unterminated:
        message = f"unterminated quoted text: expected a closing quote before {quotes_close_by}"
    else:
        said = describe(expected)
        message = f"{said}, found {found}" if said else f"unexpected {found}"
    source = lines[line - 1] if 0 < line <= len(lines) else None
    return Diagnostic(message, Span(file, line, column or 1), "error", source)


def _expected(names: set[str]) -> str:
    return describe_expected(_spell(name) for name in names)


def _spell(name: str) -> str:
    """lark's name for an anonymous terminal (``__ANON_1``) -> its text in quotes."""
    if name.startswith("__ANON"):
        pattern = _parser().get_terminal(name).pattern
        return f"'{pattern.value}'"
    return name


# ------------------------------------------------------------------------- tree -> AST


def _seconds(token: Token) -> tuple[int | float | Fraction, str | None]:
    """A window size: a bare number (stream units) or a number with a unit (seconds)."""
    text = str(token)
    if token.type == "NUMBER":
        return number_value(text), None
    for unit in ("min", "s", "h", "d"):
        if text.endswith(unit):
            amount = number_value(text[: -len(unit)])
            seconds = amount * UNITS[unit]
            if isinstance(seconds, float) and seconds.is_integer() and isinstance(amount, int):
                seconds = int(seconds)
            return seconds, unit
    raise AssertionError(f"DURATION token without unit: {text!r}")  # the grammar forbids it


def _nodes(children: list[Any]) -> list[Any]:
    """The children that are AST nodes (keyword tokens such as '<-' or '.' left out)."""
    return [c for c in children if not isinstance(c, Token)]


def _name(tok: Token) -> str:
    return unquote(str(tok), "'") if tok.type == "QUOTED_ATOM" else str(tok)


@dataclasses.dataclass(frozen=True, slots=True)
class _Raw:
    """A statement before ETALIS's conventions are applied (internal)."""

    kind: str  # "event" | "clause" | "fact" | "directive" | "rdf_event"
    parts: tuple[Any, ...]
    span: Span


class SourceTransformer(Transformer[Token, Any]):
    """A lark tree -> our objects, with spans in the source and errors quoting its line (the
    base of the rule and the EP-SPARQL builders)."""

    def __init__(self, file: str | None, text: str) -> None:
        super().__init__()
        self.file = file
        self.lines = text.splitlines()

    def build(self, tree: lark.Tree[Token]) -> Any:
        """Transform ``tree``; a :class:`RuleSyntaxError` raised inside comes out as itself."""
        try:
            return self.transform(tree)
        except lark.exceptions.VisitError as exc:
            if isinstance(exc.orig_exc, RuleSyntaxError):
                raise exc.orig_exc from None
            raise

    def span(self, meta: Any) -> Span | None:
        if getattr(meta, "empty", True):
            return None
        return Span(self.file, meta.line, meta.column, meta.end_line, meta.end_column)

    def token_span(self, tok: Token) -> Span:
        return Span(self.file, tok.line or 0, tok.column or 0, tok.end_line, tok.end_column)

    def error(self, message: str, span: Span | None) -> RuleSyntaxError:
        line = self.lines[span.line - 1] if span and 0 < span.line <= len(self.lines) else None
        return RuleSyntaxError([Diagnostic(message, span, "error", line)])


_T = TypeVar("_T")

#: Where a node starts or ends: (line, column, offset in the text).
_Place = tuple[int, int, int]


def _built(method: Callable[[_ToAst, list[Any]], Any]) -> Callable[[_ToAst, list[Any]], Any]:
    """A grammar rule's callback: the node's place (its first token to its last, brackets
    included) is known while ``method`` builds it, and kept for the nodes around it."""

    @functools.wraps(method)
    def callback(self: _ToAst, children: list[Any]) -> Any:
        places = self.places
        first, last = children[0], children[-1]
        known = places.get(id(first))
        start = known[1] if known else (first.line, first.column, first.start_pos)
        known = places.get(id(last))
        end = known[2] if known else (last.end_line, last.end_column, last.end_pos)
        self.here = start, end
        node = method(self, children)
        places[id(node)] = (node, start, end)  # (the node kept: its id is not reused)
        return node

    return callback


class _ToAst(SourceTransformer):
    """Builds AST nodes bottom-up, called by the LALR parser at each reduction (no parse tree
    is built). The parser keeps every token, so a node's span runs from its first token to its
    last, brackets included. One instance per parser: :meth:`begin` and :meth:`end` bracket
    each parse (under :data:`_PARSING`)."""

    def __init__(self) -> None:
        super().__init__(None, "")
        self.text = ""
        # node id -> (node, start, end): the places of the nodes built so far in this parse
        self.places: dict[int, tuple[Any, _Place, _Place]] = {}
        self.here: tuple[_Place, _Place] = ((0, 0, 0), (0, 0, 0))
        # ids of "," compounds written without parentheses: a clause body is the list of these
        # conjuncts, while a parenthesised conjunction stays one goal (see `paren`).
        # The dict keeps the nodes alive so that their ids are not reused during the parse.
        self.bare_conj: dict[int, Compound] = {}

    def begin(self, file: str | None, text: str) -> None:
        self.file, self.text, self.lines = file, text, text.splitlines()

    def end(self) -> None:
        self.places.clear()
        self.bare_conj.clear()
        self.text, self.lines = "", []

    def located(self) -> Span:
        """The span of the node being built."""
        (line, column, _), (end_line, end_column, _) = self.here
        return Span(self.file, line, column, end_line, end_column)

    def numeral(self, read: Callable[[Any], _T], token: Token) -> _T:
        """``read(token)``; a rational with denominator 0 (``1r0``) is refused here."""
        try:
            return read(token)
        except ZeroDivisionError:
            raise self.error(
                f"expected a rational with a nonzero denominator, found '{token}'",
                self.token_span(token),
            ) from None

    def start(self, children: list[_Raw]) -> list[_Raw]:
        return children

    # -- terms --------------------------------------------------------------------------

    @_built
    def var(self, children: list[Token]) -> Var:
        return Var(str(children[0]), self.located())

    @_built
    def number(self, children: list[Token]) -> Number:
        return Number(self.numeral(number_value, children[0]), self.located())

    @_built
    def string(self, children: list[Token]) -> String:
        return String(unquote(str(children[0]), '"'), self.located())

    @_built
    def iri(self, children: list[Token]) -> Iri:
        return Iri(str(children[0])[1:-1], self.located())

    @_built
    def pname(self, children: list[Token]) -> PName:
        prefix, local = str(children[0]).split(":", 1)
        return PName(prefix, local, self.located())

    @_built
    def functor(self, children: list[Token]) -> Token:
        return children[0]  # the name (its place: up to the "(")

    @_built
    def event_name(self, children: list[Token]) -> Token:
        return children[0]

    @_built
    def atom(self, children: list[Any]) -> Atom:
        return Atom(_name(children[0]), self.located())

    @_built
    def cut(self, children: list[Token]) -> Atom:
        return Atom("!", self.located())

    @_built
    def empty_list(self, children: list[Token]) -> Atom:
        return Atom("[]", self.located())

    @_built
    def args(self, children: list[Any]) -> tuple[Term, ...]:
        return tuple(children[::2])  # (the "," between them left out)

    @_built
    def list_term(self, children: list[Any]) -> ListTerm:
        return ListTerm(children[1], None, self.located())

    @_built
    def list_tail(self, children: list[Any]) -> ListTerm:
        return ListTerm(children[1], children[3], self.located())

    @_built
    def compound(self, children: list[Any]) -> Compound:
        return Compound(_name(children[0]), children[1], self.located())

    @_built
    def rule_change(self, children: list[Any]) -> Compound:
        return Compound(str(children[0])[:-1], (children[1],), self.located())

    @_built
    def rule_text(self, children: list[Any]) -> Term:
        """A term as it is; a rule or clause (``ins_event_rule(d(Y) <- c(Y))``) as the atom
        of its text, as if it had been quoted (the action parses it when it runs)."""
        if len(children) == 1:
            return children[0]
        (_, _, start), (_, _, end) = self.here
        return Atom(self.text[start:end], self.located())

    @_built
    def paren(self, children: list[Any]) -> Any:
        # A fresh copy, so a parenthesised conjunction is not taken for a bare one.
        return dataclasses.replace(children[1])

    @_built
    def primary(self, children: list[Any]) -> Pattern:
        return children[1]  # "(" pattern ")": the pattern, its place widened to the brackets

    @_built
    def conj(self, children: list[Any]) -> Compound:
        node = Compound(",", (children[0], children[2]), self.located())
        self.bare_conj[id(node)] = node
        return node

    @_built
    def infix_op(self, children: list[Any]) -> Compound:
        return Compound(str(children[1]), (children[0], children[2]), self.located())

    @_built
    def prefix_op(self, children: list[Any]) -> Compound:
        return Compound(str(children[0]), (children[1],), self.located())

    @_built
    def op_1200(self, children: list[Any]) -> Compound:
        return Compound(":-", (children[0], children[-1]), self.located())

    @_built
    def op_or(self, children: list[Any]) -> Compound:
        return Compound(";", (children[0], children[2]), self.located())

    @_built
    def op_then(self, children: list[Any]) -> Compound:
        return Compound("->", (children[0], children[2]), self.located())

    # -- patterns -----------------------------------------------------------------------

    @_built
    def event_atom(self, children: list[Any]) -> EventAtom:
        args = children[1] if len(children) == 3 else ()
        return EventAtom(_name(children[0]), args, self.located())

    @_built
    def time_point(self, children: list[Token]) -> TimePoint:
        return TimePoint(number_value(str(children[0])), self.located())

    @_built
    def binary(self, children: list[Any]) -> Binary | Where:
        op = keyword_operator(str(children[1]).strip("'"))
        right = children[2]
        goal = isinstance(right, EventAtom) and (right.name, len(right.args)) in PATTERN_GOALS
        if op == "seq" and goal:
            # ETALIS: `p SEQ prolog(Goal)` runs Goal once p is detected: p WHERE Goal.
            return Where(children[0], right.args[0], self.located())
        return Binary(op, children[0], right, self.located())

    @_built
    def star(self, children: list[Any]) -> Star:
        return Star(children[0], self.located())

    @_built
    def where(self, children: list[Any]) -> Where:
        return Where(children[0], children[2], self.located())

    @_built
    def do_action(self, children: list[Any]) -> Where:
        return _action(children[0], children[2], self.located())

    @_built
    def multiply(self, children: list[Any]) -> Multiply:
        return Multiply(children[0], children[2], self.located())

    @_built
    def window_size(self, children: list[Token]) -> tuple[int | float | Fraction, str | None]:
        return self.numeral(_seconds, children[0])

    @_built
    def window(self, children: list[Any]) -> Window:
        size, unit = children[4]
        return Window(children[1], size, unit, self.located())

    @_built
    def negation(self, children: list[Any]) -> Not:
        patterns = [c for c in children if not isinstance(c, Token)]
        return Not(patterns[0], patterns[1], patterns[2], self.located())

    @_built
    def agg_window(self, children: list[Any]) -> tuple[str, int | float | Fraction]:
        kind = str(children[0])
        size, unit = children[2]
        if kind not in ("count", "time"):
            raise self.error(
                f"expected count(N) or time(D) as the aggregate window, found '{kind}'",
                self.token_span(children[0]),
            )
        if kind == "count" and (unit is not None or not isinstance(size, int)):
            raise self.error(
                "expected a whole number of events in count(N)", self.token_span(children[0])
            )
        return kind, size

    @_built
    def aggregate(self, children: list[Any]) -> Aggregate:
        # aggregate ( function , pattern , Result [, window] )
        function, pattern, result = children[2], children[4], children[6]
        window = children[8] if len(children) > 8 else None
        var = Var(str(result), self.token_span(result))
        return Aggregate(function, pattern, var, window, self.located())

    # -- statements ---------------------------------------------------------------------

    @_built
    def event_rule(self, children: list[Any]) -> _Raw:
        head, body = _nodes(children)
        return _Raw("event", (None, head, body), self.located())

    @_built
    def labelled_event_rule(self, children: list[Any]) -> _Raw:
        return _Raw("event", tuple(_nodes(children)), self.located())

    @_built
    def event_rule_do(self, children: list[Any]) -> _Raw:
        # ETALIS: `head do Action <- body` runs Action each time the rule fires.
        head, action, body = _nodes(children)
        span = self.located()
        return _Raw("event", (None, head, _action(body, action, span)), span)

    @_built
    def labelled_event_rule_do(self, children: list[Any]) -> _Raw:
        label, head, action, body = _nodes(children)
        span = self.located()
        return _Raw("event", (label, head, _action(body, action, span)), span)

    @_built
    def clause(self, children: list[Any]) -> _Raw:
        head, body = _nodes(children)
        return _Raw("clause", (head, self.conjuncts(body)), self.located())

    @_built
    def fact(self, children: list[Any]) -> _Raw:
        return _Raw("fact", tuple(_nodes(children)), self.located())

    @_built
    def directive(self, children: list[Any]) -> _Raw:
        return _Raw("directive", tuple(_nodes(children)), self.located())

    @_built
    def rdf_event(self, children: list[Any]) -> _Raw:
        head, body = _nodes(children)
        return _Raw("rdf_event", (head, self.conjuncts(body)), self.located())

    def conjuncts(self, body: Term) -> tuple[Term, ...]:
        goals: list[Term] = []
        while isinstance(body, Compound) and id(body) in self.bare_conj:
            goals.append(body.args[0])
            body = body.args[1]
        goals.append(body)
        return tuple(goals)


# ------------------------------------------------------------------ ETALIS conventions


def _statements(raws: list[_Raw], builder: _ToAst) -> tuple[Statement, ...]:
    """Turn raw statements into AST statements and merge ``event_rule_property/3``."""
    out: list[Statement] = []
    for raw in raws:
        out.append(_statement(raw, builder))
    labels = {s.label for s in out if isinstance(s, EventRule) and s.label is not None}
    extra: dict[str, list[tuple[str, Term]]] = {}
    merged: list[Statement] = []
    for stmt in out:
        prop = _rule_property(stmt)
        if prop is not None and prop[0] in labels:
            extra.setdefault(prop[0], []).append((prop[1], prop[2]))
        else:
            merged.append(stmt)
    return tuple(
        dataclasses.replace(s, properties=s.properties + tuple(extra[s.label]))
        if isinstance(s, EventRule) and s.label in extra
        else s
        for s in merged
    )


def _rule_property(stmt: Statement) -> tuple[str, str, Term] | None:
    if not isinstance(stmt, Directive):
        return None
    g = stmt.goal
    if (
        isinstance(g, Compound)
        and g.functor == "event_rule_property"
        and len(g.args) == 3
        and isinstance(g.args[0], Atom)
        and isinstance(g.args[1], Atom)
    ):
        return g.args[0].name, g.args[1].name, g.args[2]
    return None


def _statement(raw: _Raw, builder: _ToAst) -> Statement:
    match raw.kind:
        case "event":
            label_term, head_term, body = raw.parts
            label, properties = _label(label_term, builder)
            alarm = None
            match head_term:
                case Compound(functor, (event, time)) if functor in ALARMS:
                    head_term, alarm = event, Alarm(time, ALARMS[functor])
            head = _head(head_term, builder)
            return EventRule(head, body, label, properties, raw.span, alarm)
        case "clause":
            head, body = raw.parts
            return StaticRule(_clause_head(head, builder), body, raw.span)
        case "directive":
            return Directive(raw.parts[0], raw.span)
        case "rdf_event":
            head, body = raw.parts
            return RdfEvent(_head(head, builder), body, raw.span)
        case _:
            return _fact(raw.parts[0], raw.span, builder)


def _fact(term: Term, span: Span, builder: _ToAst) -> Statement:
    match term:
        case Compound("db", (fact,)):
            return StaticRule(_clause_head(fact, builder), (), span)
        case Compound("prolog" | "static", (Compound(":-", (head, body)),)):
            return StaticRule(_clause_head(head, builder), builder.conjuncts(body), span)
        case Compound("prolog" | "static", (fact,)):
            return StaticRule(_clause_head(fact, builder), (), span)
        case Compound(functor, args) if (functor, len(args)) in DIRECTIVE_FACTS:
            return Directive(term, span)
    return StaticRule(_clause_head(term, builder), (), span)


def _action(pattern: Pattern, action: Term, span: Span | None) -> Where:
    """ETALIS's ``pattern do Action``: ``pattern WHERE do(Action)`` (the action runs once per
    occurrence of the pattern)."""
    return Where(pattern, Compound("do", (action,), getattr(action, "span", None)), span)


def _head(term: Term, builder: _ToAst) -> EventAtom:
    match term:
        case Atom(name):
            return EventAtom(name, (), term.span)
        case Compound(functor, args):
            return EventAtom(functor, args, term.span)
        case PName(prefix, local):
            return EventAtom(f"{prefix}:{local}", (), term.span)
    raise builder.error(
        f"expected an event such as name(Args) as the rule head, found {_describe(term)}",
        term.span,
    )


def _clause_head(term: Term, builder: _ToAst) -> Term:
    if isinstance(term, Atom | Compound | PName):
        return term
    raise builder.error(
        f"expected an atom or a compound term as the clause head, found {_describe(term)}",
        term.span,
    )


def _describe(term: Term) -> str:
    match term:
        case Var(name):
            return f"the variable '{name}'"
        case Number(value):
            return f"the number {value}"
        case String():
            return "a string"
        case ListTerm():
            return "a list"
        case Iri(value):
            return f"the IRI <{value}>"
    return "a term"


def _label(term: Term | None, builder: _ToAst) -> tuple[str | None, tuple[tuple[str, Term], ...]]:
    match term:
        case None:
            return None, ()
        case Atom(name):
            return name, ()
        case Compound(name, (ListTerm(items, None),)):
            return name, _properties(items, builder)
        case ListTerm(items, None):
            return None, _properties(items, builder)
    raise builder.error(
        "expected a rule label such as r1 or r1([property(Name, Value)]) before 'rule:'",
        term.span if term is not None else None,
    )


def _properties(items: tuple[Term, ...], builder: _ToAst) -> tuple[tuple[str, Term], ...]:
    out: list[tuple[str, Term]] = []
    for item in items:
        match item:
            case Compound("property", (Atom(name), value)):
                out.append((name, value))
            case _:
                raise builder.error(
                    "expected property(Name, Value) in the rule label's list", item.span
                )
    return tuple(out)
