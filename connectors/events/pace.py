"""Replaying a recorded stream at a chosen speed (for watching it, e.g. on the ``/live`` page).

A recorded stream replays as fast as the engine goes (the MesoWest sample's three days take a
tenth of a second). :func:`paced` holds each event back until its time, scaled by ``speed``,
has passed since the first event: ``speed=3600`` replays an hour of the stream per second.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator

from reasoner.errors import ReasonerError
from reasoner.runtime.events import Event


def paced(
    events: Iterable[Event],
    speed: float,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[Event]:
    """Yield events no sooner than ``(event.end - first.end) / speed`` seconds after the first.

    Args:
        events: events ordered by ``end`` (times in seconds).
        speed: stream seconds per wall-clock second (positive).
        clock: the wall clock (seconds; replaced in tests).
        sleep: how to wait (replaced in tests).
    Returns:
        the same events, in order; an event late already (a slow consumer) is not held back.
    Raises:
        ReasonerError: for a speed that is not positive.

    >>> waits = []
    >>> stream = [Event("a", (), 0, 0), Event("b", (), 60, 60), Event("c", (), 90, 90)]
    >>> [e.name for e in paced(stream, 60, clock=lambda: 0.0, sleep=waits.append)]
    ['a', 'b', 'c']
    >>> waits
    [1.0, 1.5]
    """
    if not speed > 0:
        raise ReasonerError(f"the replay speed must be positive, not {speed}")
    return _paced(events, speed, clock, sleep)


def _paced(
    events: Iterable[Event],
    speed: float,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
) -> Iterator[Event]:
    began: float | None = None
    first = 0.0
    for event in events:
        if began is None:
            began, first = clock(), float(event.end)
        else:
            wait = (float(event.end) - first) / speed - (clock() - began)
            if wait > 0:
                sleep(wait)
        yield event
