import random
from pathlib import Path

import pytest

from reasoner.errors import KnowledgeError
from reasoner.knowledge.entailment import (
    RESOURCE,
    SUBCLASS,
    TYPE,
    entail,
    is_trivial,
    materialize,
    owlrl_closure,
)
from reasoner.knowledge.store import INFERRED_GRAPH, Store, Triple
from reasoner.values import IRI

FIXTURES = Path(__file__).parent.parent / "fixtures" / "knowledge"
ONTOLOGIES = Path(__file__).parent.parent.parent / "ontologies"
EX = "http://e/"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"


def _asserted(*paths: Path) -> set[Triple]:
    store = Store()
    store.load(paths)
    return set(store.triples(graph=None))


def _reference(facts: set[Triple], regime: str) -> set[Triple]:
    return owlrl_closure(facts, regime) - facts


@pytest.mark.parametrize("regime", ["rdfs", "owl-rl"])
@pytest.mark.parametrize("name", ["covered", "weather"])
def test_fast_path_equals_owlrl(regime: str, name: str) -> None:
    paths = (
        [FIXTURES / "entailment_covered.ttl"]
        if name == "covered"
        else [ONTOLOGIES / "weather.ttl", ONTOLOGIES / "examples"]
    )
    facts = _asserted(*paths)
    closure = entail(facts, regime)
    assert closure.method == "fast"
    assert closure.inferred == _reference(facts, regime)
    assert closure.inferred  # the comparison is not vacuous


def test_owl_rl_rules_fire() -> None:
    inferred = entail(_asserted(FIXTURES / "entailment_covered.ttl"), "owl-rl").inferred
    e = lambda n: IRI(EX + n)  # noqa: E731
    assert (e("p1"), e("linked"), e("p4")) in inferred  # transitive
    assert (e("b"), e("near"), e("a")) in inferred  # symmetric
    assert (e("wheel"), e("partOf"), e("car")) in inferred  # inverse
    assert (e("wheel"), TYPE, e("Part")) in inferred  # inverse, then domain
    assert (e("g1"), TYPE, e("Weather")) in inferred  # equivalent class
    assert (e("x"), e("near"), e("z")) in inferred  # sameAs replacement
    assert (e("o1"), TYPE, e("Weather")) in inferred  # subclass chain


def _random_ontology(rng: random.Random) -> set[Triple]:
    classes = [IRI(f"{EX}C{i}") for i in range(5)]
    props = [IRI(f"{EX}p{i}") for i in range(4)]
    things = [IRI(f"{EX}x{i}") for i in range(6)]
    schema = [
        IRI(RDFS + "subClassOf"),
        IRI(RDFS + "subPropertyOf"),
        IRI(RDFS + "domain"),
        IRI(RDFS + "range"),
        IRI(OWL + "inverseOf"),
        IRI(OWL + "equivalentClass"),
    ]
    facts: set[Triple] = set()
    for _ in range(rng.randint(2, 8)):
        p = rng.choice(schema)
        if p in (schema[0], schema[5]):
            facts.add((rng.choice(classes), p, rng.choice(classes)))
        elif p in (schema[1], schema[4]):
            facts.add((rng.choice(props), p, rng.choice(props)))
        else:
            facts.add((rng.choice(props), p, rng.choice(classes)))
    for p in rng.sample(props, 2):
        facts.add((p, TYPE, IRI(OWL + rng.choice(["TransitiveProperty", "SymmetricProperty"]))))
    for _ in range(rng.randint(3, 12)):
        if rng.random() < 0.3:
            facts.add((rng.choice(things), TYPE, rng.choice(classes)))
        else:
            facts.add((rng.choice(things), rng.choice(props), rng.choice(things + [7, "txt"])))
    return facts


@pytest.mark.parametrize("seed", range(12))
def test_random_ontologies_equal_owlrl(seed: int) -> None:
    facts = _random_ontology(random.Random(seed))
    for regime in ("rdfs", "owl-rl"):
        closure = entail(facts, regime)
        assert closure.method == "fast"
        assert closure.inferred == _reference(facts, regime), (seed, regime)


def test_uncovered_construct_falls_back_to_owlrl() -> None:
    facts = _asserted(FIXTURES / "entailment_fallback.ttl")
    closure = entail(facts, "owl-rl")
    assert closure.method == "owlrl" and "the data uses" in closure.reason
    assert (IRI(EX + "o1"), TYPE, IRI(EX + "Windy")) in closure.inferred


def test_trivial_triples() -> None:
    a = IRI(EX + "a")
    assert is_trivial((a, TYPE, RESOURCE))
    assert is_trivial((a, SUBCLASS, a))
    assert is_trivial(("lit", TYPE, IRI(EX + "C")))
    assert is_trivial((IRI(OWL + "Thing"), TYPE, IRI(OWL + "Class")))
    assert not is_trivial((a, SUBCLASS, IRI(EX + "b")))


def test_none_and_unknown_regimes() -> None:
    assert entail({(IRI(EX + "a"), SUBCLASS, IRI(EX + "b"))}, "none").inferred == frozenset()
    with pytest.raises(KnowledgeError, match="unknown entailment 'owl'"):
        entail(set(), "owl")


def test_materialize_writes_the_inferred_graph() -> None:
    store = Store()
    store.load(FIXTURES / "entailment_covered.ttl")
    closure = materialize(store, "rdfs")
    assert set(store.triples(graph=INFERRED_GRAPH)) == set(closure.inferred)
    materialize(store, "none")
    assert list(store.triples(graph=INFERRED_GRAPH)) == []
