"""Scale-out: ``reasoner run`` end to end beside one process, events/s with 1 and 2 worker
processes, checkpoint cost, snapshot size.

Three workloads (docs/scale-out.md):

* **the archive, end to end**: the MesoWest workload below as a user has it (one CSV export per
  station, the neighbourhood as a rule file of ``near_station`` facts, kept under ``out/``),
  through ``reasoner run`` in a subprocess: one process (the baseline) and ``--workers N``
  for each count in ``--workers`` (default 2; the workers read their stations' files),
  interleaved ``--repeat`` times; wall and CPU
  seconds, the detections checked equal, and the engine's in-process rate on the same
  readings (only the engine's work timed). With ``--spark``, ``reasoner spark replay`` on
  local[2] too, on the archive and on a one-reading archive (Spark's fixed cost), interleaved
  with the others (wall seconds, CPU seconds of the whole process tree: the JVM and Spark's
  Python workers too), and Spark net of that fixed cost against one process.

* **MesoWest-style replay**: ``--stations`` synthetic stations (default 2,000, spread over the
  interior West) whose readings come from the MesoWest generator (connectors/mesowest) with
  storm systems placed at random, through rules/blizzard.event with the NOAA definition. The
  station neighbourhood (``near_station``, within ``--near-km``) is given as facts, so no
  knowledge store is needed. The readings, settlings and warnings run per station; the area
  rules (``recent``) run in the global stage, on the warnings placed in one engine's order.
* **stock ticker** with ``--companies`` companies (random walks): per company, rises within a
  minute (recent policy) and a moving average over the last 10 quotes.
* **the ticker as JSON lines, end to end**: the same quotes written to one JSON-lines file
  (under ``out/``) through ``reasoner run``: one process, ``--workers 2`` with the router
  reading every line and sending the events (``profile_workers.py --router-reads``), and
  ``--workers 2`` with every worker reading the file and keeping its companies, interleaved
  ``--repeat`` times; wall and CPU seconds (the router's apart), detections checked equal.

Per workload: the single in-process engine, then ``ParallelEngine`` with 1 and 2 workers
(detections checked equal; building the engines is not timed, starting the workers is
measured apart), the cost of a snapshot every ``--checkpoint-every`` events per event (the
snapshots and their restores timed), and the snapshot size per stored occurrence. The events
are generated before timing; detections are counted, not written. The machine may be shared:
the load average is printed.

    python benchmarks/bench_scaleout.py            # 2,000 stations x 2 days, 2,000 companies
    python benchmarks/bench_scaleout.py --only archive --days 20   # end to end, 20 days
    python benchmarks/bench_scaleout.py --only archive --spark     # and spark replay, local[2]
    python benchmarks/bench_scaleout.py --only archive --days 20 --workers 2,4,8,16  # more cores
    python benchmarks/bench_scaleout.py --only mesowest   # the MesoWest rows (and 2 / 1) only
    python benchmarks/bench_scaleout.py --only lines --repeat 2   # JSON lines, end to end
    python benchmarks/bench_scaleout.py --quick    # a smoke run
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from itertools import islice
from pathlib import Path

from bench_blizzard import storm_systems

from connectors.events.jsonl import JsonLinesWriter
from connectors.events.merge import merge_streams
from connectors.mesowest.generator import simulate
from connectors.stations.table import Station, to_metres
from reasoner.knowledge.builtins import geo_distance_km
from reasoner.language.loader import load_rules
from reasoner.language.parser import parse
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.runtime.order import event_order
from reasoner.runtime.parallel import ParallelEngine

ROOT = Path(__file__).resolve().parent.parent

TICKER_RULES = """
rise([property(consumption_policy, recent)]) 'rule:'
rise(C, P1, P2) <- (stock(C, P1, _) SEQ stock(C, P2, _)).60 WHERE P2 > P1 * 1.01.
average(C, A) <- aggregate(avg(P), stock(C, P, _V), A, count(10)).
"""


def synthetic_stations(count: int, rng: random.Random) -> list[Station]:
    """``count`` stations at random places of the interior West (37-47 N, 121-103 W), drawn
    from ``rng`` (bench_spark_detection.py draws its storms from it next)."""
    return [
        Station(
            f"S{i:05d}",
            f"Station {i}",
            rng.uniform(37, 47),
            rng.uniform(-121, -103),
            to_metres(rng.uniform(2000, 9000), "ft"),
        )
        for i in range(count)
    ]


def neighbour_facts(stations: list[Station], km: float) -> str:
    """``near_station(A, B).`` for every two stations within ``km`` of each other."""
    cells: dict[tuple[int, int], list[Station]] = {}
    for s in stations:  # 1-degree cells: only neighbouring cells can be within km
        cells.setdefault((int(s.lat), int(s.lon)), []).append(s)
    lines = []
    for s in stations:
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                for t in cells.get((int(s.lat) + dy, int(s.lon) + dx), ()):
                    if t is not s and geo_distance_km(s.lat, s.lon, t.lat, t.lon) <= km:
                        lines.append(f"near_station('{s.id}', '{t.id}').")
    return "\n".join(lines) + "\n"


def mesowest_workload(stations: int, days: float, km: float, seed: int):
    table = synthetic_stations(stations, random.Random(seed))
    storms = storm_systems(table, days, seed)
    events = list(merge_streams(*(simulate(s, days, seed, storms) for s in table)))
    rules = load_rules(
        [str(ROOT / "rules" / "blizzard.event"), str(ROOT / "rules" / "blizzard_noaa.event")]
    )
    return rules + parse(neighbour_facts(table, km)), events


def ticker_workload(companies: int, quotes: int, seed: int):
    rng = random.Random(seed)
    prices = [rng.uniform(10, 500) for _ in range(companies)]
    events = []
    for i in range(quotes):
        c = rng.randrange(companies)
        prices[c] *= rng.uniform(0.98, 1.025)
        events.append(
            Event.at("stock", (f"C{c:05d}", round(prices[c], 2), rng.randint(1, 900)), i // 10)
        )
    return parse(TICKER_RULES), events


def timed(run: Callable[[], list[Event]]) -> tuple[float, tuple[float, float], list[Event]]:
    """Wall seconds and CPU seconds (of this process, of the worker processes) of ``run()``."""
    gc.collect()
    own, workers = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    out = run()
    wall = time.perf_counter() - began
    return wall, (_cpu(resource.RUSAGE_SELF) - own, _cpu(resource.RUSAGE_CHILDREN) - workers), out


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def measure(name: str, program, events: list[Event], every: int) -> dict:
    n = len(events)
    load = os.getloadavg()[0]
    print(f"{name}: {n:,} events, load average {load:.1f} on {os.cpu_count()} cores")
    single_engine = Engine(program)
    wall, (cpu, _), single = timed(lambda: list(single_engine.run(events)))
    expected = event_order(single)
    result = {"workload": name, "events": n, "load_average": load, "detections": len(expected)}
    result["single_engine_events_per_s"] = round(n / wall)
    result["single_engine_cpu_us_per_event"] = round(cpu / n * 1e6, 1)
    print(
        f"  single engine, in-process  {n / wall:>9,.0f} events/s ({len(expected):,} "
        f"detections), CPU {cpu / n * 1e6:.1f} us per event"
    )
    for workers in (1, 2):
        # Starting (compiling the stages, the knowledge, forking the workers) is timed apart,
        # as building the single engine is not timed: the rates are those of the stream.
        start_wall, (start_router, start_workers), _ = timed(
            lambda workers=workers: ParallelEngine(program, workers=workers).close() or []
        )
        children = _cpu(resource.RUSAGE_CHILDREN)  # (a child's CPU shows once it exited)
        engine = ParallelEngine(program, workers=workers)
        wall, (router, _), found = timed(lambda engine=engine: list(engine.run(events)))
        engine.close()
        worker = _cpu(resource.RUSAGE_CHILDREN) - children - start_workers
        assert found == expected, f"{workers} workers differ from the single engine"
        result[f"workers_{workers}_startup_s"] = round(start_wall, 2)
        result[f"workers_{workers}_events_per_s"] = round(n / wall)
        result[f"workers_{workers}_router_cpu_us_per_event"] = round(router / n * 1e6, 1)
        result[f"workers_{workers}_worker_cpu_us_per_event"] = round(worker / n * 1e6, 1)
        print(
            f"  --workers {workers}                {n / wall:>9,.0f} events/s (CPU per event: "
            f"router {router / n * 1e6:.1f} us, workers {worker / n * 1e6:.1f} us; starting: "
            f"{start_wall:.1f} s, CPU {start_router:.1f} s router, {start_workers:.1f} s workers)"
        )
    ratio = result["workers_2_events_per_s"] / result["workers_1_events_per_s"]
    result["speedup_2_over_1"] = round(ratio, 2)
    print(f"  2 workers / 1 worker       {ratio:>9.2f}x")
    # Checkpoint cost: the single engine with a snapshot every `every` events, each restored
    # into a second engine (as a restart would); the snapshots and restores are timed (the
    # difference of two whole runs drowns in the noise of a shared machine).
    engine, restarted = Engine(program), Engine(program)
    sizes, spent = [], {"snapshot": 0.0, "restore": 0.0}
    for i, event in enumerate(events, 1):
        engine.push(event)
        if i % every == 0:
            began = time.perf_counter()
            data = engine.snapshot()
            taken = time.perf_counter()
            restarted.restore(data)
            spent["snapshot"] += taken - began
            spent["restore"] += time.perf_counter() - taken
            sizes.append((len(data), engine.stats().stored))
    size, stored = max(sizes, key=lambda s: s[1]) if sizes else (len(engine.snapshot()), 1)
    snapshots = max(len(sizes), 1)
    result["checkpoint_every"] = every
    result["checkpoint_cost_us_per_event"] = round(spent["snapshot"] / n * 1e6, 2)
    result["snapshot_ms"] = round(spent["snapshot"] / snapshots * 1e3, 2)
    result["restore_ms"] = round(spent["restore"] / snapshots * 1e3, 2)
    result["snapshot_bytes"] = size
    result["snapshot_stored"] = stored
    result["snapshot_bytes_per_stored"] = round(size / max(stored, 1), 1)
    print(
        f"  snapshot every {every:,} events: {spent['snapshot'] / n * 1e6:.2f} us per event "
        f"({result['snapshot_ms']:.1f} ms per snapshot, {result['restore_ms']:.1f} ms per "
        f"restore); {size:,} bytes for {stored:,} stored occurrences "
        f"({size / max(stored, 1):.0f} B each)"
    )
    return result


def write_archive(folder: Path, stations: int, days: float, km: float, seed: int) -> list[Path]:
    """The MesoWest workload as a user has it: one CSV export per station (the generator's
    files, the same readings as :func:`mesowest_workload`) and the neighbourhood as a rule file
    of ``near_station`` facts; returns the rule files and the exports. Kept in ``folder`` (made
    once per size and seed: generating 2,000 stations takes a while)."""
    from connectors.mesowest.generator import generate

    table = synthetic_stations(stations, random.Random(seed))
    facts, exports = folder / "near_station.event", folder / "csv"
    rules = [ROOT / "rules" / "blizzard.event", ROOT / "rules" / "blizzard_noaa.event", facts]
    if not (folder / "complete").exists():
        storms = storm_systems(table, days, seed)
        files = generate(exports, table, days, seed, storms, interval_minutes=20)
        facts.write_text(neighbour_facts(table, km), encoding="utf-8")
        (folder / "complete").write_text("\n".join(f.name for f in files), encoding="utf-8")
    names = (folder / "complete").read_text(encoding="utf-8").split("\n")
    return rules + [exports / name for name in names]


def in_process_rate(program, files: list[Path]) -> tuple[float, int]:
    """The engine's own rate on the archive's readings (events/s, detections): the readings
    are read a block at a time, and only the engine's work on them is timed."""
    from connectors.mesowest.reader import MesoWestFile

    events = merge_streams(*(MesoWestFile(path) for path in files))
    engine, spent, count, found = Engine(program), 0.0, 0, 0
    while block := list(islice(events, 200_000)):
        gc.collect()
        began = time.perf_counter()
        found += sum(len(engine.push(event)) for event in block)
        spent += time.perf_counter() - began
        count += len(block)
    began = time.perf_counter()
    found += len(engine.flush())
    return count / (spent + time.perf_counter() - began), found


