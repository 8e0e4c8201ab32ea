"""Versions of the static knowledge, and the :class:`KnowledgeBase` facade.

A :class:`KnowledgeVersion` is one immutable version: the store's asserted and inferred triples
copied into hash indexes, the program's rules evaluated to a model, and on-demand rules
ready to answer. The engine reads ``kb.current()`` once per event and evaluates the whole
event against it, so a refresh never shows an event half of each version.

:meth:`KnowledgeBase.refresh` builds the next version *aside* (a new in-memory store, or the
same on-disk store re-read) and publishes it with one reference assignment; a failure leaves
the current version in place and raises :class:`~reasoner.errors.KnowledgeError` saying why.

Lookups never touch pyoxigraph: a SELECT costs 30–65 µs, a dict lookup 0.1 µs. Subject
indexes (``wt:speed(S, V)`` with ``S`` bound, the common case) are built with the version;
other bound-position indexes are built on their first use and kept. Predicates answered
top-down per call (rules with arithmetic or negation, e.g. ``becomes_blizzard/4``) keep their
answers per version, and whether their ground calls hold: the same call against the same
version is answered once (a refresh starts a new version, hence empty caches).
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from reasoner.errors import KnowledgeError, ReasonerError
from reasoner.knowledge.base import NOTHING, Procedure, solving
from reasoner.knowledge.datalog import DerivedKnowledge, Model, Relation, Strata, evaluate, prepare
from reasoner.knowledge.entailment import Closure, materialize
from reasoner.knowledge.goals import DEFAULT_PREFIXES
from reasoner.knowledge.store import INFERRED_GRAPH, SparqlResult, Store, Triple
from reasoner.language.ast import Program
from reasoner.modes import REGIMES, Regime
from reasoner.values import IRI, NUMBER_TYPES, Struct, Value

#: Predicate IRIs for derived facts of unprefixed predicates: ``urn:reasoner:pred:<name>``.
PREDICATE_NAMESPACE = "urn:reasoner:pred:"

Row = tuple[Value, ...]


class TripleIndex:
    """The store's triples as :class:`Knowledge`: ``rdf/3`` and one binary predicate per
    property IRI (``rdf:type(X, C)`` included).

    Any IRI-named binary predicate is *defined* (RDF is open: a property with no triples
    simply has no answers), so a rule may ask ``wt:gust(S, V)`` before any gust is loaded.

    >>> ix = TripleIndex([(IRI("http://e/a"), IRI("http://e/p"), 1)])
    >>> list(ix.solve("http://e/p", (IRI("http://e/a"), None)))
    [(IRI(value='http://e/a'), 1)]
    """

    __slots__ = ("_by_property", "_all", "_size")

    def __init__(self, triples: Iterable[Triple]) -> None:
        pairs: dict[str, list[Row]] = {}
        count = 0
        for s, p, o in triples:
            pairs.setdefault(str(p), []).append((s, o))
            count += 1
        self._by_property = {p: Relation(rows) for p, rows in pairs.items()}
        for relation in self._by_property.values():
            next(relation.match((_WARM, None)), None)  # builds the subject index now
        self._all: Relation | None = None
        self._size = count

    def __len__(self) -> int:
        return self._size

    def defines(self, predicate: str, arity: int) -> bool:
        """``rdf/3``, and every IRI-named binary predicate."""
        return (predicate == "rdf" and arity == 3) or (arity == 2 and ":" in predicate)

    def solve(self, predicate: str, pattern: tuple[Value | None, ...]) -> Iterator[Row]:
        """Triples (``rdf/3``) or subject-object pairs (a property) matching ``pattern``."""
        if len(pattern) == 2:
            relation = self._by_property.get(predicate)
            return iter(()) if relation is None else relation.match(pattern)
        if predicate != "rdf" or len(pattern) != 3:
            return iter(())
        s, p, o = pattern
        if p is not None:
            relation = self._by_property.get(str(p))
            if relation is None or not isinstance(p, IRI):
                return iter(())
            return ((a, p, b) for a, b in relation.match((s, o)))
        return self._triples().match(pattern)

    def procedure(self, predicate: str, arity: int) -> Procedure:
        """A property's relation (its pairs), or :meth:`solve` for ``rdf/3``."""
        if arity != 2:
            return solving(self, predicate)
        relation = self._by_property.get(predicate)
        if relation is None:
            return NOTHING
        return relation.procedure

    def _triples(self) -> Relation:
        # Only rdf(S, P, O) with P unbound needs every triple in one relation: build it then,
        # completely, before publishing it (concurrent readers see none or all of it).
        if self._all is None:
            self._all = Relation(
                (s, IRI(p), o) for p, rel in self._by_property.items() for s, o in rel
            )
        return self._all


