"""Reading and merging a MesoWest archive: the row loops under a heap merge against the archive
merge (``connectors/mesowest/archive.py``: read in rounds of blocks, a column at a time), on the
same files, with the same result.

The archive is bench_spark_detection's: ``--stations`` synthetic stations (one CSV export
each), readings every 20 minutes for ``--days`` days (2,000 stations and 2 days: 288,000
rows). Each way is timed ``--repeat`` times, interleaved, in CPU seconds of this process (the
machine may be shared): opening the files and taking every event (none is kept), and the
time to the first event. The events are then checked equal (values, their types and order),
the two merges taken side by side.

    .venv/bin/python benchmarks/bench_mesowest_read.py --stations 2000 --days 2
    .venv/bin/python benchmarks/bench_mesowest_read.py --archive DIR   # an archive made before
"""

from __future__ import annotations

import argparse
import heapq
import sys
import tempfile
import time
from collections.abc import Iterator
from operator import attrgetter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from connectors.mesowest.archive import merge_files  # noqa: E402
from connectors.mesowest.reader import MesoWestFile  # noqa: E402
from reasoner.runtime.events import Event  # noqa: E402


def merged(paths: list[Path], columns: bool) -> Iterator[Event]:
    """The archive's events, by the archive merge or the heap merge of the row loops."""
    files = [MesoWestFile(path) for path in paths]
    return merge_files(files) if columns else heapq.merge(*files, key=attrgetter("end"))


def read(paths: list[Path], columns: bool) -> tuple[float, float, int]:
    """CPU seconds to open, read and merge ``paths``, to the first event; the events."""
    started = time.process_time()
    events = merged(paths, columns)
    count = 1 if next(events, None) is not None else 0
    first = time.process_time() - started
    count += sum(1 for _ in events)
    return time.process_time() - started, first, count


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
        found: dict[str, list[tuple[float, float]]] = {"heap merge": [], "archive merge": []}
        rows = 0
        for _ in range(args.repeat):
            for name, columns in (("heap merge", False), ("archive merge", True)):
                seconds, first, rows = read(paths, columns)
                found[name].append((seconds, first))
        pairs = zip(merged(paths, False), merged(paths, True), strict=True)
        if any(repr(heap) != repr(archive) for heap, archive in pairs):
            raise SystemExit("the archive merge gives other events than the heap merge")
        print(f"{len(paths)} files, {rows:,} rows; CPU seconds (min-max of {args.repeat}):")
        for name, times in found.items():
            low, high = min(t for t, _ in times), max(t for t, _ in times)
            print(
                f"  {name:13} {low:6.2f}-{high:6.2f} s  "
                f"{low / rows * 1e6:5.2f}-{high / rows * 1e6:5.2f} µs a row; the first event "
                f"after {min(f for _, f in times):.2f}-{max(f for _, f in times):.2f} s"
            )


if __name__ == "__main__":
    main()
