"""Every radius is inclusive: a point at exactly the radius (the distance the job itself
computes) is kept, one a metre further is not, for the grid join, located-near and the
station neighbours."""

import pytest
from geopy.distance import geodesic

from connectors.spark.geo import with_geodesic_km, within
from connectors.spark.near import located_near
from connectors.spark.neighbourhoods import station_pairs

CENTRE = (40.7608, -111.8910)  # Salt Lake City
BEARING = 37.0


def _at(km: float) -> tuple[float, float]:
    point = geodesic(kilometers=km).destination(CENTRE, BEARING)
    return point.latitude, point.longitude


#: The point at the edge and the one a metre beyond it.
EDGE, BEYOND = _at(20.0), _at(20.001)


@pytest.fixture(scope="module")
def radius(spark) -> float:
    """The job's own distance from the centre to the edge point: the radius to test."""
    frame = spark.createDataFrame(
        [(*CENTRE, *EDGE), (*CENTRE, *BEYOND)], "a double, b double, c double, d double"
    )
    edge, beyond = (r.km for r in with_geodesic_km(frame, "a", "b", "c", "d", "km").collect())
    assert edge == pytest.approx(20.0, abs=1e-6)
    assert beyond == pytest.approx(20.001, abs=1e-6)
    return edge


def test_within_keeps_the_radius_and_not_a_metre_more(spark, radius: float) -> None:
    probes = spark.createDataFrame([("p", *CENTRE)], "pid string, plat double, plon double")
    points = spark.createDataFrame(
        [("edge", *EDGE), ("beyond", *BEYOND)], "qid string, qlat double, qlon double"
    )
    assert {(r.pid, r.qid) for r in within(probes, points, radius).collect()} == {("p", "edge")}


def test_located_near_keeps_the_radius_and_not_a_metre_more(spark, radius: float) -> None:
    stations = spark.createDataFrame([("KSLC", *CENTRE)], "id string, lat double, lon double")
    features = spark.createDataFrame(
        [(1, *EDGE), (2, *BEYOND)], "geonameid long, latitude double, longitude double"
    )
    links = located_near(stations, features, radius).collect()
    assert [(r.station_id, r.geonameid, r.distance_km) for r in links] == [("KSLC", 1, 20.0)]


def test_station_neighbours_keep_the_distance_and_not_a_metre_more(spark, radius) -> None:
    # The centre has the smallest id, so it is the probe of each ordered pair; the edge and
    # the point beyond it are a metre apart.
    stations = spark.createDataFrame(
        [("A", *CENTRE), ("B", *EDGE), ("C", *BEYOND)], "id string, lat double, lon double"
    )
    pairs = {(r.a, r.b) for r in station_pairs(stations, radius).collect()}
    assert pairs == {("A", "B"), ("B", "C")}
