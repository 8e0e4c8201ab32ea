"""EP-SPARQL text -> :class:`~reasoner.language.epsparql.query.Query`.

The grammar (``grammar/epsparql.lark``) is LALR(1) with lark's contextual lexer, like the rule
grammar; this module and :mod:`reasoner.language.parser` are the only ones that import lark.
Every lark error becomes a :class:`~reasoner.errors.RuleSyntaxError` at ``file:line:col`` saying
what was expected; so do an undeclared prefix and a function named by a full IRI.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path
from typing import Any

import lark
from lark import Token, v_args
from lark.exceptions import UnexpectedInput

from reasoner.errors import ReasonerError, RuleSyntaxError
from reasoner.language.aggregates import aggregate_function
from reasoner.language.ast import Atom, Compound, Iri, Number, PName, String, Term, Var
from reasoner.language.epsparql.query import (
    AggregateItem,
    Background,
    Expression,
    Filter,
    Group,
    Join,
    Query,
    Triple,
)
from reasoner.language.messages import expected_phrase
from reasoner.language.parser import SourceTransformer, grammar_cache, syntax_diagnostic
from reasoner.vocab import RDF, XSD

#: Datatypes whose literals are numbers (as the triple view reads them).
_NUMERIC = frozenset(
    XSD + name
    for name in (
        *("integer", "decimal", "double", "float", "int", "long", "short", "byte"),
        *("nonNegativeInteger", "positiveInteger", "negativeInteger", "nonPositiveInteger"),
        *("unsignedInt", "unsignedLong", "unsignedShort", "unsignedByte"),
    )
)
_DURATION = re.compile(r"(-)?P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?\Z")
#: SPARQL comparison -> rule goal (``=`` and ``!=`` become ``=:=``/``=\=`` on arithmetic).
_RELATIONS = {"<": "<", ">": ">", "<=": "=<", ">=": ">=", "is": "is", "=": "==", "!=": "\\=="}
_ARITHMETIC = frozenset({"+", "-", "*", "/"})
#: The interval functions (compiled by the translator, not called).
TIME_FUNCTIONS = ("getDURATION", "getSTARTTIME", "getENDTIME")

_WORDS = {
    "SELECT_KW": "SELECT",
    "CONSTRUCT_KW": "CONSTRUCT",
    "PREFIX_KW": "PREFIX",
    "WHERE_KW": "WHERE",
    "FILTER_KW": "FILTER",
    "DO_KW": "DO",
    "GRAPH_KW": "GRAPH",
    "AGGREGATE_KW": "aggregate",
    "WITHIN_KW": "WITHIN",
    "OPERATOR": "SEQ, EQUALS, OPTIONALSEQ, EQUALSOPTIONAL or UNION",
    "VAR": "a variable",
    "IRIREF": "an IRI",
    "PNAME_LN": "a prefixed name",
    "PNAME_NS": "a prefix such as ex:",
    "NAME": "a name",
    "STRING": "a literal",
    "NUMBER": "a number",
    "TRUE_KW": "true",
    "FALSE_KW": "false",
    "A_KW": "a",
    "RELOP": "a comparison",
    "IS_KW": "is",
    "OR_OP": "'||'",
    "AND_OP": "'&&'",
    "ADD_OP": "'+' or '-'",
    "MUL_OP": "'*' or '/'",
    "BANG": "'!'",
    "CIRCUMFLEX": "'^^'",
    "LANGTAG": "a language tag",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "LPAR": "'('",
    "RPAR": "')'",
    "DOT": "'.'",
    "STAR": "'*'",
    "SEMICOLON": "';'",
    "COMMA": "','",
    "$END": "the end of the query",
}


def parse_query(text: str, file: str | None = None) -> Query:
    """Parse EP-SPARQL text.

    Args:
        text: the query.
        file: the file name used in spans and error messages.
    Returns:
        The query.
    Raises:
        RuleSyntaxError: the text does not parse (line, column and what was expected).

    >>> q = parse_query("SELECT ?c WHERE { ?c <urn:p> ?x } SEQ { ?c <urn:p> ?y }")
    >>> q.where.op, [v.name for v in q.variables]
    ('seq', ['C'])
    """
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as exc:
        raise RuleSyntaxError(
            [
                syntax_diagnostic(
                    exc, text, file, _expected, "the end of the query", "the end of the line"
                )
            ]
        ) from exc
    query: Query = _ToQuery(file, text).build(tree)
    return query


def parse_query_file(path: str | Path) -> Query:
    """Read and parse one query file (``.rq``).

    Raises:
        ReasonerError: the file cannot be read.
        RuleSyntaxError: the text does not parse.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReasonerError(f"cannot read query file '{path}': {exc}") from exc
    return parse_query(text, str(path))


