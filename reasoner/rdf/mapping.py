"""Input RDF graphs → events: ``rdf_event`` declarations, compiled once.

A declaration ``rdf_event head :- g1, ..., gn.`` is a goal over one graph: ``rdf(S, P, O)``
matches the graph's triples, ``time(T)`` gives the graph's time (epoch seconds, as the events
get it), and every other goal is the language's own (comparisons, ``is``, ``=``,
``(C -> T ; E)``, ``\\+`` ...). Each solution gives one ``head`` event; equal
events from one graph count once (a graph is a set of triples). The goals are compiled into
closures by :func:`reasoner.knowledge.goals.compile_goal` when the mapping is built, so matching
a graph runs no parser, planner or query.

A program without declarations gets the EP-SPARQL view of a triple stream: every triple of a
graph is an event ``triple(S, P, O)``, which is the declaration
``rdf_event triple(S, P, O) :- rdf(S, P, O).``
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from reasoner.errors import ReasonerError
from reasoner.knowledge.base import Procedure, solving
from reasoner.knowledge.goals import Expression, Goal, compile_expression, compile_goal
from reasoner.language.ast import Compound, EventAtom, Program, RdfEvent, Term, Var
from reasoner.spans import Span
from reasoner.values import Time, Value

#: The name of the events of the default triple view.
TRIPLE = "triple"

Triple = tuple[Value, Value, Value]
#: An event before it has a time: name and arguments.
Occurrence = tuple[str, tuple[Value, ...]]

_S, _P, _O = Var("S"), Var("P"), Var("O")
#: ``rdf_event triple(S, P, O) :- rdf(S, P, O).``
TRIPLE_VIEW = RdfEvent(EventAtom(TRIPLE, (_S, _P, _O)), (Compound("rdf", (_S, _P, _O)),))


class MappingError(ReasonerError):
    """A graph on which a mapping's goals fail to evaluate (the graph is rejected)."""


class GraphTriples:
    """One graph as :class:`~reasoner.knowledge.base.Knowledge`: ``rdf/3`` and ``time/1``.

    Args:
        triples: the graph's triples as values.
        time: the graph's time.

    >>> from reasoner.values import IRI
    >>> g = GraphTriples([(IRI("s"), IRI("p"), 1), (IRI("s"), IRI("q"), 2)], 60)
    >>> list(g.solve("rdf", (None, IRI("q"), None))), list(g.solve("time", (None,)))
    ([(IRI(value='s'), IRI(value='q'), 2)], [(60,)])
    """

    __slots__ = ("_all", "_by_predicate", "_time")

    def __init__(self, triples: Sequence[Triple], time: Time) -> None:
        self._all = triples
        self._time = time
        self._by_predicate: dict[Value, list[Triple]] | None = None  # built when first asked

    def defines(self, predicate: str, arity: int) -> bool:
        """Only the graph's own predicates: a mapping never asks the background knowledge."""
        return (predicate, arity) in (("rdf", 3), ("time", 1))

    def procedure(self, predicate: str, arity: int) -> Procedure:
        """Calls of :meth:`solve` (a graph is asked a few times only)."""
        return solving(self, predicate)

    def solve(
        self, predicate: str, pattern: tuple[Value | None, ...]
    ) -> Iterator[tuple[Value, ...]]:
        """The triples agreeing with the bound positions of ``(S, P, O)``, or the time."""
        if predicate == "time":
            if pattern[0] is None or pattern[0] == self._time:
                yield (self._time,)
            return
        s, p, o = pattern
        if p is None:
            rows: Sequence[Triple] = self._all
        else:
            if self._by_predicate is None:
                self._by_predicate = {}
                for triple in self._all:
                    self._by_predicate.setdefault(triple[1], []).append(triple)
            rows = self._by_predicate.get(p, ())
        for row in rows:
            if (s is None or row[0] == s) and (o is None or row[2] == o):
                yield row


@dataclass(frozen=True, slots=True)
class _Compiled:
    name: str
    goal: Goal
    head: tuple[Expression, ...] = field(repr=False)
    span: Span | None


class GraphMapping:
    """The compiled ``rdf_event`` declarations of a program (or the triple view).

    Args:
        program: a parsed (and checked) program; without declarations, the triple view.

    Raises:
        RuleCompileError: a goal other than ``rdf/3`` and the built-ins, an unknown prefix.

    >>> from reasoner.language.parser import parse
    >>> from reasoner.values import IRI
    >>> m = GraphMapping(parse("rdf_event seen(X) :- rdf(X, <urn:p>, 1)."))
    >>> m.events([(IRI("urn:a"), IRI("urn:p"), 1), (IRI("urn:b"), IRI("urn:p"), 2)], 0)
    [('seen', (IRI(value='urn:a'),))]
    """

    def __init__(self, program: Program) -> None:
        declarations = program.rdf_events or (TRIPLE_VIEW,)
        prefixes = program.prefixes
        self._mappings = tuple(_compile(d, prefixes) for d in declarations)
        self._triple_view = not program.rdf_events

    def events(self, triples: Sequence[Triple], time: Time) -> list[Occurrence]:
        """The events one graph gives, in declaration and solution order, each once.

        Args:
            triples: the graph's triples as values.
            time: the graph's time.
        Returns:
            ``(name, args)`` pairs; empty when no declaration matches.
        Raises:
            MappingError: a goal or head argument fails to evaluate on this graph.
        """
        if self._triple_view:  # what TRIPLE_VIEW's goal gives, without evaluating it
            return [(TRIPLE, triple) for triple in dict.fromkeys(triples)]
        graph = GraphTriples(triples, time)
        found: dict[Occurrence, None] = {}
        for mapping in self._mappings:
            try:
                for env in mapping.goal.solutions({}, graph):
                    found[mapping.name, tuple(arg(env) for arg in mapping.head)] = None
            except ReasonerError as exc:
                where = f" ({mapping.span})" if mapping.span else ""
                raise MappingError(f"rdf_event {mapping.name}{where}: {exc}") from exc
        return list(found)


def _compile(declaration: RdfEvent, prefixes: dict[str, str]) -> _Compiled:
    goal = compile_goal(_conjunction(declaration.body), prefixes)
    goal.check(GraphTriples((), 0))
    head = tuple(compile_expression(arg, prefixes) for arg in declaration.head.args)
    return _Compiled(declaration.head.name, goal, head, declaration.span)


def _conjunction(goals: tuple[Term, ...]) -> Term:
    body = goals[-1]
    for goal in reversed(goals[:-1]):
        body = Compound(",", (goal, body))
    return body
