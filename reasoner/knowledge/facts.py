"""A hash-indexed, immutable table of ground facts implementing :class:`Knowledge`.

Tuples are stored per ``(predicate, arity)``. A lookup with bound positions goes through an
index keyed by the values at those positions; the index for each bound-position mask is
built the first time that mask is asked for and reused afterwards, so a goal that always
calls ``p(+, -)`` pays for one index build and then does dictionary lookups.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from itertools import groupby

from reasoner.errors import Diagnostic, RuleCompileError
from reasoner.knowledge.base import NOTHING, Procedure
from reasoner.knowledge.goals import DEFAULT_PREFIXES, term_value
from reasoner.language.ast import Atom, Compound, Facts, Program, StaticRule
from reasoner.values import IRI, Value

Fact = tuple[str, tuple[Value, ...]]
_Key = tuple[str, int]
_Mask = tuple[int, ...]


class FactBase:
    """Ground facts ``predicate(v1, ..., vn)``, indexed by bound positions.

    Args:
        facts: ``(predicate, values)`` pairs; duplicates are stored once.
        declared: ``(predicate, arity)`` pairs that are defined even with no facts (e.g. a
            derived relation that happens to be empty).

    >>> kb = FactBase([("edge", ("a", "b")), ("edge", ("b", "c"))])
    >>> list(kb.solve("edge", ("b", None)))
    [('b', 'c')]
    """

    __slots__ = ("_tables", "_indexes")

    def __init__(
        self,
        facts: Iterable[Fact] = (),
        declared: Iterable[_Key] = (),
        *,
        tables: Mapping[_Key, tuple[tuple[Value, ...], ...]] | None = None,
    ) -> None:
        # dict as an insertion-ordered set: answers come back in a deterministic order.
        rows: dict[_Key, dict[tuple[Value, ...], None]] = {key: {} for key in declared}
        for predicate, values in facts:
            rows.setdefault((predicate, len(values)), {})[tuple(values)] = None
        self._tables = {key: tuple(found) for key, found in rows.items()}
        if tables is not None:  # (rows already distinct, as of_groups makes them)
            self._tables.update(tables)
        self._indexes: dict[tuple[_Key, _Mask], dict[tuple[Value, ...], list[tuple[Value, ...]]]]
        self._indexes = {}

    @classmethod
    def from_program(cls, program: Program, prefixes: Mapping[str, str] | None = None) -> FactBase:
        """The ground facts of a program: static rules with an empty body and a ground head.

        Non-ground facts such as ``p(X).`` are rules, left to the Datalog layer. A prefixed
        head ``wt:speed(s1, 3)`` is stored under the full IRI of ``wt:speed``.

        Args:
            program: the parsed program.
            prefixes: overrides the program's own prefixes when given.
        Returns:
            The fact base.
        """
        names = {**DEFAULT_PREFIXES, **(program.prefixes if prefixes is None else prefixes)}
        groups: list[tuple[str, Iterable[tuple[Value, ...]]]] = []
        for statement in program.statements:
            if isinstance(statement, Facts):
                groups += _table_groups(statement, names)
            elif isinstance(statement, StaticRule):
                groups += ((p, (v,)) for (p, v), _ in _rule_facts(statement, names))
        return cls.of_groups(groups)

    @classmethod
    def of_groups(cls, groups: Iterable[tuple[str, Iterable[tuple[Value, ...]]]]) -> FactBase:
        """The facts of ``(predicate, rows)`` groups, in order, without a call per fact (a
        table's rows go in whole); duplicates are stored once.

        >>> kb = FactBase.of_groups([("p", [(1,), (2,)]), ("q", [("a", "b")]), ("p", [(1,)])])
        >>> kb.tuples("p", 1)
        ((1,), (2,))
        """
        tables: dict[_Key, dict[tuple[Value, ...], None]] = {}
        for predicate, rows in groups:
            rows = rows if isinstance(rows, list | tuple) else list(rows)
            if rows:
                table = tables.setdefault((predicate, len(rows[0])), {})
                if table:
                    table.update(dict.fromkeys(rows))
                else:
                    tables[(predicate, len(rows[0]))] = dict.fromkeys(rows)
        return cls(declared=(), tables={key: tuple(rows) for key, rows in tables.items()})

    def defines(self, predicate: str, arity: int) -> bool:
        """Whether ``predicate/arity`` has facts or was declared."""
        return (predicate, arity) in self._tables

    def solve(
        self, predicate: str, pattern: tuple[Value | None, ...]
    ) -> Iterator[tuple[Value, ...]]:
        """Every fact of ``predicate/len(pattern)`` agreeing with the bound positions.

        Args:
            predicate: the predicate name (or full IRI).
            pattern: values at bound positions, None at unbound ones.
        Returns:
            An iterator of full tuples.
        """
        key = (predicate, len(pattern))
        rows = self._tables.get(key)
        if rows is None:
            return iter(())
        mask = tuple(i for i, v in enumerate(pattern) if v is not None)
        if not mask:
            return iter(rows)
        index = self._index(key, mask)
        return iter(index.get(tuple(pattern[i] for i in mask), ()))  # type: ignore[misc]

    def procedure(self, predicate: str, arity: int) -> Procedure:
        """The table's lookups; a ground call is one hash lookup (its index built when first
        asked).

        >>> p = FactBase([("p", (1, "a"))]).procedure("p", 2)
        >>> p.holds((1, "a")), p.holds((1, "b")), list(p.solve((None, "a")))
        (True, False, [(1, 'a')])
        """
        key = (predicate, arity)
        if key not in self._tables:
            return NOTHING
        everything = tuple(range(arity))
        whole: dict[tuple[Value, ...], list[tuple[Value, ...]]] = {}

        def holds(row: tuple[Value, ...]) -> bool:
            nonlocal whole
            if not whole:
                whole = self._index(key, everything)
            return row in whole

        return Procedure(lambda pattern: self.solve(predicate, pattern), holds)

    def _index(self, key: _Key, mask: _Mask) -> dict[tuple[Value, ...], list[tuple[Value, ...]]]:
        """The table ``key`` indexed by the values at the positions ``mask``."""
        index = self._indexes.get((key, mask))
        if index is None:
            index = {}
            for row in self._tables[key]:
                index.setdefault(tuple(row[i] for i in mask), []).append(row)
            # Stored only once complete, so a concurrent reader never sees a partial index.
            self._indexes[(key, mask)] = index
        return index

    def tuples(self, predicate: str, arity: int) -> tuple[tuple[Value, ...], ...]:
        """All facts of ``predicate/arity`` in insertion order (empty if undefined)."""
        return self._tables.get((predicate, arity), ())

    @property
    def predicates(self) -> frozenset[_Key]:
        """Every defined ``(predicate, arity)``."""
        return frozenset(self._tables)

    def __len__(self) -> int:
        return sum(len(rows) for rows in self._tables.values())


def ground_facts(
    program: Program, prefixes: Mapping[str, str] | None = None
) -> Iterator[tuple[Fact, StaticRule]]:
    """The ground facts of a program (see :meth:`FactBase.from_program`), each with the
    statement that writes it (a fact table's facts made into statements: for explanations,
    not for loading).

    >>> from reasoner.language.parser import parse
    >>> [(fact, rule.span.line) for fact, rule in ground_facts(parse("p(1).\\nq(X) :- p(X)."))]
    [(('p', (1,)), 1)]
    """
    names = {**DEFAULT_PREFIXES, **(program.prefixes if prefixes is None else prefixes)}
    for statement in program.statements:
        if isinstance(statement, Facts):
            for rule in statement.rules:
                yield from _rule_facts(rule, names)
        elif isinstance(statement, StaticRule):
            yield from _rule_facts(statement, names)


def _rule_facts(rule: StaticRule, names: Mapping[str, str]) -> Iterator[tuple[Fact, StaticRule]]:
    """The fact ``rule`` states, if it is a ground fact."""
    if rule.body:
        return
    match rule.head:
        case Atom(name):
            yield (name, ()), rule
        case Compound(functor, args):
            values = tuple(term_value(a, names) for a in args)
            if None not in values:
                yield (_predicate(functor, names, rule), values), rule  # type: ignore[misc]


def _table_groups(
    table: Facts, names: Mapping[str, str]
) -> Iterator[tuple[str, list[tuple[Value, ...]]]]:
    """A fact table's rows as ``(predicate, rows)`` groups (consecutive facts of one functor
    and arity together); atoms, strings and numbers are their values as stored."""
    functors, kinds, args = table.functors, table.kinds, table.args
    # (the kinds that need converting, looked for among the distinct kinds: C loops only)
    convert = {k for k in set(kinds) if "i" in k or "p" in k}
    start = 0
    for (functor, _), run in groupby(zip(functors, map(len, args), strict=True)):
        end = start + len(list(run))
        rows = list(args[start:end])
        if convert and not convert.isdisjoint(kinds[start:end]):
            rows = [_values(table, i, names) for i in range(start, end)]
        predicate = functor if ":" not in functor else _table_predicate(table, start, names)
        yield predicate, rows  # type: ignore[misc]
        start = end


def _values(table: Facts, index: int, names: Mapping[str, str]) -> tuple[Value, ...]:
    """The values of a table's row holding IRIs or prefixed names."""
    out: list[Value] = []
    for kind, value in zip(table.kinds[index], table.args[index], strict=True):
        if kind == "i":
            out.append(IRI(str(value)))
        elif kind == "p":
            prefix, local = str(value).split(":", 1)
            if prefix not in names:  # (reported at the fact, as its statement's would be)
                list(_rule_facts(table.rules[index], names))
            out.append(IRI(names[prefix] + local))
        else:
            out.append(value)  # type: ignore[arg-type]
    return tuple(out)


def _table_predicate(table: Facts, index: int, names: Mapping[str, str]) -> str:
    """The predicate of a table's prefixed functor (``wt:speed``: its IRI)."""
    functor = table.functors[index]
    prefix, _, local = functor.partition(":")
    if prefix in names:
        return names[prefix] + local
    return _predicate(functor, names, table.rules[index])  # (unknown: raised at the fact)


def _predicate(functor: str, prefixes: Mapping[str, str], rule: StaticRule) -> str:
    prefix, sep, local = functor.partition(":")
    if not sep or not prefix:
        return functor
    if prefix not in prefixes:
        raise RuleCompileError([Diagnostic(f"unknown prefix '{prefix}'", rule.span)])
    return prefixes[prefix] + local
