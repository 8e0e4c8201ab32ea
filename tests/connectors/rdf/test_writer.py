"""Detections written as RDF named graphs parse back with rdflib and carry their intervals."""

import io
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from rdflib import Dataset, Literal, Namespace, URIRef
from rdflib.namespace import RDF, XSD

from connectors.events.times import TimeStyle
from connectors.rdf.writer import RdfWriter
from reasoner.rdf.detections import detection_iri, event_iri
from reasoner.runtime.events import Detection, Event
from reasoner.values import IRI

TIME = Namespace("http://www.w3.org/2006/time#")
R = Namespace("urn:reasoner:vocab#")
DETECTIONS = [
    Event("blizzard", ("KSLC", IRI("http://ex.org/KSLC"), 41.5), 1610344800, 1610355600),
    Event("calm", (), 1610344800, 1610344800),
]

# rdflib's TriG and N-Quads parsers warn about their own deprecated internals.
pytestmark = pytest.mark.filterwarnings(r"ignore::DeprecationWarning:rdflib\..*")


def _parsed(syntax: str, iso: bool) -> Dataset:
    out = io.StringIO()
    assert RdfWriter(out, syntax, TimeStyle(iso=iso)).write_all(DETECTIONS) == 2
    dataset = Dataset()
    dataset.parse(data=out.getvalue(), format=syntax)
    return dataset


def _instant(graph, detection: URIRef, role: URIRef):  # type: ignore[no-untyped-def]
    interval = graph.value(detection, TIME.hasTime)
    return graph.value(interval, role)


@pytest.mark.parametrize("syntax", ["trig", "nquads"])
def test_each_detection_is_a_named_graph_with_name_arguments_and_interval(syntax: str) -> None:
    dataset = _parsed(syntax, iso=True)
    names = {URIRef(detection_iri(e)) for e in DETECTIONS}
    assert {g.identifier for g in dataset.graphs() if len(g)} == names
    graph = dataset.graph(URIRef(detection_iri(DETECTIONS[0])))
    d = URIRef(detection_iri(DETECTIONS[0]))
    assert graph.value(d, RDF.type) == R.Detection
    assert graph.value(d, R.event) == Literal("blizzard")
    assert graph.value(d, R.arity).toPython() == 3
    assert graph.value(d, RDF._1) == Literal("KSLC")
    assert graph.value(d, RDF._2) == URIRef("http://ex.org/KSLC")
    assert graph.value(d, RDF._3).toPython() == 41.5
    start = _instant(graph, d, TIME.hasBeginning)
    end = _instant(graph, d, TIME.hasEnd)
    assert graph.value(start, RDF.type) == TIME.Instant
    stamp = graph.value(start, TIME.inXSDDateTimeStamp)
    assert stamp.datatype == XSD.dateTime
    assert stamp.toPython() == datetime(2021, 1, 11, 6, tzinfo=UTC)
    assert graph.value(end, TIME.inXSDDateTimeStamp).toPython() == datetime(
        2021, 1, 11, 9, tzinfo=UTC
    )
    position = graph.value(end, TIME.inTimePosition)
    assert graph.value(position, TIME.numericPosition).toPython() == Decimal(1610355600)


def test_numeric_input_times_give_numeric_instants_only() -> None:
    dataset = _parsed("trig", iso=False)
    d = URIRef(detection_iri(DETECTIONS[1]))
    graph = dataset.graph(d)
    start = _instant(graph, d, TIME.hasBeginning)
    assert graph.value(start, TIME.inXSDDateTimeStamp) is None
    position = graph.value(start, TIME.inTimePosition)
    assert graph.value(position, TIME.numericPosition).toPython() == Decimal(1610344800)


def test_an_unknown_syntax_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown RDF syntax 'turtle'"):
        RdfWriter(io.StringIO(), "turtle")


PROV = Namespace("http://www.w3.org/ns/prov#")
SMOKE = Event("smoke", ("room1", IRI("http://ex.org/sensor/7"), 2.5), 1610344800, 1610344800)
HEAT = Event("heat", ("room1",), 1610348400, 1610348400)


def _with_sources(event: Event, *sources: Event) -> Detection:
    detection = Detection(*event)
    detection.sources = sources
    return detection


def _described(graph, node: URIRef) -> Event:  # type: ignore[no-untyped-def]
    """The event a resource describes, read back from its triples."""
    arity = graph.value(node, R.arity).toPython()
    values = [graph.value(node, RDF[f"_{i}"]) for i in range(1, arity + 1)]
    args = tuple(IRI(str(v)) if isinstance(v, URIRef) else v.toPython() for v in values)
    start, end = (
        graph.value(_instant(graph, node, role), TIME.inTimePosition)
        for role in (TIME.hasBeginning, TIME.hasEnd)
    )
    return Event(
        str(graph.value(node, R.event)),
        args,
        int(graph.value(start, TIME.numericPosition).toPython()),
        int(graph.value(end, TIME.numericPosition).toPython()),
    )


@pytest.mark.parametrize("syntax", ["trig", "nquads"])
def test_a_detection_is_derived_from_its_input_events_described_as_input_events(
    syntax: str,
) -> None:
    fire = _with_sources(Event("fire", ("room1",), 1610344800, 1610348400), SMOKE, HEAT)
    out = io.StringIO()
    RdfWriter(out, syntax, TimeStyle(iso=True)).write(fire)
    dataset = Dataset()
    dataset.parse(data=out.getvalue(), format=syntax)
    d = URIRef(detection_iri(fire))
    graph = dataset.graph(d)
    assert graph.value(d, RDF.type) == R.Detection
    sources = set(graph.objects(d, PROV.wasDerivedFrom))
    assert sources == {URIRef(event_iri(SMOKE)), URIRef(event_iri(HEAT))}
    assert all(str(s).startswith("urn:reasoner:event:") for s in sources)
    assert {_described(graph, s) for s in sources} == {SMOKE, HEAT}
    for source in sources:
        assert graph.value(source, RDF.type) == R.InputEvent
        assert (source, RDF.type, R.Detection) not in graph
        stamp = graph.value(_instant(graph, source, TIME.hasBeginning), TIME.inXSDDateTimeStamp)
        assert stamp.datatype == XSD.dateTime
    smoke = graph.value(URIRef(event_iri(SMOKE)), TIME.hasTime)
    assert graph.value(graph.value(smoke, TIME.hasEnd), TIME.inXSDDateTimeStamp).toPython() == (
        datetime(2021, 1, 11, 6, tzinfo=UTC)
    )


def test_a_detection_without_sources_has_no_provenance() -> None:
    out = io.StringIO()
    RdfWriter(out, "trig").write_all([DETECTIONS[1], _with_sources(DETECTIONS[1])])
    assert "wasDerivedFrom" not in out.getvalue() and "InputEvent" not in out.getvalue()
    first, second = out.getvalue().split("}\n")[:2]
    assert first == second


def test_input_event_iris_are_deterministic_and_apart_from_detection_iris() -> None:
    assert event_iri(SMOKE) == event_iri(Event(*SMOKE))
    assert event_iri(SMOKE) != event_iri(HEAT)
    assert event_iri(SMOKE).removeprefix("urn:reasoner:event:") == detection_iri(
        SMOKE
    ).removeprefix("urn:reasoner:detection:")
