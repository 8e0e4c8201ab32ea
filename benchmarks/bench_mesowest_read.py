"""Reading and merging a MesoWest archive: the row loops under a heap merge against the
column merge (``connectors/mesowest/columns.py``), on the same files, with the same result.

The archive is bench_spark_detection's: ``--stations`` synthetic stations (one CSV export
each), readings every 20 minutes for ``--days`` days (2,000 stations and 2 days: 288,000
rows). Each way is timed ``--repeat`` times, interleaved, in CPU seconds of this process (the
machine may be shared); the events are checked equal (values, their types and order).

    .venv/bin/python benchmarks/bench_mesowest_read.py --stations 2000 --days 2
    .venv/bin/python benchmarks/bench_mesowest_read.py --archive DIR   # an archive made before
"""

from __future__ import annotations

import argparse
import heapq
import sys
import tempfile
import time
from operator import attrgetter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from connectors.mesowest.archive import merge_files  # noqa: E402
from connectors.mesowest.reader import MesoWestFile  # noqa: E402


def read(paths: list[Path], columns: bool) -> tuple[float, list]:
    """CPU seconds to open, read and merge ``paths``; the events."""
    started = time.process_time()
    files = [MesoWestFile(path) for path in paths]
    merged = merge_files(files) if columns else heapq.merge(*files, key=attrgetter("end"))
    events = list(merged)
    return time.process_time() - started, events


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stations", type=int, default=2000)
    parser.add_argument("--days", type=float, default=2.0)
    parser.add_argument("--archive", type=Path, help="read this folder of exports instead")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        folder = args.archive
        if folder is None:
            from bench_spark_detection import make_archive

            folder = Path(work) / "archive"
            make_archive(folder, args.stations, args.days)
        paths = sorted(folder.glob("*.csv"))
        found: dict[str, list[float]] = {"heap merge": [], "column merge": []}
        reference = None
        for _ in range(args.repeat):
            for name, columns in (("heap merge", False), ("column merge", True)):
                seconds, events = read(paths, columns)
                found[name].append(seconds)
                shown = [repr(event) for event in events]
                if reference is None:
                    reference = shown
                elif shown != reference:
                    raise SystemExit(f"{name}: other events than the heap merge")
                del events, shown
        rows = len(reference or ())
        print(f"{len(paths)} files, {rows:,} rows; CPU seconds (min-max of {args.repeat}):")
        for name, times in found.items():
            low, high = min(times), max(times)
            print(
                f"  {name:13} {low:6.2f}-{high:6.2f} s  "
                f"{low / rows * 1e6:5.2f}-{high / rows * 1e6:5.2f} µs a row"
            )


if __name__ == "__main__":
    main()
