"""The two stages of a partitioned program, placed in one engine's order (docs/scale-out.md).

One engine dispatches what an input event derives first in, first out: it visits the event's
derivation tree breadth first. Within one dispatch, an event reaches its rules' network edges
in delivery order (the ranks of :func:`reasoner.compiler.network.delivery_ranks`), and each
edge derives its events one after the other. So a derived event's *position* is its path from
the input event, one step per generation: the key of the edge that derived it and its place
among what the dispatch derived; the single engine dispatches in the order of (depth, path).

Both stages are built from the whole program, each with the other stage's rules removed, so
their edges carry the whole program's ranks; their dispatches mark where each edge's
derivations end. The keyed stage sends every derived event with its :func:`positions`; the
global stage (:meth:`GlobalStage.push_tree`) dispatches those among its own derivations by
position. This is exact when no edge derives for both stages: the partition analysis keeps a
keyed rule that shares a network node (other than a source) with a global rule, or that may
derive when a timer fires (time points, aggregate windows), out of the keyed stage whenever
a global rule reads in arrival order (:mod:`reasoner.compiler.partition`).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import count
from typing import Any, overload

from reasoner.knowledge.base import Knowledge
from reasoner.language.ast import EventRule, Program
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.runtime.options import EngineOptions

#: A derived event's place in its input event's derivation tree: per generation, the key of
#: the edge that derived it and its index among what that push derived.
Path = tuple[tuple[Any, int], ...]


@overload
def stage_engine(
    program: Program,
    keep: None,
    options: EngineOptions,
    *,
    knowledge: Knowledge | None = None,
    marking: bool = False,
    remainder: bool = False,
    reads_keyed: bool = False,
) -> Engine: ...


@overload
def stage_engine(
    program: Program,
    keep: Sequence[int],
    options: EngineOptions,
    *,
    knowledge: Knowledge | None = None,
    marking: bool = False,
    remainder: bool = False,
    reads_keyed: bool = False,
) -> StageEngine: ...


def stage_engine(
    program: Program,
    keep: Sequence[int] | None,
    options: EngineOptions,
    *,
    knowledge: Knowledge | None = None,
    marking: bool = False,
    remainder: bool = False,
    reads_keyed: bool = False,
) -> Engine:
    """The engine of one stage of a partitioned program (the one place that chooses it, for
    ``--workers``, Spark replay and Spark streaming alike).

    Args:
        program: the whole program.
        keep: the indexes (into ``program.event_rules``) of the stage's rules; None: all of
            them (an unpartitioned program: one engine, ``options`` as they are; the flags
            below are then not read).
        options: the engine options (a stage is given no lateness: what feeds it orders).
        knowledge: what the conditions ask (None: the program's own facts and rules).
        marking: a keyed stage whose derivations the global stage reads: dispatches mark
            their edges (:func:`positions`).
        remainder: the global remainder, run after a keyed stage: it takes events of any
            span (what the keyed stage derives may last longer than ``max_span``, which
            checks input events and only frees memory earlier).
        reads_keyed: with ``remainder``, the global remainder reading what the keyed stage
            derives (:class:`GlobalStage`).
    Returns:
        The engine.

    >>> from reasoner.language.loader import load_rules
    >>> program = load_rules("c(X) <- a(X) SEQ b(X). d <- c(X).")
    >>> options = EngineOptions(max_span=0)
    >>> stage = stage_engine(program, (1,), options, remainder=True, reads_keyed=True)
    >>> type(stage).__name__, stage.settings.max_span
    ('GlobalStage', None)
    """
    if keep is None:
        return Engine(program, knowledge=knowledge, **options.as_dict())
    if remainder:
        options = replace(options, max_span=None)
        if reads_keyed:
            return GlobalStage(program, keep, options, knowledge=knowledge)
    return StageEngine(program, keep, options, marking=marking, knowledge=knowledge)


class StageEngine(Engine):
    """An engine running the rules ``keep`` (indexes into ``program.event_rules``) of
    ``program``: the network and delivery ranks of the whole program, the other rules
    removed. With ``marking``, dispatches mark their edges (:func:`positions`). Built by
    :func:`stage_engine`; ``options`` and ``knowledge`` as for
    :class:`~reasoner.runtime.engine.Engine`."""

    def __init__(
        self,
        program: Program,
        keep: Sequence[int],
        options: EngineOptions,
        *,
        marking: bool,
        knowledge: Knowledge | None = None,
    ) -> None:
        super().__init__(program, knowledge=knowledge, **options.as_dict())
        kept = set(keep)
        rules = self.program.event_rules
        wiring = self.wiring
        wiring.rewire(wiring.remove([rule for i, rule in enumerate(rules) if i not in kept]))
        if marking:
            wiring.mark_all()

    def change_stage(
        self, removed: Iterable[EventRule], added: Program, others: Iterable[EventRule]
    ) -> None:
        """A change of the whole program's rules (:meth:`Engine.change_rules`) made to this
        stage: its rules equal to ``removed`` go, all of ``added`` is compiled in as one
        engine compiles it, then the added rules ``others`` (the other stage's) go again, so
        that the edges carry one engine's ranks, as when the stage was built."""
        gone = set(removed)
        self.rule_changes.replace([r for r in self.program.event_rules if r in gone], added)
        self.wiring.rewire(self.wiring.remove(others))


def positions(engine: Engine, detections: Sequence[Event], root: Path = ()) -> list[Path]:
    """The position of each event the last push of a marking ``engine`` derived
    (``detections``, in derivation order), below ``root`` (the pushed event's). The push
    derived nothing before the pushed event's dispatch (its timers fired before it, as
    :func:`~reasoner.runtime.worker.run_batch` has them): a dispatch marks its start only
    once something was derived, so every start marked is the agenda's."""
    routes = engine.wiring.routes
    paths: list[Path] = []
    dispatched: deque[Path] = deque()  # the derived events the agenda dispatches, in order
    here = root
    for edge, n in engine.sink.marks:
        if edge is None:  # a dispatch of the agenda starts (in order)
            here = dispatched.popleft()
            continue
        while len(paths) < n:
            i = len(paths)
            path = (*here, (edge, i))
            paths.append(path)
            d = detections[i]
            if routes.get((d[0], len(d[1]))):
                dispatched.append(path)
    return paths


class GlobalStage(StageEngine):
    """The global remainder's engine: it dispatches the keyed stage's events among its own
    derivations in one engine's order (always marking)."""

    def __init__(
        self,
        program: Program,
        keep: Sequence[int],
        options: EngineOptions,
        *,
        knowledge: Knowledge | None = None,
    ) -> None:
        super().__init__(program, keep, options, marking=True, knowledge=knowledge)

    def push_tree(
        self, root: Event | None, time: Any, derived: Iterable[tuple[Path, Event]]
    ) -> list[Event]:
        """Process one input event (None: one this stage does not read, at ``time``) and
        what the keyed stage derived from it, ``(position, event)``; return what this stage
        derived. The caller has checked the input event (as :meth:`Engine.push` would)."""
        sink, clock = self.sink, self.clock
        detected: list[Event] = []
        sink.detected = detected
        if time > self.now:
            clock.advance(time)  # timers fire first, as before any event
        order = count()
        queue = [(len(p), p, next(order), e, None) for p, e in derived]
        heapq.heapify(queue)
        seen, routes, counts = sink.seen, self.wiring.routes, sink.counts
        if root is not None:
            counts["events_in"] += 1
            queue.append((0, (), -1, root, None))  # depth 0: first
            heapq.heapify(queue)
        limit = self.settings.max_derivations
        while queue:
            _, path, _, event, rule = heapq.heappop(queue)
            if rule is None:  # the input event or a keyed stage's event
                if event in seen:
                    counts["duplicates"] += 1
                    continue
                seen.add(event)
            else:
                limit -= 1
                if limit < 0:
                    sink.agenda.clear()
                    raise clock.runaway(rule)
            receivers = routes.get((event[0], len(event[1])))
            if receivers:
                self._dispatch(event, receivers, path, queue, order)
        clock.since_sweep += 1 + len(detected)
        counts["detections"] += len(detected)
        if self.rule_changes.deferred:
            self.rule_changes.apply_deferred()
        return detected

    def _dispatch(
        self,
        event: Event,
        receivers: list[Any],
        path: Path,
        queue: list[Any],
        order: Iterator[int],
    ) -> None:
        """Dispatch ``event`` (at ``path``) to this stage's rules; queue what they derived
        that rules here read, at its position."""
        sink = self.sink
        marks, agenda, detected = sink.marks, sink.agenda, sink.detected
        marks.clear()
        _, args, start, end = event
        why = event if self.settings.provenance else None
        done = len(detected)  # (a dispatch marks its start only once something was derived)
        for receive in receivers:
            receive(args, start, end, why)
        depth = len(path) + 1
        for edge, n in marks:
            if edge is None:
                continue
            for i in range(done, n):
                if agenda and agenda[0][0] is detected[i]:
                    item, _, rule = agenda.popleft()
                    entry = (depth, (*path, (edge, i)), next(order), item, rule)
                    heapq.heappush(queue, entry)
            done = max(done, n)
        assert not agenda, "a derived event without a position"