#: A value no triple holds: matching it builds a relation's subject index and finds nothing.
_WARM = IRI("urn:reasoner:warm-up")


@dataclass(frozen=True, slots=True)
class KnowledgeVersion:
    """One immutable version of the knowledge (a :class:`Knowledge`).

    ``version`` grows by one per successful refresh; ``stats`` holds sizes and timings.
    """

    version: int
    store: Store = field(repr=False)
    knowledge: DerivedKnowledge = field(repr=False)
    strata: Strata = field(repr=False)
    closure: Closure = field(repr=False)
    stats: Mapping[str, float] = field(default_factory=dict)
    #: Answers of on-demand predicates, by (predicate, pattern); see :meth:`solve` (a
    #: pattern holding other values than strings, IRIs and ints is keyed by :func:`_exact`).
    answers: dict[tuple[str, tuple[object, ...]], tuple[Row, ...]] = field(
        default_factory=dict, repr=False, compare=False
    )
    #: Whether ground calls of on-demand predicates hold, by (predicate, call), keyed alike.
    held: dict[tuple[str, tuple[object, ...]], bool] = field(
        default_factory=dict, repr=False, compare=False
    )

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (sent to a worker process), a version leaves its store and its answers
        behind: the copy answers conditions and justifies facts as this one does, and its
        store is empty (it answers no SPARQL)."""
        return _detached, (self.version, self.knowledge, self.strata, self.closure, self.stats)

    def defines(self, predicate: str, arity: int) -> bool:
        """Whether ``predicate/arity`` is known (rules, facts or the store)."""
        return self.knowledge.defines(predicate, arity)

    def solve(self, predicate: str, pattern: tuple[Value | None, ...]) -> Iterator[Row]:
        """Every tuple of the predicate agreeing with the bound positions (see Knowledge).

        A predicate answered top-down is answered once per pattern and version; at most
        :data:`MAX_ANSWERS` patterns are kept (then the cache starts over), so a stream of
        ever-new patterns (time stamps) costs bounded memory.
        """
        if not self.knowledge.on_demand(predicate, len(pattern)):
            return self.knowledge.solve(predicate, pattern)
        return iter(self._answers(predicate, pattern))

    def procedure(self, predicate: str, arity: int) -> Procedure:
        """The knowledge's procedure; an on-demand predicate's answers are kept as
        :meth:`solve` keeps them, and whether its ground calls hold too (such a call is
        decided by its rules without building an answer)."""
        found = self.knowledge.procedure(predicate, arity)
        if not self.knowledge.on_demand(predicate, arity):
            return found
        rules = found.holds

        def holds(row: Row) -> bool:
            key: tuple[str, tuple[object, ...]] = (predicate, row)
            for value in row:  # (inlined _key: this runs per event)
                if type(value) not in _PLAIN:
                    key = (predicate, _exact(row))
                    break
            known = self.held.get(key)
            if known is None:
                known = rules(row)
                if len(self.held) >= MAX_ANSWERS:
                    self.held.clear()
                self.held[key] = known
            return known

        return Procedure(lambda pattern: iter(self._answers(predicate, pattern)), holds)

    def _answers(self, predicate: str, pattern: tuple[Value | None, ...]) -> tuple[Row, ...]:
        key = (predicate, _key(pattern))
        rows = self.answers.get(key)
        if rows is None:
            rows = tuple(self.knowledge.solve(predicate, pattern))
            if len(self.answers) >= MAX_ANSWERS:
                self.answers.clear()
            self.answers[key] = rows
        return rows


#: Types whose equal values are the same term: a row of these alone is its own cache key.
_PLAIN = frozenset({str, IRI, int, type(None)})
#: Types of values with no parts: a row of these is keyed by its values and their types.
_ATOMIC = _PLAIN | NUMBER_TYPES | {bool}


def _key(values: tuple[Value | None, ...]) -> tuple[object, ...]:
    """``values`` themselves when all are of :data:`_PLAIN` types (the common case, kept
    cheap: the caches are read per event), else :func:`_exact` of them."""
    for value in values:
        if type(value) not in _PLAIN:
            return _exact(values)
    return values


def _exact(values: tuple[Value | None, ...]) -> tuple[object, ...]:
    """``values`` as a cache key telling apart the terms Python finds equal (``1``, ``1.0``,
    ``Fraction(1)``), which the standard order of terms (``@<``) tells apart.

    >>> _exact((1, 1.0)) == _exact((1, 1)), _exact((1, 1.0)) == _exact((1, 1.0))
    (False, True)
    """
    types = tuple(map(type, values))
    if _ATOMIC.issuperset(types):  # (no list or compound: the types tell the terms apart)
        return values, types
    return tuple(map(_term, values))


def _term(value: Value | None) -> object:
    """A value not of a :data:`_PLAIN` type keyed with its type (lists and compounds by
    their members')."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is Struct:
        return Struct, value.functor, _exact(value.args)  # type: ignore[union-attr]
    if kind is tuple:
        return tuple, _exact(value)  # type: ignore[arg-type]
    return kind, value


def _detached(
    version: int,
    knowledge: DerivedKnowledge,
    strata: Strata,
    closure: Closure,
    stats: Mapping[str, float],
) -> KnowledgeVersion:
    """An unpickled :class:`KnowledgeVersion` (with an empty store)."""
    return KnowledgeVersion(version, Store(), knowledge, strata, closure, dict(stats))


#: How many on-demand calls a :class:`KnowledgeVersion` keeps the answers of (and how many ground
#: calls it keeps whether they hold).
MAX_ANSWERS = 65_536


class KnowledgeBase:
    """Background knowledge for the engine and the SPARQL endpoint.

    Args:
        paths: RDF files or folders to load into the asserted graph.
        store_path: a folder for an on-disk store (its contents count as asserted data), or
            None for a fresh in-memory store per version.
        entailment: ``none``, ``rdfs`` or ``owl-rl``.
        program: a parsed program whose static rules and facts are evaluated.
        progress: show tqdm progress bars while loading.
    Raises:
        KnowledgeError: when the first version cannot be built.

    >>> kb = KnowledgeBase()
    >>> kb.version, list(kb.current().solve("rdf", (None, None, None)))
    (1, [])
    """

    def __init__(
        self,
        paths: Iterable[str | os.PathLike[str]] = (),
        *,
        store_path: str | os.PathLike[str] | None = None,
        entailment: Regime = "rdfs",
        program: Program | None = None,
        progress: bool = False,
    ) -> None:
        self.paths = tuple(paths)
        self.store_path = store_path
        self.entailment = entailment
        self.program = program if program is not None else Program()
        self.progress = progress
        self._disk_store = None if store_path is None else Store(store_path)
        self._versions = itertools.count(1)
        self._lock = threading.Lock()
        self._current = self._build(self.paths, self.program, entailment)

    @property
    def version(self) -> int:
        """The current version number (compare it to notice a swap cheaply)."""
        return self._current.version

    @property
    def store(self) -> Store:
        """The current version's store (for SPARQL)."""
        return self._current.store

    def current(self) -> KnowledgeVersion:
        """The current version: read it once per event and use it for the whole event.

        >>> KnowledgeBase().current().version
        1
        """
        return self._current

    def query(self, sparql: str) -> SparqlResult:
        """Run a SPARQL query on the current version (asserted and inferred graphs).

        Args:
            sparql: the query.
        Returns:
            the :class:`SparqlResult`; :class:`SparqlError` for a bad query.

        >>> KnowledgeBase().query("ASK { ?s ?p ?o }").boolean
        False
        """
        return self._current.store.query(sparql)

    def refresh(
        self,
        paths: Iterable[str | os.PathLike[str]] | None = None,
        *,
        program: Program | None = None,
        entailment: Regime | None = None,
    ) -> KnowledgeVersion:
        """Build the next version aside and swap it in atomically.

        Args:
            paths: new files or folders (default: the current ones, re-read).
            program: new static rules (default: the current program).
            entailment: a new regime (default: the current one).
        Returns:
            the new version.
        Raises:
            KnowledgeError: saying why; the current version stays in place.

        >>> kb = KnowledgeBase()
        >>> kb.refresh().version
        2
        """
        with self._lock:
            new_paths = self.paths if paths is None else tuple(paths)
            new_program = self.program if program is None else program
            new_regime = self.entailment if entailment is None else entailment
            try:
                built = self._build(new_paths, new_program, new_regime)
            except ReasonerError as e:
                raise KnowledgeError(
                    f"refresh failed, version {self.version} stays in use: {e}"
                ) from e
            self.paths, self.program, self.entailment = new_paths, new_program, new_regime
            self._current = built  # the swap: one reference assignment
            return built

    # ------------------------------------------------------------------ building

    def _build(self, paths: tuple, program: Program, regime: Regime) -> KnowledgeVersion:
        if regime not in REGIMES:
            raise KnowledgeError(
                f"unknown entailment {regime!r} (expected one of {', '.join(REGIMES)})"
            )
        started = time.perf_counter()
        prefixes = {**DEFAULT_PREFIXES, **program.prefixes}
        strata = prepare(
            program.static_rules, prefixes, program.event_rules
        )  # rule errors before any loading
        store = self._disk_store if self._disk_store is not None else Store()
        store.load(paths, progress=self.progress)
        loaded = time.perf_counter()
        closure = materialize(store, regime)
        entailed = time.perf_counter()
        index = TripleIndex(store.triples(graph="all"))
        model = evaluate(strata, index, prefixes)
        derived = _derived_triples(model, index)
        store.add(derived, INFERRED_GRAPH)
        store.flush()
        done = time.perf_counter()
        stats = {
            "triples": float(len(index)),
            "inferred": float(len(closure.inferred)),
            "derived": float(len(derived)),
            "load_s": loaded - started,
            "entail_s": entailed - loaded,
            "rules_s": done - entailed,
        }
        knowledge = DerivedKnowledge(index, model, strata, prefixes)
        return KnowledgeVersion(next(self._versions), store, knowledge, strata, closure, stats)


def _derived_triples(model: Model, index: TripleIndex) -> list[Triple]:
    """Binary facts derived by rules, as triples for the inferred graph.

    Only facts with an IRI subject and an RDF-representable object are written (RDF has no
    literal subjects and no compound terms); a prefixed predicate keeps its IRI, an
    unprefixed one gets ``urn:reasoner:pred:<name>``. Triples already in the store are
    skipped.
    """
    out: list[Triple] = []
    for (name, arity), relation in model.items():
        if arity != 2:
            continue
        predicate = IRI(name if ":" in name else PREDICATE_NAMESPACE + name)
        existing = index.solve(name, (None, None)) if ":" in name else iter(())
        known = set(existing)
        for s, o in relation:
            if not isinstance(s, IRI) or isinstance(o, Struct | tuple) or (s, o) in known:
                continue
            out.append((s, predicate, o))
    return out
