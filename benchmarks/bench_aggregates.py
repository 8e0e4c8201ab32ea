"""SUM-AND and AVG-SEQ (seed 001, Fig. 2): a moving aggregate over complex events, versus the
window size. Throughput must not fall as the window grows (windows update in O(1)).

    a(ID, X, Y) <- b(ID, X) AND c(ID, Y).       (SEQ for AVG-SEQ)
    out(R) <- aggregate(sum(X), a(_ID, X, _Y), R, count(W)).   (avg for AVG-SEQ)

Measured in-process (events generated before timing, detections not written). Prints a table
and writes JSON (``--json``); ``--quick`` is a smoke run of the harness.

    python benchmarks/bench_aggregates.py            # W = 10, 100, 1,000, 10,000
    python benchmarks/bench_aggregates.py --quick
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
from collections import Counter
from pathlib import Path

from bench_stock_ticker import replay

from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event

WORKLOADS = {"SUM-AND": ("sum", "AND"), "AVG-SEQ": ("avg", "SEQ")}


def rules(function: str, operator: str, window: int) -> str:
    return (
        f"a(ID, X, Y) <- b(ID, X) {operator} c(ID, Y).\n"
        f"out(R) <- aggregate({function}(X), a(_ID, X, _Y), R, count({window})).\n"
    )


def stream(pairs: int, seed: int = 7) -> list[Event]:
    """b(i, x) then c(i, y) for each i: one complex event a per pair."""
    rng = random.Random(seed)
    events = []
    for i in range(pairs):
        events.append(Event.at("b", (i, rng.randint(0, 100)), 2 * i))
        events.append(Event.at("c", (i, rng.randint(0, 100)), 2 * i + 1))
    return events


def run_once(text: str, events: list[Event]) -> tuple[float, Counter[str], int]:
    # Chronological: each b meets its c once and both are consumed, so the join stays empty.
    return replay(Engine(text, policy="chronological", max_span=0), events)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument("--windows", type=int, nargs="*", default=[10, 100, 1_000, 10_000])
    parser.add_argument("--pairs", type=int, default=50_000, help="b/c pairs per run")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per setup (median)")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    windows, pairs, runs = (
        ([10, 100], 500, 1) if args.quick else (args.windows, args.pairs, args.runs)
    )

    events = stream(pairs)
    results = []
    print(f"{'workload':>8} {'window':>7} {'events/s':>10} {'stored':>7}  detections")
    for name, (function, operator) in WORKLOADS.items():
        for window in windows:
            text = rules(function, operator, window)
            run_once(text, events[: min(len(events), 10_000)])  # warm-up
            measured = [run_once(text, events) for _ in range(runs)]
            rate = statistics.median(m[0] for m in measured)
            counts, stored = measured[0][1], measured[0][2]
            results.append(
                {
                    "workload": name,
                    "window": window,
                    "events": len(events),
                    "events_per_s": round(rate),
                    "stored_at_end": stored,
                    "detections": dict(sorted(counts.items())),
                    "peak_rss_mb": round(
                        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
                    ),
                }
            )
            detail = " ".join(f"{k}={v}" for k, v in sorted(counts.items()))
            print(f"{name:>8} {window:>7} {rate:>10,.0f} {stored:>7}  {detail}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
