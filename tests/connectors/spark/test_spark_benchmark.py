"""benchmarks/bench_spark_pipeline.py --quick runs, and its counts add up (never its times)."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
STAGES = ["ontologies", "stations", "features", "near", "neighbourhoods", "inferred", "load"]


def _benchmark():
    path = ROOT / "benchmarks" / "bench_spark_pipeline.py"
    spec = importlib.util.spec_from_file_location("bench_spark_pipeline", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quick_benchmark_counts(spark, capsys) -> None:
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
    assert triples["near"] > 0 and triples["near"] % 6 == 0
    # 2 per neighbour pair, 1 per station, 1 per component.
    assert triples["neighbourhoods"] > 2 * stations
    assert triples["inferred"] >= rows + stations  # each feature and station: a er:Site
    assert triples["load"] == sum(triples[s] for s in STAGES[:-1])
    assert f"generated {rows:,} GeoNames rows, {stations:,} stations" in out
    assert "peak memory: Python driver " in out and " MiB, Spark JVM " in out
