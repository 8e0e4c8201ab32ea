"""benchmarks/bench_spark_pipeline.py --quick runs, and its counts add up (never its times)."""

import bisect
import importlib.util
import math
from pathlib import Path

from geopy.distance import geodesic

from connectors.geonames import read_dump
from connectors.geonames.synthetic import write_synthetic_dump
from connectors.stations import read_station_csv
from connectors.stations.synthetic import write_synthetic_stations

ROOT = Path(__file__).resolve().parents[3]
STAGES = ["ontologies", "stations", "features", "near", "neighbourhoods", "inferred", "load"]


def _benchmark():
    path = ROOT / "benchmarks" / "bench_spark_pipeline.py"
    spec = importlib.util.spec_from_file_location("bench_spark_pipeline", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _within(centre: tuple[float, float], points: list[tuple[float, float]], km: float) -> list[int]:
    """The indices of ``points`` (sorted by latitude, none across the antimeridian) at most
    ``km`` from ``centre``: geopy's geodesic over the box that can hold them (a degree of
    latitude is at least 110.57 km, one of longitude at least 111.32 km × cos(latitude))."""
    lat, lon = centre
    band = km / 110.57
    widest = math.cos(math.radians(min(90.0, abs(lat) + band)))
    reach = 360.0 if widest < 1e-9 else km / (111.32 * widest)
    lo = bisect.bisect_left(points, (lat - band, -math.inf))
    hi = bisect.bisect_right(points, (lat + band, math.inf))
    return [
        i
        for i in range(lo, hi)
        if abs(points[i][1] - lon) <= reach and geodesic(centre, points[i]).km <= km
    ]


def _expected_triples(rows: int, count: int, folder: Path) -> tuple[int, int]:
    """The near and neighbourhood triples of the benchmark's inputs, by brute force: 6 per
    (station, feature) pair within 20 km; 2 per station pair within 300 km, 1 per station
    and 1 per connected component of those pairs."""
    dump = write_synthetic_dump(folder / "synthetic.txt.gz", rows, seed=1)
    stations = read_station_csv(write_synthetic_stations(folder / "stations.csv", count, seed=2))
    features = sorted((f.latitude, f.longitude) for f in read_dump(dump))
    near = sum(len(_within((s.lat, s.lon), features, 20.0)) for s in stations)
    where = sorted((s.lat, s.lon) for s in stations)
    pairs = [(i, j) for i in range(len(where)) for j in _within(where[i], where, 300.0) if i < j]
    component = list(range(len(stations)))

    def root(i: int) -> int:
        while component[i] != i:
            i = component[i]
        return i

    for i, j in pairs:
        component[max(root(i), root(j))] = min(root(i), root(j))
    components = len({root(i) for i in range(len(stations))})
    return 6 * near, 2 * len(pairs) + len(stations) + components


def test_quick_benchmark_counts(spark, capsys, tmp_path: Path) -> None:
    bench = _benchmark()
    assert bench.main(["--quick"]) == 0
    out = capsys.readouterr().out
    table = out[out.index("stage ") : out.index("\ntotal ")].splitlines()[1:]
    triples = {line.split()[0]: int(line.split()[1].replace(",", "")) for line in table}
    rows, stations = bench.QUICK
    assert list(triples) == STAGES
    assert triples["ontologies"] == 7  # the benchmark's schema
    assert triples["stations"] == 13 * stations
    assert 7 * rows <= triples["features"] <= 9 * rows
    near, neighbourhoods = _expected_triples(rows, stations, tmp_path)
    assert (triples["near"], triples["neighbourhoods"]) == (near, neighbourhoods)
    assert triples["inferred"] >= rows + stations  # each feature and station: a er:Site
    assert triples["load"] == sum(triples[s] for s in STAGES[:-1])
    assert f"generated {rows:,} GeoNames rows, {stations:,} stations" in out
    assert "peak memory: Python driver " in out and " MiB, Spark JVM " in out
