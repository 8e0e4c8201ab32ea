"""A detection as RDF: name, arguments and OWL-Time interval, loaded into the store."""

from dataclasses import dataclass
from fractions import Fraction

import pytest

from reasoner.errors import KnowledgeError
from reasoner.knowledge.store import Store
from reasoner.rdf.detections import (
    DETECTIONS_GRAPH,
    INPUT_EVENT_CLASS,
    detection_iri,
    detection_triples,
    detections_ntriples,
    event_iri,
    event_triples,
)
from reasoner.values import IRI, Struct, Time, Value


@dataclass(frozen=True)
class Event:
    name: str
    args: tuple[Value, ...]
    start: Time
    end: Time


QUERY = """
PREFIX r: <urn:reasoner:vocab#>
PREFIX time: <http://www.w3.org/2006/time#>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
SELECT ?name ?arity ?a1 ?a2 ?begin ?end ?stamp WHERE { GRAPH <urn:reasoner:graph:detections> {
  ?d a r:Detection ; r:event ?name ; r:arity ?arity ; time:hasTime ?i .
  OPTIONAL { ?d rdf:_1 ?a1 } OPTIONAL { ?d rdf:_2 ?a2 }
  ?i a time:Interval ; time:hasBeginning ?b ; time:hasEnd ?e .
  ?b time:inTimePosition/time:numericPosition ?begin ; time:inXSDDateTimeStamp ?stamp .
  ?e time:inTimePosition/time:numericPosition ?end .
} } ORDER BY ?name
"""


def _loaded(*events: Event) -> Store:
    store = Store()
    store.load_text(detections_ntriples(events), "ntriples", graph=DETECTIONS_GRAPH)
    return store


def test_detection_has_name_arguments_and_owl_time_interval() -> None:
    store = _loaded(
        Event("blizzard", ("KSLC", IRI("http://ex.org/KSLC")), 1_700_000_000, Fraction(3401, 2)),
        Event("calm", (), 0.5, 2),
    )
    rows = store.query(QUERY).rows
    assert rows == (
        (
            "blizzard",
            2,
            "KSLC",
            IRI("http://ex.org/KSLC"),
            1_700_000_000.0,
            1700.5,
            "2023-11-14T22:13:20Z",
        ),
        ("calm", 0, None, None, 0.5, 2.0, "1970-01-01T00:00:00.5Z"),
    )


def test_publishing_twice_adds_nothing() -> None:
    event = Event("alarm", (1, 2.5, True), 10, 20)
    once = _loaded(event)
    twice = _loaded(event, event)
    assert len(once) == len(twice) == 22  # 5 + 3 arguments + 2 instants x 7


def test_compound_arguments_keep_their_rule_text() -> None:
    store = _loaded(Event("e", (Struct("pos", (1, "a b")), (1, 2)), 0, 0))
    rows = store.query(
        "SELECT ?a ?b ?t WHERE { ?d <http://www.w3.org/1999/02/22-rdf-syntax-ns#_1> ?a ; "
        "<http://www.w3.org/1999/02/22-rdf-syntax-ns#_2> ?b . BIND(DATATYPE(?a) AS ?t) }"
    ).rows
    assert rows == (("pos(1, 'a b')", "[1, 2]", IRI("urn:reasoner:vocab#term")),)


def test_strings_are_escaped() -> None:
    store = _loaded(Event('say "hi"\n', ("back\\slash",), 0, 0))
    assert store.query("SELECT ?n { ?d <urn:reasoner:vocab#event> ?n }").rows == (('say "hi"\n',),)


def test_an_iri_ntriples_cannot_write_is_refused() -> None:
    with pytest.raises(KnowledgeError, match="not a valid IRI"):
        detections_ntriples([Event("e", (IRI("has space"),), 0, 0)])


def test_numeric_times_carry_no_date() -> None:
    store = Store()
    text = detections_ntriples([Event("tick", (), 17, 20)], dates=False)
    store.load_text(text, "ntriples", graph=DETECTIONS_GRAPH)
    assert len(store) == 17  # 5 + 2 instants x 6: no time:inXSDDateTimeStamp
    assert "inXSDDateTimeStamp" not in text


def test_blank_node_values_are_written_as_blank_nodes() -> None:
    store = _loaded(Event("e", (IRI("_:b0"),), 0, 0))
    rows = store.query("SELECT ?a { ?d <http://www.w3.org/1999/02/22-rdf-syntax-ns#_1> ?a }").rows
    assert len(rows) == 1 and isinstance(rows[0][0], IRI) and rows[0][0].value.startswith("_:")


@dataclass(frozen=True)
class Derived(Event):
    sources: tuple[Event, ...] = ()


INPUTS = """
PREFIX r: <urn:reasoner:vocab#>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX time: <http://www.w3.org/2006/time#>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
SELECT ?detection ?e ?name ?a1 ?at WHERE { GRAPH <urn:reasoner:graph:detections> {
  ?d a r:Detection ; r:event ?detection ; prov:wasDerivedFrom ?e .
  ?e a r:InputEvent ; r:event ?name ; r:arity 1 ; rdf:_1 ?a1 ;
     time:hasTime/time:hasBeginning/time:inTimePosition/time:numericPosition ?at .
} } ORDER BY ?detection ?at
"""


def test_published_detections_link_to_their_input_events_one_resource_each() -> None:
    a, b, c = Event("a", ("x",), 1, 1), Event("b", ("y",), 2, 2), Event("c", ("z",), 3, 3)
    store = _loaded(Derived("d1", (), 1, 2, (a, b)), Derived("d2", (), 1, 3, (a, c)))
    rows = store.query(INPUTS).rows
    a_iri, b_iri, c_iri = (IRI(event_iri(e)) for e in (a, b, c))
    assert rows == (
        ("d1", a_iri, "a", "x", 1.0),
        ("d1", b_iri, "b", "y", 2.0),
        ("d2", a_iri, "a", "x", 1.0),
        ("d2", c_iri, "c", "z", 3.0),
    )
    # 2 detections x 19 (17 + a date per instant), 4 links, 3 input events x 20 (+ 1 argument):
    # the input event behind both detections is one resource
    assert len(store) == 2 * 19 + 4 + 3 * 20


def test_the_description_of_an_event_differs_only_in_class_and_iri() -> None:
    event = Event("a", ("x", 2), 1, 2)
    as_detection = detection_triples(event)
    as_input = event_triples(event, event_iri(event), INPUT_EVENT_CLASS)
    renamed = [t.replace(detection_iri(event), event_iri(event)) for t in as_detection]
    assert renamed == [t.replace("vocab#InputEvent", "vocab#Detection") for t in as_input]