def run_paths(workers: list[int]) -> dict[str, list[str]]:
    """The end-to-end paths: ``reasoner run``'s options by name, one process (the baseline)
    first, then ``--workers N`` for each count."""
    return {"one process": []} | {f"--workers {n}": ["--workers", str(n)] for n in workers}


def end_to_end(
    stations: int,
    days: float,
    km: float,
    seed: int,
    repeat: int,
    spark: bool = False,
    workers: tuple[int, ...] = (2,),
) -> dict:
    """``reasoner run`` over the archive, each path in a subprocess, interleaved ``repeat``
    times (A B A B ...: the machine may be shared); wall and CPU seconds, detections checked
    equal (the sorted output lines: one process writes them in its derivation order). With
    ``spark``, ``reasoner spark replay`` (local[2]) too, and on a one-reading archive."""
    folder = ROOT / "out" / f"scaleout_archive_{stations}x{days:g}d_{seed}"
    files = write_archive(folder, stations, days, km, seed)
    rules, exports = files[:3], files[3:]
    program = load_rules([str(path) for path in rules])  # (and the parsed-program cache)
    readings = sum(1 for path in exports for line in path.open() if line[:1] == "S") - len(exports)
    name = f"archive ({stations} stations x {days:g} days)"
    print(f"{name}: {readings:,} readings, load average {os.getloadavg()[0]:.1f} (1 min)")
    argv = [sys.executable, "-m", "connectors.cli", "run", *map(str, rules), "--format", "mesowest"]
    argv += [arg for path in exports for arg in ("--events", str(path))]
    options = run_paths(list(workers))
    paths = [*options, *(SPARK if spark else ())]
    walls: dict[str, list[float]] = {path: [] for path in paths}
    cpus: dict[str, list[float]] = {path: [] for path in paths}
    outputs: dict[str, list[str]] = {}
    loads = []
    for _ in range(repeat):
        for path in paths:
            loads.append(os.getloadavg()[0])
            if path in SPARK:
                wall, cpu, out = spark_replay(rules, exports, folder, one=path != "spark replay")
            else:
                wall, cpu, out = run_path(argv, options[path], folder)
            walls[path].append(wall)
            cpus[path].append(cpu)
            if out is not None:
                found = sorted(out.read_text(encoding="utf-8").splitlines())
                assert outputs.setdefault("detections", found) == found, f"{path} differs"
    rate, detections = in_process_rate(program, exports)
    assert detections == len(outputs["detections"]), "the in-process engine differs"
    one = min(walls["one process"])
    result = {"workload": name, "events": readings, "detections": detections}
    result["load_average"] = [round(min(loads), 1), round(max(loads), 1)]
    result["in_process_events_per_s"] = round(rate)
    print(f"  the engine in-process      {rate:>9,.0f} readings/s ({detections:,} detections)")
    for path in paths:
        best, worst = min(walls[path]), max(walls[path])
        key = path.strip("-").replace(" ", "_").replace(",", "")
        result[f"{key}_wall_s"] = [round(w, 2) for w in walls[path]]
        result[f"{key}_cpu_s"] = [round(c, 2) for c in cpus[path]]
        if path in SPARK and path != "spark replay":
            print(f"  {path:<26} {best:6.1f}-{worst:.1f} s wall, CPU {min(cpus[path]):.1f} s")
            continue
        result[f"{key}_speedup"] = round(one / best, 2)
        print(
            f"  {path:<26} {best:6.1f}-{worst:.1f} s wall, {readings / best:>9,.0f} readings/s "
            f"({readings / best / rate:.2f} of in-process), CPU {min(cpus[path]):.1f} s; "
            f"{one / best:.2f}x one process (best of {repeat} each)"
        )
    if spark:
        net = min(walls["spark replay"]) - min(walls["spark replay, one reading"])
        result["spark_net_wall_s"] = round(net, 2)
        print(
            f"  spark replay net of one reading {net:.1f} s wall: "
            + (f"{one / net:.2f}x one process" if net > 0 else "n/a")
        )
    return result


