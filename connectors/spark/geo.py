"""Spatial joins without a cross join: grid buckets, a spherical pre-filter, exact geodesics.

Points fall in square grid cells of ``cell_deg`` degrees. A probe point (a station) lists
every cell its search circle of ``radius_km`` can touch; an equi-join on the cell pairs it with
candidate points only. Candidates are first filtered by the haversine distance on the mean
sphere (native Spark arithmetic; off from the ellipsoid by at most 0.56 %, so a 1 % margin
loses nothing), then measured exactly on the WGS84 ellipsoid with geographiclib (the
library behind geopy's ``geodesic``, which the rule built-ins use).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

#: Mean Earth radius (IUGG), km.
MEAN_RADIUS_KM = 6371.0088
#: The shortest length of one degree of latitude on WGS84 (at the equator), km.
_MIN_KM_PER_DEG_LAT = 110.574
#: One degree of longitude at the equator on WGS84, km (at latitude φ: at least this × cos φ).
_KM_PER_DEG_LON = 111.320
#: The haversine pre-filter keeps pairs up to this factor beyond the radius.
PREFILTER_MARGIN = 1.01


def cell_size(radius_km: float) -> float:
    """The grid cell size (degrees) used for a search radius: about one radius wide.

    Args:
        radius_km: the search radius.
    Returns:
        degrees per cell, at most 10 so that few points share a cell.

    >>> round(cell_size(20.0), 4)
    0.1809
    """
    return min(10.0, max(radius_km, 0.001) / _MIN_KM_PER_DEG_LAT)


def point_cell(lat: Column, lon: Column, cell_deg: float) -> tuple[Column, Column]:
    """The grid cell ``(row, col)`` holding each point.

    Args:
        lat, lon: coordinate columns in degrees.
        cell_deg: the cell size.
    Returns:
        two integer columns.

    >>> point_cell(F.col("lat"), F.col("lon"), 0.18)  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    columns = math.ceil(360.0 / cell_deg)
    row = F.floor((lat + 90.0) / cell_deg).cast("int")
    col = F.pmod(F.floor((lon + 180.0) / cell_deg), F.lit(columns)).cast("int")
    return row, col


def reach_cells(lat: Column, lon: Column, radius_km: float, cell_deg: float) -> Column:
    """Every grid cell a circle of ``radius_km`` around each point can touch.

    Args:
        lat, lon: coordinate columns in degrees.
        radius_km: the circle's radius.
        cell_deg: the cell size.
    Returns:
        an array column of ``struct(row, col)``.

    >>> reach_cells(F.col("lat"), F.col("lon"), 20.0, 0.18)  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    columns = math.ceil(360.0 / cell_deg)
    dlat = radius_km / _MIN_KM_PER_DEG_LAT * PREFILTER_MARGIN
    # The widest parallel the circle reaches decides the longitude span; near a pole the
    # circle covers every longitude.
    top = F.least(F.abs(lat) + dlat, F.lit(90.0))
    cos_top = F.cos(F.radians(top))
    dlon = F.when(
        cos_top > 1e-6, F.lit(radius_km * PREFILTER_MARGIN / _KM_PER_DEG_LON) / cos_top
    ).otherwise(F.lit(360.0))
    rows = F.sequence(
        F.floor((F.greatest(lat - dlat, F.lit(-90.0)) + 90.0) / cell_deg).cast("int"),
        F.floor((F.least(lat + dlat, F.lit(90.0)) + 90.0) / cell_deg).cast("int"),
    )
    first = F.floor((lon - dlon + 180.0) / cell_deg).cast("int")
    last = F.floor((lon + dlon + 180.0) / cell_deg).cast("int")
    wide = (last - first + 1) >= columns
    span = F.when(wide, F.sequence(F.lit(0), F.lit(columns - 1))).otherwise(F.sequence(first, last))
    cols = F.array_distinct(F.transform(span, lambda c: F.pmod(c, F.lit(columns))))
    return F.flatten(
        F.transform(
            rows, lambda r: F.transform(cols, lambda c: F.struct(r.alias("row"), c.alias("col")))
        )
    )


def haversine_km(lat1: Column, lon1: Column, lat2: Column, lon2: Column) -> Column:
    """Great-circle distance on the mean sphere, in km (native Spark arithmetic).

    Args:
        lat1, lon1, lat2, lon2: coordinate columns in degrees.
    Returns:
        a double column.

    >>> haversine_km(F.col("a"), F.col("b"), F.col("c"), F.col("d"))  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    p1, p2 = F.radians(lat1), F.radians(lat2)
    dp, dl = p2 - p1, F.radians(lon2) - F.radians(lon1)
    h = F.pow(F.sin(dp / 2), 2) + F.cos(p1) * F.cos(p2) * F.pow(F.sin(dl / 2), 2)
    return F.asin(F.sqrt(F.least(h, F.lit(1.0)))) * (2 * MEAN_RADIUS_KM)


