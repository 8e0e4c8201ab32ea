"""Merging several time-ordered event streams into one."""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from itertools import repeat
from operator import attrgetter
from typing import Any

from reasoner.runtime.events import Event

_END = attrgetter("end")


def merge_streams(*streams: Iterable[Event]) -> Iterator[Event]:
    """Merge streams that are each ordered by end time into one stream ordered by end time.

    The merge is lazy and stable: events with equal end times keep their order within a
    stream, and across streams come in the order the streams were given. Streams of one class
    that offers ``merge_all(streams)`` (:class:`~connectors.mesowest.reader.MesoWestFile`) are
    merged by it: the same events in the same order, each reader's position and rejections as
    the heap merge leaves and hands them, only faster.

    Args:
        streams: iterables of events, each ordered by ``end``.

    Returns:
        An iterator over all events, ordered by ``end``.

    Example:
        >>> a = [Event("a", (), 1, 1), Event("a", (), 5, 5)]
        >>> b = [Event("b", (), 3, 3)]
        >>> [e.end for e in merge_streams(a, b)]
        [1, 3, 5]
    """
    kind = type(streams[0]) if streams else None
    merge_all = getattr(kind, "merge_all", None)
    if merge_all is not None and all(type(stream) is kind for stream in streams):
        return merge_all(streams)
    if len(streams) == 1:
        return iter(streams[0])
    return heapq.merge(*streams, key=_END)


def merge_labelled(*streams: Iterable[Event]) -> Iterator[tuple[int, Event]]:
    """:func:`merge_streams` by heap (the same order; each stream read as lazily, so a reader
    reports a malformed line at the same point), each event with the index of its stream.

    Example:
        >>> a = [Event("a", (), 1, 1), Event("a", (), 5, 5)]
        >>> [(i, e.end) for i, e in merge_labelled(a, [Event("b", (), 1, 1)])]
        [(0, 1), (1, 1), (0, 5)]
    """
    labelled = [zip(repeat(i), stream) for i, stream in enumerate(streams)]
    if len(labelled) == 1:
        return labelled[0]
    return heapq.merge(*labelled, key=_labelled_end)


def _labelled_end(item: tuple[int, Any]) -> Any:
    return item[1][3]
