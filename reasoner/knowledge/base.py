"""The one interface through which conditions reach static knowledge.

WHERE conditions, ``event_multiply`` goals and static-rule bodies ask a :class:`Knowledge`
for the tuples of a predicate. The program's own facts and Horn rules, the RDF store
(``rdf/3``, ``prefix:property/2``) and any future source all answer through it, so the
engine never knows where a fact came from.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from reasoner.values import Value


class Knowledge(Protocol):
    """A read-only, consistent view (one version) of the static knowledge."""

    def defines(self, predicate: str, arity: int) -> bool:
        """Whether ``predicate/arity`` is known here (a fact table, a rule or an RDF view).

        ``predicate`` is the functor as written, e.g. ``"inSupChain"``, ``"rdf"`` or a
        prefixed property resolved to its full IRI, e.g. ``"http://ex.org/wt#speed"``.
        """
        ...

    def solve(
        self, predicate: str, pattern: tuple[Value | None, ...]
    ) -> Iterator[tuple[Value, ...]]:
        """Every ground tuple of ``predicate/len(pattern)`` agreeing with the bound positions.

        ``None`` in ``pattern`` marks an unbound position. Bound-position lookups must go
        through indexes prepared in advance (no query planning per call).
        """
        ...
