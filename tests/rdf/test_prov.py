"""A detection's derivation in PROV-O: rule applications, the events and facts they used, and
the inferences behind the facts, down to asserted ones."""

from __future__ import annotations

from pathlib import Path

from reasoner.knowledge.justify import Fact
from reasoner.knowledge.store import Store
from reasoner.knowledge.versions import KnowledgeBase
from reasoner.language.parser import parse
from reasoner.rdf.detections import detection_iri, detections_ntriples, event_iri
from reasoner.rdf.prov import fact_iri
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.values import IRI
from reasoner.vocab import PROV, RDF, RDFS

EX = "http://ex.org/"
R = "urn:reasoner:vocab#"
RULES = (
    f":- prefix(ex, '{EX}').\n"
    "near(a, b).\n"
    "warn(X, Y) <- alarm(X) WHERE near(Y, b), rdf(X, ex:sort, ex:Station).\n"
    "twice(X) <- warn(X, _) SEQ alarm(X).\n"
)


def _store(tmp_path: Path) -> tuple[Store, Event]:
    kb_file = tmp_path / "kb.nt"
    kb_file.write_text(
        f"<{EX}kind> <{RDFS}subPropertyOf> <{EX}sort> .\n<{EX}a> <{EX}kind> <{EX}Station> .\n"
    )
    program = parse(RULES)
    engine = Engine(
        program, knowledge=KnowledgeBase([kb_file], program=program).current(), explain=True
    )
    a = IRI(EX + "a")
    engine.push(Event.at("alarm", (a,), 1))
    [twice] = [d for d in engine.push(Event.at("alarm", (a,), 2)) if d.name == "twice"]
    store = Store()
    store.load_text(detections_ntriples([twice], dates=False), "ntriples")
    return store, twice


def _select(store: Store, variables: str, where: str) -> set[tuple]:
    prefixes = f"PREFIX prov: <{PROV}> PREFIX r: <{R}> PREFIX rdf: <{RDF}> "
    return set(store.query(f"{prefixes} SELECT {variables} WHERE {{ {where} }}").rows)


def test_each_rule_application_is_an_activity_using_events_and_facts(tmp_path: Path) -> None:
    store, twice = _store(tmp_path)
    warn = Event("warn", (IRI(EX + "a"), "a"), 1, 1)  # near(Y, b) binds Y to a
    first, second = (Event.at("alarm", (IRI(EX + "a"),), t) for t in (1, 2))
    rows = _select(
        store,
        "?d ?rule ?head ?u",
        "?d prov:wasGeneratedBy ?a . ?a a prov:Activity ; r:rule ?rule ; r:head ?head ; "
        "prov:used ?u",
    )
    near = fact_iri(Fact("near", ("a", "b"), "asserted"))
    station = fact_iri(Fact(EX + "sort", (IRI(EX + "a"), IRI(EX + "Station")), "inferred"))
    assert {(row[0].value, row[1], row[2], row[3].value) for row in rows} == {
        (detection_iri(twice), "<rules>:4:1", "twice(X)", detection_iri(warn)),
        (detection_iri(twice), "<rules>:4:1", "twice(X)", event_iri(second)),
        (detection_iri(warn), "<rules>:3:1", "warn(X, Y)", event_iri(first)),
        (detection_iri(warn), "<rules>:3:1", "warn(X, Y)", near),
        (detection_iri(warn), "<rules>:3:1", "warn(X, Y)", station),
    }
    # the warning is described as a detection, the first alarm as an input event
    assert _select(store, "?c", f"<{detection_iri(warn)}> a ?c") == {(IRI(R + "Detection"),)}
    assert _select(store, "?c", f"<{event_iri(first)}> a ?c") == {(IRI(R + "InputEvent"),)}


def test_facts_name_their_graph_and_inferences_down_to_asserted_ones(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    facts = _select(
        store,
        "?f ?g ?name ?s ?p ?o ?at ?rule",
        "?f a r:Fact ; r:graph ?g . OPTIONAL { ?f r:predicate ?name } "
        "OPTIONAL { ?f rdf:subject ?s ; rdf:predicate ?p ; rdf:object ?o } "
        "OPTIONAL { ?f r:writtenAt ?at } "
        "OPTIONAL { ?f prov:wasGeneratedBy ?i . ?i r:rule ?rule }",
    )
    a, kind, sort, station = (IRI(EX + n) for n in ("a", "kind", "sort", "Station"))
    sub = IRI(RDFS + "subPropertyOf")
    got = {tuple(v for v in row[1:]) for row in facts}
    assert got == {
        ("asserted", "near", None, None, None, "<rules>:2", None),
        ("inferred", None, a, sort, station, None, "rdfs7"),
        ("asserted", None, a, kind, station, None, None),
        ("asserted", None, kind, sub, sort, None, None),
    }
    premises = _select(
        store,
        "?f ?p ?u ?q",
        "?f rdf:predicate ?p ; prov:wasGeneratedBy ?i . ?i prov:used ?u . ?u rdf:predicate ?q",
    )
    assert {(row[1], row[3]) for row in premises} == {(sort, kind), (sort, sub)}


def test_the_endpoint_publishes_the_derivation_in_its_detections_graph(tmp_path: Path) -> None:
    from reasoner.rdf.detections import DETECTIONS_GRAPH
    from reasoner.server import EndpointConfig, SparqlServer

    _, twice = _store(tmp_path)
    store = Store()
    SparqlServer(store, EndpointConfig(port=0)).publish_detections([twice], dates=False)
    rows = _select(
        store,
        "?rule",
        f"GRAPH <{DETECTIONS_GRAPH}> {{ <{detection_iri(twice)}> prov:wasGeneratedBy ?a . "
        "?a prov:used ?w . ?w prov:wasGeneratedBy ?b . ?b prov:used ?f . "
        "?f prov:wasGeneratedBy ?i . ?i r:rule ?rule }",
    )
    assert rows == {("rdfs7",)}
