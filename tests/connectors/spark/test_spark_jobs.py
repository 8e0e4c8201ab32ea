"""Jobs 1-3 on local Spark: readers, RDF descriptions, located-near, neighbourhoods."""

import gzip
import itertools
import random
import zipfile
from pathlib import Path

import pytest
from geopy.distance import geodesic

from connectors.geonames import read_dump
from connectors.spark.describe import feature_triples, station_triples
from connectors.spark.geo import MAX_RADIUS_KM, with_geodesic_km, within
from connectors.spark.near import located_near, near_triples
from connectors.spark.neighbourhoods import (
    components_dataframe,
    components_graphframes,
    connected_components,
    neighbourhood_triples,
    station_pairs,
    uses_graphframes,
)
from connectors.spark.output import write_ntriples
from connectors.spark.readers import load_stations, read_geonames, read_ntriples, stations_frame
from connectors.stations import Station, read_station_csv
from reasoner.errors import KnowledgeError

ROOT = Path(__file__).resolve().parents[3]
GEONAMES = ROOT / "data" / "geonames" / "US-mountain-cities15000.txt"
STATIONS = ROOT / "data" / "stations" / "us-mountain-stations.csv"
KSFO = ROOT / "tests" / "connectors" / "stations" / "data" / "KSFO.rdf"

SSW = "http://knoesis.wright.edu/ssw/"
XSD_DOUBLE = "^^<http://www.w3.org/2001/XMLSchema#double>"


@pytest.fixture(scope="module")
def features(spark, tmp_path_factory):
    return read_geonames(spark, [GEONAMES], tmp_path_factory.mktemp("work")).cache()


@pytest.fixture(scope="module")
def stations(spark):
    return stations_frame(spark, load_stations([STATIONS])).cache()


def test_geonames_reader_types_the_columns(features) -> None:
    assert features.count() == 123
    (slc,) = features.filter("geonameid = 5780993").collect()
    assert slc["name"] == "Salt Lake City"
    assert (slc["latitude"], slc["longitude"]) == pytest.approx((40.76078, -111.89105))
    assert (slc["feature_class"], slc["feature_code"], slc["admin1_code"]) == ("P", "PPLA", "UT")
    assert (
        slc["population"]
        == next(f for f in read_dump(GEONAMES) if f.name == "Salt Lake City").population
    )


def test_geonames_reader_gzip_zip_and_errors(spark, tmp_path: Path) -> None:
    text = GEONAMES.read_text(encoding="utf-8")
    gz = tmp_path / "a.txt.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as f:
        f.write(text)
    zipped = tmp_path / "b.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("b.txt", text)
    both = read_geonames(spark, [gz, zipped], tmp_path / "work")
    assert both.count() == 246
    bad = tmp_path / "bad.txt"
    bad.write_text(text.splitlines()[0] + "\n42\tshort row\n")
    with pytest.raises(KnowledgeError, match="malformed GeoNames row .2 columns, expected 19"):
        read_geonames(spark, [bad], tmp_path / "work")


def test_station_triples_facts_and_counts(stations) -> None:
    triples = {(r.s, r.p, r.o) for r in station_triples(stations).collect()}
    # 9 triples about each station (all have name, state and elevation) + 4 about its point.
    assert len(triples) == 122 * 13
    kslc = f"<{SSW}System_KSLC>"
    assert (
        kslc,
        "<http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#ID>",
        '"KSLC"',
    ) in triples
    assert (
        kslc,
        "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>",
        "<http://www.w3.org/ns/sosa/Platform>",
    ) in triples
    assert (kslc, "<https://w3id.org/etalis-reasoner/ns#state>", '"UT"') in triples
    assert (
        f"<{SSW}point_KSLC>",
        "<http://www.w3.org/2003/01/geo/wgs84_pos#lat>",
        f'"40.788393"{XSD_DOUBLE}',
    ) in triples


def test_feature_triples_use_geonames_iris(features) -> None:
    triples = {(r.s, r.p, r.o) for r in feature_triples(features).collect()}
    slc = "<https://sws.geonames.org/5780993/>"
    gn = "http://www.geonames.org/ontology#"
    assert (slc, f"<{gn}name>", '"Salt Lake City"') in triples
    assert (slc, f"<{gn}featureCode>", f"<{gn}P.PPLA>") in triples
    assert (slc, "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", f"<{gn}Feature>") in triples
    subjects = {s for s, _, _ in triples}
    assert len(subjects) == 123
    # type, name, class, code, country, population, lat, long (+ alt where known)
    with_alt = sum(1 for f in read_dump(GEONAMES) if f.elevation is not None)
    assert len(triples) == 123 * 8 + with_alt


