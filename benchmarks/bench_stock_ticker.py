"""Stock ticker ce1–ce6 (seed 000 §7): events/s and peak memory per policy and stream size.

Measured in-process: the events are generated before timing, detections are not written.
End to end (chronological and recent): the same stream as a JSON lines file through a
``reasoner run`` process (read, parsed, detected, every detection written as a JSON line),
timed from the command's start to its end, less the same command's time on an empty stream
(its start-up: imports, rule compilation); the ratio is end to end over in-process. Both are
CPU time (the harness's own, the command's as a child process): the machine is shared, and
wall time would count other work. Prints a table and writes JSON (``--json``). ``--quick`` is
a smoke run of the harness.

    python benchmarks/bench_stock_ticker.py            # N = 10k, 50k, 100k, 1M
    python benchmarks/bench_stock_ticker.py --quick
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from connectors.events.jsonl import JsonLinesWriter
from connectors.generators.stock import stock_stream
from reasoner.runtime.engine import Engine

RULES = Path(__file__).resolve().parent.parent / "rules" / "stock_ticker.event"
#: (policy, extra window on every rule): unrestricted only makes sense with a window.
SETUPS = (("chronological", None), ("recent", None), ("unrestricted", 20))


def windowed_rules(window: int | None) -> str:
    """The ticker rules, each wrapped in a rule window when ``window`` is given."""
    text = RULES.read_text(encoding="utf-8")
    if window is None:
        return text
    from reasoner.language.ast import EventRule, Program, Window
    from reasoner.language.parser import parse
    from reasoner.language.printer import to_source

    program = parse(text)
    rules = [
        EventRule(r.head, Window(r.body, window), r.label, r.properties)
        for r in program.event_rules
    ]
    return to_source(Program(tuple(rules)))


def run_once(rules: str, policy: str, events: list) -> tuple[float, Counter[str], int]:
    # stock events are instantaneous
    return replay(Engine(rules, policy=policy, max_span=0), events)


def replay(engine: Engine, events: list) -> tuple[float, Counter[str], int]:
    """Push ``events`` through ``engine``, timed (CPU time): events/s, detections per name, and
    the occurrences stored at the end."""
    push = engine.push
    counts: Counter[str] = Counter()
    gc.collect()
    began = time.process_time()
    for event in events:
        for detection in push(event):
            counts[detection.name] += 1
    elapsed = time.process_time() - began
    return len(events) / elapsed, counts, engine.stats().stored


def end_to_end(
    rules: Path, policy: str, events: list, folder: Path, runs: int
) -> tuple[float | None, float, int]:
    """A ``reasoner run`` process over ``events`` written as JSON lines, ``runs`` times: the
    median events/s with its start-up subtracted (None when no run spent at least as long on
    the events as on starting: the difference would be noise), the median start-up (seconds),
    and the detections written."""
    stream, out = folder / "stream.jsonl", folder / "detections.jsonl"
    with open(stream, "w", encoding="utf-8") as f:
        JsonLinesWriter(f).write_all(events)
    (folder / "empty.jsonl").write_bytes(b"")
    startups, rates = [], []
    for _ in range(runs):
        options = ("--output", str(out), "--policy", policy, "--max-span", "0")
        startups.append(run_command(str(rules), "--events", str(folder / "empty.jsonl"), *options))
        elapsed = run_command(str(rules), "--events", str(stream), *options)
        if elapsed > 2 * startups[-1]:
            rates.append(len(events) / (elapsed - startups[-1]))
    with open(out, encoding="utf-8") as f:
        written = sum(1 for _ in f)
    rate = statistics.median(rates) if rates else None
    return rate, statistics.median(startups), written


def run_command(*args: str) -> float:
    """CPU seconds one ``reasoner run ARGS...`` process takes."""
    command = [sys.executable, "-m", "connectors.cli", "run", *args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument(
        "--sizes", type=int, nargs="*", default=[10_000, 50_000, 100_000, 1_000_000]
    )
    parser.add_argument("--runs", type=int, default=3, help="timed runs per setup (median)")
    parser.add_argument(
        "--unrestricted-up-to",
        type=int,
        default=100_000,
        metavar="N",
        help="skip unrestricted (about 52 detections per event) on longer streams",
    )
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    sizes, runs = ([2_000], 1) if args.quick else (args.sizes, args.runs)

    results = []
    print(
        f"{'N':>9} {'policy':>14} {'window':>6} {'events/s':>10} {'end to end':>10} "
        f"{'ratio':>5} {'start-up':>8} {'stored':>7}  detections"
    )
    with tempfile.TemporaryDirectory(prefix="bench-stock-") as tmp:
        folder = Path(tmp)
        for size in sizes:
            events = list(stock_stream(size, seed=42))
            for policy, window in SETUPS:
                if window is not None and size > args.unrestricted_up_to:
                    continue
                rules = windowed_rules(window)
                run_once(rules, policy, events[: min(len(events), 5_000)])  # warm-up
                measured = [run_once(rules, policy, events) for _ in range(runs)]
                rate = statistics.median(m[0] for m in measured)
                counts, stored = measured[0][1], measured[0][2]
                e2e: float | None = None
                startup: float | None = None
                through, ratio, start = "-", "-", "-"
                if window is None:
                    e2e, startup, written = end_to_end(RULES, policy, events, folder, runs)
                    start = f"{startup:.2f}"
                    through, ratio = (
                        ("too short", "-") if e2e is None else (f"{e2e:,.0f}", f"{e2e / rate:.2f}")
                    )
                    if written != sum(counts.values()):
                        raise SystemExit(f"reasoner run wrote {written} detections, not {counts}")
                peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                row = {
                    "n": size,
                    "policy": policy,
                    "window": window,
                    "events_per_s": round(rate),
                    "end_to_end_events_per_s": None if e2e is None else round(e2e),
                    "end_to_end_ratio": None if e2e is None else round(e2e / rate, 2),
                    "startup_s": None if startup is None else round(startup, 3),
                    "stored_at_end": stored,
                    "detections": dict(sorted(counts.items())),
                    "peak_rss_mb": round(peak_mb, 1),
                }
                results.append(row)
                detail = " ".join(f"{k}={v}" for k, v in sorted(counts.items()))
                print(
                    f"{size:>9} {policy:>14} {window or '-':>6} {rate:>10,.0f} {through:>10} "
                    f"{ratio:>5} {start:>8} {stored:>7}  {detail}"
                )
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
