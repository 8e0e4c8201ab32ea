"""Archive replay on Spark against ``reasoner run --workers 2``, on the same MesoWest archive.

A synthetic MesoWest archive (``--stations`` stations at 3 sizes, ``--days`` days, readings
every 20 minutes, from the generator in connectors/mesowest; one CSV file per station) runs
through a station-keyed program (cold readings, cold spells within two hours per station,
both keyed) with a global rule after it (an alarm for every two-hour spell, any station).
Per size:

* ``reasoner run --workers 2`` (a subprocess, niced): wall time and CPU time (its workers
  included);
* ``reasoner spark replay`` on local[2] (the session started before timing): wall time and
  CPU time of the driver, the JVM and Spark's Python workers;
* the outputs compared byte for byte.

Then, on the largest archive, the keyed stage alone in the two ways Spark can run it: the RDD
``groupByKey`` + ``mapPartitions`` that replay uses, and the grouped-pandas ``applyInPandas``
(Arrow) alternative written here for the comparison; both run the same per-key function.

The machine may be shared: the load average is printed, and events per CPU second are the
numbers to compare when wall times are stretched by other people's work. Peak memory: the
driver's, the JVM's, and the largest Python worker's.

    python benchmarks/bench_spark_replay.py            # 50, 200, 800 stations x 2 days
    python benchmarks/bench_spark_replay.py --quick    # 6 and 12 stations x 1 day
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

RULES = r"""
cold(S, T) <- sensor_reading(S, T, Temp, _, _, _, _, _, _) WHERE Temp < 30.
spell(S, T1, T2) <- (cold(S, T1) SEQ cold(S, T2)).2h.
alarm(T2) <- spell(_, T1, T2) WHERE T2 - T1 >= 7200.
"""

FULL, QUICK = (50, 200, 800), (6, 12)


def _tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a process and every live descendant."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            stats[int(entry)] = fields
            children.setdefault(int(fields[1]), []).append(int(entry))
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        if p in stats:
            total += (int(stats[p][11]) + int(stats[p][12])) / tick
        todo += children.get(p, [])
    return total


def _peak_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))
    except (OSError, StopIteration):
        return 0


def _descendants(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            if parent == pid:
                found.append(int(entry))
                found += _descendants(int(entry))
    return found


def make_archive(folder: Path, stations: int, days: float, seed: int = 7) -> list[Path]:
    """One MesoWest CSV file per synthetic station (storms at a tenth of them)."""
    from datetime import UTC, datetime, timedelta

    from connectors.mesowest.generator import Storm, generate
    from connectors.mesowest.station import Station

    rng = random.Random(seed)
    table = [
        Station(
            f"S{i:05d}",
            f"Station {i}",
            rng.uniform(37, 47),
            rng.uniform(-121, -103),
            rng.uniform(2000, 9000),
        )
        for i in range(stations)
    ]
    start = datetime(2021, 1, 10, tzinfo=UTC)
    storms = [
        Storm(s.id, start + timedelta(hours=rng.uniform(0, days * 24 - 8)), hours=8)
        for s in rng.sample(table, max(1, stations // 10))
    ]
    return generate(folder, table, days, seed, storms, interval_minutes=20)


def run_cli(rules: Path, files: list[Path], out: Path) -> dict[str, Any]:
    """``reasoner run --workers 2``, niced, in a subprocess: wall and CPU seconds."""
    argv = [sys.executable, "-m", "connectors.cli", "run", str(rules), "--format", "mesowest"]
    for f in files:
        argv += ["--events", str(f)]
    argv += ["--workers", "2", "--output", str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(["nice", *argv], capture_output=True, text=True, cwd=ROOT, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 3):
        raise SystemExit(done.stderr)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu, "peak_mb": after.ru_maxrss / 1024}


def run_spark(sc: Any, rules: Path, folder: Path, out: Path) -> dict[str, Any]:
    """``reasoner spark replay`` in this process: wall and CPU seconds of the whole tree."""
    from connectors.cli import main

    me = os.getpid()
    cpu0, started = _tree_cpu(me), time.perf_counter()
    argv = ["spark", "replay", str(rules), "--format", "mesowest", "--events", str(folder)]
    status = main([*argv, "--out", str(out)])
    wall, cpu = time.perf_counter() - started, _tree_cpu(me) - cpu0
    if status not in (0, 3):
        raise SystemExit(f"spark replay failed ({status})")
    jvm = sc._gateway.proc.pid
    workers = [p for p in _descendants(jvm)]
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "driver_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "jvm_peak_mb": _peak_kb(jvm) / 1024,
        "worker_peak_mb": max((_peak_kb(p) for p in workers), default=0) / 1024,
    }


def keyed_kernels(sc: Any, rules: Path, folder: Path) -> dict[str, dict[str, float]]:
    """The keyed stage alone, as RDD groupByKey + mapPartitions and as applyInPandas."""
    import math

    from pyspark.sql import SparkSession

    from connectors.spark import replay as r
    from connectors.spark.detect import Stage, detect
    from reasoner.language.ast import event_arities
    from reasoner.language.loader import load_rules
    from reasoner.runtime.parallel import order_key

    program = load_rules([rules])
    partitioning = r.analyse(program)
    keyed, _ = partitioning.stages(program)
    archive = r.Archive(r.check_files([str(folder)]), "mesowest", program)
    arities = event_arities(program)
    records = (
        sc.parallelize(list(enumerate(archive.files)), len(archive.files))
        .mapPartitions(lambda files: r._read(archive, arities, files))
        .filter(lambda x: x[0] == r._EVENT and x[3] is None)
        .map(lambda x: (x[1], x[2]))
        .cache()
    )
    records.count()
    until = records.map(lambda x: x[1][3]).max()
    options = {
        "policy": "unrestricted",
        "tie_break": "longer",
        "max_span": None,
        "provenance": False,
        "lateness": 0,
    }
    stage = Stage(keyed, tuple(sorted(options.items())))
    reads = set(partitioning.reads)
    out: dict[str, dict[str, float]] = {}

    me = os.getpid()
    cpu0, started = _tree_cpu(me), time.perf_counter()
    count = r._keyed(records, stage, partitioning, until, reads).filter(lambda x: x[0] == 0).count()
    out["rdd_mapPartitions"] = {
        "wall_s": time.perf_counter() - started,
        "cpu_s": _tree_cpu(me) - cpu0,
        "records": count,
    }

    keys = partitioning.key_positions()
    spark = SparkSession.builder.getOrCreate()

    def rows(item: tuple[int, Any]) -> Iterator[tuple[str, float, int, bytes]]:
        seq, event = item
        position = keys.get((event[0], len(event[1])))
        if position is not None:
            yield repr(event[1][position]), float(event[3]), seq, pickle.dumps(event)

    def per_key(frame: Any) -> Any:
        import pandas as pd

        frame = frame.sort_values(["end", "seq"])
        events = zip(frame["seq"], map(pickle.loads, frame["event"]), strict=True)
        derived, _ = detect(stage, ((int(s), e) for s, e in events), until)
        found = [d for _, plain in derived for d in plain]
        return pd.DataFrame(
            {
                "order": [pickle.dumps(order_key(d)) for d in found],
                "detection": [pickle.dumps(d) for d in found],
            }
        )

    cpu0, started = _tree_cpu(me), time.perf_counter()
    frame = spark.createDataFrame(
        records.flatMap(rows), "key string, end double, seq long, event binary"
    )
    count = frame.groupBy("key").applyInPandas(per_key, "order binary, detection binary").count()
    out["applyInPandas"] = {
        "wall_s": time.perf_counter() - started,
        "cpu_s": _tree_cpu(me) - cpu0,
        "records": count,
    }
    records.unpersist()
    assert math.isfinite(until)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="6 and 12 stations, 1 day")
    parser.add_argument("--stations", type=int, nargs="+", help="archive sizes (stations)")
    parser.add_argument("--days", type=float, help="days per archive (default 2; quick 1)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = parser.parse_args(argv)
    sizes = args.stations or (QUICK if args.quick else FULL)
    days = args.days or (1 if args.quick else 2)

    from connectors.spark.session import get_session

    sc = get_session(master="local[2]").sparkContext
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", file=sys.stderr)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rules = work / "cold.event"
        rules.write_text(RULES, encoding="utf-8")
        for stations in sizes:
            folder = work / f"archive{stations}"
            files = make_archive(folder, stations, days)
            events = sum(
                sum(1 for line in f.read_text().splitlines() if line.startswith("S0"))
                for f in files
            )
            run = run_cli(rules, files, work / "run.jsonl")
            spark = run_spark(sc, rules, folder, work / "spark")
            same = (work / "run.jsonl").read_bytes() == (
                work / "spark" / "detections.jsonl"
            ).read_bytes()
            detections = len((work / "run.jsonl").read_text().splitlines())
            row = {
                "stations": stations,
                "events": events,
                "detections": detections,
                "equal": same,
                "run": run,
                "spark": spark,
            }
            for side in ("run", "spark"):
                row[side]["events_per_s"] = events / row[side]["wall_s"]
                row[side]["events_per_cpu_s"] = events / row[side]["cpu_s"]
            rows.append(row)
            print(
                f"{stations:>6} stations {events:>9,} events {detections:>8,} detections "
                f"equal={same}  run --workers 2: {row['run']['events_per_s']:>8,.0f} ev/s "
                f"({row['run']['events_per_cpu_s']:,.0f} per CPU s)  spark local[2]: "
                f"{row['spark']['events_per_s']:>8,.0f} ev/s "
                f"({row['spark']['events_per_cpu_s']:,.0f} per CPU s)  peak MB: run "
                f"{run['peak_mb']:.0f}, driver {spark['driver_peak_mb']:.0f}, JVM "
                f"{spark['jvm_peak_mb']:.0f}, worker {spark['worker_peak_mb']:.0f}"
            )
        kernels = keyed_kernels(sc, rules, work / f"archive{sizes[-1]}")
        for name, k in kernels.items():
            print(
                f"keyed stage, {sizes[-1]} stations, {name}: {k['wall_s']:.1f} s wall, "
                f"{k['cpu_s']:.1f} CPU s, {k['records']:,} records"
            )
    if args.json:
        args.json.write_text(json.dumps({"sizes": rows, "keyed_stage": kernels}, indent=1))
    return 0 if all(r["equal"] for r in rows) else 1


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