def test_literals_are_escaped_and_read_back(spark, tmp_path: Path) -> None:
    odd = Station("KODD", 'The "Quoted"\\Back\nslash', 1.0, 2.0, None, "")
    written = station_triples(stations_frame(spark, [odd]))
    count = write_ntriples(written, tmp_path / "odd")
    assert count == 10  # no elevation nor state: no wgs84:alt and no er:state
    back = {(r.s, r.p, r.o) for r in read_ntriples(spark, [str(tmp_path / "odd")]).collect()}
    assert back == {(r.s, r.p, r.o) for r in written.collect()}
    assert (
        "<http://knoesis.wright.edu/ssw/System_KODD>",
        "<http://www.w3.org/2000/01/rdf-schema#label>",
        '"The \\"Quoted\\"\\\\Back\\nslash"',
    ) in back


def _brute_force(pairs, radius_km):
    return {
        (a, b): geodesic(pa, pb).km
        for (a, pa), (b, pb) in pairs
        if geodesic(pa, pb).km <= radius_km
    }


def test_located_near_equals_brute_force(stations, features) -> None:
    links = located_near(stations, features, 20.0).collect()
    found = {(r.station_id, r.geonameid): r.distance_km for r in links}
    expected = _brute_force(
        itertools.product(
            [(s.id, (s.lat, s.lon)) for s in read_station_csv(STATIONS)],
            [(f.geonameid, (f.latitude, f.longitude)) for f in read_dump(GEONAMES)],
        ),
        20.0,
    )
    assert found.keys() == expected.keys()
    assert all(abs(found[k] - expected[k]) < 0.0006 for k in found)
    assert ("KSLC", 5780993) in found  # Salt Lake City lies 7.9 km from its airport
    assert found["KSLC", 5780993] == pytest.approx(7.937, abs=0.001)
    triples = near_triples(located_near(stations, features, 20.0)).collect()
    assert len(triples) == 6 * len(links)


def test_grid_join_across_the_antimeridian_and_the_pole(spark) -> None:
    probes = [("p1", 0.5, 179.95), ("p2", 89.95, 10.0), ("p3", -30.0, -179.99)]
    points = [
        ("q1", 0.5, -179.95),  # 11 km east of p1, across 180°
        ("q2", 89.95, -170.0),  # 11 km from p2 across the pole
        ("q3", -30.1, 179.95),
        ("q4", 0.5, 179.5),
        ("q5", 10.0, 10.0),
    ]
    got = within(
        spark.createDataFrame(probes, "pid string, plat double, plon double"),
        spark.createDataFrame(points, "qid string, qlat double, qlon double"),
        20.0,
    ).collect()
    found = {(r.pid, r.qid): r.distance_km for r in got}
    expected = _brute_force(
        itertools.product([(p, (a, b)) for p, a, b in probes], [(q, (a, b)) for q, a, b in points]),
        20.0,
    )
    assert found.keys() == expected.keys() == {("p1", "q1"), ("p2", "q2"), ("p3", "q3")}
    assert all(found[k] == pytest.approx(expected[k], abs=1e-6) for k in found)


def test_geodesic_equals_geographiclib(spark) -> None:
    # Random lines up to MAX_RADIUS_KM from anywhere (poles and the antimeridian included),
    # plus coincident points, a pole-to-pole-side line and an equatorial one.
    rng = random.Random(4)
    lines = [(0.0, 0.0, 0.0, 0.0), (90.0, 0.0, 90.0, 120.0), (0.0, 179.99, 0.0, -179.99)]
    lines.append((0.0, 0.0, 0.0, 10.0))
    for _ in range(2000):
        lat, lon = rng.uniform(-90, 90), rng.uniform(-180, 180)
        km = rng.choice([0.001, 1.0, 20.0, 300.0, 1000.0, MAX_RADIUS_KM])
        end = geodesic(kilometers=km).destination((lat, lon), rng.uniform(0, 360))
        lines.append((lat, lon, end.latitude, end.longitude))
    frame = spark.createDataFrame(lines, "a double, b double, c double, d double")
    got = with_geodesic_km(frame, "a", "b", "c", "d", "km").collect()
    assert len(got) == len(lines)
    worst = max(abs(r.km - geodesic((r.a, r.b), (r.c, r.d)).km) for r in got)
    assert worst < 1e-6  # a millimetre
    with pytest.raises(ValueError, match="radius 6000 km"):
        within(frame, frame, 6000.0)


