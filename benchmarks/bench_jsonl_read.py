"""Reading JSON lines: ``read_jsonl`` (a line at a time) against ``read_jsonl_blocks`` (a block
of plain lines decoded by one msgspec call and checked a column at a time), on the same file,
with the same events.

The file is bench_scaleout's ticker (``--quotes`` stock quotes of 100 companies, as
``JsonLinesWriter`` writes them: ``start`` and ``end``). Each way is timed ``--repeat``
times, interleaved, in CPU seconds of this process (the machine may be shared): every event
taken (``read_jsonl_blocks``: as columns, no Event built; ``--events`` builds them too). The
events are then checked equal.

    .venv/bin/python benchmarks/bench_jsonl_read.py --quotes 200000 --repeat 3
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scaleout import ticker_workload  # noqa: E402

from connectors.events import JsonLinesWriter, TimeStyle, read_jsonl  # noqa: E402
from connectors.events.jsonl import read_jsonl_blocks  # noqa: E402


def blocks(path: str, events: bool) -> int:
    """The events of ``path`` by blocks (``events``: each built as an Event)."""
    if events:
        return sum(sum(1 for _ in b.chosen([True] * len(b.names))) for b in read_jsonl_blocks(path))
    return sum(len(b.names) for b in read_jsonl_blocks(path))


def timed(read: Callable[[], int]) -> tuple[float, int]:
    started = time.process_time()
    count = read()
    return time.process_time() - started, count


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quotes", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--events", action="store_true", help="build the blocks' Events too")
    args = parser.parse_args(argv)
    _, quotes = ticker_workload(100, args.quotes, 1)
    with tempfile.TemporaryDirectory() as work:
        path = str(Path(work) / "ticker.jsonl")
        with open(path, "w", encoding="utf-8") as file:
            JsonLinesWriter(file, TimeStyle()).write_all(quotes)
        ways: dict[str, Callable[[], int]] = {
            "read_jsonl": lambda: sum(1 for _ in read_jsonl(path)),
            "read_jsonl_blocks": lambda: blocks(path, args.events),
        }
        found: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(args.repeat):
            for name, read in ways.items():
                seconds, count = timed(read)
                assert count == len(quotes), f"{name}: {count} events, not {len(quotes)}"
                found[name].append(seconds)
        by_blocks = [b.event(i) for b in read_jsonl_blocks(path) for i in range(len(b.names))]
        if list(read_jsonl(path)) != by_blocks:
            raise SystemExit("read_jsonl_blocks gives other events than read_jsonl")
    print(f"{len(quotes):,} lines; CPU µs a line (min-max of {args.repeat}):")
    for name, times in found.items():
        low, high = min(times) / len(quotes) * 1e6, max(times) / len(quotes) * 1e6
        print(f"  {name:18} {low:5.2f}-{high:5.2f}")


if __name__ == "__main__":
    main()
