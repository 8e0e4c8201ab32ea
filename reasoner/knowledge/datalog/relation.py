"""A growable set of tuples with hash indexes per bound-position mask.

Semi-naive evaluation grows relations round by round, so unlike the immutable
:class:`~reasoner.knowledge.facts.FactBase` an index, once built, is kept up to date on
every :meth:`Relation.add`. Callers never add while iterating a match (evaluation collects a
round's new tuples first), so matches need no defensive copies.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from reasoner.knowledge.base import Procedure
from reasoner.values import Value

Row = tuple[Value, ...]
Pattern = tuple[Value | None, ...]


class Relation:
    """Tuples of one arity, insertion-ordered, indexed on demand.

    >>> r = Relation([("a", "b"), ("b", "c")])
    >>> list(r.match(("b", None)))
    [('b', 'c')]
    """

    __slots__ = ("_rows", "_indexes")

    def __init__(self, rows: Iterable[Row] = ()) -> None:
        self._rows: dict[Row, None] = dict.fromkeys(rows)
        self._indexes: dict[tuple[int, ...], dict[Row, list[Row]]] = {}

    def add(self, row: Row) -> bool:
        """Add a tuple; True if it was new."""
        if row in self._rows:
            return False
        self._rows[row] = None
        for mask, index in self._indexes.items():
            index.setdefault(tuple(row[i] for i in mask), []).append(row)
        return True

    def match(self, pattern: Pattern) -> Iterator[Row]:
        """The tuples agreeing with the bound (non-None) positions of ``pattern``."""
        mask = tuple(i for i, v in enumerate(pattern) if v is not None)
        if not mask:
            return iter(self._rows)
        if len(mask) == len(pattern):
            row = tuple(pattern)
            return iter((row,)) if row in self._rows else iter(())  # type: ignore[arg-type]
        index = self._indexes.get(mask)
        if index is None:
            index = {}
            for row in self._rows:
                index.setdefault(tuple(row[i] for i in mask), []).append(row)
            self._indexes[mask] = index
        return iter(index.get(tuple(pattern[i] for i in mask), ()))  # type: ignore[misc]

    @property
    def procedure(self) -> Procedure:
        """The relation as a :class:`~reasoner.knowledge.base.Procedure` (it sees later adds).

        >>> Relation([("a",)]).procedure.holds(("a",))
        True
        """
        return Procedure(self.match, self.__contains__)

    def __contains__(self, row: object) -> bool:
        return row in self._rows

    def __iter__(self) -> Iterator[Row]:
        return iter(tuple(self._rows))

    def __len__(self) -> int:
        return len(self._rows)