def _union_find(ids, edges):
    parent = {i: i for i in ids}

    def root(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for a, b in edges:
        ra, rb = root(a), root(b)
        parent[max(ra, rb)] = min(ra, rb)
    groups: dict[str, list[str]] = {}
    for i in ids:
        groups.setdefault(root(i), []).append(i)
    return {i: min(members) for members in groups.values() for i in members}


@pytest.mark.parametrize("distance_km", [100.0, 300.0])
def test_neighbourhoods_equal_brute_force(spark, stations, distance_km: float) -> None:
    rows = read_station_csv(STATIONS)
    pairs = station_pairs(stations, distance_km).cache()
    found = {(r.a, r.b) for r in pairs.collect()}
    expected = _brute_force(
        (
            (x, y)
            for x, y in itertools.combinations(sorted((s.id, (s.lat, s.lon)) for s in rows), 2)
        ),
        distance_km,
    )
    assert found == set(expected)
    components = connected_components(stations.select("id"), pairs)
    labels = {r.id: r.component for r in components.collect()}
    assert labels == _union_find([s.id for s in rows], found)
    if distance_km == 100.0:
        assert len(set(labels.values())) > 10
    triples = neighbourhood_triples(pairs, components).collect()
    assert len(triples) == 2 * len(found) + 122 + len(set(labels.values()))


def test_components_of_a_long_chain(spark) -> None:
    # A path through shuffled ids (contracted over several rounds) and one in increasing
    # order (each vertex points to the one before: 15 pointers that jumping must follow).
    ids = [f"v{(i * 7) % 12:02d}" for i in range(12)]
    rising = [f"x{i:02d}" for i in range(16)]
    edges = list(itertools.pairwise(ids)) + list(itertools.pairwise(rising)) + [("w1", "w2")]
    everyone = ids + rising + ["w1", "w2", "w3"]
    vertices = spark.createDataFrame([(i,) for i in everyone], "id string")
    frame = spark.createDataFrame(edges, "a string, b string")
    labels = {r.id: r.component for r in components_dataframe(vertices, frame).collect()}
    expected = {**{i: "v00" for i in ids}, **{i: "x00" for i in rising}}
    assert labels == {**expected, "w1": "w1", "w2": "w1", "w3": "w3"}


def test_graphframes_components_equal_the_dataframe_path(spark, stations) -> None:
    if not uses_graphframes(spark):
        pytest.skip(
            "GraphFrames' JVM package is not on Spark's classpath; to run this test set "
            "REASONER_SPARK_PACKAGES=io.graphframes:graphframes-spark4_2.13:<version> or "
            "REASONER_SPARK_JARS=<its jars> (docs/pipeline.md)"
        )
    pairs = station_pairs(stations, 100.0).cache()
    ids = stations.select("id")
    by_graphframes = sorted(components_graphframes(ids, pairs).collect())
    assert by_graphframes == sorted(components_dataframe(ids, pairs).collect())
    assert sorted(connected_components(ids, pairs).collect()) == by_graphframes
    assert len({r.component for r in by_graphframes}) > 10


def test_station_rdf_input_gives_stations(spark) -> None:
    (ksfo,) = load_stations([KSFO])
    # As written in the file: no name (the id stands for it) nor state, 10 m high.
    assert ksfo == Station("KSFO", "KSFO", 37.61972, -122.36472, 10.0, "")
    triples = {(r.s, r.p, r.o) for r in station_triples(stations_frame(spark, [ksfo])).collect()}
    station, point = f"<{SSW}System_KSFO>", f"<{SSW}point_KSFO>"
    wgs84 = "http://www.w3.org/2003/01/geo/wgs84_pos#"
    rdf_type = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
    expected = {
        (station, rdf_type, "<http://www.w3.org/ns/sosa/Platform>"),
        (station, rdf_type, f"<{SSW}ont/sensor-observation.owl#System>"),
        (station, f"<{SSW}ont/sensor-observation.owl#ID>", '"KSFO"'),
        (station, "<http://www.w3.org/2000/01/rdf-schema#label>", '"KSFO"'),
        (station, f"<{SSW}ont/sensor-observation.owl#processLocation>", point),
        (point, rdf_type, f"<{wgs84}Point>"),
    }
    for subject in (station, point):
        expected.add((subject, f"<{wgs84}lat>", f'"37.61972"{XSD_DOUBLE}'))
        expected.add((subject, f"<{wgs84}long>", f'"-122.36472"{XSD_DOUBLE}'))
        expected.add((subject, f"<{wgs84}alt>", f'"10.0"{XSD_DOUBLE}'))
    assert triples == expected  # no state: the file has none
