"""Memory over time: the stock ticker ce1–ce6 on a long stream (default 10,000,000 events),
sampling the stored occurrences and the process RSS along the run. Both must stay flat.

Setups: the chronological and recent policies, and unrestricted matching under a rule window.
Prints the samples' range per setup, writes JSON (``--json``) and a plot (``--plot``, PNG).

    python benchmarks/bench_memory.py --plot memory.png
    python benchmarks/bench_memory.py --quick
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench_stock_ticker import windowed_rules

from connectors.generators.stock import stock_stream
from reasoner.runtime.engine import Engine

SETUPS = (("chronological", None), ("recent", None), ("unrestricted", 5))


def rss_mb() -> float:
    """The current resident set size (not the peak), from /proc."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        pages = int(statm.read().split()[1])
    return pages * 4096 / 2**20


def sample(policy: str, window: int | None, events: int, every: int) -> dict[str, object]:
    engine = Engine(windowed_rules(window), policy=policy, max_span=0)
    points: list[tuple[int, int, float]] = []
    began = time.perf_counter()
    for index, event in enumerate(stock_stream(events, seed=11), 1):
        engine.push(event)
        if index % every == 0:
            points.append((index, engine.stored(), round(rss_mb(), 1)))
    elapsed = time.perf_counter() - began
    return {
        "policy": policy,
        "window": window,
        "events": events,
        "events_per_s": round(events / elapsed),
        "samples": points,
        "max_stored": max(p[1] for p in points),
        "rss_mb_first_last": [points[0][2], points[-1][2]],
    }


def plot(results: list[dict[str, object]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (stored_ax, rss_ax) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for row in results:
        points = row["samples"]
        assert isinstance(points, list)
        label = f"{row['policy']}" + (f", window {row['window']}" if row["window"] else "")
        xs = [p[0] for p in points]
        stored_ax.plot(xs, [p[1] for p in points], label=label)
        rss_ax.plot(xs, [p[2] for p in points], label=label)
    stored_ax.set_ylabel("stored occurrences")
    rss_ax.set_ylabel("RSS (MB)")
    rss_ax.set_xlabel("events processed")
    stored_ax.legend()
    stored_ax.set_title("Stock ticker ce1–ce6: memory along the stream")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--json", type=Path, help="write the samples here")
    parser.add_argument("--plot", type=Path, help="write a PNG plot here")
    args = parser.parse_args()
    events = 20_000 if args.quick else args.events
    every = max(events // 100, 1)

    results = []
    print(f"{'policy':>14} {'window':>6} {'events/s':>9} {'max stored':>10}  RSS MB first→last")
    for policy, window in SETUPS:
        row = sample(policy, window, events, every)
        results.append(row)
        first, last = row["rss_mb_first_last"]  # type: ignore[misc]
        print(
            f"{policy:>14} {window or '-':>6} {row['events_per_s']:>9,} {row['max_stored']:>10}"
            f"  {first} → {last}"
        )
    if args.json:
        args.json.write_text(json.dumps(results), encoding="utf-8")
    if args.plot:
        plot(results, args.plot)


if __name__ == "__main__":
    main()