@functools.cache
def _parser() -> lark.Lark:
    grammar = Path(__file__).parent.parent / "grammar" / "epsparql.lark"
    return lark.Lark(
        grammar.read_text(encoding="utf-8"),
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=False,
        cache=grammar_cache("epsparql"),
    )


def _expected(names: set[str]) -> str:
    return expected_phrase(sorted({_WORDS.get(name, _spell(name)) for name in names}))


def _spell(name: str) -> str:
    terminal = _parser().get_terminal(name) if name.startswith("__ANON") else None
    if terminal is not None:
        return f"'{terminal.pattern.value}'"
    return name.lower().replace("_", " ")


def _unescape(body: str) -> str:
    escapes = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}
    return re.sub(r"\\(.)", lambda m: escapes.get(m.group(1), m.group(1)), body)


def duration_seconds(text: str) -> int | float | None:
    """The seconds of an ``xsd:duration`` without years or months (``PT30S``, ``P1DT2H``).

    >>> duration_seconds("PT1M30S"), duration_seconds("P1Y")
    (90, None)
    """
    match = _DURATION.match(text)
    if not match or text in ("P", "PT") or text.endswith("T"):
        return None
    sign, days, hours, minutes, seconds = match.groups()
    total: int | float = int(days or 0) * 86400 + int(hours or 0) * 3600 + int(minutes or 0) * 60
    if seconds:
        total += float(seconds) if "." in seconds else int(seconds)
    return -total if sign else total


