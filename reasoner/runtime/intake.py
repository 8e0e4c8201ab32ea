"""Intake: what an engine does with an input event before it runs it.

Every engine front (:class:`~reasoner.runtime.engine.Engine`,
:class:`~reasoner.runtime.parallel.ParallelEngine`, the Spark paths) checks an event the same
way (:meth:`Intake.check`: a reason and an EventError for one it cannot take), counts it, and
under a lateness bound holds it in a buffer until the stream is that far past its end
(:meth:`Intake.hold`, :meth:`Intake.due`), releasing events in time order (arrival order among
equal ends). Spark replay admits an archive's events with it when its files are out of order
(``connectors/spark/replay.py``); a Spark streaming key group holds its events in its buffer
until Spark's watermark passes them (``connectors/spark/keystate.py``).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator

from reasoner.errors import EventError
from reasoner.runtime.events import Event, rejection
from reasoner.values import Time


class Intake:
    """Checks, admission and the lateness buffer of one engine front.

    Args:
        arities: the arities of every event name the rules read or derive (updated in place
            by the engine as rules change).
        max_span: the longest interval an input event may have (None: any).
        lateness: how far out of order events may arrive (0: none; no buffer).
        counts: the front's counters; ``rejected`` and ``events_in`` are counted here (None:
            its own, from 0).

    >>> intake = Intake({"a": {0}}, None, 5, {"events_in": 0, "rejected": 0})
    >>> intake.admit(Event.at("a", (), 3), -math.inf)
    >>> intake.admit(Event.at("a", (), 9), -math.inf)
    >>> [e.end for e in intake.due(intake.released)]
    [3]
    """

    __slots__ = ("arities", "max_span", "lateness", "counts", "buffer", "latest")

    def __init__(
        self,
        arities: dict[str, set[int]],
        max_span: Time | None,
        lateness: Time,
        counts: dict[str, int] | None = None,
    ) -> None:
        self.arities = arities
        self.max_span = max_span
        self.lateness = lateness
        self.counts = {"events_in": 0, "rejected": 0} if counts is None else counts
        #: the events held by the lateness bound: a heap of (end, arrival number, event)
        self.buffer: list[tuple[Time, int, Event]] = []
        self.latest: Time = -math.inf  # the latest end taken into the buffer

    def rejection(self, event: Event, now: Time) -> str | None:
        """Why ``event`` cannot be taken at time ``now`` (None: it can)."""
        return rejection(event, now, self.arities, self.max_span, self.lateness)

    def check(self, event: Event, now: Time) -> None:
        """Raise EventError (counting the event rejected) when ``event`` cannot be taken at
        time ``now``."""
        reason = self.rejection(event, now)
        if reason is not None:
            self.counts["rejected"] += 1
            raise EventError(reason, event)

    def admit(self, event: Event, now: Time) -> None:
        """Check ``event`` (:meth:`check`), count it in, and hold it in the lateness buffer."""
        self.check(event, now)
        self.take(event)

    def take(self, event: Event) -> int:
        """Count a checked event in and hold it in the lateness buffer; return its arrival
        number (what orders the held events of one end)."""
        self.counts["events_in"] += 1
        return self.hold(event)

    def hold(self, event: Event) -> int:
        """Hold a checked, counted event in the lateness buffer; return its arrival number
        (the events counted in so far)."""
        arrival = self.counts["events_in"]
        heapq.heappush(self.buffer, (event.end, arrival, event))
        if event.end > self.latest:
            self.latest = event.end
        return arrival

    @property
    def released(self) -> Time:
        """The end up to which held events are due: ``lateness`` before the latest end."""
        return self.latest - self.lateness

    @property
    def earliest(self) -> Time | None:
        """The end of the first held event (None: none held)."""
        return self.buffer[0][0] if self.buffer else None

    def due(self, up_to: Time) -> Iterator[Event]:
        """Take out the held events ending at or before ``up_to``, in time order (lazily: one
        at a time, so what runs an event may stop the rest)."""
        buffer = self.buffer
        while buffer and buffer[0][0] <= up_to:
            yield heapq.heappop(buffer)[2]

    def due_arrivals(self, up_to: Time) -> Iterator[tuple[int, Event]]:
        """:meth:`due`, each event with its arrival number (:meth:`take`), for a caller that
        keeps something of its own per held event."""
        buffer = self.buffer
        while buffer and buffer[0][0] <= up_to:
            _, arrival, event = heapq.heappop(buffer)
            yield arrival, event