def geodesic_km_py(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Exact WGS84 geodesic distance in km (geographiclib, as geopy's ``geodesic``).

    Args:
        lat1, lon1, lat2, lon2: degrees.
    Returns:
        the distance in km.

    >>> round(geodesic_km_py(40.7608, -111.8910, 39.7392, -104.9903), 1)
    596.7
    """
    from geographiclib.geodesic import Geodesic

    return float(Geodesic.WGS84.Inverse(lat1, lon1, lat2, lon2, Geodesic.DISTANCE)["s12"]) / 1000.0


def geodesic_km(lat1: Column, lon1: Column, lat2: Column, lon2: Column) -> Column:
    """Exact WGS84 geodesic distance in km, as a Spark column (a Python UDF).

    Args:
        lat1, lon1, lat2, lon2: coordinate columns in degrees.
    Returns:
        a double column.

    >>> geodesic_km(F.col("a"), F.col("b"), F.col("c"), F.col("d"))  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    # An unannotated lambda, so Spark does not try to read the type hints as a pandas UDF;
    # plain (pickled) rows, as pyarrow is not a dependency.
    measure = F.udf(lambda a, b, c, d: geodesic_km_py(a, b, c, d), "double", useArrow=False)
    return measure(lat1, lon1, lat2, lon2)


def within(
    probes: DataFrame,
    points: DataFrame,
    radius_km: float,
    *,
    ordered: bool = False,
) -> DataFrame:
    """Pairs of a probe and a point at most ``radius_km`` apart (grid join, exact distance).

    Args:
        probes: a DataFrame with columns ``pid``, ``plat``, ``plon``.
        points: a DataFrame with columns ``qid``, ``qlat``, ``qlon``.
        radius_km: the distance bound (inclusive).
        ordered: keep only pairs with ``pid < qid`` (a self-join finds each pair from both
            ends; dropping one before measuring halves the geodesic work).
    Returns:
        columns ``pid``, ``qid``, ``distance_km`` (every pair within the radius, once).

    >>> within(stations, features, 20.0).count()  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    cell_deg = cell_size(radius_km)
    row, col = point_cell(F.col("qlat"), F.col("qlon"), cell_deg)
    keyed_points = points.select("qid", "qlat", "qlon", row.alias("row"), col.alias("col"))
    keyed_probes = probes.select(
        "pid",
        "plat",
        "plon",
        F.explode(reach_cells(F.col("plat"), F.col("plon"), radius_km, cell_deg)).alias("cell"),
    ).select("pid", "plat", "plon", "cell.row", "cell.col")
    candidates = keyed_probes.join(keyed_points, ["row", "col"])
    if ordered:
        candidates = candidates.filter(F.col("pid") < F.col("qid"))
    near = candidates.filter(
        haversine_km(F.col("plat"), F.col("plon"), F.col("qlat"), F.col("qlon"))
        <= radius_km * PREFILTER_MARGIN
    )
    exact = near.select(
        "pid",
        "qid",
        geodesic_km(F.col("plat"), F.col("plon"), F.col("qlat"), F.col("qlon")).alias(
            "distance_km"
        ),
    )
    return exact.filter(F.col("distance_km") <= radius_km)
