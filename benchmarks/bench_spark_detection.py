"""Detection on Spark: archive replay against ``reasoner run`` (one process), and streaming.

**Replay** (``reasoner spark replay``). A synthetic MesoWest archive (``--stations`` stations
at 3 sizes, ``--days`` days, readings every 20 minutes, from the generator in
connectors/mesowest; one CSV file per station) runs through a station-keyed program (cold
readings, cold spells within two hours per station, both keyed, with a global alarm rule after
them), or with ``--blizzard`` through the blizzard rules (NOAA definition) with the stations'
neighbourhood as ``near_station`` facts (within ``--near-km``). Per size, each end to end as a
user runs it (niced subprocesses):

* ``reasoner run`` (one process: the baseline): wall time and CPU time;
* ``reasoner spark replay`` on local[2] (a fresh JVM): wall time and CPU time of the whole
  process tree (driver, JVM, Spark's Python workers), and the same on a one-reading archive
  (Spark's fixed cost); Spark net of that fixed cost against one process (the speed-up two
  cores give);
* the outputs compared line for line (one process writes in derivation order, Spark in the
  defined order of ``--workers``), and the engine's in-process rate on the same readings.

Then how the CPU cost grows (a fixed part plus a part per event, for both), and a projection
to 16- and 64-core clusters (the driver's CPU seconds serial, the rest spread over the cores:
a projection, not a measurement).

**Streaming** (``reasoner spark stream``). A stock ticker of ``--companies`` companies (random
walks, one quote per company per time unit) written as ``--files`` JSON-lines files, taken one
file per micro-batch (``available-now``) by the query on local Spark (``--master``, default
``local[2]``; its JVM with the quick JIT only, as ``spark stream`` starts it), through a
per-company rise within 10 time units and a moving average over 5.
Per size (``--companies``, default 1,000 and 20,000; ``--files`` default 8 micro-batches of
10,000 quotes per 1,000 companies): events/s over the whole query (and per CPU second of the
driver, the JVM and the Python workers), the micro-batches' latency (Spark's
``triggerExecution`` time of each batch with data: p50, p99, max), how many key group steps
found their live state in the worker (restoring nothing), and the state per key (the state
store's memory over the companies), with Spark's default state store or RocksDB
(``--rocksdb``); beside it ``reasoner run`` over the same files in a subprocess (its start
included), whose detections must equal the query's. Spark's start is not timed. Then the
keyed step alone, in this process: the CPU time per micro-batch of stepping every key group
and writing its state row, with the live state and with the state restored first.

The machine may be shared: the load average is printed, and events per CPU second are the
numbers to compare when wall times are stretched by other people's work. Peak memory: the
driver's, the JVM's, and the largest Python worker's.

    python benchmarks/bench_spark_detection.py                 # replay at 200, 800, 2,000
                                                               # stations x 2 days; streaming
                                                               # 1,000, 20,000 companies x 8 files
    python benchmarks/bench_spark_detection.py --quick         # a smoke run of both
    python benchmarks/bench_spark_detection.py --only replay --blizzard --stations 2000 --days 20
                                                       # issue 32's bar: 2,880,000 readings
    python benchmarks/bench_spark_detection.py --only streaming --companies 1000
                                                       # the bar: 8 micro-batches of 10,000
    python benchmarks/bench_spark_detection.py --only streaming --rocksdb
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
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

FULL, QUICK = (200, 800, 2000), (6, 12)

#: The cluster sizes (cores) of the projection.
CLUSTERS = (16, 64)


def _tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a process and every live descendant, with the children
    each has waited for (Spark's Python workers that ended, e.g. idle for a minute)."""
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
            total += sum(int(field) for field in stats[p][11:15]) / tick
        todo += children.get(p, [])
    return total


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
    """One MesoWest CSV file per synthetic station of bench_scaleout.py (storms at a tenth
    of them)."""
    from datetime import UTC, datetime, timedelta

    from bench_scaleout import synthetic_stations

    from connectors.mesowest.generator import Storm, generate

    rng = random.Random(seed)
    table = synthetic_stations(stations, rng)
    start = datetime(2021, 1, 10, tzinfo=UTC)
    storms = [
        Storm(s.id, start + timedelta(hours=rng.uniform(0, days * 24 - 8)), hours=8)
        for s in rng.sample(table, max(1, stations // 10))
    ]
    return generate(folder, table, days, seed, storms, interval_minutes=20)


def blizzard_rules(work: Path, stations: int, near_km: float, seed: int = 7) -> list[Path]:
    """The blizzard rules (NOAA definition) and the neighbourhood of :func:`make_archive`'s
    stations as ``near_station`` facts (within ``near_km``)."""
    from bench_scaleout import neighbour_facts, synthetic_stations

    facts = work / f"near{stations}.event"
    facts.write_text(neighbour_facts(synthetic_stations(stations, random.Random(seed)), near_km))
    return [ROOT / "rules" / "blizzard.event", ROOT / "rules" / "blizzard_noaa.event", facts]


def one_reading(files: list[Path], folder: Path) -> Path:
    """An archive of the first file's header and first reading: Spark's fixed cost."""
    folder.mkdir()
    lines = files[0].read_text(encoding="utf-8").splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if line.startswith("S0"))
    (folder / files[0].name).write_text("".join(lines[: first + 1]), encoding="utf-8")
    return folder


def timed_command(argv: list[str], nice: bool = True) -> dict[str, Any]:
    """Run a command (niced unless told, from the repository root): wall seconds, and CPU
    seconds of its whole process tree (the JVM and Spark's Python workers too) and of its
    first process (the driver), sampled every 0.1 s until it exits."""
    with tempfile.TemporaryFile("w+") as errors:  # (a pipe could fill and stop the child)
        started = time.perf_counter()
        child = subprocess.Popen(
            ["nice", *argv] if nice else argv,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            text=True,
        )
        tree = own = 0.0
        while child.poll() is None:
            tree, own = max(tree, _tree_cpu(child.pid)), max(own, _own_cpu(child.pid))
            time.sleep(0.1)
        wall = time.perf_counter() - started
        if child.returncode not in (0, 3):
            errors.seek(0)
            raise SystemExit(f"{' '.join(argv)} failed ({child.returncode}):\n{errors.read()}")
    return {"wall_s": wall, "cpu_s": tree, "driver_cpu_s": own}


def _own_cpu(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(field) for field in fields[11:13]) / os.sysconf("SC_CLK_TCK")


def run_one(rules: list[Path], folder: Path, out: Path) -> dict[str, Any]:
    """``reasoner run`` (one process), end to end."""
    argv = [sys.executable, "-m", "connectors.cli", "run", *map(str, rules), "--format", "mesowest"]
    for file in sorted(folder.iterdir()):
        argv += ["--events", str(file)]
    return timed_command([*argv, "--output", str(out)])


def run_spark(rules: list[Path], folder: Path, out: Path) -> dict[str, Any]:
    """``reasoner spark replay`` on local[2], end to end (a fresh JVM, as a user runs it)."""
    argv = [sys.executable, "-m", "connectors.cli", "spark", "replay", *map(str, rules)]
    argv += ["--format", "mesowest", "--events", str(folder), "--out", str(out)]
    return timed_command([*argv, "--master", "local[2]"])


def engine_rate(rules: list[Path], folder: Path) -> float:
    """The engine's in-process rate (events/s) on the archive's readings, read beforehand."""
    from connectors.events.inputs import open_events
    from connectors.events.merge import merge_streams
    from connectors.events.times import TimeStyle
    from reasoner.language.ast import event_arities
    from reasoner.language.loader import load_rules
    from reasoner.runtime.engine import Engine

    program = load_rules(rules)
    arities = event_arities(program)
    streams = [
        list(open_events(str(f), "mesowest", TimeStyle(), lambda _: None, {}, arities, []))
        for f in sorted(folder.iterdir())
    ]
    events = list(merge_streams(*streams))
    engine = Engine(program)
    started = time.perf_counter()
    for _ in engine.run(events):
        pass
    return len(events) / (time.perf_counter() - started)


TICKER_RULES = """
rise(C, P1, P2) <- (quote(C, P1) SEQ quote(C, P2)).10 WHERE P2 > 1.05 * P1.
avg(C, A) <- aggregate(avg(P), quote(C, P), A, count(5)).
"""


ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"


def quotes(companies: int, files: int, per_file: int, seed: int = 7) -> list[list[Any]]:
    """Each file's quotes: ``per_file`` time units, one quote per company each."""
    from reasoner.runtime.events import Event

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


def _write(folder: Path, number: int, events: list[Any]) -> None:
    aside = folder.parent / f".{number}"
    with open(aside, "w", encoding="utf-8") as f:
        for e in events:
            f.write(json.dumps({"name": e.name, "args": list(e.args), "time": e.end}) + "\n")
    target = folder / f"{number:05d}.jsonl"
    os.replace(aside, target)
    os.utime(target, (1_700_000_000 + number, 1_700_000_000 + number))


def streaming(args: argparse.Namespace, companies: int) -> dict[str, Any]:
    """The streaming part at ``companies``: the query over the ticker's files, one per
    micro-batch, then ``reasoner run`` over the same files; the detections compared."""
    from connectors.spark.session import get_session
    from connectors.spark.stream import FOLDERS, Sink, build_query, file_manager, make_job
    from reasoner.language.parser import parse
    from reasoner.runtime.options import EngineOptions

    files = quotes(companies, args.files, args.per_file)
    events = sum(len(f) for f in files)
    spark = get_session(
        master=args.master, quick_start=True, java_options=args.java_options
    ).newSession()
    spark.conf.set("spark.sql.shuffle.partitions", str(args.partitions))
    # (as run_stream starts its query)
    spark.conf.set("spark.sql.streaming.checkpointFileManagerClass", file_manager(spark.version))
    for setting in args.conf:  # (Spark SQL settings to measure, e.g. the state store's)
        key, _, value = setting.partition("=")
        spark.conf.set(key, value)
    if args.rocksdb:
        spark.conf.set("spark.sql.streaming.stateStore.providerClass", ROCKSDB)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        source = base / "source"
        source.mkdir()
        for number, batch in enumerate(files):
            _write(source, number, batch)
        job = make_job(parse(TICKER_RULES), fmt="jsonl", lateness=0, options=EngineOptions())
        sink = Sink(base / "out", lambda detections: None)
        query = (
            build_query(spark, job, str(source), files_per_batch=1)
            .writeStream.foreachBatch(sink)
            .option("checkpointLocation", str(base / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        cpu0, split0, started = _tree_cpu(os.getpid()), _cpu_split(), time.perf_counter()
        with JvmThreads() as jvm_threads:
            query.awaitTermination()
        elapsed, cpu = time.perf_counter() - started, _tree_cpu(os.getpid()) - cpu0
        split = {k: round(v - split0[k], 1) for k, v in _cpu_split().items()}
        progress = [p for p in query.recentProgress if p["numInputRows"] > 0]
        latencies = sorted(p["durationMs"]["triggerExecution"] / 1000 for p in progress)
        state = query.lastProgress["stateOperators"][0]
        found = sorted(
            line
            for path in (base / "out" / FOLDERS["detection"]).glob("batch-*.jsonl")
            for line in path.read_text(encoding="utf-8").splitlines()
        )
        run = run_reasoner(base, sorted(source.iterdir()))
    equal = found == run.pop("lines")
    return {
        "workload": "streaming",
        "state_store": "rocksdb" if args.rocksdb else "hdfs",
        "companies": companies,
        "files": args.files,
        "events": events,
        "detections": len(found),
        "equal": equal,
        "seconds": round(elapsed, 2),
        "events_per_s": round(events / elapsed),
        "events_per_cpu_s": round(events / cpu),
        "cpu_s": split,
        "jvm_threads_cpu_s": jvm_threads.split(),
        "batches": len(latencies),
        "latency_p50_s": round(statistics.median(latencies), 3),
        "latency_p99_s": round(latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))], 3),
        "latency_max_s": round(latencies[-1], 3),
        "batch_s": [round(p["durationMs"]["triggerExecution"] / 1000, 2) for p in progress],
        "phases_p50_ms": phases(progress),
        "group_steps": sink.counts["group_steps"],
        "live_reused": sink.counts["reused"],  # (group steps that restored nothing)
        "state_keys": companies,
        "state_groups": state["numRowsTotal"],  # (the key groups holding the keys' state)
        "state_bytes_per_key": round(state["memoryUsedBytes"] / companies),
        "reasoner_run": run,
    }


def phases(progress: list[dict[str, Any]]) -> dict[str, float]:
    """Where a micro-batch's time goes: the median over the batches with data of each of
    Spark's ``durationMs`` phases (``addBatch``: the batch's job, the sink included;
    ``triggerExecution``: the whole batch) and of the state operator's update and commit
    times (milliseconds)."""
    found: dict[str, list[float]] = {}
    for p in progress:
        for name, ms in p["durationMs"].items():
            found.setdefault(name, []).append(ms)
        for name in ("allUpdatesTimeMs", "commitTimeMs"):
            found.setdefault(f"state.{name}", []).append(p["stateOperators"][0][name])
    return {name: statistics.median(values) for name, values in sorted(found.items())}


def _cpu_split() -> dict[str, float]:
    """CPU seconds so far of this process (the driver), of Spark's JVM alone, and of the
    JVM's descendants (the Python workers)."""
    tick = os.sysconf("SC_CLK_TCK")
    own = resource.getrusage(resource.RUSAGE_SELF)
    found = {"driver": own.ru_utime + own.ru_stime, "jvm": 0.0, "python_workers": 0.0}
    for pid in _descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"java" not in f.read().split(b"\0")[0]:
                    continue
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        alone = sum(int(field) for field in fields[11:13]) / tick
        found["jvm"] += alone
        found["python_workers"] += _tree_cpu(pid) - alone
    return found


#: The JVM's threads by what they do (Linux names a thread by its first 15 characters).
JVM_THREADS = {
    "stream executio": "query_thread",  # planning each batch, the logs, the sink's collect
    "Executor task l": "tasks",  # the tasks: rows to and from Python, the state store
    "C1 CompilerThre": "jit",
    "C2 CompilerThre": "jit",
    "GC Thread#": "gc",
    "G1 ": "gc",
}


class JvmThreads:
    """CPU seconds of Spark's JVM's threads while the block runs, summed by
    :data:`JVM_THREADS` (the rest: ``other``: the scheduler, Py4J's calls, the listeners):
    read every 0.2 s, as the query's threads end with it."""

    def __init__(self) -> None:
        self.seen: dict[str, tuple[str, float]] = {}  # (thread: its kind, CPU seconds)
        self._stop = threading.Event()
        self._poller = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self) -> JvmThreads:
        self.before = dict(self._read())
        self._poller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._poller.join()

    def _poll(self) -> None:
        while not self._stop.wait(0.2):
            self.seen.update(self._read())

    def split(self) -> dict[str, float]:
        """The CPU seconds of each kind of thread during the block."""
        found: dict[str, float] = {}
        for tid, (kind, cpu) in self.seen.items():
            found[kind] = found.get(kind, 0.0) + cpu - self.before.get(tid, (kind, 0.0))[1]
        return {kind: round(cpu, 2) for kind, cpu in sorted(found.items())}

    @staticmethod
    def _read() -> Iterator[tuple[str, tuple[str, float]]]:
        tick = os.sysconf("SC_CLK_TCK")
        for pid in _descendants(os.getpid()):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if b"java" not in f.read().split(b"\0")[0]:
                        continue
                tasks = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for task in tasks:
                try:
                    with open(f"/proc/{pid}/task/{task}/stat") as f:
                        stat = f.read()
                except OSError:
                    continue
                name = stat[stat.index("(") + 1 : stat.rindex(")")]
                kind = next((k for p, k in JVM_THREADS.items() if name.startswith(p)), "other")
                cpu = sum(int(x) for x in stat.rsplit(")", 1)[1].split()[11:13]) / tick
                yield task, (kind, cpu)