def lines_end_to_end(companies: int, quotes: int, seed: int, repeat: int) -> list[dict]:
    """``reasoner run`` over the ticker as one JSON-lines file, each path in a subprocess,
    interleaved ``repeat`` times, under two programs: the ticker's rules (a detection per
    quote: the router's work is mostly the output) and its rises alone (few detections: mostly
    the input); wall and CPU seconds (the router's, from ``profile_workers.py``), the
    detections checked equal (sorted)."""
    folder = ROOT / "out" / f"scaleout_ticker_{companies}x{quotes}_{seed}"
    stream, out = folder / "ticker.jsonl", folder / "out.jsonl"
    if not stream.exists():
        folder.mkdir(parents=True, exist_ok=True)
        with stream.open("w", encoding="utf-8") as file:
            JsonLinesWriter(file).write_all(ticker_workload(companies, quotes, seed)[1])
    programs = {"ticker rules": TICKER_RULES, "rises only": TICKER_RULES.split("average")[0]}
    results = []
    for title, text in programs.items():
        rules = folder / f"{title.replace(' ', '_')}.event"
        rules.write_text(text, encoding="utf-8")
        name = f"ticker as JSON lines, {title} ({companies} companies, {quotes:,} quotes)"
        print(f"{name}: load average {os.getloadavg()[0]:.1f} (1 min)")
        run = ["run", str(rules), "--events", str(stream), "--output", str(out)]
        profile = [sys.executable, str(ROOT / "benchmarks" / "profile_workers.py")]
        paths = {
            "one process": [sys.executable, "-m", "connectors.cli", *run],
            "--workers 2, router reads": [*profile, "--router-reads", "--", *run, "--workers", "2"],
            "--workers 2": [*profile, "--", *run, "--workers", "2"],
        }
        results.append(_lines_runs(name, paths, out, quotes, repeat))
    return results


