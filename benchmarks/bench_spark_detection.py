"""Detection on Spark: the streaming query's micro-batch latency and state size per key.

**Streaming** (``reasoner spark stream``): a stock ticker of ``--companies`` companies
(random walks, one quote per company per time unit) written as ``--files`` JSON-lines files,
taken one file per micro-batch (``available-now``) by the query on local Spark
(``--master``, default ``local[2]``), through a per-company rise within 10 time units and a
moving average over 5. Reported: events/s over the whole query, the micro-batches' latency
(Spark's ``triggerExecution`` time of each batch with data: p50, p99, max), and the state per
key (the state store's memory over its rows: a key's engine snapshot and waiting events), with
Spark's default state store or RocksDB (``--rocksdb``). The
detections are checked equal to one engine's over all files. Spark's start is not timed. The
machine may be shared (the load average is printed): the numbers are noisy.

    python benchmarks/bench_spark_detection.py             # 1,000 companies x 20 files x 10
    python benchmarks/bench_spark_detection.py --quick     # a smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from connectors.spark.session import get_session
from connectors.spark.stream import Sink, build_query, make_job
from reasoner.language.parser import parse
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event

RULES = """
rise(C, P1, P2) <- (quote(C, P1) SEQ quote(C, P2)).10 WHERE P2 > 1.05 * P1.
avg(C, A) <- aggregate(avg(P), quote(C, P), A, count(5)).
"""


ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"


def quotes(companies: int, files: int, per_file: int, seed: int = 7) -> list[list[Event]]:
    """Each file's quotes: ``per_file`` time units, one quote per company each."""
    rng = random.Random(seed)
    prices = [100.0] * companies
    out = []
    for f in range(files):
        events = []
        for t in range(f * per_file, (f + 1) * per_file):
            for c in range(companies):
                prices[c] = round(max(1.0, prices[c] * rng.uniform(0.96, 1.05)), 2)
                events.append(Event("quote", (f"C{c}", prices[c]), t, t))
        out.append(events)
    return out


def _write(folder: Path, number: int, events: list[Event]) -> None:
    aside = folder.parent / f".{number}"
    with open(aside, "w", encoding="utf-8") as f:
        for e in events:
            f.write(json.dumps({"name": e.name, "args": list(e.args), "time": e.end}) + "\n")
    target = folder / f"{number:05d}.jsonl"
    os.replace(aside, target)
    os.utime(target, (1_700_000_000 + number, 1_700_000_000 + number))


def streaming(args: argparse.Namespace) -> dict[str, Any]:
    files = quotes(args.companies, args.files, args.per_file)
    events = sum(len(f) for f in files)
    spark = get_session(master=args.master).newSession()
    spark.conf.set("spark.sql.shuffle.partitions", str(args.partitions))
    if args.rocksdb:
        spark.conf.set("spark.sql.streaming.stateStore.providerClass", ROCKSDB)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        source = base / "source"
        source.mkdir()
        for number, batch in enumerate(files):
            _write(source, number, batch)
        job = make_job(None, parse(RULES), fmt="jsonl", lateness=0, options={})
        sink = Sink(base / "out", lambda detections: None)
        query = (
            build_query(spark, job, str(source), files_per_batch=1)
            .writeStream.foreachBatch(sink)
            .option("checkpointLocation", str(base / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        started = time.perf_counter()
        query.awaitTermination()
        elapsed = time.perf_counter() - started
        progress = [p for p in query.recentProgress if p["numInputRows"] > 0]
        latencies = sorted(p["durationMs"]["triggerExecution"] / 1000 for p in progress)
        state = query.lastProgress["stateOperators"][0]
        detections = sink.counts["detection"]
    engine = Engine(RULES)
    expected = sum(len(engine.push(e)) for batch in files for e in batch)
    assert detections == expected, (detections, expected)
    return {
        "workload": "streaming",
        "state_store": "rocksdb" if args.rocksdb else "hdfs",
        "companies": args.companies,
        "files": args.files,
        "events": events,
        "detections": detections,
        "seconds": round(elapsed, 2),
        "events_per_s": round(events / elapsed),
        "batches": len(latencies),
        "latency_p50_s": round(statistics.median(latencies), 3),
        "latency_p99_s": round(latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))], 3),
        "latency_max_s": round(latencies[-1], 3),
        "state_keys": state["numRowsTotal"],
        "state_bytes_per_key": round(state["memoryUsedBytes"] / max(1, state["numRowsTotal"])),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--companies", type=int, default=1000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--per-file", type=int, default=10, help="time units per file")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--partitions", type=int, default=2, help="the state's partitions")
    parser.add_argument(
        "--rocksdb", action="store_true", help="the RocksDB state store (default: Spark's own)"
    )
    parser.add_argument("--quick", action="store_true", help="20 companies, 4 files")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args()
    if args.quick:
        args.companies, args.files = 20, 4
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    rows = [streaming(args)]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for row in rows:
        row["driver_peak_mb"] = round(peak)
        print(json.dumps(row))
    if args.json:
        args.json.write_text(json.dumps(rows), encoding="utf-8")


if __name__ == "__main__":
    main()