class _ToQuery(SourceTransformer):
    """Builds the query bottom-up (one instance per parse: it keeps the variable names)."""

    def __init__(self, file: str | None, text: str) -> None:
        super().__init__(file, text)
        self.prefixes: dict[str, str] = {}
        self.names: dict[str, str] = {}  # SPARQL name -> rule variable name

    # -- prologue and query ---------------------------------------------------------------

    def prefix_decl(self, children: list[Token]) -> None:
        self.prefixes[str(children[1])[:-1]] = str(children[2])[1:-1]

    @v_args(meta=True)
    def select(self, meta: Any, children: list[Any]) -> Query:
        return self.query(meta, [c for c in children if not isinstance(c, Token)])

    @v_args(meta=True)
    def construct(self, meta: Any, children: list[Any]) -> Query:
        template, *rest = [c for c in children if not isinstance(c, Token)]
        return dataclasses.replace(self.query(meta, [None, *rest]), template=template)

    def query(self, meta: Any, items: list[Any]) -> Query:
        variables, where = items[0], items[1]
        filters = tuple(c for c in items[2:] if isinstance(c, Filter))
        within = next((c[0] for c in items[2:] if isinstance(c, tuple)), None)
        names = tuple((rule, sparql) for sparql, rule in self.names.items())
        prefixes = tuple(self.prefixes.items())
        return Query(variables, where, filters, within, names, prefixes, span=self.span(meta))

    def template(self, children: list[Any]) -> tuple[Triple, ...]:
        if children and isinstance(children[0], list):  # ETALIS's form: one statement
            return tuple(children[0])
        return children[0] if children else ()

    def start(self, children: list[Any]) -> Query:
        query: Query = children[-1]
        return query

    def projection(self, children: list[Var]) -> tuple[Var, ...]:
        return tuple(children)

    def projection_all(self, children: list[Any]) -> None:
        return None

    def within(self, children: list[Any]) -> tuple[Term]:
        return (children[1],)

    # -- patterns -------------------------------------------------------------------------

    @v_args(meta=True)
    def binary(self, meta: Any, children: list[Any]) -> Join:
        return Join(str(children[1]).lower(), children[0], children[2], self.span(meta))

    @v_args(meta=True)
    def group(self, meta: Any, children: list[Any]) -> Group:
        items: list[Any] = []
        for child in children:
            if isinstance(child, list):
                items.extend(child)  # a triples statement gives several triple patterns
            elif not isinstance(child, Token):
                items.append(child)
        return Group(tuple(items), self.span(meta))

    @v_args(meta=True)
    def background(self, meta: Any, children: list[Any]) -> Background:
        triples = next((c for c in children if isinstance(c, tuple)), ())
        return Background(triples, self.span(meta))

    @v_args(meta=True)
    def aggregate(self, meta: Any, children: list[Any]) -> AggregateItem:
        function, name, subject, predicate, obj, result = (
            c for c in children if not (isinstance(c, Token) and c.type == "AGGREGATE_KW")
        )
        if str(name) != "rdf":
            raise self.error(
                f"expected rdf(S, P, O) as the aggregated pattern, found {name}(...)",
                self.token_span(name),
            )
        span = self.span(meta)
        return AggregateItem(function, Triple(subject, predicate, obj, span), result, span)

    @v_args(meta=True)
    def aggregate_function(self, meta: Any, children: list[Any]) -> Term:
        name = str(children[0])
        term: Term = Atom(name) if len(children) == 1 else Compound(name, (children[1],))
        try:
            aggregate_function(term)
        except ValueError as exc:
            raise self.error(str(exc), self.span(meta)) from None
        return term

    def graph_name(self, children: list[Token]) -> None:
        name = str(children[0])
        iri = name[1:-1] if children[0].type == "IRIREF" else self.iri_of(children[0])
        if iri != KNOWLEDGE_GRAPH:
            raise self.error(
                f"expected GRAPH <{KNOWLEDGE_GRAPH}> (the background knowledge), found {name}",
                self.token_span(children[0]),
            )

    def triples_block(self, children: list[Any]) -> tuple[Triple, ...]:
        return tuple(t for c in children if isinstance(c, list) for t in c)

    @v_args(meta=True)
    def triples(self, meta: Any, children: list[Any]) -> list[Triple]:
        subject, properties = children[0], [c for c in children[1:] if isinstance(c, tuple)]
        span = self.span(meta)
        return [Triple(subject, verb, obj, span) for verb, objects in properties for obj in objects]

    def property(self, children: list[Any]) -> tuple[Term, tuple[Term, ...]]:
        return children[0], tuple(children[1:])

    @v_args(meta=True)
    def rdf_type(self, meta: Any, children: list[Token]) -> Iri:
        return Iri(RDF + "type", self.span(meta))

    @v_args(meta=True)
    def constraint(self, meta: Any, children: list[Any]) -> Filter:
        return Filter(children[-1], self.span(meta))

    # -- filter expressions ---------------------------------------------------------------

    @v_args(meta=True)
    def or_expr(self, meta: Any, children: list[Any]) -> Compound:
        return Compound(";", (children[0], children[2]), self.span(meta))

    @v_args(meta=True)
    def and_expr(self, meta: Any, children: list[Any]) -> Compound:
        return Compound(",", (children[0], children[2]), self.span(meta))

    @v_args(meta=True)
    def relation(self, meta: Any, children: list[Any]) -> Compound:
        left, op, right = children[0], str(children[1]), children[2]
        functor = _RELATIONS[op]
        if op in ("=", "!=") and any(_arithmetic(side) for side in (left, right)):
            functor = "=:=" if op == "=" else "=\\="
        return Compound(functor, (left, right), self.span(meta))

    @v_args(meta=True)
    def arith(self, meta: Any, children: list[Any]) -> Compound:
        return Compound(str(children[1]), (children[0], children[2]), self.span(meta))

    @v_args(meta=True)
    def not_expr(self, meta: Any, children: list[Any]) -> Compound:
        return Compound("\\+", (children[-1],), self.span(meta))

    @v_args(meta=True)
    def sign(self, meta: Any, children: list[Any]) -> Term:
        operand = children[1]
        if str(children[0]) == "+":
            return operand
        if isinstance(operand, Number):
            return Number(-operand.value, self.span(meta))
        return Compound("-", (operand,), self.span(meta))

    @v_args(meta=True)
    def call(self, meta: Any, children: list[Any]) -> Compound:
        name, args = children[0], tuple(children[1:])
        for function in TIME_FUNCTIONS:
            if name.lower() == function.lower():
                name = function
                if args:
                    raise self.error(f"{function}() takes no arguments", self.span(meta))
        return Compound(name, args, self.span(meta))

    def function(self, children: list[Token]) -> str:
        token = children[0]
        if token.type == "IRIREF":
            raise self.error(
                "expected a prefixed name as the predicate of a call (declare a PREFIX for "
                f"{token}), found an IRI",
                self.token_span(token),
            )
        if token.type == "PNAME_LN":
            self.iri_of(token)  # the prefix must be declared
        return str(token)

    # -- terms ----------------------------------------------------------------------------

    @v_args(meta=True)
    def var(self, meta: Any, children: list[Token]) -> Var:
        sparql = str(children[0])[1:]
        if sparql not in self.names:
            base = sparql[0].upper() + sparql[1:] if sparql[0].isalpha() else "V" + sparql
            name, n = base, 1
            while name in self.names.values():
                n += 1
                name = f"{base}_{n}"
            self.names[sparql] = name
        return Var(self.names[sparql], self.span(meta))

    @v_args(meta=True)
    def iri(self, meta: Any, children: list[Token]) -> Iri:
        return Iri(str(children[0])[1:-1], self.span(meta))

    @v_args(meta=True)
    def pname(self, meta: Any, children: list[Token]) -> PName:
        self.iri_of(children[0])
        prefix, local = str(children[0]).split(":", 1)
        return PName(prefix, local, self.span(meta))

    @v_args(meta=True)
    def name(self, meta: Any, children: list[Token]) -> Atom:
        return Atom(str(children[0]), self.span(meta))

    @v_args(meta=True)
    def boolean(self, meta: Any, children: list[Token]) -> String:
        return String(str(children[0]), self.span(meta))

    @v_args(meta=True)
    def number(self, meta: Any, children: list[Token]) -> Number:
        text = str(children[0])
        value = float(text) if any(c in text for c in ".eE") else int(text)
        return Number(value, self.span(meta))

    @v_args(meta=True)
    def literal(self, meta: Any, children: list[Token]) -> Term:
        text = _unescape(str(children[0])[1:-1])
        span = self.span(meta)
        if len(children) < 2 or children[1].type == "LANGTAG":
            return String(text, span)
        datatype = children[1]
        iri = str(datatype)[1:-1] if datatype.type == "IRIREF" else self.iri_of(datatype)
        if iri == XSD + "duration":
            seconds = duration_seconds(text)
            if seconds is None:
                raise self.error(
                    f"expected a duration in days, hours, minutes and seconds such as PT30S, "
                    f"found '{text}'",
                    span,
                )
            return Number(seconds, span)
        if iri in _NUMERIC:
            try:
                return Number(float(text) if any(c in text for c in ".eE") else int(text), span)
            except ValueError:
                raise self.error(f"expected a number, found '{text}'", span) from None
        return String(text, span)

    def iri_of(self, token: Token) -> str:
        prefix, local = str(token).split(":", 1)
        if prefix in self.prefixes:
            return self.prefixes[prefix] + local
        if prefix == "xsd":
            return XSD + local
        raise self.error(
            f"unknown prefix '{prefix}': declare it with PREFIX {prefix}: <...>",
            self.token_span(token),
        )


#: The graph name under which a query asks the background knowledge.
KNOWLEDGE_GRAPH = "urn:reasoner:graph:knowledge"


def _arithmetic(term: Term) -> bool:
    return isinstance(term, Number) or (isinstance(term, Compound) and term.functor in _ARITHMETIC)


__all__ = ["KNOWLEDGE_GRAPH", "Expression", "parse_query", "parse_query_file"]
