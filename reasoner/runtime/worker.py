"""A worker process of :class:`~reasoner.runtime.parallel.ParallelEngine`: the keyed stage
on the batches the router sends, answered with the detections in the defined order, or on
the share of the input it reads itself (:func:`work_share`); and the
batch step it shares with Spark's tasks (connectors/spark), with the plain form in which
detections travel between processes.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from reasoner.errors import ReasonerError
from reasoner.knowledge.base import Knowledge
from reasoner.language.ast import Program, event_arities
from reasoner.runtime import checkpoint
from reasoner.runtime.batches import acceptable, kinds, mine
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Detection, Event
from reasoner.runtime.intake import Intake
from reasoner.runtime.options import EngineOptions
from reasoner.runtime.order import order_key
from reasoner.runtime.stages import Path, positions, stage_engine

if TYPE_CHECKING:
    from reasoner.runtime.shares import Note, NoteKey, Source


#: What the keyed stage derived from one input event, by its sequence number (-1: fired by
#: timers): the detections in derivation order and their positions (:mod:`stages`; None:
#: not recorded, or fired by timers).
Derived = tuple[int, list[Any], list[Path] | None]


_first = itemgetter(0)

#: The young generation's collection threshold while a worker reads and runs its share
#: (Python's default: 700).
YOUNG = 50_000


@contextmanager
def young_collections() -> Iterator[None]:
    """Collect the young generation every :data:`YOUNG` allocations, not 700, while reading
    and running events: every row read and event run allocates a few tuples, nearly all
    freed by reference counting, and a young collection every 700 of them cost a tenth of a
    worker's time (a Spark task's too).

    >>> with young_collections():
    ...     gc.get_threshold()[0]
    50000
    """
    thresholds = gc.get_threshold()
    gc.set_threshold(YOUNG, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


def work(
    connection: Connection,
    me: int,
    inherited: list[Connection],
    stage: tuple[Program, tuple[int, ...], bool],
    options: EngineOptions,
    knowledge: Callable[[], Knowledge],
    reads: set[tuple[str, int]],
) -> None:
    """Worker ``me``: runs the keyed rules (``stage``: the program, the keyed rules' indexes,
    whether to mark positions) on the batches it receives, until the router is gone."""
    for router_end in inherited:
        router_end.close()
    program, keep, marking = stage
    engine = stage_engine(program, keep, options, knowledge=knowledge(), marking=marking)
    checked: bytes | None = None
    changes: list[tuple[Any, ...]] = []  # the rule changes made, in order
    while True:
        try:
            message = connection.recv()
        except EOFError:  # the router is gone
            return
        kind = message[0]
        try:
            if kind == "batch":
                _, first, owner, rows, until = message
                answer: Any = ordered_batch(engine, mine(first, owner, me, rows), until, reads)
            elif kind == "rules":  # (between two batches, as knowledge)
                engine.change_stage(*message[1:4])
                changes.append(message[1:4])
                reads = message[4]
                answer = None
            elif kind == "knowledge":  # (between two batches: the router drained them)
                engine.use_knowledge(message[1])
                answer = None
            elif kind == "share":  # (it reads its own input: answered by parts, see shares)
                if work_share(connection, engine, message[1], reads, message[2]):
                    continue
                connection.close()  # (told to stop mid-share)
                return
            elif kind == "stats":
                answer = engine.stats()
            elif kind == "snapshot":
                answer = engine.snapshot()
            elif kind == "check":
                checked = message[1]
                probe = stage_engine(
                    program, keep, options, knowledge=engine.knowledge, marking=marking
                )
                for change in changes:  # (the engine's network, as the rule changes made it)
                    probe.change_stage(*change)
                probe.restore(checked)
                answer = None
            elif kind == "restore":
                assert checked is not None
                engine.restore(checked)
                answer = None
            elif kind == "halt":  # (a stop just after its share's reading failed and said so)
                _halted(connection, kind)
                continue
            else:
                connection.close()
                return
        except ReasonerError as error:
            connection.send(("error", error))
            continue
        connection.send(("ok", answer))


def work_share(
    connection: Connection,
    engine: Engine,
    factory: Callable[[], Source],
    reads: set[tuple[str, int]],
    size: int,
) -> bool:
    """A worker's side: open the share, answer whether it can run here, then (told ``go``)
    send its parts, ``done`` with its last end, and (told the stream's last end) the last part.
    ``skip`` as the answer to the opening leaves the engine untouched; ``halt`` ends the share
    where it is. Returns False when the router said ``stop`` (the worker then ends)."""
    with young_collections():
        source = factory()
        connection.send(("ok", source.open()))
        answer = connection.recv()[0]
        if answer != "go":
            return answer == "skip" or _halted(connection, answer)
        gc.freeze()  # (what was read and built stays: collections need not scan it again)
        return _run_share(connection, engine, source, reads, size)


def _run_share(
    connection: Connection,
    engine: Engine,
    source: Source,
    reads: set[tuple[str, int]],
    size: int,
) -> bool:
    """Run the share's chunks (:func:`work_share`, once told to go); False when told to
    stop before the end."""
    # an engine's checks (no lateness: a share's events come in order)
    intake = Intake(event_arities(engine.program), engine.settings.max_span, 0)
    arities, limit = intake.arities, engine.settings.span_limit
    for chunk in source.chunks(size):
        events, seqs, notes, now = chunk.events, chunk.seqs, chunk.notes, engine.now
        # (the event types once: the checks and the global stage's reads both want them)
        types = kinds(events)
        if events and acceptable(events, now, arities, limit, types):
            taken, now = list(zip(seqs, events, strict=True)), events[-1][3]
        else:  # the engine's checks one by one, for the reasons (in input order)
            taken = []
            for i, event in enumerate(events):
                reason = intake.rejection(event, now)
                if reason is None:
                    taken.append((seqs[i], event))
                    now = event[3]
                else:
                    notes.append(((event[3], seqs[i], 0, 0), chunk.refuse(i, reason)))
        # the input events the global stage reads (none of a type it does not read: no test
        # per event)
        raw = []
        if reads and events and not reads.isdisjoint(types):
            raw = [(seq, e) for seq, e in taken if (e[0], len(e[1])) in reads]
        connection.send(("part", _part(engine, taken, now, reads, notes, raw)))
        if connection.poll():  # (before ``done`` the router sends only ``halt`` or ``stop``)
            return _halted(connection, connection.recv()[0])
    connection.send(("done", engine.now))
    kind, *until = connection.recv()
    if kind != "finish":
        return _halted(connection, kind)
    connection.send(("part", _part(engine, [], until[0], reads, [], [])))
    return True


def _halted(connection: Connection, kind: str) -> bool:
    """The share cut short by the router: told ``halt``, the worker says so and serves on
    (True); told ``stop``, it ends (False)."""
    if kind == "halt":
        connection.send(("halted", None))
        return True
    return False


def _part(
    engine: Engine,
    taken: list[tuple[int, Event]],
    until: Any,
    reads: set[tuple[str, int]],
    notes: list[tuple[NoteKey, Note]],
    raw: list[tuple[int, Event]],
) -> tuple[Any, ...]:
    """Run ``taken`` (checked) up to ``until``: the message for the router (``raw``: the
    events of ``taken`` the global stage reads)."""
    run, feed, errors = ordered_batch(engine, taken, until, reads, accepted=True)
    return until, len(taken), run, feed, raw, errors, notes


def run_batch(
    engine: Engine,
    batch: Iterable[tuple[int, tuple[Any, ...]]],
    until: Any,
    errors: list[tuple[int, ReasonerError]] | None = None,
    *,
    accepted: bool = False,
) -> list[Derived]:
    """Push a batch of ``(seq, (name, args, start, end))``; the detections (as plain tuples)
    per input event's sequence number (-1: of timers that fired before it), then the timers
    up to ``until``; with their positions when the engine marks them (:func:`positions`).
    With ``errors``, an event whose push raises a ReasonerError adds ``(seq, error)`` there
    and the batch goes on with the next event, as one engine goes on after it; without,
    the error is raised. ``accepted``: every event is an Event known to pass the engine's
    checks (:meth:`~reasoner.runtime.engine.Engine.push_accepted`)."""
    out: list[Derived] = []
    new, clock = tuple.__new__, engine.runtime
    push = engine.push_accepted if accepted else engine.push
    rules = checkpoint.Derivations.of(engine)
    marking, marks = engine.wiring.marking, engine.sink.marks
    events, seq = iter(batch), -1
    while True:
        try:  # (once around the loop, resumed after a failing event: no cost per event)
            for seq, event in events:
                if (end := event[3]) > clock.now:
                    fired = engine.advance(end)
                    if fired:
                        out.append((-1, [plain(d, rules) for d in fired], None))
                if marks:  # (only a push that derived something marks)
                    marks.clear()
                # (a copy only of a plain tuple, as a batch sent by the router holds: an
                # Event copied would be kept twice, in the reader's and in the engine's)
                detections = push(event if type(event) is Event else new(Event, event))
                if detections:
                    paths = positions(engine, detections) if marking else None
                    out.append((seq, [plain(d, rules) for d in detections], paths))
        except ReasonerError as error:
            if errors is None:
                raise
            errors.append((seq, error))
            continue
        break
    if until > engine.now:
        fired = engine.advance(until)
        if fired:
            out.append((-1, [plain(d, rules) for d in fired], None))
    return out


def ordered_batch(
    engine: Engine,
    batch: Iterable[tuple[int, tuple[Any, ...]]],
    until: Any,
    reads: set[tuple[str, int]],
    *,
    accepted: bool = False,
) -> tuple[list[tuple[Any, tuple[Any, ...]]], list[Derived], list[tuple[int, ReasonerError]]]:
    """:func:`run_batch` for the router: the detections in the defined order, as
    ``(order key, plain detection)`` (a stable sort: equal keys keep the order they were
    derived in), the ``(seq, detections)`` of :func:`run_batch` that hold an event of
    a type in ``reads`` (what the global remainder reads), and the ``(seq, error)`` of the
    events whose push raised (the rest of the batch ran); ``accepted`` as for
    :func:`run_batch`."""
    errors: list[tuple[int, ReasonerError]] = []
    derived = run_batch(engine, batch, until, errors, accepted=accepted)
    run = sorted(((order_key(d), d) for _, plain, _ in derived for d in plain), key=_first)
    feed = [item for item in derived if reads and any((d[0], len(d[1])) in reads for d in item[1])]
    return run, feed, errors


def plain(d: Event, rules: checkpoint.Derivations | None = None) -> tuple[Any, ...]:
    """A detection as plain tuples (with its sources, when it has them, and with ``rules``
    its derivation, as snapshots write it)."""
    if isinstance(d, Detection):
        sources = tuple(tuple(s) for s in d.sources)
        written = None if rules is None or d.derivation is None else rules.write(d.derivation)
        return (*d, sources) if written is None else (*d, sources, written)
    return tuple(d)


def revive(t: tuple[Any, ...], rules: checkpoint.Derivations | None = None) -> Event:
    """The inverse of :func:`plain` (``rules``: those of the engine that derived it)."""
    if len(t) == 4:
        return tuple.__new__(Event, t)
    d = tuple.__new__(Detection, t[:4])
    # (most detections have no sources: no generator for them, half of the call's time)
    d.sources = tuple([tuple.__new__(Event, s) for s in t[4]]) if t[4] else ()
    if len(t) == 6 and rules is not None:
        d.derivation = rules.read(t[5])
    return d
