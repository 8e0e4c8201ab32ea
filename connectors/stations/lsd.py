"""Station descriptions in RDF, in the style of the Linked Sensor Data weather-station files.

Each station is an ``om-owl:System`` with an ``om-owl:ID`` literal and an
``om-owl:processLocation`` pointing to a ``wgs84:Point`` with ``wgs84:lat``, ``wgs84:long`` and
optionally ``wgs84:alt`` (metres). ``om-owl:hasLocatedNearRel`` links to ``LocatedNearRel``
nodes with ``om-owl:hasLocation`` (a GeoNames feature), ``om-owl:distance`` and ``om-owl:uom``
(miles in the original data; converted to km here). Any syntax rdflib reads is accepted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from rdflib import Graph, Literal, URIRef
from rdflib.term import Node
from rdflib.util import guess_format

from connectors.stations.table import Station, check_station_id, check_unique
from connectors.stations.vocab import OM_OWL, RDF_TYPE, RDFS_LABEL, WEATHER
from reasoner.errors import KnowledgeError
from reasoner.vocab import WGS84

_MILE_KM = 1.609344


@dataclass(frozen=True, slots=True)
class NearLink:
    """A GeoNames feature stated to be near a station, with the distance in km."""

    station_id: str
    feature_iri: str
    distance_km: float | None


@dataclass(frozen=True, slots=True)
class StationDescriptions:
    """What a Linked-Sensor-Data file says: the stations and their located-near links."""

    stations: tuple[Station, ...]
    near: tuple[NearLink, ...]


def _number(graph: Graph, node: Node | None, prop: str, where: str) -> float | None:
    if node is None:
        return None
    value = graph.value(node, URIRef(prop))
    if value is None:
        return None
    try:
        return float(str(value))
    except ValueError:
        raise KnowledgeError(f"{where}: {prop} of {node} is not a number: {value!r}") from None


def read_station_rdf(path: str | os.PathLike[str]) -> StationDescriptions:
    """Read Linked-Sensor-Data station descriptions.

    Args:
        path: an RDF file (N-Triples, RDF/XML, Turtle ... by extension).
    Returns:
        the stations (name = ``rdfs:label`` or the id, state empty) and near links.
    Raises:
        KnowledgeError: for unreadable RDF, or a station without id or coordinates.

    >>> read_station_rdf("tests/connectors/stations/KSFO.rdf").stations[0].id  # doctest: +SKIP
    'KSFO'
    """
    file = Path(path)
    graph = Graph()
    try:
        graph.parse(file, format=guess_format(str(file)) or "xml")
    except Exception as e:  # rdflib raises parser-specific classes with no common base
        raise KnowledgeError(f"{file}: cannot read station RDF: {e}") from e
    stations: list[Station] = []
    near: list[NearLink] = []
    for system in sorted(graph.subjects(URIRef(RDF_TYPE), URIRef(OM_OWL + "System")), key=str):
        where = f"{file}: station {system}"
        ident = graph.value(system, URIRef(OM_OWL + "ID"))
        if not isinstance(ident, Literal):
            raise KnowledgeError(f"{where} has no om-owl:ID")
        station_id = check_station_id(str(ident), where)
        point = graph.value(system, URIRef(OM_OWL + "processLocation"))
        lat = _number(graph, point, WGS84 + "lat", where)
        lon = _number(graph, point, WGS84 + "long", where)
        if point is None or lat is None or lon is None:
            raise KnowledgeError(f"{where} has no processLocation with wgs84:lat and wgs84:long")
        label = graph.value(system, URIRef(RDFS_LABEL))
        stations.append(
            Station(
                id=station_id,
                name=str(label) if label is not None else station_id,
                lat=lat,
                lon=lon,
                elevation=_number(graph, point, WGS84 + "alt", where),
                state="",
            )
        )
        for rel in sorted(graph.objects(system, URIRef(OM_OWL + "hasLocatedNearRel")), key=str):
            distance = _number(graph, rel, OM_OWL + "distance", where)
            unit = graph.value(rel, URIRef(OM_OWL + "uom"))
            if distance is not None and unit == URIRef(WEATHER + "miles"):
                distance *= _MILE_KM
            for feature in sorted(graph.objects(rel, URIRef(OM_OWL + "hasLocation")), key=str):
                near.append(NearLink(station_id, str(feature), distance))
    check_unique(stations, str(file))
    return StationDescriptions(tuple(stations), tuple(near))