def _lines_runs(
    name: str, paths: dict[str, list[str]], out: Path, events: int, repeat: int
) -> dict:
    """Run each path ``repeat`` times, interleaved; print and return the times."""
    rows: dict[str, list[tuple[float, float, float]]] = {path: [] for path in paths}
    found: list[list[str]] = []
    for _ in range(repeat):
        for path, argv in paths.items():
            before = _cpu(resource.RUSAGE_CHILDREN)
            began = time.perf_counter()
            done = subprocess.run(argv, cwd=ROOT, capture_output=True, check=False, text=True)
            wall = time.perf_counter() - began
            assert done.returncode == 0, f"{path}: {done.stderr}"
            router = re.search(r"router: ([0-9.]+) s CPU", done.stderr)
            cpu = _cpu(resource.RUSAGE_CHILDREN) - before
            rows[path].append((wall, cpu, float(router.group(1)) if router else cpu))
            found.append(sorted(out.read_text(encoding="utf-8").splitlines()))
            assert found[0] == found[-1], f"{path} differs"
    result: dict = {"workload": name, "events": events, "detections": len(found[0])}
    for path, measured in rows.items():
        walls = [wall for wall, _, _ in measured]
        print(
            f"  {path:<26} {min(walls):6.1f}-{max(walls):.1f} s wall, "
            f"{events / min(walls):>9,.0f} events/s, CPU "
            + ", ".join(f"{cpu:.1f} (router {router:.1f})" for _, cpu, router in measured)
        )
        result[path] = [[round(x, 2) for x in row] for row in measured]
    return result


