"""Start-up of ``reasoner run``: CPU time of the command on an empty stream (docs/benchmarks.md).

Per rule set, the command runs ``--runs`` times with the parsed rule files not yet cached
(the cache folder of parsed rules emptied before each run; lark's grammar cache kept, as on
any machine after the first run) and ``--runs`` times with them cached, alternately. The CPU
time is the child's user + system time (``rusage``), which counts this command's work only
(the machine may be shared; the load average is printed); the median and the range are given.
The cached runs must not write the cache again (checked: the benchmark fails otherwise).

The last rule set adds a fact file to the blizzard rules: the ``near_station(A, B).`` facts of
2,000 synthetic MesoWest stations within 100 km of each other (70,390 facts, as
bench_scaleout.py gives them); what they add to the blizzard rules' start-up is printed.

    python benchmarks/bench_startup.py            # 15 runs each
    python benchmarks/bench_startup.py --quick    # 2 runs each
    python benchmarks/bench_startup.py --only facts   # the blizzard rules with and without facts
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Stands for the generated fact file in a rule set.
NEAR_STATION = "near_station.event"
BLIZZARD = ["rules/blizzard.event", "rules/blizzard_noaa.event"]
RULE_SETS = {
    "stock ticker": ["rules/stock_ticker.event"],
    "blizzard (NOAA)": BLIZZARD,
    "blizzard + facts": [*BLIZZARD, NEAR_STATION],
}


def near_station_facts(path: Path) -> int:
    """Write the ``near_station`` facts of 2,000 synthetic stations to ``path``; their count."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_scaleout import neighbour_facts, synthetic_stations

    text = neighbour_facts(synthetic_stations(2000, random.Random(2012)), 100.0)
    path.write_text(text, encoding="utf-8")
    return text.count("\n")


def run_cpu(rules: list[str], empty: Path, cache: Path) -> float:
    """The CPU seconds of one ``reasoner run RULES --events EMPTY``."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: modules load from bytecode
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-m", "connectors.cli", "run", *rules, "--events", str(empty)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def measure(name: str, rules: list[str], runs: int, folder: Path) -> dict:
    empty = folder / "empty.jsonl"
    empty.write_bytes(b"")
    if NEAR_STATION in rules:
        facts = near_station_facts(folder / NEAR_STATION)
        rules = [str(folder / NEAR_STATION) if r == NEAR_STATION else r for r in rules]
        print(f"({facts:,} near_station facts)")
    cache = folder / "cache"
    programs = cache / "etalis-reasoner" / "programs"
    run_cpu(rules, empty, cache)  # lark's grammar cache, and the bytecode, are made once
    cold, warm, rewritten = [], [], 0
    for _ in range(runs):
        shutil.rmtree(programs, ignore_errors=True)
        cold.append(run_cpu(rules, empty, cache))
        written = {p.name: p.stat().st_mtime_ns for p in programs.iterdir()}
        warm.append(run_cpu(rules, empty, cache))
        rewritten += written != {p.name: p.stat().st_mtime_ns for p in programs.iterdir()}
    if rewritten:
        raise SystemExit(f"{name}: a run with the rules cached wrote the cache again")
    row = {"rules": name, "runs": runs, "load_average": round(os.getloadavg()[0], 1)}
    for label, times in (("not_cached", cold), ("cached", warm)):
        row[f"{label}_median_s"] = round(statistics.median(times), 3)
        row[f"{label}_min_s"] = round(min(times), 3)
        row[f"{label}_max_s"] = round(max(times), 3)
    row["rule_files_cached"] = len(list(programs.iterdir()))
    print(
        f"{name:<16} parsed rules not cached {row['not_cached_median_s']:.3f} s "
        f"({row['not_cached_min_s']:.3f}-{row['not_cached_max_s']:.3f}), cached "
        f"{row['cached_median_s']:.3f} s ({row['cached_min_s']:.3f}-{row['cached_max_s']:.3f}) "
        f"CPU, median of {runs}; load average {row['load_average']}"
    )
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 runs each")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--only", choices=["facts"], help="the blizzard rule sets only")
    parser.add_argument("--json", type=Path, default=ROOT / "out" / "bench_startup.json")
    args = parser.parse_args(argv)
    runs = 2 if args.quick else args.runs
    rows = []
    for name, rules in RULE_SETS.items():
        if args.only and not name.startswith("blizzard"):
            continue
        with tempfile.TemporaryDirectory() as folder:
            rows.append(measure(name, rules, runs, Path(folder)))
    by_name = {row["rules"]: row for row in rows}
    with_facts, without = by_name["blizzard + facts"], by_name["blizzard (NOAA)"]
    added = {
        label: round(with_facts[f"{label}_median_s"] - without[f"{label}_median_s"], 3)
        for label in ("not_cached", "cached")
    }
    with_facts["facts_add_s"] = added
    print(
        f"the facts add {added['not_cached']:.3f} s not cached, {added['cached']:.3f} s cached "
        "(difference of the medians)"
    )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
