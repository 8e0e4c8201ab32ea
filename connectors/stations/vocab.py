"""The RDF vocabulary of the knowledge built from stations and GeoNames.

Stations are described as in the Linked Sensor Data set seed 004 uses (``om-owl:System`` with
``om-owl:ID``, ``om-owl:processLocation`` to a ``wgs84:Point``, ``om-owl:LocatedNearRel`` with
``om-owl:distance`` and ``om-owl:hasLocation``) and typed ``sosa:Platform`` as well, so rules
written against either vocabulary find them. Station IRIs follow the Linked Sensor Data
pattern ``http://knoesis.wright.edu/ssw/System_<ID>``, so descriptions read from its RDF files
and from CSV tables name the same station. GeoNames features keep their standard IRIs and use
the GeoNames ontology. Terms the standard vocabularies lack (``nearStation``, ``locatedNear``,
``neighbourhood``, ``state``) live in the project namespace :data:`reasoner.vocab.ER`.
"""

from __future__ import annotations

from reasoner.vocab import RDF, RDFS

GN = "http://www.geonames.org/ontology#"
OM_OWL = "http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#"
WEATHER = "http://knoesis.wright.edu/ssw/ont/weather.owl#"
SSW = "http://knoesis.wright.edu/ssw/"
UNIT = "http://qudt.org/vocab/unit/"

RDF_TYPE = RDF + "type"
RDFS_LABEL = RDFS + "label"


def station_iri(station_id: str) -> str:
    """The IRI of a station (the Linked Sensor Data pattern).

    Args:
        station_id: e.g. ``"KSLC"``.
    Returns:
        ``http://knoesis.wright.edu/ssw/System_<id>``.

    >>> station_iri("KSLC")
    'http://knoesis.wright.edu/ssw/System_KSLC'
    """
    return f"{SSW}System_{station_id}"


def point_iri(station_id: str) -> str:
    """The IRI of a station's location point.

    Args:
        station_id: e.g. ``"KSLC"``.
    Returns:
        ``http://knoesis.wright.edu/ssw/point_<id>``.

    >>> point_iri("KSLC")
    'http://knoesis.wright.edu/ssw/point_KSLC'
    """
    return f"{SSW}point_{station_id}"
