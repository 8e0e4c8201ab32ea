"""MesoWest readings as a SOSA/SSN observation stream: one named graph per reading.

A ``sensor_reading(Station, Time, Temp, Humidity, Wind, Gust, Visibility, Condition, Precip)``
at time t becomes the graph ``<.../mesowest/KSLC/2021-01-11T06:00:00Z>`` holding the station's id
and one ``sosa:Observation`` per value that is not ``none``, in canonical units (°F, %, mph,
mph, statute miles, the condition as given, inches)::

    <g> { <station> wt:stationId "KSLC" .
          <g/wind_speed> a sosa:Observation ; wt:madeAtStation <station> ;
              sosa:observedProperty wt:WindSpeed ; sosa:hasSimpleResult 40.7 ;
              sosa:resultTime "2021-01-11T06:00:00Z"^^xsd:dateTime .  ... }
    <g> prov:generatedAtTime "2021-01-11T06:00:00Z"^^xsd:dateTime .

``wt:`` is the project's weather ontology (``ontologies/weather.ttl``) and ``<station>`` the
station IRI of the knowledge built from station tables (``System_KSLC``). The stream carries
its time twice, so it can be read with the default time property or with
``sosa:resultTime``; ``rules/mesowest_sosa.event`` maps it back to the same readings.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

from connectors.events.times import epoch_to_iso
from connectors.mesowest.reader import NONE, SENSOR_READING
from connectors.rdf.reader import GENERATED_AT_TIME
from connectors.rdf.writer import named_graph
from connectors.stations.vocab import RDF_TYPE, station_iri
from reasoner.rdf.ntriples import iri, string, term
from reasoner.runtime.events import Event
from reasoner.vocab import SOSA, XSD

#: The project's weather ontology.
WT = "http://etalis.example.org/ontology/weather#"
#: Where the graphs of converted readings are named.
GRAPHS = "https://w3id.org/etalis-reasoner/mesowest/"
#: The observed property of each argument after station and time, with its name in graph IRIs.
OBSERVED = (
    ("air_temp", WT + "AirTemperature"),
    ("relative_humidity", WT + "RelativeHumidity"),
    ("wind_speed", WT + "WindSpeed"),
    ("wind_gust", WT + "WindGust"),
    ("visibility", WT + "Visibility"),
    ("weather_condition", WT + "WeatherCondition"),
    ("precip_accum_one_hour", WT + "Precipitation"),
)


def reading_graph(reading: Event, syntax: str = "trig") -> str:
    """One reading as its named graph plus the graph's time stamp, in TriG or N-Quads.

    Args:
        reading: a ``sensor_reading`` event (9 arguments, as the MesoWest reader gives).
        syntax: ``"trig"`` or ``"nquads"``.
    Returns:
        the text, ending with a newline.
    Raises:
        ValueError: for another event.

    >>> text = reading_graph(Event.at("sensor_reading",
    ...     ("KSLC", 1610344800, 13.8, 96.0, 40.7, "none", 0.09, "heavy snow", 0.09), 1610344800))
    >>> text.count("sosa/Observation>")
    6
    """
    if reading.name != SENSOR_READING or len(reading.args) != 2 + len(OBSERVED):
        raise ValueError(f"not a sensor_reading of {2 + len(OBSERVED)} arguments: {reading}")
    station, _, *values = reading.args  # the Time argument is the graph's time
    stamp = epoch_to_iso(reading.start)
    graph = f"{GRAPHS}{station}/{stamp}"
    place = iri(station_iri(str(station)))
    when = f'"{stamp}"^^<{XSD}dateTime>'
    triples = [f"{place} <{WT}stationId> {string(str(station))}"]
    for (slug, observed), value in zip(OBSERVED, values, strict=True):
        if value == NONE:
            continue
        obs = iri(f"{graph}/{slug}")
        triples += [
            f"{obs} <{RDF_TYPE}> <{SOSA}Observation>",
            f"{obs} <{WT}madeAtStation> {place}",
            f"{obs} <{SOSA}observedProperty> <{observed}>",
            f"{obs} <{SOSA}hasSimpleResult> {term(value)}",
            f"{obs} <{SOSA}resultTime> {when}",
        ]
    name = iri(graph)
    return named_graph(name, triples, syntax) + f"{name} <{GENERATED_AT_TIME}> {when} .\n"


def write_sosa(out: TextIO, readings: Iterable[Event], syntax: str = "trig") -> int:
    """Write readings, in the order given, as a SOSA observation stream.

    Args:
        out: an open text stream.
        readings: ``sensor_reading`` events ordered by time (``read_mesowest`` gives them so).
        syntax: ``"trig"`` or ``"nquads"``.
    Returns:
        the number of graphs written.

    >>> import io
    >>> write_sosa(io.StringIO(), [Event.at("sensor_reading", ("KSLC", 0) + ("none",) * 7, 0)])
    1
    """
    count = 0
    for reading in readings:
        out.write(reading_graph(reading, syntax))
        count += 1
    return count
