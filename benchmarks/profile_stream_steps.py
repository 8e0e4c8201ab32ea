"""Where a ``reasoner spark stream`` micro-batch's Python time goes, without Spark.

Runs the streaming benchmark's workload (``bench_spark_detection.py --only streaming``: a ticker
of ``--companies`` companies, 8 files of 10 time units, one micro-batch each) through the keyed
step exactly as a Python worker does (:mod:`connectors.spark.stream`'s ``detect``), each group's
state kept live, and splits its time: the pandas frame to rows, the step (``take``: the events'
JSON decoded and queued for the watermark, and what else the step does; ``engine``: the waiting
events the watermark passed run and the clock moved, as ``reasoner run``'s engine does;
``format``: the detections written as ``reasoner run`` writes them, with their order keys,
sorted), the state row (the log entry joined, or a full write: the engine's snapshot and the
waiting events as JSON), the output frame. It also gives the rows' bytes per key after each
micro-batch and the CPU time of restoring every group from its last row (another worker's
step). ``--full`` writes every row in full (no log: as state format 3 did, and as a query with
knowledge versions does) to compare. ``--profile`` prints cProfile's top functions instead.

    python benchmarks/profile_stream_steps.py [--companies 1000] [--full] [--profile]
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

from connectors.spark import keystate, live  # noqa: E402
from connectors.spark.keystate import REUSED, GroupDetector  # noqa: E402
from connectors.spark.stream import make_job  # noqa: E402
from reasoner.language.parser import parse  # noqa: E402
from reasoner.runtime.options import EngineOptions  # noqa: E402

_COLUMNS = ("file", "line", "key", "event", "iso")
_PHASES = ("frame_in", "take", "engine", "format", "state_row", "frame_out")


def timed(split: dict[str, float]) -> None:
    """Time the step's engine run and its formatting into ``split`` (wrapping them: the step
    has no hooks; the rest of the step is ``take``)."""

    def wrap(function: Any, name: str) -> Any:
        def run(*args: Any) -> Any:
            began = time.perf_counter()
            try:
                return function(*args)
            finally:
                split[name] += time.perf_counter() - began

        return run

    keystate._release = wrap(keystate._release, "engine")
    GroupDetector._formatted = wrap(GroupDetector._formatted, "format")  # type: ignore[method-assign]


def batches(companies: int) -> tuple[list[dict[int, pd.DataFrame]], list[Any]]:
    """Each micro-batch's frames by key group (as Spark hands them), and each file's end."""
    files = quotes(companies, 8, 10)
    out = []
    for n, events in enumerate(files):
        groups = group_rows(n, events)
        out.append({g: pd.DataFrame(r, columns=list(_COLUMNS)) for g, r in groups.items()})
    return out, [max(e.end for e in f) for f in files]


def run(
    frames: list[dict[int, pd.DataFrame]], ends: list[Any], split: dict[str, float], full: bool
) -> tuple[list[int], dict[int, Any]]:
    """Every group step of every micro-batch, its phases' seconds added to ``split`` (``full``:
    every row written in full); the rows' bytes after each micro-batch, and the last rows."""
    job = make_job(parse(TICKER_RULES), fmt="jsonl", lateness=0, options=EngineOptions())
    stamps: dict[int, str] = {}
    written: list[int] = []
    rows_of: dict[int, Any] = {}
    for n, groups in enumerate(frames):
        watermark = ends[n - 1] if n else 0  # (the latest end of the earlier batches)
        for g, frame in groups.items():
            t0 = time.perf_counter()
            rows = list(zip(*(frame[c].tolist() for c in _COLUMNS), strict=True))
            t1 = time.perf_counter()
            detector = job.detector()
            detector.logging = not full
            state, _ = live.take(detector, g, (stamps[g],) if g in stamps else None)
            out, _ = detector.step(state, rows, watermark)
            t2 = time.perf_counter()
            stamps[g] = live.stamp()
            rows_of[g] = detector.dump(state, stamps[g])
            live.keep(detector, g, stamps[g], state)
            t3 = time.perf_counter()
            pd.DataFrame([*out, (REUSED, "1", None)], columns=["kind", "text", "run"])
            t4 = time.perf_counter()
            for name, seconds in zip(
                ("frame_in", "take", "state_row", "frame_out"),
                (t1 - t0, t2 - t1, t3 - t2, t4 - t3),
                strict=True,
            ):
                split[name] += seconds
        written.append(sum(len(meta) + len(engine) for _, meta, engine in rows_of.values()))
    split["take"] -= split["engine"] + split["format"]  # (timed inside the step)
    return written, rows_of


def restore(rows: dict[int, Any], full: bool) -> float:
    """The CPU seconds of restoring every group from its row (into a new engine)."""
    job = make_job(parse(TICKER_RULES), fmt="jsonl", lateness=0, options=EngineOptions())
    detector = job.detector()
    detector.logging = not full
    began = time.process_time()
    for g, row in rows.items():
        detector.load(row, g, None)
    return time.process_time() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--companies", type=int, default=1000)
    parser.add_argument("--full", action="store_true", help="write every row in full (no log)")
    parser.add_argument("--profile", action="store_true", help="print cProfile's top functions")
    args = parser.parse_args()
    frames, ends = batches(args.companies)
    split = dict.fromkeys(_PHASES, 0.0)
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(run, frames, ends, split, args.full)
        pstats.Stats(profile).sort_stats("cumtime").print_stats(30)
        return
    timed(split)
    cpu = time.process_time()
    written, rows = run(frames, ends, split, args.full)
    cpu = time.process_time() - cpu
    wall = sum(split.values())
    shares = {name: f"{100 * s / wall:.0f}%" for name, s in split.items()}
    found = {
        "cpu_s_per_batch": round(cpu / len(frames), 3),
        "wall_share": shares,
        "row_bytes_per_key": [b // args.companies for b in written],
        "restore_cpu_s": round(restore(rows, args.full), 3),
    }
    print(json.dumps(found))


if __name__ == "__main__":
    main()
