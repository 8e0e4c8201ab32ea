"""Job 4: RDFS materialisation at scale, equal to owlrl's RDFS closure.

The schema (``rdfs:subClassOf``, ``rdfs:subPropertyOf``, ``rdfs:domain``, ``rdfs:range`` and
``rdf:type`` of RDFS meta-classes) is small: it is collected to the driver and closed there by
a naive fixpoint of the RDFS rules. The closure is then compiled into four lookup tables —
super-properties of each property, the classes a property's subject and object belong to
(domains and ranges of the property and its super-properties, with their super-classes), and
super-classes of each class — and applied to the instance triples with broadcast joins in
one pass. When instance data derives new schema (a domain of ``rdfs:Datatype``, ...) or the
schema constrains the RDF vocabulary itself (a sub-property of ``rdf:type``, a domain of
``rdfs:subClassOf`` ...), the passes repeat until nothing new appears.

Compared with ``owlrl.DeductiveClosure(RDFS_Semantics, axiomatic_triples=False)``:
owlrl's axiomatic triples and its literal "same value" copies are not produced, nor are
triples with a literal subject (not RDF; the store cannot hold them). The *trivial* triples
(``x a rdfs:Resource``, ``p a rdf:Property``, ``p rdfs:subPropertyOf p``, ``c rdfs:subClassOf
c`` and ``c rdfs:subClassOf rdfs:Resource``) are produced only with ``trivial=True``; then,
as in owlrl, ``x a rdfs:Resource`` covers the subjects and objects of the input triples.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from connectors.spark.terms import iri
from connectors.stations.vocab import RDF_TYPE
from reasoner.vocab import RDF, RDFS

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

Triple = tuple[str, str, str]

TYPE = iri(RDF_TYPE)
SUBCLASS = iri(RDFS + "subClassOf")
SUBPROPERTY = iri(RDFS + "subPropertyOf")
DOMAIN = iri(RDFS + "domain")
RANGE = iri(RDFS + "range")
RESOURCE = iri(RDFS + "Resource")
CLASS = iri(RDFS + "Class")
LITERAL = iri(RDFS + "Literal")
DATATYPE = iri(RDFS + "Datatype")
MEMBERSHIP = iri(RDFS + "ContainerMembershipProperty")
MEMBER = iri(RDFS + "member")
PROPERTY = iri(RDF + "Property")

SCHEMA_PREDICATES = frozenset({SUBCLASS, SUBPROPERTY, DOMAIN, RANGE})
SCHEMA_TYPES = frozenset({CLASS, PROPERTY, DATATYPE, MEMBERSHIP})
#: Terms whose constraint by the schema makes the one-pass plan incomplete.
_VOCABULARY = SCHEMA_PREDICATES | {TYPE}


def is_schema(t: Triple) -> bool:
    """Whether a triple belongs to the schema the driver closes.

    Args:
        t: an encoded triple.
    Returns:
        True for the four schema predicates and ``rdf:type`` of RDFS meta-classes.

    >>> is_schema(("<a>", SUBCLASS, "<b>"))
    True
    """
    return t[1] in SCHEMA_PREDICATES or (t[1] == TYPE and t[2] in SCHEMA_TYPES)


def _is_literal(node: str) -> bool:
    return node.startswith('"')


def close_schema(schema: Iterable[Triple], trivial: bool) -> set[Triple]:
    """The RDFS closure of a (small) schema, by naive fixpoint in the driver.

    Args:
        schema: schema triples.
        trivial: also derive the trivial triples (rdf1, rdfs4, rdfs6, rdfs8, rdfs10).
    Returns:
        the closed set (input included); no literal subjects.

    >>> sorted(close_schema({("<a>", SUBCLASS, "<b>"), ("<b>", SUBCLASS, "<c>")}, False))[0]
    ('<a>', '<http://www.w3.org/2000/01/rdf-schema#subClassOf>', '<b>')
    """
    closed = set(schema)
    # rdfs4 types the terms of the given triples only, as owlrl does (in its first cycle).
    first = True
    while True:
        step = _rule_step(closed, trivial, resources=first)
        new = {t for t in step if not _is_literal(t[0])} - closed
        if not new:
            return closed
        closed |= new
        first = False


def _rule_step(triples: set[Triple], trivial: bool, resources: bool) -> set[Triple]:
    """One naive application of the RDFS rules (rdf1, rdfs2-rdfs13; rdfs4 if ``resources``)."""
    by_predicate: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for s, p, o in triples:
        by_predicate[p].append((s, o))
    out: set[Triple] = set()
    for p, pairs in list(by_predicate.items()):
        for s, o in pairs:
            if trivial:
                out.add((p, TYPE, PROPERTY))
            if trivial and resources:
                out |= {(s, TYPE, RESOURCE), (o, TYPE, RESOURCE)}
            if p == DOMAIN:
                out |= {(x, TYPE, o) for x, _ in by_predicate.get(s, ())}
            elif p == RANGE:
                out |= {(y, TYPE, o) for _, y in by_predicate.get(s, ())}
            elif p == SUBPROPERTY:
                out |= {(s, SUBPROPERTY, z) for y, z in by_predicate[SUBPROPERTY] if y == o}
                out |= {(x, o, y) for x, y in by_predicate.get(s, ())}
            elif p == SUBCLASS:
                out |= {(s, SUBCLASS, z) for y, z in by_predicate[SUBCLASS] if y == o}
                out |= {(x, TYPE, o) for x, c in by_predicate[TYPE] if c == s}
            elif p == TYPE:
                out |= _type_consequences(s, o, trivial)
    return out


def _type_consequences(s: str, o: str, trivial: bool) -> set[Triple]:
    """rdfs6, 8, 10, 12, 13: what typing a term with an RDFS meta-class implies."""
    if o == MEMBERSHIP:
        return {(s, SUBPROPERTY, MEMBER)}
    if o == DATATYPE:
        return {(s, SUBCLASS, LITERAL)}
    if trivial and o == PROPERTY:
        return {(s, SUBPROPERTY, s)}
    if trivial and o == CLASS:
        return {(s, SUBCLASS, RESOURCE), (s, SUBCLASS, s)}
    return set()


def _tables(closed: set[Triple]) -> dict[str, list[tuple[str, str]]]:
    """Compile a closed schema into the join tables of the one-pass plan."""
    supers_p: dict[str, set[str]] = defaultdict(set)
    supers_c: dict[str, set[str]] = defaultdict(set)
    domains: dict[str, set[str]] = defaultdict(set)
    ranges: dict[str, set[str]] = defaultdict(set)
    for s, p, o in closed:
        if p == SUBPROPERTY and s != o:
            supers_p[s].add(o)
        elif p == SUBCLASS and s != o:
            supers_c[s].add(o)
        elif p == DOMAIN:
            domains[s].add(o)
        elif p == RANGE:
            ranges[s].add(o)

    def up(classes: set[str]) -> set[str]:
        return classes | {d for c in classes for d in supers_c.get(c, ())}

    properties = set(supers_p) | set(domains) | set(ranges)
    subject_types = {
        p: up(domains[p] | {c for q in supers_p[p] for c in domains.get(q, ())}) for p in properties
    }
    object_types = {
        p: up(ranges[p] | {c for q in supers_p[p] for c in ranges.get(q, ())}) for p in properties
    }
    return {
        "super_property": [(p, q) for p, qs in supers_p.items() for q in qs],
        "subject_type": [(p, c) for p, cs in subject_types.items() for c in cs],
        "object_type": [(p, c) for p, cs in object_types.items() for c in cs],
        "super_class": [(c, d) for c, ds in supers_c.items() for d in ds],
    }


def _is_exotic(closed: set[Triple]) -> bool:
    """Whether the schema constrains the RDF/RDFS vocabulary (the one-pass plan is then
    iterated to a fixpoint)."""
    for s, p, o in closed:
        if p == SUBPROPERTY and s != o and (s in _VOCABULARY or o in _VOCABULARY):
            return True
        if p in (DOMAIN, RANGE) and s in _VOCABULARY:
            return True
    return False


def _one_pass(
    triples: DataFrame, given: DataFrame, closed: set[Triple], trivial: bool
) -> DataFrame:
    from pyspark.sql import functions as F

    spark = triples.sparkSession
    tables = {
        name: F.broadcast(spark.createDataFrame(rows or [("", "")], "k string, v string"))
        for name, rows in _tables(closed).items()
    }
    by_property = triples.join(tables["super_property"], triples.p == F.col("k")).select(
        "s", F.col("v").alias("p"), "o"
    )
    with_supers = triples.unionByName(by_property)
    domain_types = triples.join(tables["subject_type"], triples.p == F.col("k")).select(
        "s", F.lit(TYPE).alias("p"), F.col("v").alias("o")
    )
    range_types = triples.join(tables["object_type"], triples.p == F.col("k")).select(
        F.col("o").alias("s"), F.lit(TYPE).alias("p"), F.col("v").alias("o")
    )
    stated_types = with_supers.filter(F.col("p") == TYPE)
    class_types = stated_types.join(tables["super_class"], stated_types.o == F.col("k")).select(
        "s", "p", F.col("v").alias("o")
    )
    schema = spark.createDataFrame(sorted(closed) or [("", "", "")], "s string, p string, o string")
    derived = (
        by_property.unionByName(domain_types)
        .unionByName(range_types)
        .unionByName(class_types)
        .unionByName(schema.filter(F.col("s") != ""))
    )
    if trivial:
        derived = derived.unionByName(_trivial(given, triples.unionByName(derived), tables))
    return derived.filter(~F.col("s").startswith('"'))


def _trivial(given: DataFrame, everything: DataFrame, tables: dict[str, DataFrame]) -> DataFrame:
    """rdf1, rdfs4a/b with their super-classes, rdfs6/8/10 over all typed terms.

    As in owlrl, rdfs4 types the subjects and objects of the *given* triples only (owlrl
    applies it in its first cycle), while rdf1 covers every predicate.
    """
    from pyspark.sql import functions as F

    nodes = (
        given.select(F.col("s").alias("x"))
        .unionByName(given.select(F.col("o").alias("x")))
        .filter(~F.col("x").startswith('"'))
        .distinct()
    )
    resources = nodes.select(
        F.col("x").alias("s"), F.lit(TYPE).alias("p"), F.lit(RESOURCE).alias("o")
    )
    predicates = everything.select(F.col("p").alias("s")).distinct()
    properties = predicates.select("s", F.lit(TYPE).alias("p"), F.lit(PROPERTY).alias("o"))
    new_types = resources.unionByName(properties)
    lifted = new_types.join(tables["super_class"], new_types.o == F.col("k")).select(
        "s", "p", F.col("v").alias("o")
    )
    typed = everything.filter(F.col("p") == TYPE).unionByName(new_types).unionByName(lifted)
    reflexive_p = typed.filter(F.col("o") == PROPERTY).select(
        "s", F.lit(SUBPROPERTY).alias("p"), F.col("s").alias("o")
    )
    classes = typed.filter(F.col("o") == CLASS)
    reflexive_c = classes.select("s", F.lit(SUBCLASS).alias("p"), F.col("s").alias("o"))
    to_resource = classes.select("s", F.lit(SUBCLASS).alias("p"), F.lit(RESOURCE).alias("o"))
    return (
        new_types.unionByName(lifted)
        .unionByName(reflexive_p)
        .unionByName(reflexive_c)
        .unionByName(to_resource)
    )


def materialise_rdfs(triples: DataFrame, *, trivial: bool = False) -> DataFrame:
    """The triples RDFS entails from a triple table that it does not already contain.

    Args:
        triples: a triple table (``s``, ``p``, ``o`` in N-Triples syntax), schema and
            instance data together.
        trivial: also produce the trivial triples (see the module docstring).
    Returns:
        a distinct triple table of inferred triples only.

    >>> materialise_rdfs(triples_frame(spark, [("<x>", TYPE, "<A>"),
    ...                                        ("<A>", SUBCLASS, "<B>")])).collect()
    ... # doctest: +SKIP
    [Row(s='<x>', p='<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>', o='<B>')]
    """
    from pyspark.sql import functions as F

    everything = triples.select("s", "p", "o")
    schema_filter = F.col("p").isin(*SCHEMA_PREDICATES) | (
        (F.col("p") == TYPE) & F.col("o").isin(*SCHEMA_TYPES)
    )
    schema = {(r.s, r.p, r.o) for r in everything.filter(schema_filter).collect()}
    while True:
        closed = close_schema(schema, trivial)
        base = everything.filter(_relevant(closed, trivial)).distinct().localCheckpoint()
        total = base
        while True:
            derived = _one_pass(total, base, closed, trivial).distinct().localCheckpoint()
            # Schema derived from instance data that changes the closure (not merely trivial
            # reflexive triples) means the tables were incomplete: close again and redo.
            found = {(r.s, r.p, r.o) for r in derived.filter(schema_filter).collect()}
            grown = {t for t in found - closed if not _only_trivial(t)}
            if grown:
                break
            if not _is_exotic(closed):
                return derived.subtract(base)
            fresh = derived.subtract(total)
            if fresh.isEmpty():
                return derived.subtract(base)
            total = total.unionByName(fresh).localCheckpoint()
        schema |= grown


def _relevant(closed: set[Triple], trivial: bool) -> Column:
    """The triples a pass can read or derive again: the rest cannot matter.

    A pass reads triples of the properties the tables name and type triples of their
    classes; what it derives has those properties, their super-properties, ``rdf:type`` with
    those classes, or is schema. With the trivial triples or a schema about the vocabulary
    every triple matters. (In the benchmark, 11 of 26 million triples are relevant.)
    """
    from pyspark.sql import functions as F

    if trivial or _is_exotic(closed):
        return F.lit(True)
    tables = _tables(closed)
    read = ("super_property", "subject_type", "object_type")
    properties = {k for name in read for k, _ in tables[name]} | SCHEMA_PREDICATES
    properties |= {v for _, v in tables["super_property"]}
    classes = {c for name in ("subject_type", "object_type") for _, c in tables[name]}
    classes |= {c for row in tables["super_class"] for c in row} | SCHEMA_TYPES
    classes |= {o for _, p, o in closed if p == TYPE}
    return F.col("p").isin(*properties) | ((F.col("p") == TYPE) & F.col("o").isin(*classes))


def _only_trivial(t: Triple) -> bool:
    """Schema triples whose consequences the one pass already produces."""
    s, p, o = t
    if p == TYPE:
        return o in (CLASS, PROPERTY)
    return s == o or (p == SUBCLASS and o == RESOURCE)
