"""What ``explain`` costs: events/s of one knowledge-rich workload, explain off and on.

The workload is seed 004's JetStreamWarning over a random stream: ``cat(Pos)`` and
``airplane(Plane, Pos)`` events, a warning when an airplane is at a point connected to an
earlier turbulence's through the transitive closure of ``linked`` (Horn rules over a chain
of points), and a second-level rule reading the warnings. Four modes run on the same events:

* ``off``: ``Engine(rules)`` (the generated code is the same as before ``explain`` existed);
* ``provenance``: ``provenance=True`` (the input events kept per detection);
* ``explain``: ``explain=True``, detections counted, not explained;
* ``explain+why``: ``explain=True`` and every detection explained (``explain`` and
  ``to_json``, as ``run --explain`` writes it).

Events/s are CPU time, median of ``--runs`` round-robin runs; the peak RSS is the process's.

    python benchmarks/bench_explain.py            # 200,000 events
    python benchmarks/bench_explain.py --quick    # 5,000 events
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import resource
import statistics
import time
from collections import Counter
from pathlib import Path

from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.runtime.explain import explain, to_json

ROOT = Path(__file__).resolve().parent.parent
POINTS = 30
RULES = (
    "".join(f"linked(p{i}, p{i + 1}).\n" for i in range(POINTS - 1))
    + "connected(X, Y) :- linked(X, Y).\n"
    "connected(X, Z) :- linked(X, Y), connected(Y, Z).\n"
    "warning(Plane, Cat) <- (cat(Cat) SEQ airplane(Plane, Pos)).60 WHERE connected(Pos, Cat).\n"
    "again(Plane) <- (warning(Plane, Cat) SEQ airplane(Plane, Pos)).60 "
    "WHERE connected(Pos, Cat).\n"
)
MODES = ("off", "provenance", "explain", "explain+why")


def stream(count: int, seed: int) -> list[Event]:
    """Random cats and airplanes, one per time unit (a cat one time in ten)."""
    rng = random.Random(seed)
    events = []
    for t in range(count):
        point = f"p{rng.randrange(POINTS)}"
        if rng.random() < 0.1:
            events.append(Event.at("cat", (point,), t))
        else:
            events.append(Event.at("airplane", (f"a{rng.randrange(20)}", point), t))
    return events


def run_once(mode: str, events: list[Event]) -> tuple[float, Counter[str]]:
    """Events/s (CPU time) and detections per name of one mode."""
    engine = Engine(
        RULES, provenance=mode == "provenance", explain=mode in ("explain", "explain+why")
    )
    why = mode == "explain+why"
    counts: Counter[str] = Counter()
    push = engine.push
    gc.collect()
    began = time.process_time()
    for event in events:
        for detection in push(event):
            counts[detection.name] += 1
            if why:
                to_json(explain(detection))
    return len(events) / (time.process_time() - began), counts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=5, help="timed runs per mode (median)")
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--json", type=Path, default=ROOT / "out" / "bench_explain.json")
    args = parser.parse_args(argv)
    count, runs = (5_000, 1) if args.quick else (args.events, args.runs)
    events = stream(count, args.seed)
    measured: dict[str, list[tuple[float, Counter[str]]]] = {mode: [] for mode in MODES}
    for _ in range(runs):  # round robin: a busy moment of the machine hits every mode
        for mode in MODES:
            measured[mode].append(run_once(mode, events))
    print(f"{count:,} events")
    print(f"{'mode':>12} {'events/s':>9} {'vs off':>7}  detections")
    base = statistics.median(m[0] for m in measured["off"])
    results = []
    for mode, rows in measured.items():
        rate = statistics.median(m[0] for m in rows)
        counts = dict(sorted(rows[0][1].items()))
        results.append({"mode": mode, "events": count, "events_per_s": round(rate),
                        "detections": counts})  # fmt: skip
        detail = " ".join(f"{k}={v}" for k, v in counts.items())
        print(f"{mode:>12} {rate:>9,.0f} {rate / base:>7.2f}  {detail}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
