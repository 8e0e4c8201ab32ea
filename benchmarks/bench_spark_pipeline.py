"""Benchmark of the Spark knowledge pipeline: generated GeoNames rows and stations to a store.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_spark_pipeline.py            # 1,000,000 rows, 20,000 stations
    .venv/bin/python benchmarks/bench_spark_pipeline.py --quick    # 20,000 rows, 500 stations

Prints, per stage, the triples written, seconds and triples/s, the input rows/s of the
stages that read GeoNames or stations, and the peak resident memory of the Python driver
and of Spark's JVM. ``--quick`` is small enough for the test suite, which runs it.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from connectors.geonames.synthetic import write_synthetic_dump  # noqa: E402
from connectors.spark.build import BuildConfig, BuildReport, build_knowledge  # noqa: E402
from connectors.spark.session import get_session  # noqa: E402
from connectors.stations.synthetic import write_synthetic_stations  # noqa: E402

#: (GeoNames rows, stations) of the full run and of ``--quick``.
FULL = (1_000_000, 20_000)
QUICK = (20_000, 500)

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


def run(
    rows: int,
    stations: int,
    work: Path,
    *,
    master: str | None = None,
    memory: str | None = None,
    log: Callable[[str], None] = print,
) -> BuildReport:
    """Generate the inputs in ``work`` and build ``work/kb`` from them.

    Args:
        rows: GeoNames rows to generate.
        stations: stations to generate.
        work: an empty folder.
        master, memory: Spark settings (ignored when a session already runs).
        log: receives the generation line and the build's progress lines.
    Returns:
        the build's report.

    >>> run(1000, 20, Path("/tmp/bench")).stages[1].triples  # doctest: +SKIP
    260
    """
    started = time.perf_counter()
    dump = write_synthetic_dump(work / "synthetic.txt.gz", rows, seed=1)
    table = write_synthetic_stations(work / "stations.csv", stations, seed=2)
    schema = work / "schema.ttl"
    schema.write_text(SCHEMA)
    seconds = time.perf_counter() - started
    log(f"generated {rows:,} GeoNames rows, {stations:,} stations in {seconds:.1f} s")
    config = BuildConfig(
        ontologies=(str(schema),),
        stations=(str(table),),
        geonames=(str(dump),),
        master=master,
        memory=memory,
    )
    return build_knowledge(work / "kb", config, log=lambda m: log(f"  {m}"))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its table (see the module docstring)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help=f"{QUICK[0]:,} rows and {QUICK[1]:,} stations"
    )
    parser.add_argument("--rows", type=int, help=f"GeoNames rows (default {FULL[0]:,})")
    parser.add_argument("--stations", type=int, help=f"stations (default {FULL[1]:,})")
    parser.add_argument("--master", default=None, help="Spark master (default local[*])")
    parser.add_argument("--memory", default="8g", help="Spark driver memory")
    args = parser.parse_args(argv)
    rows = args.rows or (QUICK if args.quick else FULL)[0]
    count = args.stations or (QUICK if args.quick else FULL)[1]

    with tempfile.TemporaryDirectory(prefix="bench-spark-") as tmp:
        started = time.perf_counter()
        report = run(rows, count, Path(tmp), master=args.master, memory=args.memory)
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
    print(f"\ntotal {total:.1f} s for {triples:,} triples (including input generation)")
    driver = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory: Python driver {driver:,.0f} MiB, Spark JVM {_jvm_peak_mb():,.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
