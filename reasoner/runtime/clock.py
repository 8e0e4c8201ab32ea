"""Dispatch and the clock of one engine: what runs a checked event, and garbage collection.

:meth:`Clock.process` moves the clock to an event's end (firing the time points, window exits
and alarms it passes), dispatches the event to the sources waiting for its name, and drains
the agenda of derived events (a FIFO, so recursion does not grow the Python stack). Every
derived event ends at the current time, so de-duplication (set semantics) only needs the
events of the current time point, and is forgotten when the clock moves on. Sweeps
(:meth:`Clock.collect`) free what no detection can use any more.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from typing import Any

from reasoner.compiler.network import Output, Source
from reasoner.errors import EngineError
from reasoner.runtime.alarms import AlarmTimer
from reasoner.runtime.events import Event
from reasoner.runtime.wiring import Wiring
from reasoner.values import Time


class Clock:
    """Runs checked events over a :class:`~reasoner.runtime.wiring.Wiring`.

    Attributes:
        last_sweep, ticks, since_sweep, sweep_budget: when the last sweep ran, the time points
            since, the work done since (events processed and detected) and the work that
            pays for the next sweep.
        deferred, after: ``after()`` is called after every event that leaves ``deferred``
            (a list) not empty (the rule changes callbacks asked for, made between events).
    """

    def __init__(self, wiring: Wiring, deferred: list[Any], after: Callable[[], None]):
        self.wiring = wiring
        self.runtime = wiring.runtime
        self.sink = wiring.sink
        self.provenance = wiring.options.provenance
        # (the sink's set, queue and counters, read on every event: never replaced)
        self.seen, self.agenda, self.counts = self.sink.seen, self.sink.agenda, self.sink.counts
        self.deferred = deferred
        self.after = after
        self.last_sweep: Time = -math.inf
        self.ticks = 0
        self.since_sweep = 0
        self.sweep_budget = 0

    def process(self, event: Event, receivers: list[Callable[..., None]] | None) -> None:
        """Process one checked event (``receivers``: its sources'): the clock moves to its
        end, it is dispatched, and the agenda drained into the sink's ``detected``."""
        name, args, start, end = event
        detected = self.sink.detected
        already = len(detected)
        runtime = self.runtime
        fresh = False  # whether nothing happened yet at this time point
        if end > runtime.now:
            if runtime.timers and runtime.timers[0][0] <= end:
                self.advance(end)
            else:
                self.tick(end)
                fresh = True
        seen = self.seen
        if not fresh and event in seen:
            self.counts["duplicates"] += 1
        else:
            seen.add(event)
            if receivers:
                why = event if self.provenance else None
                for receive in receivers:
                    receive(args, start, end, why)
                if self.agenda:
                    self.drain()
        # the event and its detections are work a sweep can pay for
        new = len(detected) - already
        self.since_sweep += 1 + new
        if new:
            self.counts["detections"] += new
        if self.deferred:  # (rule changes asked for by callbacks or actions)
            self.after()

    def count(self, detections: int) -> None:
        """Count the detections of an advance; they are work a sweep can pay for."""
        self.sink.counts["detections"] += detections
        self.since_sweep += detections
        if self.deferred:
            self.after()

    def advance(self, time: Time) -> None:
        """Move the clock forward to ``time``, firing every timer up to it on the way (time
        points, occurrences leaving an aggregate's window, alarms)."""
        rt = self.runtime
        timers = rt.timers
        while timers and timers[0][0] <= time:
            at, _, fire = heapq.heappop(timers)
            if at > rt.now:
                self.tick(at)
            fire()
            self.drain()
        if time > rt.now:
            self.tick(time)

    def tick(self, time: Time) -> None:
        self.runtime.now = time
        self.seen.clear()
        self.ticks += 1
        # Sweep every half window, and every few thousand time points in any case (negation
        # nodes free blockers no stored occurrence can use, windows or not); but only once
        # enough events came in and were detected to pay for it (a sweep costs nodes +
        # stored; what it leaves is what the rules still need): O(1) per event, memory
        # within a constant factor of what the rules need.
        if self.since_sweep >= self.sweep_budget and (
            time - self.last_sweep >= self.wiring.sweep_every or self.ticks >= 4096
        ):
            self.last_sweep = time
            self.ticks = 0
            self.collect()

    def drain(self) -> None:
        """Dispatch the agenda's derived events to their receivers, FIFO (at most
        ``max_derivations`` of them, the guard against runaway recursion)."""
        agenda, trace = self.agenda, self.provenance
        limit = self.wiring.options.max_derivations
        while agenda:
            event, receivers, rule = agenda.popleft()
            limit -= 1
            if limit < 0:
                agenda.clear()
                raise self.runaway(rule)
            _, args, start, end = event
            why = event if trace else None
            for receive in receivers:
                receive(args, start, end, why)

    def runaway(self, out: Output) -> EngineError:
        """The error of a dispatch deriving more than ``max_derivations`` events."""
        label = out.label or f"rule {out.rule}"
        return EngineError(
            f"runaway recursion: more than {self.wiring.options.max_derivations} events "
            f"derived from one input; last by {label} ({out.head.name}/{len(out.head.args)})"
        )

    def collect(self) -> int:
        """Free every stored occurrence that can no longer contribute to a detection and
        return how many."""
        wiring = self.wiring
        now = self.runtime.now
        floors = self.floors()
        nodes, inputs = wiring.nodes, wiring.input_lists
        freed = sum(nodes[i].expire(now, [floors[j] for j in inputs[i]]) for i in wiring.keepers)
        self.sink.counts["expired"] += freed
        self.since_sweep = 0
        self.sweep_budget = 64 * len(wiring.keepers) + wiring.stored() // 2
        return freed

    def floors(self) -> list[Time]:
        """Per node, a lower bound on the start of every occurrence it emits from now on.

        A node's bound is the earliest of its stored occurrences that may still reach its
        output and the bounds of the inputs whose start its output takes; a source's also
        includes the rules deriving its event (a fixpoint, since rules may be recursive), its
        pending alarms and the input stream (now minus ``max_span``).
        """
        wiring = self.wiring
        max_span = wiring.options.max_span
        entry = -math.inf if max_span is None else self.runtime.now - max_span
        feeds = wiring.feed_lists
        floors: list[Any] = [entry if isinstance(s, Source) else math.inf for s in wiring.specs]
        for i in wiring.keepers:
            held = wiring.nodes[i].held()
            if held < floors[i]:
                floors[i] = held
        for _, _, fire in self.runtime.timers:  # a pending alarm's event starts in the past
            if isinstance(fire, AlarmTimer):
                name, args, start, _ = fire.event
                for source in wiring.source_nodes.get((name, len(args)), ()):
                    floors[source.id] = min(floors[source.id], start)
        changed = True
        while changed:
            changed = False
            for i, inputs in enumerate(feeds):
                for j in inputs:
                    if floors[j] < floors[i]:
                        floors[i] = floors[j]
                        changed = True
        return floors
