"""RDFS and OWL 2 RL materialisation: ``none | rdfs | owl-rl``.

owlrl is the reference, but it needs minutes for 100k triples. The default path splits the
asserted triples into the *schema* (TBox: ``rdfs:subClassOf``, ``rdfs:subPropertyOf``,
``rdfs:domain``, ``rdfs:range``, ``owl:equivalentClass``, ``owl:equivalentProperty``,
``owl:inverseOf`` and ``rdf:type`` triples whose class is RDF/RDFS/OWL vocabulary), closes the
schema with owlrl (it is small), and applies the closed schema to the instance data (ABox) with
indexed semi-naive rules in Python:

* both regimes: rdfs7 / prp-spo1 (sub-property), rdfs2 / prp-dom (domain), rdfs3 / prp-rng
 (range), rdfs9 / cax-sco (sub-class; equivalent classes and
  properties arrive as two-way sub-class / sub-property axioms from the schema closure);
* ``rdfs`` only: rdf1 (``p rdf:type rdf:Property`` for every predicate used);
* ``owl-rl`` only: prp-inv1/2 (``owl:inverseOf``), prp-trp (``owl:TransitiveProperty``),
  prp-symp (``owl:SymmetricProperty``), eq-sym / eq-trans / eq-rep-s/p/o (``owl:sameAs``).

When the schema uses anything else that acts on instances (restrictions, property chains,
functional properties, keys, ...; see :data:`FAST_OWL_VOCABULARY`), or meta-modelling makes
instance triples change the schema, :func:`entail` falls back to owlrl on everything, so the
answer is always owlrl's.

**Trivial triples.** :func:`is_trivial` names what owlrl derives that the project does not
materialise and comparisons ignore: ``x rdf:type rdfs:Resource`` (rdfs4a/b); reflexive
``rdfs:subClassOf``, ``rdfs:subPropertyOf``, ``owl:equivalentClass``,
``owl:equivalentProperty`` and ``owl:sameAs`` (rdfs6, rdfs10, scm-*, eq-ref); every triple whose
subject is a literal (generalised RDF, which an RDF store cannot hold); and every triple whose
subject is an RDF, RDFS, OWL or XSD vocabulary term (owlrl's axioms about its own vocabulary
and datatypes, e.g. ``xsd:int rdf:type rdfs:Datatype``, ``owl:Thing rdf:type owl:Class``).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import owlrl
import rdflib

from reasoner.errors import KnowledgeError
from reasoner.knowledge.store import INFERRED_GRAPH, Store, Triple, literal_value
from reasoner.modes import REGIMES, Regime
from reasoner.values import IRI, Value
from reasoner.vocab import OWL, RDF, RDFS, XSD

log = logging.getLogger(__name__)

_VOCABULARY = (RDF, RDFS, OWL, XSD)

TYPE = IRI(RDF + "type")
PROPERTY = IRI(RDF + "Property")
RESOURCE = IRI(RDFS + "Resource")
SUBCLASS = IRI(RDFS + "subClassOf")
SUBPROPERTY = IRI(RDFS + "subPropertyOf")
DOMAIN = IRI(RDFS + "domain")
RANGE = IRI(RDFS + "range")
EQ_CLASS = IRI(OWL + "equivalentClass")
EQ_PROPERTY = IRI(OWL + "equivalentProperty")
INVERSE = IRI(OWL + "inverseOf")
SAME_AS = IRI(OWL + "sameAs")
TRANSITIVE = IRI(OWL + "TransitiveProperty")
SYMMETRIC = IRI(OWL + "SymmetricProperty")

#: Schema predicates: their triples form the TBox that owlrl closes.
SCHEMA_PREDICATES = frozenset(
    {SUBCLASS, SUBPROPERTY, DOMAIN, RANGE, EQ_CLASS, EQ_PROPERTY, INVERSE}
)

#: OWL terms the fast path covers (or that have no effect on instances); any other OWL
#: predicate or class in the data sends ``owl-rl`` to the owlrl fallback.
FAST_OWL_VOCABULARY = frozenset(
    IRI(OWL + name)
    for name in (
        "equivalentClass",
        "equivalentProperty",
        "inverseOf",
        "sameAs",
        "TransitiveProperty",
        "SymmetricProperty",
        "Class",
        "ObjectProperty",
        "DatatypeProperty",
        "AnnotationProperty",
        "Ontology",
        "NamedIndividual",
        "Thing",
        "imports",
        "versionInfo",
        "versionIRI",
        "priorVersion",
        "backwardCompatibleWith",
        "incompatibleWith",
        "deprecated",
    )
)

_REFLEXIVE = frozenset({SUBCLASS, SUBPROPERTY, EQ_CLASS, EQ_PROPERTY, SAME_AS})


@dataclass(frozen=True, slots=True)
class Closure:
    """The result of entailment.

    ``inferred`` holds the non-trivial triples entailed and not asserted; ``method`` says how
    they were computed: ``"none"``, ``"fast"`` (owlrl on the schema, Python on the instances)
    or ``"owlrl"`` (the fallback), with ``reason`` saying why the fallback was needed.
    """

    inferred: frozenset[Triple]
    method: str
    reason: str = ""


def is_trivial(triple: Triple) -> bool:
    """Whether a triple is one of owlrl's trivial consequences (see the module docs).

    Args:
        triple: a value triple.
    Returns:
        True for triples the project neither materialises nor compares.

    >>> is_trivial((IRI("http://e/a"), TYPE, RESOURCE))
    True
    """
    s, p, o = triple
    if not isinstance(s, IRI) or s.value.startswith(_VOCABULARY):
        return True
    return (p == TYPE and o == RESOURCE) or (p in _REFLEXIVE and s == o)


def entail(asserted: Iterable[Triple], regime: Regime) -> Closure:
    """Materialise the RDFS or OWL 2 RL closure of asserted triples.

    Args:
        asserted: the asserted (default graph) triples.
        regime: one of :data:`REGIMES`.
    Returns:
        a :class:`Closure` with the non-trivial inferred triples.
    Raises:
        KnowledgeError: for an unknown regime or a failure inside owlrl.

    >>> ex = "http://e/"
    >>> c = entail([(IRI(ex + "d"), SUBCLASS, IRI(ex + "w")), (IRI(ex + "o"), TYPE, IRI(ex + "d"))],
    ...            "rdfs")
    >>> (IRI(ex + "o"), TYPE, IRI(ex + "w")) in c.inferred
    True
    """
    if regime not in REGIMES:
        raise KnowledgeError(
            f"unknown entailment {regime!r} (expected one of {', '.join(REGIMES)})"
        )
    facts = set(asserted)
    if regime == "none":
        return Closure(frozenset(), "none")
    tbox = {t for t in facts if _is_schema(t)}
    closed_tbox = owlrl_closure(tbox, regime) | tbox
    reason = _needs_fallback(facts, closed_tbox, regime)
    if reason:
        log.info("entailment falls back to owlrl: %s", reason)
        return Closure(frozenset(owlrl_closure(facts, regime) - facts), "owlrl", reason)
    schema = _Schema(closed_tbox, regime)
    closure = schema.apply(facts - tbox)
    inferred = (closure | closed_tbox) - facts
    return Closure(frozenset(t for t in inferred if not is_trivial(t)), "fast")


def owlrl_closure(triples: Iterable[Triple], regime: str) -> set[Triple]:
    """The reference: owlrl's closure of triples, minus trivial triples (asserted included).

    Args:
        triples: value triples.
        regime: ``"rdfs"`` or ``"owl-rl"``.
    Returns:
        every non-trivial triple of the closure.
    Raises:
        KnowledgeError: when owlrl fails.

    >>> len(owlrl_closure([], "rdfs"))
    0
    """
    graph = rdflib.Graph()
    for s, p, o in triples:
        graph.add((_to_rdflib(s), _to_rdflib(p), _to_rdflib(o)))
    semantics = owlrl.RDFS_Semantics if regime == "rdfs" else owlrl.OWLRL_Semantics
    try:
        owlrl.DeductiveClosure(semantics, axiomatic_triples=False, datatype_axioms=False).expand(
            graph
        )
    except Exception as e:  # owlrl raises bare exceptions; wrap them with context
        raise KnowledgeError(f"owlrl failed to compute the {regime} closure: {e}") from e
    out = set()
    for node_s, node_p, node_o in graph:
        t = (_from_rdflib(node_s), _from_rdflib(node_p), _from_rdflib(node_o))
        if not is_trivial(t):
            out.add(t)
    return out


def materialize(store: Store, regime: Regime) -> Closure:
    """Recompute the store's inferred graph from its asserted (default) graph.

    Args:
        store: the store; its inferred graph is replaced.
        regime: one of :data:`REGIMES`.
    Returns:
        the :class:`Closure` written.

    >>> materialize(Store(), "rdfs").inferred
    frozenset()
    """
    # With no entailment there is nothing to read: skip converting every asserted triple.
    closure = entail(() if regime == "none" else store.triples(graph=None), regime)
    store.clear_graph(INFERRED_GRAPH)
    store.add(closure.inferred, INFERRED_GRAPH)
    return closure


# --------------------------------------------------------------------------- the fast path


class _Schema:
    """The closed schema as lookup tables, and its semi-naive application to instances."""

    def __init__(self, closed_tbox: set[Triple], regime: str) -> None:
        self.owl = regime == "owl-rl"
        self.superclasses: dict[Value, set[Value]] = defaultdict(set)
        self.superproperties: dict[Value, set[Value]] = defaultdict(set)
        self.domains: dict[Value, set[Value]] = defaultdict(set)
        self.ranges: dict[Value, set[Value]] = defaultdict(set)
        self.inverses: dict[Value, set[Value]] = defaultdict(set)
        self.transitive: set[Value] = set()
        self.symmetric: set[Value] = set()
        tables: dict[Value, dict[Value, set[Value]]] = {
            SUBCLASS: self.superclasses,
            SUBPROPERTY: self.superproperties,
            DOMAIN: self.domains,
            RANGE: self.ranges,
        }
        for s, p, o in closed_tbox:
            if p in tables and s != o:
                tables[p][s].add(o)
            elif self.owl and p == INVERSE:
                self.inverses[s].add(o)
                self.inverses[o].add(s)
            elif self.owl and p == TYPE and o == TRANSITIVE:
                self.transitive.add(s)
            elif self.owl and p == TYPE and o == SYMMETRIC:
                self.symmetric.add(s)

    def apply(self, abox: set[Triple]) -> set[Triple]:
        """The closure of instance triples under the closed schema (semi-naive).

        Like owlrl, it works in generalised RDF: a literal may become a subject on the way
        (``x p "v"`` with ``p owl:inverseOf q`` gives ``"v" q x``, and with ``q owl:inverseOf
        p`` back again). Such triples take part in the fixpoint and are dropped at the end
        as trivial.
        """
        closure: set[Triple] = set()
        # Transitive properties need a two-premise join: index them by subject and object.
        out_edges: dict[tuple[Value, Value], set[Value]] = defaultdict(set)
        in_edges: dict[tuple[Value, Value], set[Value]] = defaultdict(set)
        delta = set(abox)
        while delta:
            closure |= delta
            for s, p, o in delta:
                if p in self.transitive:
                    out_edges[(p, s)].add(o)
                    in_edges[(p, o)].add(s)
            produced: set[Triple] = set()
            for triple in delta:
                self._consequences(triple, out_edges, in_edges, produced)
            delta = produced - closure
            if self.owl and not delta:
                delta = self._same_as(closure) - closure
        if not self.owl:
            closure |= {(p, TYPE, PROPERTY) for _, p, _ in closure}
        return closure

    def _consequences(
        self,
        triple: Triple,
        out_edges: dict[tuple[Value, Value], set[Value]],
        in_edges: dict[tuple[Value, Value], set[Value]],
        produced: set[Triple],
    ) -> None:
        s, p, o = triple
        if p == TYPE:
            for c in self.superclasses.get(o, ()):
                produced.add((s, TYPE, c))
        for q in self.superproperties.get(p, ()):
            produced.add((s, q, o))
        for c in self.domains.get(p, ()):
            produced.add((s, TYPE, c))
        for c in self.ranges.get(p, ()):
            produced.add((o, TYPE, c))
        if not self.owl:
            return
        for q in self.inverses.get(p, ()):
            produced.add((o, q, s))
        if p in self.symmetric:
            produced.add((o, p, s))
        if p in self.transitive:
            for z in out_edges.get((p, o), ()):
                produced.add((s, p, z))
            for w in in_edges.get((p, s), ()):
                produced.add((w, p, o))

    @staticmethod
    def _same_as(closure: set[Triple]) -> set[Triple]:
        """eq-sym, eq-trans and eq-rep-s/p/o, applied once over the whole closure."""
        parent: dict[Value, Value] = {}

        def find(x: Value) -> Value:
            while parent.get(x, x) != x:
                x = parent[x]
            return x

        for s, p, o in closure:
            if p == SAME_AS and s != o:
                parent.setdefault(s, s)
                parent.setdefault(o, o)
                parent[find(s)] = find(o)
        if not parent:
            return set()
        groups: dict[Value, list[Value]] = defaultdict(list)
        for x in parent:
            groups[find(x)].append(x)
        members = {x: groups[find(x)] for x in parent}
        out: set[Triple] = set()
        for s, p, o in closure:
            for s2 in members.get(s, (s,)):
                for p2 in members.get(p, (p,)):
                    for o2 in members.get(o, (o,)):
                        out.add((s2, p2, o2))
        return out


def _is_schema(triple: Triple) -> bool:
    _, p, o = triple
    if p in SCHEMA_PREDICATES:
        return True
    return p == TYPE and isinstance(o, IRI) and o.value.startswith((RDF, RDFS, OWL))


def _needs_fallback(facts: set[Triple], closed_tbox: set[Triple], regime: str) -> str:
    """Why the fast path would differ from owlrl on these facts ("" when it would not)."""
    schema_terms = SCHEMA_PREDICATES | {SAME_AS}
    for s, p, o in closed_tbox:
        # Meta-modelling: an instance triple whose predicate specialises a schema predicate,
        # or a class that makes its members schema (``:p rdfs:range owl:Class``).
        if p == SUBPROPERTY and o in schema_terms and s != o:
            return f"{s} is a sub-property of the schema property {o}"
        if (
            p in (SUBCLASS, DOMAIN, RANGE)
            and isinstance(o, IRI)
            and o.value.startswith((RDFS, OWL))
            and o.value not in (RDFS + "Resource", RDFS + "Literal", OWL + "Thing")
            and s != o
            and not (isinstance(s, IRI) and s.value.startswith(_VOCABULARY))
        ):
            return f"{s} {p} the vocabulary class {o}"
    if regime != "owl-rl":
        return ""
    for _, p, o in facts:
        if isinstance(p, IRI) and p.value.startswith(OWL) and p not in FAST_OWL_VOCABULARY:
            return f"the data uses {p}"
        if (
            p == TYPE
            and isinstance(o, IRI)
            and o.value.startswith(OWL)
            and o not in FAST_OWL_VOCABULARY
        ):
            return f"the data uses {o}"
    return ""


def _to_rdflib(value: Value) -> rdflib.term.Node:
    match value:
        case IRI(value=v) if v.startswith("_:"):
            return rdflib.BNode(v[2:])
        case IRI(value=v):
            return rdflib.URIRef(v)
        case bool() | int() | float() | str():
            return rdflib.Literal(value)
    return rdflib.Literal(float(value))  # type: ignore[arg-type]  # Fraction


def _from_rdflib(node: rdflib.term.Node) -> Value:
    if isinstance(node, rdflib.URIRef):
        return IRI(str(node))
    if isinstance(node, rdflib.BNode):
        return IRI("_:" + str(node))
    if isinstance(node, rdflib.Literal):
        return literal_value(str(node), None if node.datatype is None else str(node.datatype))
    raise KnowledgeError(f"owlrl produced an unexpected term {node!r}")
