"""Rules changed while the stream runs: what ``Engine.add_rules`` / ``remove_rules`` cost on a
large program, and that events are processed as fast after changes as before.

    r<i> 'rule:' c<i>(X) <- a<i>(X) SEQ b<i>(X).      for i < RULES

The stream alternates a<i>(j), b<i>(j) over the first ten rules (one detection per pair). Each
change adds, or removes by its label, one more rule of the same shape. Measured in-process
(events generated before timing). Prints a table and writes JSON (``--json``); ``--quick`` is a
smoke run of the harness.

    python benchmarks/bench_dynamic_rules.py            # 100 and 1,000 rules
    python benchmarks/bench_dynamic_rules.py --quick
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from bench_stock_ticker import replay

from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event

HOT = 10  # the rules the stream feeds


def rule(i: int) -> str:
    return f"r{i} 'rule:' c{i}(X) <- a{i}(X) SEQ b{i}(X).\n"


def stream(pairs: int) -> list[Event]:
    events = []
    for j in range(pairs):
        events.append(Event.at(f"a{j % HOT}", (j,), 2 * j))
        events.append(Event.at(f"b{j % HOT}", (j,), 2 * j + 1))
    return events


def _timed(call: Callable[[], object]) -> float:
    """CPU seconds of ``call()``."""
    start = time.process_time()
    call()
    return time.process_time() - start


def measure(size: int, changes: int, events: list[Event]) -> dict[str, object]:
    text = "".join(rule(i) for i in range(size))
    build = _timed(lambda: Engine(text, policy="chronological"))
    still = Engine(text, policy="chronological")
    changed = Engine(text, policy="chronological")
    adds, removes = [], []
    for k in range(size, size + changes):
        adds.append(_timed(lambda k=k: changed.add_rules(rule(k))))
        removes.append(_timed(lambda k=k: changed.remove_rules(f"r{k}")))
    rates: dict[str, list[float]] = {"unchanged": [], "changed": []}
    counts: dict[str, Counter[str]] = {}
    for _ in range(3):  # interleaved, so that a load change hits both alike
        for name, engine in (("unchanged", still), ("changed", changed)):
            fresh = engine.snapshot()
            rate, found, _ = replay(engine, events)
            engine.restore(fresh)
            rates[name].append(rate)
            counts[name] = found
    return {
        "rules": size,
        "build_ms": round(build * 1000, 2),
        "add_rules_ms": round(statistics.median(adds) * 1000, 2),
        "remove_rules_ms": round(statistics.median(removes) * 1000, 2),
        "events": len(events),
        "events_per_s_unchanged": round(statistics.median(rates["unchanged"])),
        "events_per_s_after_changes": round(statistics.median(rates["changed"])),
        "detections_unchanged": sum(counts["unchanged"].values()),
        "detections_after_changes": sum(counts["changed"].values()),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument("--sizes", type=int, nargs="*", default=[100, 1_000])
    parser.add_argument("--changes", type=int, default=20, help="rules added and removed")
    parser.add_argument("--pairs", type=int, default=50_000, help="a/b pairs per replay")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    sizes, changes, pairs = ([20], 3, 500) if args.quick else (args.sizes, args.changes, args.pairs)
    events = stream(pairs)
    results = []
    header = ("rules", 6), ("build ms", 9), ("add ms", 7), ("remove ms", 9), ("events/s", 10)
    print(" ".join(f"{name:>{width}}" for name, width in header), f"{'after':>10}")
    for size in sizes:
        row = measure(size, changes, events)
        results.append(row)
        print(
            f"{size:>6} {row['build_ms']:>9} {row['add_rules_ms']:>7} {row['remove_rules_ms']:>9}"
            f" {row['events_per_s_unchanged']:>10,} {row['events_per_s_after_changes']:>10,}"
        )
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
