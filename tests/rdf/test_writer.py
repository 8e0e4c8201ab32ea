"""Detections written as RDF named graphs parse back with rdflib and carry their intervals."""

import io
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from rdflib import Dataset, Literal, Namespace, URIRef
from rdflib.namespace import RDF, XSD

from connectors.events.times import TimeStyle
from connectors.rdf.writer import RdfWriter
from reasoner.rdf.detections import detection_iri
from reasoner.runtime.events import Event
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
