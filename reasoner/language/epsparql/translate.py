"""An EP-SPARQL query -> ordinary event rules over the triple view.

Each stream triple pattern ``s p o`` is the event ``triple(S, P, O)`` (every triple of an input
graph, at the graph's time; docs/rdf-streams.md). The operators between groups become pattern
operators: ``SEQ`` and ``EQUALS`` themselves, several patterns of one group ``AND`` (EP-SPARQL's
join: the occurrence spans all of them). Background patterns
(``GRAPH <urn:reasoner:graph:knowledge> { ... }``) become ``rdf(S, P, O)`` goals of the group's
``WHERE``, before its FILTERs; ``getDURATION() <= D`` becomes the window ``(p).D``.

A query is a union of *alternatives*: ``A OPTIONALSEQ B`` is ``A SEQ B`` or ``A`` alone (B's
variables unbound), ``A EQUALSOPTIONAL B`` is ``A EQUALS B`` or ``A``, ``A UNION B`` is ``A`` or
``B``. Each alternative is one rule whose head holds the selected variables it binds; the
alternatives binding the same ones share a head name, so a result is reported once.

>>> from reasoner.language.epsparql.parser import parse_query
>>> from reasoner.language.printer import to_source
>>> q = parse_query("SELECT ?c { ?c <urn:p> ?x } OPTIONALSEQ { ?c <urn:q> ?y }")
>>> print(to_source(compile_query(q, "q").program), end="")
q(C) <- triple(C, <urn:p>, X) SEQ triple(C, <urn:q>, Y).
q(C) <- triple(C, <urn:p>, X).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from itertools import product

from reasoner.errors import Diagnostic, RuleCompileError
from reasoner.language.ast import (
    Aggregate,
    Atom,
    Binary,
    Compound,
    Directive,
    EventAtom,
    EventRule,
    Number,
    Pattern,
    Program,
    Span,
    Term,
    Var,
    Where,
    Window,
    term_variables,
)
from reasoner.language.check import bound_variables, condition_bindings
from reasoner.language.epsparql.parser import TIME_FUNCTIONS, parse_query
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
from reasoner.language.operators import Operator

#: The result variables of a CONSTRUCT query: the constructed triple's parts.
CONSTRUCTED = ("subject", "predicate", "object")

#: The operators that pair two groups in time, by their rule-language operator.
_TIMED: dict[str, Operator] = {
    "seq": "seq",
    "equals": "equals",
    "optionalseq": "seq",
    "equalsoptional": "equals",
}


@dataclass(frozen=True, slots=True)
class CompiledQuery:
    """A query as rules, and how to read their detections back as SPARQL results.

    Attributes:
        program: ``prefix/2`` directives for the query's prefixes, then one rule per alternative.
        variables: the selected variables' SPARQL names (the results' ``head.vars``).
        heads: each head event's name and the SPARQL names of its arguments, in order.
    """

    program: Program
    variables: tuple[str, ...]
    heads: tuple[tuple[str, tuple[str, ...]], ...]


def query_name(stem: str) -> str:
    """The head event name for a query file's stem: a plain atom.

    >>> query_name("Price-Drop"), query_name("2x")
    ('price_Drop', 'q2x')
    """
    name = re.sub(r"[^A-Za-z0-9_]", "_", stem) or "query"
    if not name[0].isalpha():
        name = "q" + name
    return name[0].lower() + name[1:]


def compile_query(query: Query | str, name: str, source: str | None = None) -> CompiledQuery:
    """Compile a query into event rules.

    Args:
        query: the parsed query, or its text (parsed here; errors say ``<rules>:line:col``).
        name: the head event name (see :func:`query_name`).
        source: the query text, for the source lines of later diagnostics.
    Returns:
        The rules and the result shape.
    Raises:
        RuleCompileError: a group without a stream triple pattern, an unsupported use of the
            time functions, a selected variable no alternative binds, or FILTERs that drop
            every alternative.
    """
    if isinstance(query, str):
        source = query
        query = parse_query(source)
    try:
        return _compile(query, name, source)
    except RuleCompileError as exc:  # give each diagnostic its source line
        lines = (source or "").splitlines()
        raise RuleCompileError(
            [
                dataclasses.replace(d, source_line=lines[d.span.line - 1])
                if d.span is not None and 0 < d.span.line <= len(lines)
                else d
                for d in exc.diagnostics
            ]
        ) from None


def _compile(query: Query, name: str, source: str | None) -> CompiledQuery:
    translator = _Translator(query)
    alternatives = translator.restrict(
        translator.expression(query.where), query.filters, query.span
    )
    if query.within is not None:
        size = translator.window_size(query.within)
        alternatives = [Window(p, size) for p in alternatives]
    if not alternatives:
        raise translator.dropped_error()
    directives = tuple(
        Directive(Compound("prefix", (Atom(prefix), Atom(iri)))) for prefix, iri in query.prefixes
    )
    if query.template is not None:
        return _construct(query.template, alternatives, directives, source, query.span)
    sparql = dict(query.names)
    selected = query.variables
    if selected is None:  # SELECT *: the named variables, in order of appearance
        bound = frozenset().union(*(bound_variables(p) for p in alternatives))
        selected = tuple(Var(rule) for rule in sparql if rule in bound)
    for var in selected:
        if not any(var.name in bound_variables(p) for p in alternatives):
            name = sparql.get(var.name, var.name)
            if var.name in translator.local:
                raise _error(
                    f"?{name} is local to aggregate(...), which covers all its values: select "
                    "the aggregate's result and variables of the groups before it",
                    var.span,
                )
            raise _error(f"the query does not bind ?{name}", var.span)
    heads: dict[tuple[str, ...], str] = {}
    rules: list[EventRule] = []
    for pattern in alternatives:
        bound = bound_variables(pattern)
        args = tuple(v.name for v in selected if v.name in bound)
        head = heads.setdefault(args, name if not heads else f"{name}_{len(heads) + 1}")
        rules.append(EventRule(EventAtom(head, tuple(Var(a) for a in args)), pattern))
    return CompiledQuery(
        Program(directives + tuple(rules), source=source),
        tuple(sparql.get(v.name, v.name) for v in selected),
        tuple((head, tuple(sparql[a] for a in args)) for args, head in heads.items()),
    )


def _construct(
    template: tuple[Triple, ...],
    alternatives: list[Pattern],
    directives: tuple[Directive, ...],
    source: str | None,
    span: Span | None,
) -> CompiledQuery:
    """CONSTRUCT: one rule ``triple(S, P, O) <- alternative`` per template triple whose
    variables the alternative binds (SPARQL leaves out a triple with an unbound variable)."""
    rules = [
        EventRule(EventAtom("triple", (t.subject, t.predicate, t.object), t.span), pattern)
        for pattern in alternatives
        for t in template
        if {v.name for v in _triple_variables(t)} <= bound_variables(pattern)
    ]
    if not rules:
        raise _error("no triple of the CONSTRUCT template has all its variables bound", span)
    return CompiledQuery(
        Program(directives + tuple(rules), source=source), CONSTRUCTED, (("triple", CONSTRUCTED),)
    )


def _error(message: str, span: Span | None) -> RuleCompileError:
    return RuleCompileError([Diagnostic(message, span)])


def _conjuncts(term: Term) -> list[Term]:
    if isinstance(term, Compound) and term.functor == "," and len(term.args) == 2:
        return _conjuncts(term.args[0]) + _conjuncts(term.args[1])
    return [term]


def _conjunction(goals: list[Term]) -> Term:
    out = goals[-1]
    for goal in reversed(goals[:-1]):
        out = Compound(",", (goal, out))
    return out


def _calls(term: Term, names: tuple[str, ...]) -> Compound | None:
    """The first call of one of ``names`` inside ``term``."""
    if isinstance(term, Compound):
        if term.functor in names and not term.args:
            return term
        for arg in term.args:
            found = _calls(arg, names)
            if found is not None:
                return found
    return None


class _Translator:
    def __init__(self, query: Query) -> None:
        # Variables some triple pattern of the query mentions: a FILTER that uses one of them
        # unbound is in an alternative without it (SPARQL: the FILTER fails there).
        self.pattern_variables = {
            v.name for triple in _triples(query.where) for v in _triple_variables(triple)
        }
        self.dropped: list[tuple[str, Span | None]] = []
        self.local: set[str] = set()  # the variables of aggregated triples
        self.sparql = dict(query.names)

    def expression(self, expr: Expression) -> list[Pattern]:
        if isinstance(expr, Group):
            return self.group(expr)
        first = _aggregate(expr.left)
        if first is not None:
            raise _error(
                "aggregate(...) is supported after SEQ only, as { A } SEQ { aggregate(...) }: "
                "the aggregate since each occurrence of A",
                first.span,
            )
        aggregate = _aggregate(expr.right)
        if aggregate is not None:
            if expr.op != "seq":
                raise _error(
                    f"aggregate(...) is supported after SEQ only, not after {expr.op.upper()}",
                    aggregate.span,
                )
            self.local |= {v.name for v in _triple_variables(aggregate.triple)}
            return [
                Binary("seq", a, self.aggregate(aggregate), expr.span)
                for a in self.expression(expr.left)
            ]
        left, right = self.expression(expr.left), self.expression(expr.right)
        if expr.op == "union":
            return left + right
        joined: list[Pattern] = [
            Binary(_TIMED[expr.op], a, b, expr.span) for a, b in product(left, right)
        ]
        return joined + left if expr.op in ("optionalseq", "equalsoptional") else joined

    def aggregate(self, item: AggregateItem) -> Aggregate:
        t = item.triple
        return Aggregate(
            item.function,
            EventAtom("triple", (t.subject, t.predicate, t.object), t.span),
            item.result,
            None,
            item.span,
        )

    def group(self, group: Group) -> list[Pattern]:
        aggregate = next((i for i in group.items if isinstance(i, AggregateItem)), None)
        if aggregate is not None:
            raise _error(
                "aggregate(...) is supported alone in a group after SEQ, as "
                "{ A } SEQ { aggregate(...) } (FILTERs go after the groups)",
                aggregate.span,
            )
        atoms: list[Pattern] = [
            EventAtom("triple", (t.subject, t.predicate, t.object), t.span)
            for t in group.items
            if isinstance(t, Triple)
        ]
        nested = [self.expression(e) for e in group.items if isinstance(e, Group | Join)]
        if not atoms and not nested:
            raise _error("a group needs a triple pattern of the stream", group.span)
        goals: list[Term] = [
            Compound("rdf", (t.subject, t.predicate, t.object), t.span)
            for b in group.items
            if isinstance(b, Background)
            for t in b.triples
        ]
        filters = tuple(f for f in group.items if isinstance(f, Filter))
        patterns = []
        for choice in product(*nested):
            parts = atoms + list(choice)
            pattern = parts[0]
            for part in parts[1:]:
                pattern = Binary("and", pattern, part, group.span)
            patterns.append(pattern)
        return self.restrict(patterns, filters, group.span, goals)

    def restrict(
        self,
        patterns: list[Pattern],
        filters: tuple[Filter, ...],
        span: Span | None,
        goals: list[Term] | None = None,
    ) -> list[Pattern]:
        """The patterns under the group's background goals and FILTERs; an alternative in which
        a FILTER uses a variable of the query that it does not bind is dropped."""
        condition, window = list(goals or ()), None
        for conjunct in (c for f in filters for c in _conjuncts(f.condition)):
            size = self.duration_bound(conjunct)
            if size is not None:
                window = size if window is None else min(window, size)
            else:
                condition.append(conjunct)
        out: list[Pattern] = []
        for pattern in patterns:
            if condition:
                _, unbound = condition_bindings(_conjunction(condition), bound_variables(pattern))
                missing = [v for v in unbound if v.name in self.pattern_variables]
                if missing:
                    self.dropped.append((missing[0].name, missing[0].span))
                    continue
                pattern = Where(pattern, _conjunction(condition), span)
            out.append(pattern if window is None else Window(pattern, window, None, span))
        return out

    def duration_bound(self, goal: Term) -> int | float | None:
        """D for ``getDURATION() <= D`` (or ``D >= getDURATION()``); None for other goals."""
        time_call = _calls(goal, TIME_FUNCTIONS)
        if time_call is None:
            return None
        match goal:
            case Compound("=<", (Compound("getDURATION", ()), bound)) | Compound(
                ">=", (bound, Compound("getDURATION", ()))
            ):
                return self.window_size(bound)
        if time_call.functor != "getDURATION":
            raise _error(
                f"{time_call.functor}() is not supported: a FILTER can bound the duration "
                "only, as getDURATION() <= D",
                time_call.span,
            )
        raise _error(
            "getDURATION() can only be bounded from above, as getDURATION() <= D (a window: "
            "the occurrence lasts at most D)",
            getattr(goal, "span", None),
        )

    def window_size(self, term: Term) -> int | float:
        if isinstance(term, Number) and not isinstance(term.value, bool) and term.value >= 0:
            return term.value  # type: ignore[return-value]
        raise _error(
            'expected a non-negative number or an xsd:duration such as "PT30S"^^xsd:duration',
            getattr(term, "span", None),
        )

    def dropped_error(self) -> RuleCompileError:
        name, span = self.dropped[0]
        return _error(
            f"a FILTER uses ?{self.sparql.get(name, name)} where it is not bound: write the FILTER "
            "after the groups whose variables it compares",
            span,
        )


def _aggregate(expr: Expression) -> AggregateItem | None:
    """The aggregate of a group ``{ aggregate(...) }`` holding nothing else."""
    if isinstance(expr, Group) and len(expr.items) == 1:
        item = expr.items[0]
        return item if isinstance(item, AggregateItem) else None
    return None


def _triples(expr: Expression | Background | Filter | Triple | AggregateItem) -> list[Triple]:
    match expr:
        case Triple():
            return [expr]
        case AggregateItem(triple=triple):
            return [triple]
        case Group(items):
            return [t for item in items for t in _triples(item)]
        case Join(_, left, right):
            return _triples(left) + _triples(right)
        case Background(triples):
            return list(triples)
    return []


def _triple_variables(triple: Triple) -> list[Var]:
    parts = (triple.subject, triple.predicate, triple.object)
    return [v for part in parts for v in term_variables(part)]
