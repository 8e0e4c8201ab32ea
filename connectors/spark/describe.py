"""Job 1: stations and GeoNames features to RDF triples.

Each source row becomes a fixed set of triples in one pass (an exploded array of
``(p, o)`` structs; optional values give null objects, which are dropped).

A station ``KSLC`` becomes ::

    ssw:System_KSLC a sosa:Platform, om-owl:System ; om-owl:ID "KSLC" ; rdfs:label "..." ;
        er:state "UT" ; om-owl:processLocation ssw:point_KSLC ;
        wgs84:lat ..., wgs84:long ..., wgs84:alt ... .
    ssw:point_KSLC a wgs84:Point ; wgs84:lat ... ; wgs84:long ... ; wgs84:alt ... .

(coordinates on the station as well as on its point, so a rule reads them with one lookup).
A GeoNames feature becomes ``<https://sws.geonames.org/ID/> a gn:Feature`` with ``gn:name``,
``gn:featureClass`` / ``gn:featureCode`` (the ontology's code individuals such as
``gn:S.SCH``), ``gn:countryCode``, ``gn:population`` (when > 0), ``wgs84:lat``/``long``/``alt``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from connectors.geonames.dump import GEONAMES_IRI_PREFIX
from connectors.spark.terms import const, iri, iri_col, literal_col
from connectors.stations.vocab import GN, OM_OWL, RDF_TYPE, RDFS_LABEL, SSW
from reasoner.vocab import ER, SOSA, WGS84, XSD

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame


def _explode(frame: DataFrame, subject: Column, pairs: list[tuple[str, Column]]) -> DataFrame:
    from pyspark.sql import functions as F

    structs = [F.struct(F.lit(iri(p)).alias("p"), o.alias("o")) for p, o in pairs]
    return (
        frame.select(subject.alias("s"), F.explode(F.array(*structs)).alias("t"))
        .select("s", "t.p", "t.o")
        .filter(F.col("o").isNotNull())
    )


def station_triples(stations: DataFrame) -> DataFrame:
    """Describe stations in RDF.

    Args:
        stations: columns ``id, name, lat, lon, elevation, state`` (see ``readers``).
    Returns:
        a triple table (``s``, ``p``, ``o``); 11 to 15 triples per station.

    >>> station_triples(stations_frame(spark, stations)).count()  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    double = XSD + "double"
    station = iri_col(SSW + "System_", F.col("id"))
    point = iri_col(SSW + "point_", F.col("id"))
    lat = literal_col(F.col("lat"), double)
    lon = literal_col(F.col("lon"), double)
    alt = literal_col(F.col("elevation"), double)
    about_station = _explode(
        stations,
        station,
        [
            (RDF_TYPE, const(iri(SOSA + "Platform"))),
            (RDF_TYPE, const(iri(OM_OWL + "System"))),
            (OM_OWL + "ID", literal_col(F.col("id"))),
            (RDFS_LABEL, literal_col(F.nullif(F.col("name"), F.lit("")))),
            (ER + "state", literal_col(F.nullif(F.col("state"), F.lit("")))),
            (OM_OWL + "processLocation", point),
            (WGS84 + "lat", lat),
            (WGS84 + "long", lon),
            (WGS84 + "alt", alt),
        ],
    )
    about_point = _explode(
        stations,
        point,
        [
            (RDF_TYPE, const(iri(WGS84 + "Point"))),
            (WGS84 + "lat", lat),
            (WGS84 + "long", lon),
            (WGS84 + "alt", alt),
        ],
    )
    return about_station.unionByName(about_point)


def feature_triples(features: DataFrame) -> DataFrame:
    """Describe GeoNames features in RDF with the GeoNames ontology.

    Args:
        features: the DataFrame of ``readers.read_geonames``.
    Returns:
        a triple table; 7 to 9 triples per feature.

    >>> feature_triples(read_geonames(spark, ["US.txt"], "/tmp/w")).count()  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    double = XSD + "double"
    feature = iri_col(GEONAMES_IRI_PREFIX, F.col("geonameid"), "/")
    code = F.concat_ws(".", "feature_class", "feature_code")
    return _explode(
        features,
        feature,
        [
            (RDF_TYPE, const(iri(GN + "Feature"))),
            (GN + "name", literal_col(F.col("name"))),
            (GN + "featureClass", iri_col(GN, F.nullif(F.col("feature_class"), F.lit("")))),
            (GN + "featureCode", iri_col(GN, F.nullif(code, F.lit(".")))),
            (GN + "countryCode", literal_col(F.nullif(F.col("country_code"), F.lit("")))),
            (
                GN + "population",
                literal_col(F.when(F.col("population") > 0, F.col("population")), XSD + "integer"),
            ),
            (WGS84 + "lat", literal_col(F.col("latitude"), double)),
            (WGS84 + "long", literal_col(F.col("longitude"), double)),
            (WGS84 + "alt", literal_col(F.col("elevation"), double)),
        ],
    )