def run_path(argv: list[str], options: list[str], folder: Path) -> tuple[float, float, Path]:
    """One ``reasoner run`` path: wall seconds, CPU seconds (it and its workers), its output."""
    out = folder / "out.jsonl"
    before = _cpu(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(
        [*argv, *options, "--output", str(out)], cwd=ROOT, capture_output=True, check=False
    )
    wall = time.perf_counter() - began
    assert done.returncode == 0, f"{options}: {done.stderr.decode()}"
    return wall, _cpu(resource.RUSAGE_CHILDREN) - before, out


#: The Spark paths of ``--spark``.
SPARK = ("spark replay", "spark replay, one reading")


def spark_replay(
    rules: list[Path], exports: list[Path], folder: Path, one: bool
) -> tuple[float, float, Path | None]:
    """``reasoner spark replay`` on local[2] over the archive's exports (``one``: over the
    first one's first reading): wall seconds, CPU seconds of the process tree, its output
    (None for one reading)."""
    from bench_spark_detection import one_reading, timed_command

    events = exports[0].parent
    if one:
        events = folder / "one-reading"
        if not events.exists():
            one_reading(exports, events)
    out = folder / ("spark-one" if one else "spark")
    argv = [sys.executable, "-m", "connectors.cli", "spark", "replay", *map(str, rules)]
    argv += ["--format", "mesowest", "--events", str(events), "--out", str(out)]
    found = timed_command([*argv, "--master", "local[2]"], nice=False)  # (as the others run)
    return found["wall_s"], found["cpu_s"], None if one else out / "detections.jsonl"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument("--stations", type=int, default=2000)
    parser.add_argument("--days", type=float, default=2.0)
    parser.add_argument("--near-km", type=float, default=100.0)
    parser.add_argument("--companies", type=int, default=2000)
    parser.add_argument("--quotes", type=int, default=300_000)
    parser.add_argument("--checkpoint-every", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=2012)
    parser.add_argument(
        "--only",
        choices=("mesowest", "ticker", "archive", "lines"),
        help="measure one workload (default: all)",
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="archive, lines: runs of each path (interleaved)"
    )
    parser.add_argument("--spark", action="store_true", help="archive: spark replay (local[2]) too")
    parser.add_argument(
        "--workers",
        type=lambda text: tuple(int(n) for n in text.split(",")),
        default=(2,),
        help="archive: the worker counts to run beside one process, comma-separated (default 2)",
    )
    parser.add_argument("--json", type=Path, default=ROOT / "out" / "bench_scaleout.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.stations, args.days, args.companies, args.quotes = 100, 1.0, 100, 5_000
        args.checkpoint_every, args.repeat = 1_000, 1
    results = []
    if args.only in (None, "mesowest"):
        program, events = mesowest_workload(args.stations, args.days, args.near_km, args.seed)
        name = f"mesowest ({args.stations} stations)"
        results.append(measure(name, program, events, args.checkpoint_every))
    if args.only in (None, "archive"):
        results.append(
            end_to_end(
                args.stations,
                args.days,
                args.near_km,
                args.seed,
                args.repeat,
                args.spark,
                args.workers,
            )
        )
    if args.only in (None, "ticker"):
        program, events = ticker_workload(args.companies, args.quotes, args.seed)
        name = f"ticker ({args.companies} companies)"
        results.append(measure(name, program, events, args.checkpoint_every))
    if args.only in (None, "lines"):
        results += lines_end_to_end(args.companies, args.quotes, args.seed, args.repeat)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of the router process {peak:.0f} MB")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
