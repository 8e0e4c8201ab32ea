"""The one interface through which conditions reach static knowledge.

WHERE conditions, ``event_multiply`` goals and static-rule bodies ask a :class:`Knowledge`
for the tuples of a predicate. The program's own facts and Horn rules, the RDF store
(``rdf/3``, ``prefix:property/2``) and any future source all answer through it, so the
engine never knows where a fact came from.

A compiled call asks its knowledge once for the :class:`Procedure` of its predicate (how that
knowledge answers it: a relation, rules run top-down, a table) and keeps it while the
knowledge stays the same object, so a call does no dispatch on names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from reasoner.values import Value

Row = tuple[Value, ...]
Pattern = tuple[Value | None, ...]


@dataclass(frozen=True, slots=True)
class Procedure:
    """How one knowledge answers one predicate, resolved ahead of the calls.

    ``solve(pattern)`` is :meth:`Knowledge.solve` for this predicate; ``holds(row)`` says
    whether a ground tuple (every position bound) has an answer, without building any.
    """

    solve: Callable[[Pattern], Iterator[Row]]
    holds: Callable[[Row], bool]


class Knowledge(Protocol):
    """A read-only, consistent view (one version) of the static knowledge."""

    def defines(self, predicate: str, arity: int) -> bool:
        """Whether ``predicate/arity`` is known here (a fact table, a rule or an RDF view).

        ``predicate`` is the functor as written, e.g. ``"inSupChain"``, ``"rdf"`` or a
        prefixed property resolved to its full IRI, e.g. ``"http://ex.org/wt#speed"``.
        """
        ...

    def solve(self, predicate: str, pattern: Pattern) -> Iterator[Row]:
        """Every ground tuple of ``predicate/len(pattern)`` agreeing with the bound positions.

        ``None`` in ``pattern`` marks an unbound position. Bound-position lookups must go
        through indexes prepared in advance (no query planning per call).
        """
        ...

    def procedure(self, predicate: str, arity: int) -> Procedure:
        """How this knowledge answers ``predicate/arity`` (see :class:`Procedure`); asked once
        per call site and version, so it may resolve names and indexes here."""
        ...


#: The procedure of a predicate with no tuples.
NOTHING = Procedure(lambda pattern: iter(()), lambda row: False)


def solving(knowledge: Knowledge, predicate: str) -> Procedure:
    """A :class:`Procedure` that calls ``knowledge.solve`` (for knowledge with nothing to
    resolve ahead).

    >>> from reasoner.knowledge.facts import FactBase
    >>> p = solving(FactBase([("p", (1,))]), "p")
    >>> list(p.solve((None,))), p.holds((1,)), p.holds((2,))
    ([(1,)], True, False)
    """
    solve = knowledge.solve
    return Procedure(
        lambda pattern: solve(predicate, pattern),
        lambda row: next(iter(solve(predicate, row)), None) is not None,
    )
