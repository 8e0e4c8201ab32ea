"""Benchmark of the Spark knowledge pipeline: generated GeoNames rows and stations to a store.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_spark_pipeline.py            # 1,000,000 rows, 20,000 stations
    .venv/bin/python benchmarks/bench_spark_pipeline.py --quick    # 50,000 rows, 1,000 stations

Prints, per stage, the triples written, seconds and triples/s, the input rows/s of the
stages that read GeoNames or stations, and the peak resident memory of the Python driver
and of Spark's JVM.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from connectors.geonames.synthetic import write_synthetic_dump  # noqa: E402
from connectors.spark.build import BuildConfig, build_knowledge  # noqa: E402
from connectors.spark.session import get_session  # noqa: E402
from connectors.stations.synthetic import write_synthetic_stations  # noqa: E402

#: A small schema so that the RDFS stage has classes and properties to apply.
SCHEMA = """\
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix sosa: <http://www.w3.org/ns/sosa/> .
@prefix om: <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#> .
@prefix gn: <http://www.geonames.org/ontology#> .
@prefix er: <https://w3id.org/etalis-reasoner/ns#> .
om:System rdfs:subClassOf sosa:Platform .
sosa:Platform rdfs:subClassOf er:Site .
gn:Feature rdfs:subClassOf er:Site .
er:locatedNear rdfs:domain sosa:Platform ; rdfs:range gn:Feature .
er:nearStation rdfs:subPropertyOf er:near ; rdfs:domain om:System .
"""


def _jvm_peak_mb() -> float:
    """Peak resident memory of the Spark JVM (VmHWM), in MiB."""
    spark = get_session()
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()  # type: ignore[union-attr]
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50,000 rows and 1,000 stations")
    parser.add_argument("--rows", type=int, help="GeoNames rows (default 1,000,000)")
    parser.add_argument("--stations", type=int, help="stations (default 20,000)")
    parser.add_argument("--master", default=None, help="Spark master (default local[*])")
    parser.add_argument("--memory", default="8g", help="Spark driver memory")
    args = parser.parse_args()
    rows = args.rows or (50_000 if args.quick else 1_000_000)
    count = args.stations or (1_000 if args.quick else 20_000)

    with tempfile.TemporaryDirectory(prefix="bench-spark-") as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        dump = write_synthetic_dump(work / "synthetic.txt.gz", rows, seed=1)
        stations = write_synthetic_stations(work / "stations.csv", count, seed=2)
        schema = work / "schema.ttl"
        schema.write_text(SCHEMA)
        print(
            f"generated {rows:,} GeoNames rows, {count:,} stations in "
            f"{time.perf_counter() - started:.1f} s"
        )
        config = BuildConfig(
            ontologies=(str(schema),),
            stations=(str(stations),),
            geonames=(str(dump),),
            master=args.master,
            memory=args.memory,
        )
        started = time.perf_counter()
        report = build_knowledge(work / "kb", config, log=lambda m: print(f"  {m}"))
        total = time.perf_counter() - started
        inputs = {"stations": count, "features": rows, "near": rows, "neighbourhoods": count}
        print(f"\n{'stage':<15}{'triples':>12}{'seconds':>10}{'triples/s':>12}{'input rows/s':>14}")
        for s in report.stages:
            rate = s.triples / max(s.seconds, 1e-9)
            per_row = inputs.get(s.name)
            row_rate = f"{per_row / max(s.seconds, 1e-9):,.0f}" if per_row else "-"
            print(f"{s.name:<15}{s.triples:>12,}{s.seconds:>10.1f}{rate:>12,.0f}{row_rate:>14}")
        triples = sum(s.triples for s in report.stages)
        print(
            f"{'load':<15}{triples:>12,}{report.load_seconds:>10.1f}"
            f"{triples / max(report.load_seconds, 1e-9):>12,.0f}{'-':>14}"
        )
        print(f"\ntotal {total:.1f} s for {triples:,} triples")
        driver = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak memory: Python driver {driver:,.0f} MiB, Spark JVM {_jvm_peak_mb():,.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
