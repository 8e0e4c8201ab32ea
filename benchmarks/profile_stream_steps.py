"""Where a ``reasoner spark stream`` micro-batch's Python time goes, without Spark.

Runs the streaming benchmark's workload (``bench_spark_detection.py --only streaming``: a ticker
of ``--companies`` companies, 8 files of 10 time units, one micro-batch each) through the keyed
step exactly as a Python worker does (:mod:`connectors.spark.stream`'s ``detect``), each group's
state kept live, and splits its time: the pandas frame to rows, the step (event JSON decoded,
the engine, the detections formatted and pickled), the state row (engine snapshot, waiting
events as JSON), the output frame. ``--profile`` prints cProfile's top functions instead.

    python benchmarks/profile_stream_steps.py [--companies 1000] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_spark_detection import TICKER_RULES, group_rows, quotes  # noqa: E402

from connectors.spark import live  # noqa: E402
from connectors.spark.keystate import REUSED  # noqa: E402
from connectors.spark.stream import make_job  # noqa: E402
from reasoner.language.parser import parse  # noqa: E402
from reasoner.runtime.options import EngineOptions  # noqa: E402

_COLUMNS = ("file", "line", "key", "event", "iso")


def batches(companies: int) -> tuple[list[dict[int, pd.DataFrame]], list[Any]]:
    """Each micro-batch's frames by key group (as Spark hands them), and each file's end."""
    files = quotes(companies, 8, 10)
    out = []
    for n, events in enumerate(files):
        groups = group_rows(n, events)
        out.append({g: pd.DataFrame(r, columns=list(_COLUMNS)) for g, r in groups.items()})
    return out, [max(e.end for e in f) for f in files]


def run(frames: list[dict[int, pd.DataFrame]], ends: list[Any], split: dict[str, float]) -> None:
    """Every group step of every micro-batch, its phases' seconds added to ``split``."""
    job = make_job(parse(TICKER_RULES), fmt="jsonl", lateness=0, options=EngineOptions())
    stamps: dict[int, str] = {}
    for n, groups in enumerate(frames):
        watermark = ends[n - 1] if n else 0  # (the latest end of the earlier batches)
        for g, frame in groups.items():
            t0 = time.perf_counter()
            rows = list(zip(*(frame[c].tolist() for c in _COLUMNS), strict=True))
            t1 = time.perf_counter()
            detector = job.detector()
            state, _ = live.take(detector, g, (stamps[g],) if g in stamps else None)
            out, _ = detector.step(state, rows, watermark)
            t2 = time.perf_counter()
            stamps[g] = live.stamp()
            detector.dump(state, stamps[g])
            live.keep(detector, g, stamps[g], state)
            t3 = time.perf_counter()
            pd.DataFrame([*out, (REUSED, "1", None)], columns=["kind", "text", "run"])
            t4 = time.perf_counter()
            for name, seconds in zip(
                ("frame_in", "step", "state_row", "frame_out"),
                (t1 - t0, t2 - t1, t3 - t2, t4 - t3),
                strict=True,
            ):
                split[name] += seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--companies", type=int, default=1000)
    parser.add_argument("--profile", action="store_true", help="print cProfile's top functions")
    args = parser.parse_args()
    frames, ends = batches(args.companies)
    split = dict.fromkeys(("frame_in", "step", "state_row", "frame_out"), 0.0)
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(run, frames, ends, split)
        pstats.Stats(profile).sort_stats("cumtime").print_stats(30)
        return
    cpu = time.process_time()
    run(frames, ends, split)
    cpu = time.process_time() - cpu
    wall = sum(split.values())
    shares = {name: f"{100 * s / wall:.0f}%" for name, s in split.items()}
    print(json.dumps({"cpu_s_per_batch": round(cpu / len(frames), 3), "wall_share": shares}))


if __name__ == "__main__":
    main()
