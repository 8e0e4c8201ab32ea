"""Sorted runs of detections: ``(order key, JSON line)`` pairs, as Spark tasks write them and
the driver merges them into ``reasoner run``'s output (replay and streaming alike)."""

from __future__ import annotations

import heapq
import io
from collections.abc import Iterable, Iterator
from operator import itemgetter
from typing import Any

from connectors.events.jsonl import JsonLinesWriter
from connectors.events.times import TimeStyle
from reasoner.runtime.events import Event
from reasoner.runtime.order import order_key


def formatted_run(detections: Iterable[Event], style: TimeStyle) -> list[tuple[Any, str]]:
    """``(order key, JSON line)`` per detection, by ``reasoner run``'s writer, in the defined
    order (a stable sort: equal keys keep the order they were derived in)."""
    pairs = sorted(((order_key(d), d) for d in detections), key=_first)
    out: list[tuple[Any, str]] = []
    buffer = io.StringIO()
    writer = JsonLinesWriter(buffer, style)
    for start in range(0, len(pairs), 4096):
        chunk = pairs[start : start + 4096]
        buffer.seek(0)
        buffer.truncate()
        writer.write_all(d for _, d in chunk)
        lines = buffer.getvalue().split("\n")  # JSON escapes a newline in a string
        out += zip((k for k, _ in chunk), (line + "\n" for line in lines[:-1]), strict=True)
    return out


def merge_runs(runs: list[Iterator[tuple[Any, str]]]) -> Iterator[str]:
    """The lines of sorted runs merged in the defined order, repeats dropped (two rules, in
    two stages or two keys, may derive one event: equal order keys)."""
    last = None
    for key, line in heapq.merge(*runs, key=_first):
        if key != last:
            yield line
            last = key


_first = itemgetter(0)
