"""The parsed form of an EP-SPARQL query (frozen dataclasses, spans not compared).

Terms and FILTER expressions are already rule-language terms (:mod:`reasoner.language.ast`):
a SPARQL variable ``?price1`` is the rule variable ``Price1``, a prefixed name stays a
:class:`~reasoner.language.ast.PName` (the query's prefixes become ``prefix/2`` directives),
and ``?p1 < ?p2 && ?c = ex:a`` is the goal ``P1 < P2, C == ex:a``.
"""

from __future__ import annotations

from dataclasses import dataclass

from reasoner.language.ast import Span, Term, Var, span_field


@dataclass(frozen=True, slots=True)
class Triple:
    """A triple pattern ``subject predicate object``."""

    subject: Term
    predicate: Term
    object: Term
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Background:
    """``GRAPH <urn:reasoner:graph:knowledge> { triples }``: asked of the background knowledge."""

    triples: tuple[Triple, ...]
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Filter:
    """``FILTER (expression)`` (or ETALIS's ``DO (...)``), as a rule-language goal."""

    condition: Term
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Group:
    """``{ ... }``: stream triples, nested temporal expressions, background blocks, filters."""

    items: tuple[Item, ...]
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Join:
    """``left OP right`` for OP one of seq, equals, optionalseq, equalsoptional, union."""

    op: str
    left: Expression
    right: Expression
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class AggregateItem:
    """ETALIS's ``aggregate(F, rdf(s, p, o), ?r)``: ``F`` (``count``, ``sum(?x)``, ...) over
    the stream triples matching ``triple``, into ``result``."""

    function: Term
    triple: Triple
    result: Var
    span: Span | None = span_field()


Expression = Group | Join
Item = Triple | Background | Filter | Group | Join | AggregateItem


@dataclass(frozen=True, slots=True)
class Query:
    """``SELECT vars`` or ``CONSTRUCT template``, then ``WHERE expression [FILTER ...]
    [WITHIN n]``.

    ``variables`` is None for ``SELECT *`` and for CONSTRUCT; ``template`` is None for SELECT;
    ``names`` maps each rule variable back to its SPARQL name (without ``?``); ``prefixes`` are
    the query's ``PREFIX`` declarations.
    """

    variables: tuple[Var, ...] | None
    where: Expression
    filters: tuple[Filter, ...]
    within: Term | None
    names: tuple[tuple[str, str], ...]
    prefixes: tuple[tuple[str, str], ...]
    template: tuple[Triple, ...] | None = None
    span: Span | None = span_field()
