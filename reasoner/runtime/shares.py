"""Input read where it is processed: each worker of a
:class:`~reasoner.runtime.parallel.ParallelEngine` reads and checks its own share of the input
(a :class:`Source`, e.g. the files of the keys it owns) and runs the keyed stage on it; the
router only merges (docs/scale-out.md, "Input read by the workers").

A worker (:func:`work_share`) sends its results a chunk of events at a time (a *part*): the
detections in the defined order, what the global stage reads, the notes (rejections) handed
while reading, and ``until``, the end of its last event: it has derived everything ending
before then. The router (:class:`ShareMerge`) runs everything ending before the smallest
``until`` of the workers still reading (the global stage on the input events and derived events
it reads, in the single engine's order; the notes in input order) and reports the detections
ending before it as final, so every worker runs at its own pace. Once all are done, every
worker's clock moves to the stream's last end (as the router's batches move them) and the rest
is final.

A source numbers its events (``seq``) so that ``(end, seq)`` is the order of the whole
merged input (it need not count: a file's number and the event's place in the share), and
gives each note a key in that order (:data:`NoteKey`).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from operator import itemgetter
from typing import Any, Protocol, cast

from reasoner.errors import ReasonerError
from reasoner.runtime import checkpoint
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.runtime.order import order_key, run_global, unique
from reasoner.runtime.pool import WorkerPool
from reasoner.runtime.stages import GlobalStage
from reasoner.runtime.worker import Derived, revive

#: Where a note falls in the merged input: ``(end, seq, 0, 0)`` for the event ``(end, seq)``
#: refused; ``(end, seq, 1, n)`` for the n-th note handed after it; ``(-inf, ...)`` before the
#: first event (the rest ordered as the input's files).
NoteKey = tuple[Any, ...]

#: A note: what it is (``refused``: an event the engine refused; else a reader's word, e.g.
#: ``malformed``, or ``iso``: the input gives times as ISO-8601 text) and the record the source
#: gave (e.g. the file, line and reason).
Note = tuple[str, Any]


@dataclass
class Chunk:
    """Events a source read, in its order, their numbers (``seqs[i]`` of ``events[i]``), and
    the notes handed while it read them (two lists: the events are checked and run as they
    are, with no pair built per event).

    ``refuse(i, reason)``: the note for refusing ``events[i]`` (its file and line).
    """

    events: list[Event]
    seqs: list[int]
    notes: list[tuple[NoteKey, Note]]
    refuse: Callable[[int, str], Note]


class Source(Protocol):
    """A worker's share of the input (built in the worker by a picklable factory)."""

    def open(self) -> str | None:
        """Read the share; why it cannot be run by this worker alone (None: it can)."""

    def chunks(self, size: int) -> Iterator[Chunk]:
        """The share's events, about ``size`` at a time, numbered (see the module doc)."""


@dataclass
class _Held:
    """What the router holds, not run yet: by end (see :meth:`ShareMerge._run`)."""

    #: sorted runs of (order key, detection), in the order they came (see :meth:`cut`)
    rows: list[list[tuple[Any, Event]]] = field(default_factory=list)
    raw: list[tuple[int, Event]] = field(default_factory=list)
    derived: list[Derived] = field(default_factory=list)
    notes: list[tuple[NoteKey, Note]] = field(default_factory=list)
    errors: list[tuple[int, ReasonerError]] = field(default_factory=list)

    def cut(self, bound: Any) -> list[tuple[Any, Event]]:
        """The rows ending before ``bound``, in the defined order (equal keys in the order
        they came), taken out. Only those are sorted: each run is cut where ``bound`` falls
        and keeps its rest as it is (a worker ahead of the other holds many runs, and
        sorting them all again at every bound cost the router a second or more).

        >>> held = _Held(rows=[[((1,), "a"), ((3,), "c")], [((1,), "b"), ((2,), "d")]])
        >>> held.cut(3), held.rows
        ([((1,), 'a'), ((1,), 'b'), ((2,), 'd')], [[((3,), 'c')]])
        """
        taken: list[tuple[Any, Event]] = []
        kept = []
        for run in self.rows:
            cut = bisect_left(run, bound, key=_key_end)
            if cut == len(run):
                taken += run
            elif cut:
                taken += run[:cut]
                kept.append(run[cut:])
            else:
                kept.append(run)
        self.rows = kept
        taken.sort(key=_first)  # (sorted runs: one merge)
        return taken


_first = itemgetter(0)