def run_reasoner(base: Path, files: list[Path]) -> dict[str, Any]:
    """``reasoner run`` over ``files`` in a subprocess (its start included): wall and CPU
    seconds, events/s, and its detections' lines, sorted."""
    out, rules = base / "run.jsonl", base / "ticker.event"
    rules.write_text(TICKER_RULES, encoding="utf-8")
    argv = [sys.executable, "-m", "connectors.cli", "run", str(rules), "--output", str(out)]
    for f in files:
        argv += ["--events", str(f)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = sorted(out.read_text(encoding="utf-8").splitlines())
    events = sum(1 for f in files for _ in f.open(encoding="utf-8"))
    return {
        "seconds": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "events_per_s": round(events / wall),
        "events_per_cpu_s": round(events / cpu),
        "lines": lines,
    }


def group_rows(number: int, batch: list[Any]) -> dict[int, list[tuple[Any, ...]]]:
    """The rows of micro-batch ``number`` (file ``NNNNN.jsonl``) by key group, as the
    streaming query hands them to a group's step (file, line, key, the event's JSON, whether
    its times were ISO), the companies hashed into the key groups by
    :func:`~reasoner.runtime.batches.key_owner` (the same groups in every run; Spark hashes
    them its own way)."""
    from connectors.spark.stream import KEY_GROUPS
    from reasoner.runtime.batches import key_owner
    from reasoner.runtime.checkpoint import encode

    rows: dict[int, list[tuple[Any, ...]]] = {}
    for line, e in enumerate(batch, 1):
        row = (f"{number:05d}.jsonl", line, e.args[0], json.dumps(encode(e)), False)
        rows.setdefault(key_owner(e.args[0], KEY_GROUPS), []).append(row)
    return rows


def group_steps(files: list[list[Any]]) -> dict[str, Any]:
    """The keyed step of the streaming query in one process, without Spark: the CPU time
    per micro-batch of stepping every key group (64: :func:`group_rows`) and
    writing its state row, with the live state kept (as the worker that wrote it does) and
    with the state restored from its row first (as another worker does). Checked against
    one engine over the same events (those of the last file still wait)."""
    from connectors.spark.detect import Stage
    from connectors.spark.keystate import DETECTION, GroupDetector
    from connectors.spark.sources import Keys
    from reasoner.language.parser import parse
    from reasoner.runtime.engine import Engine

    program = parse(TICKER_RULES)
    detector = GroupDetector(Stage(program), 0, Keys(((("quote", 2), 0),), False))
    found: dict[str, Any] = {}
    engine = Engine(program)
    expected = sum(len(engine.push(e)) for batch in files[:-1] for e in batch)
    for way in ("live", "restored"):
        states: dict[int, Any] = {}
        watermark: Any = 0  # the latest end of the earlier micro-batches
        spent, detections = 0.0, 0
        for number, batch in enumerate(files):
            rows = group_rows(number, batch)
            began = time.process_time()  # (CPU time: the machine may be shared)
            for group, taken in rows.items():
                state = states.get(group) or detector.new()
                if way == "restored" and group in states:
                    state = detector.load(detector.dump(state, "s"), group, state.engine)
                out, _ = detector.step(state, taken, watermark)
                detector.dump(state, "s")
                states[group] = state
                detections += sum(int(text) for kind, text, _ in out if kind == DETECTION)
            spent += time.process_time() - began
            watermark = batch[-1].end
        assert detections == expected, (way, detections, expected)
        found[f"group_step_{way}_ms_per_batch"] = round(spent / len(files) * 1e3, 1)
    return found


def projection(row: dict[str, Any]) -> dict[int, float]:
    """Events/s on clusters of :data:`CLUSTERS` cores, projected (not measured) from one
    run net of the fixed cost: the driver's CPU seconds stay serial (the global stage, the
    merge, the writing), the rest (the JVM and the Python workers: reading, the shuffle,
    the keyed stage) is spread evenly over the cores."""
    serial = row["spark_net"]["driver_cpu_s"]
    spread = row["spark_net"]["cpu_s"] - serial
    return {cores: row["events"] / (serial + spread / cores) for cores in CLUSTERS}


def growth(rows: list[dict[str, Any]], side: str) -> dict[str, float] | None:
    """CPU seconds as a fixed part plus a part per event (least squares over the sizes)."""
    if len(rows) < 2:
        return None
    xs = [r["events"] for r in rows]
    ys = [r[side]["cpu_s"] for r in rows]
    slope, fixed = statistics.linear_regression(xs, ys)
    return {"fixed_cpu_s": fixed, "cpu_ms_per_event": 1000 * slope}


def replay(sizes: Sequence[int], days: float, blizzard: bool, near_km: float) -> dict[str, Any]:
    """The replay part: per size, one process and Spark end to end, Spark net of its time on
    a one-reading archive, the engine in-process; then the growth."""
    rows: list[dict[str, Any]] = []
    found: dict[str, Any] = {"sizes": rows}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for stations in sizes:
            folder = work / f"archive{stations}"
            files = make_archive(folder, stations, days)
            if blizzard:
                rules = blizzard_rules(work, stations, near_km)
            else:
                rules = [work / "cold.event"]
                rules[0].write_text(RULES, encoding="utf-8")
            row = replay_size(rules, folder, files, work / f"out{stations}")
            rows.append(row)
        for side in ("one", "spark"):
            fit = found[f"growth_{side}"] = growth(rows, side)
            if fit is not None:
                print(
                    f"growth, {side}: {fit['fixed_cpu_s']:.1f} CPU s fixed + "
                    f"{fit['cpu_ms_per_event']:.3f} CPU ms per event"
                )
    return found


def replay_size(rules: list[Path], folder: Path, files: list[Path], work: Path) -> dict[str, Any]:
    """One archive: the row of :func:`replay` (and its lines printed)."""
    work.mkdir()
    events = sum(
        sum(1 for line in f.read_text().splitlines() if line.startswith("S0")) for f in files
    )
    from connectors.spark.classes import java_options

    archive = java_options() != ""  # (Spark's class archive, written by scripts/setup.sh)
    print(
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; Spark's class "
        f"archive {'built' if archive else 'not built (scripts/setup.sh writes it)'}"
    )
    fixed = run_spark(rules, one_reading(files, work / "one-reading"), work / "fixed")
    one = run_one(rules, folder, work / "run.jsonl")
    spark = run_spark(rules, folder, work / "spark")
    # (one process writes in derivation order, Spark in the defined order of --workers)
    same = sorted((work / "run.jsonl").read_bytes().splitlines()) == sorted(
        (work / "spark" / "detections.jsonl").read_bytes().splitlines()
    )
    net = {key: spark[key] - fixed[key] for key in spark}
    row: dict[str, Any] = {
        "stations": len(files),
        "events": events,
        "detections": len((work / "run.jsonl").read_text().splitlines()),
        "equal": same,
        "one": one,
        "spark": spark,
        "spark_fixed": fixed,
        "spark_net": net,
        "engine_events_per_s": engine_rate(rules, folder),
        "class_archive": archive,
    }
    row["net_speedup"] = one["wall_s"] / net["wall_s"] if net["wall_s"] > 0 else None
    row["projected_events_per_s"] = projection(row)
    speedup = "n/a" if row["net_speedup"] is None else f"{row['net_speedup']:.2f}x"
    print(
        f"{row['stations']:>6} stations {events:>9,} events {row['detections']:>8,} detections "
        f"equal={same}\n"
        f"  engine in-process {row['engine_events_per_s']:>9,.0f} ev/s\n"
        f"  reasoner run      {events / one['wall_s']:>9,.0f} ev/s ({one['wall_s']:.1f} s, "
        f"{one['cpu_s']:.1f} CPU s)\n"
        f"  spark replay      {events / spark['wall_s']:>9,.0f} ev/s ({spark['wall_s']:.1f} s, "
        f"{spark['cpu_s']:.1f} CPU s); on one reading {fixed['wall_s']:.1f} s, "
        f"{fixed['cpu_s']:.1f} CPU s\n"
        f"  spark net of one reading: {net['wall_s']:.1f} s, {speedup} one process (local[2])\n"
        f"  projection (not a measurement): driver {net['driver_cpu_s']:.1f} of "
        f"{net['cpu_s']:.1f} CPU s; "
        + ", ".join(
            f"{cores} cores {rate:,.0f} ev/s"
            for cores, rate in row["projected_events_per_s"].items()
        )
    )
    return row


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run of both parts")
    parser.add_argument("--only", choices=("replay", "streaming"), help="one part only")
    parser.add_argument("--json", type=Path, help="also write the results as JSON")
    parser.add_argument("--master", default="local[2]", help="Spark master (streaming)")
    replay_args = parser.add_argument_group("replay")
    replay_args.add_argument("--stations", type=int, nargs="+", help="archive sizes (stations)")
    replay_args.add_argument("--days", type=float, help="days per archive (default 2; quick 1)")
    replay_args.add_argument(
        "--blizzard",
        action="store_true",
        help="the blizzard rules (NOAA) with the stations' neighbourhood as near_station facts",
    )
    replay_args.add_argument(
        "--near-km", type=float, default=100.0, help="with --blizzard: the neighbourhood (km)"
    )
    streaming_args = parser.add_argument_group("streaming")
    streaming_args.add_argument("--companies", type=int, nargs="+", default=[1000, 20000])
    streaming_args.add_argument("--files", type=int, default=8)
    streaming_args.add_argument("--per-file", type=int, default=10, help="time units per file")
    streaming_args.add_argument(
        "--partitions",
        type=int,
        default=1,
        help="the state's partitions (spark stream --state-partitions)",
    )
    streaming_args.add_argument(
        "--rocksdb", action="store_true", help="the RocksDB state store (default: Spark's own)"
    )
    streaming_args.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark SQL setting for the query's session (repeatable)",
    )
    streaming_args.add_argument(
        "--java-options",
        default="",
        help="more options for the driver's JVM (e.g. a flight recording)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.companies, args.files = [20], 4
    found: dict[str, Any] = {}
    equal = True
    if args.only != "streaming":
        sizes = args.stations or (QUICK if args.quick else FULL)
        days = args.days or (1 if args.quick else 2)
        found["replay"] = replay(sizes, days, args.blizzard, args.near_km)
        equal = all(r["equal"] for r in found["replay"]["sizes"])
    if args.only != "replay":
        found["streaming"] = []
        for companies in args.companies:
            print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
            row = streaming(args, companies)
            row.update(group_steps(quotes(companies, args.files, args.per_file)))
            row["driver_peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
            print(json.dumps(row))
            found["streaming"].append(row)
            equal = equal and row["equal"]
    if args.json:
        args.json.write_text(json.dumps(found, indent=1), encoding="utf-8")
    return 0 if equal else 1


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
