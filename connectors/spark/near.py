"""Job 2: every station linked to the GeoNames features within a radius, with the distance.

The links are written both as one binary triple (``er:locatedNear``, for one-lookup rules)
and in the Linked Sensor Data shape seed 004 shows (a ``om-owl:LocatedNearRel`` node with
``om-owl:hasLocation``, ``om-owl:distance`` and ``om-owl:uom``; distances here in km).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from connectors.geonames.dump import GEONAMES_IRI_PREFIX
from connectors.spark.geo import within
from connectors.spark.terms import const, iri, iri_col, literal_col
from connectors.stations.vocab import OM_OWL, RDF_TYPE, SSW, UNIT
from reasoner.vocab import ER, XSD

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def located_near(stations: DataFrame, features: DataFrame, radius_km: float) -> DataFrame:
    """Pairs of a station and a GeoNames feature at most ``radius_km`` apart.

    Args:
        stations: columns ``id``, ``lat``, ``lon`` (at least).
        features: columns ``geonameid``, ``latitude``, ``longitude`` (at least).
        radius_km: the radius (inclusive).
    Returns:
        columns ``station_id``, ``geonameid``, ``distance_km`` (rounded to the metre).

    >>> located_near(stations, features, 20.0).count()  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    probes = stations.select(
        F.col("id").alias("pid"), F.col("lat").alias("plat"), F.col("lon").alias("plon")
    )
    points = features.select(
        F.col("geonameid").alias("qid"),
        F.col("latitude").alias("qlat"),
        F.col("longitude").alias("qlon"),
    )
    return within(probes, points, radius_km).select(
        F.col("pid").alias("station_id"),
        F.col("qid").alias("geonameid"),
        F.round("distance_km", 3).alias("distance_km"),
    )


def near_triples(links: DataFrame) -> DataFrame:
    """RDF for located-near links: 6 triples per link.

    Args:
        links: the DataFrame of :func:`located_near`.
    Returns:
        a triple table.

    >>> near_triples(located_near(stations, features, 20.0)).count()  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    station = iri_col(SSW + "System_", F.col("station_id"))
    feature = iri_col(GEONAMES_IRI_PREFIX, F.col("geonameid"), "/")
    rel = iri_col(SSW + "LocatedNearRel", F.concat_ws("_", F.col("station_id"), F.col("geonameid")))
    rows = [
        (station, ER + "locatedNear", feature),
        (station, OM_OWL + "hasLocatedNearRel", rel),
        (rel, RDF_TYPE, const(iri(OM_OWL + "LocatedNearRel"))),
        (rel, OM_OWL + "hasLocation", feature),
        (rel, OM_OWL + "distance", literal_col(F.col("distance_km"), XSD + "double")),
        (rel, OM_OWL + "uom", const(iri(UNIT + "KiloM"))),
    ]
    structs = [F.struct(s.alias("s"), F.lit(iri(p)).alias("p"), o.alias("o")) for s, p, o in rows]
    return links.select(F.explode(F.array(*structs)).alias("t")).select("t.s", "t.p", "t.o")