class ShareMerge:
    """The router's side: merge the workers' parts into the one output order (module doc).

    Args:
        pool: the workers (they answer the opening already sent).
        stage: the global stage (None: none).
        reads: the event types the global stage reads.
        rules: with explain, the rules detections' derivations are read with.
        counts: the router's counters (``events_in``, ``detections``, ``rejected``).
    """

    def __init__(
        self,
        pool: WorkerPool,
        stage: Engine | None,
        reads: set[tuple[str, int]],
        rules: checkpoint.Derivations | None,
        counts: dict[str, int],
    ) -> None:
        self.pool, self.stage = pool, stage
        self.reads, self.rules, self.counts = reads, rules, counts
        self.held = _Held()
        self.until = [-math.inf] * len(pool.connections)  # each worker's last end
        self.last = -math.inf  # the stream's last end (the workers' largest)

    def opened(self) -> list[str]:
        """Every worker's answer to the opening: why some share cannot run (empty: all can)."""
        answers = [self.pool.receive(i) for i in range(len(self.until))]
        return [problem for _, problem in answers if problem is not None]

    def run(self, on_note: Callable[[Note], None]) -> Iterator[list[Event]]:
        """Tell the workers to go; yield the detections as they become final (lists, in the
        defined order); hand every note to ``on_note`` in input order. The first error of an
        event's run (one engine's push raising) is raised once what ends before it is out; a
        worker's reading that fails (a ReasonerError, e.g. a file unreadable from some line
        on) is raised when it comes."""
        pool = self.pool
        pool.post(("go",))
        bound = -math.inf
        waiting = {connection: i for i, connection in enumerate(pool.connections)}
        while waiting:
            for ready in wait(list(waiting)):
                connection = cast(Connection, ready)
                i = waiting[connection]
                kind, value = pool.receive(i)
                if kind == "part":
                    self._take(value)
                    self.until[i] = value[0]
                elif kind == "error":  # its reading failed (a file unreadable from some line
                    raise value  # on): the run stops with it, as the router's reading would
                else:  # done: it has read its share (its timers after its last end wait)
                    self.until[i] = value
                    self.last = max(self.last, value)
                    del waiting[connection]
            if waiting and min(self.until) > bound:
                bound = min(self.until)
                try:
                    yield self._run(bound, on_note)
                except GeneratorExit:  # (the caller stops reading: a stop signal)
                    self._halt()
                    raise
        pool.post(("finish", self.last))  # (-inf: no events; each answers its last part)
        for i in range(len(self.until)):
            self._take(pool.receive(i)[1])
        yield self._run(math.inf, on_note, self.last)

    def _halt(self) -> None:
        """Have every worker end its share now (it serves on: its counters can be asked
        for); what they sent until then is dropped."""
        self.pool.post(("halt",))
        for i in range(len(self.until)):
            while self.pool.receive(i)[0] != "halted":
                pass

    def _take(self, part: tuple[Any, ...]) -> None:
        _, taken, run, feed, raw, errors, notes = part
        rules, held = self.rules, self.held
        self.counts["events_in"] += taken
        self.counts["rejected"] += sum(1 for _, (kind, _) in notes if kind == "refused")
        if run:
            held.rows.append([(key, revive(d, rules)) for key, d in run])
        for seq, plain, at in feed:
            if seq < 0 or at is None:  # a timer's events, each run at its own end
                held.derived += [(seq, [revive(d, rules)], None) for d in plain]
            else:
                held.derived.append((seq, [revive(d, rules) for d in plain], at))
        held.raw += raw
        held.notes += notes
        held.errors += errors

    def _run(self, bound: Any, on_note: Callable[[Note], None], until: Any = None) -> list[Event]:
        """Run what ends before ``bound`` (every worker has derived all of it), then move the
        global stage's clock to ``until`` (default: ``bound``); the detections now final."""
        held = self.held
        stage = self.stage
        if stage is not None:
            raw = [(seq, e) for seq, e in held.raw if e[3] < bound]
            derived = [item for item in held.derived if _end(item) < bound]
            if raw or derived:
                held.raw = [(seq, e) for seq, e in held.raw if e[3] >= bound]
                held.derived = [item for item in held.derived if _end(item) >= bound]
                if isinstance(stage, GlobalStage):
                    found = run_global(stage, raw, derived, self.reads)
                else:
                    found = [
                        d for _, event in sorted(raw, key=_in_order) for d in stage.push(event)
                    ]
                self._global(found)
            until = bound if until is None else until
            if math.isfinite(until) and until > stage.now:
                self._global(stage.advance(until))
        if held.notes:
            notes = sorted(held.notes, key=_first)
            cut = bisect_left(notes, bound, key=_key_end)
            held.notes = notes[cut:]
            for _, note in notes[:cut]:
                on_note(note)
        out = list(unique(d for _, d in held.cut(bound)))
        self.counts["detections"] += len(out)
        if held.errors:
            held.errors.sort(key=_first)
            raise held.errors.pop(0)[1]
        return out

    def hold(self, rows: list[tuple[Any, Event]]) -> None:
        """Hold ``rows``, ``(order key, detection)`` not final yet, before what the workers
        send."""
        if rows:
            self.held.rows.insert(0, sorted(rows, key=_first))

    def _global(self, found: list[Event]) -> None:
        if found:
            self.held.rows.append(sorted(((order_key(d), d) for d in found), key=_first))


def _end(item: Derived) -> Any:
    """When a derived item runs in the global stage: its first event's end (an input event's
    tree ends with it; a timer's events end when it fires)."""
    return item[1][0][3] if item[1] else -math.inf


def _key_end(item: tuple[tuple[Any, ...], Any]) -> Any:
    return item[0][0]


def _in_order(item: tuple[int, Event]) -> tuple[Any, int]:
    return item[1][3], item[0]
