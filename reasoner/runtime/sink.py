"""Where generated rule heads put what they derive: one small object per engine state.

A head (:func:`~reasoner.runtime.build.build_head`) drops an event already ``seen`` at the
current time point (counting it in ``counts["duplicates"]``), else records it: appended to
``detected`` (the current push's detections), handed to the callbacks, and queued on the
``agenda`` for the rules reading it. Generated code reads these fields and nothing else of
the engine, so the engine's own fields can change without breaking generated strings.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from reasoner.compiler.network import Output
from reasoner.runtime.events import Event

#: The counters of an engine, by name (``Engine.stats`` reports them).
COUNTS = ("events_in", "detections", "expired", "rejected", "duplicates")


class Sink:
    """What generated heads write to.

    Attributes:
        seen: the events of the current time point (set semantics; events hash in C).
        agenda: derived events, each with the receivers waiting for it and its rule.
        detected: the detections of the push under way (replaced by every push).
        counts: the engine's counters (:data:`COUNTS`).
        marks: with marking dispatches, ``(edge key, derived so far)`` per edge
            (:func:`~reasoner.runtime.stages.positions`).

    >>> sink = Sink()
    >>> sink.counts["duplicates"], sink.detected
    (0, [])
    """

    __slots__ = ("seen", "agenda", "detected", "counts", "marks")

    def __init__(self) -> None:
        self.seen: set[Event] = set()
        self.agenda: deque[tuple[Event, list[Callable[..., None]], Output]] = deque()
        self.detected: list[Event] = []
        self.counts: dict[str, int] = dict.fromkeys(COUNTS, 0)
        self.marks: list[tuple[Any, int]] = []

    def mark(self, edge: Any) -> None:
        """Record, in a marking dispatch, that a dispatch starts (``edge`` None) or that the
        parent at ``edge`` returned: how many events the current push derived so far."""
        self.marks.append((edge, len(self.detected)))
