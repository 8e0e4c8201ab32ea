"""The read step of archive replay (:mod:`connectors.spark.replay`) on the executors: a task's
files read, each event numbered and checked, and routed into the shuffle by its key.

A format read at once when in time order (``InputFormat.in_order``: MesoWest's column reader,
:mod:`connectors.mesowest.archive`, as ``reasoner run`` reads) reads a task's files together,
merged by time (:func:`read_in_order`); other formats, or a task whose files are not each in
time order or readable to their end, are read a file at a time by their row loops
(:func:`read_each`). Both give the same records: the same events with the same numbers, the
same rejections with their file, line and reason, each keyed where it falls in the files'
merge (:data:`NoteKey`: after the event its file gave before it, as ``reasoner run`` hands
it over). The keyed events cross the shuffle as
columns, a chunk per partition (:func:`keyed_record`): a pickled Event costs its class's
reduction, a record each its framing.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from itertools import islice, repeat
from operator import add, itemgetter
from typing import TYPE_CHECKING, Any

from connectors.events.inputs import (
    REGISTRY,
    ReadContext,
    Share,
    open_events,
    rdf_options,
    read_share,
)
from connectors.events.rejects import Position, Rejected
from connectors.events.times import TimeStyle
from reasoner.compiler.partition import EventType
from reasoner.errors import EventError, ReasonerError
from reasoner.runtime.batches import Owners, acceptable, kinds
from reasoner.runtime.events import Event
from reasoner.runtime.intake import Intake
from reasoner.runtime.worker import young_collections

if TYPE_CHECKING:
    from connectors.mesowest.archive import Labelled
    from connectors.spark.replay import Archive

#: A sequence number is the file's index times this, plus the event's place in its file.
FILE_STRIDE = 1 << 40

# The kinds of record the read step gives (TAKEN: a chunk of events the engine takes, before
# the routing makes KEYED records of it), and those a keyed task reading its own files adds
# (connectors.spark.replay_keyed.FilesTask: its engine's next timer, its files not each in time
# order, its error on writing its runs).
EVENT, REJECT, FILE, KEYED, GLOBAL, TAKEN = 0, 1, 2, 3, 4, 5
TIMER, OUT_OF_ORDER, FAILED = 6, 7, 8
#: A file a task could not read: ``(UNREAD, its index, the error's message)``.
UNREAD = 9

#: Where a rejection falls in the files' merge by time (the rejections are written in that
#: order, as ``reasoner run`` skips them): ``(end, seq, 0, 0)`` for the event ``(end, seq)``
#: refused; ``(end, seq, 1, line)`` for a malformed line after it, the event its file gave
#: before it; ``(-inf, file index, 1, line)`` before its file's first event (the
#: :data:`~reasoner.runtime.shares.NoteKey` of ``reasoner run --workers``).
NoteKey = tuple[Any, ...]

#: Keyed events per record of the shuffle (:func:`keyed_record`).
SHUFFLED = 8192

_MAKE = tuple.__new__
_args, _end = itemgetter(1), itemgetter(3)


class FileError(ReasonerError):
    """A file a read could not read (unopenable, a broken header): its index among the
    inputs, and the error's message, which the driver reports as ``reasoner run`` does (the
    first in input order), not as an executor's traceback (:func:`unread`)."""

    def __init__(self, index: int, error: Exception) -> None:
        super().__init__(str(error))
        self.index = index

    def record(self) -> tuple[int, int, str]:
        """The record telling the driver (:data:`UNREAD`)."""
        return UNREAD, self.index, str(self)


def unread(records: Iterable[tuple[Any, ...]]) -> str | None:
    """The message of the first file, in input order, that a read could not read, among
    the read's ``records`` (None: none)."""
    found = [r for r in records if r[0] == UNREAD]
    return min(found)[2] if found else None


@dataclass(frozen=True)
class FileInfo:
    """What the driver learns of a file from its reading."""

    ordered: bool  # every event ends no earlier than the one before it
    taken: int  # events the engine takes
    last: Any  # the latest end of an event the engine takes (-inf: none)
    iso: bool
    unmatched: int  # RDF graphs that gave no event


def read_task(
    archive: Archive,
    arities: dict[str, set[int]],
    files: Iterable[tuple[int, str]],
    keys: dict[EventType, int],
    raw_types: set[EventType] | None,
    n: int,
) -> Iterator[tuple[int, tuple[Any, ...]]]:
    """A read task: its files ``(index, path)`` read (:func:`read_files`) and routed
    (:func:`route`): ``(partition, record)`` pairs, the young generation collected rarely
    (:func:`~reasoner.runtime.worker.young_collections`) only while the task makes a pair:
    not while it is suspended and its caller (Spark's serializer) runs."""
    try:
        records = route(read_files(archive, arities, files), keys, raw_types, n)
        while True:
            # (a pair is a chunk of SHUFFLED events, mostly: two threshold calls per chunk)
            with young_collections():
                pair = next(records, None)
            if pair is None:
                return
            yield pair
    except FileError as error:  # (the driver reports it)
        yield n, error.record()


def read_files(
    archive: Archive, arities: dict[str, set[int]], files: Iterable[tuple[int, str]]
) -> Iterator[tuple[Any, ...]]:
    """Read files on an executor: ``(EVENT, seq, event, rejection or None)`` per event,
    ``(REJECT, Rejected, NoteKey)`` per malformed line, and ``(FILE, index, FileInfo)`` per
    file.

    Files of a format read at once when in time order (``InputFormat.in_order``: MesoWest's
    column reader) are read so, together (:func:`read_in_order`); the others, and all of a
    task's files when one is out of time order or unreadable from some line on, one after
    the other by their readers (:func:`read_each`): the same events, numbers and rejections
    either way."""
    files = list(files)
    merged = read_in_order(archive, arities, files) if files else None
    return read_each(archive, arities, files) if merged is None else merged


def read_each(
    archive: Archive, arities: dict[str, set[int]], files: Iterable[tuple[int, str]]
) -> Iterator[tuple[Any, ...]]:
    """:func:`read_files`, a file at a time."""
    for index, path in files:
        try:
            yield from _read_one(archive, arities, index, path)
        except (ReasonerError, OSError) as error:
            raise FileError(index, error) from error


def _read_one(
    archive: Archive, arities: dict[str, set[int]], index: int, path: str
) -> Iterator[tuple[Any, ...]]:
    """:func:`read_each` of one file."""
    style = TimeStyle()
    rejects: list[Rejected] = []
    positions: list[Position] = []
    rdf = rdf_options(archive.format, archive.rdf_time, archive.program)
    stream = open_events(path, archive.format, style, rejects.append, rdf, arities, positions)
    base = index * FILE_STRIDE
    previous, last, ordered, taken = -math.inf, -math.inf, True, 0
    intake = Intake(arities, archive.max_span, 0)  # (the checks; the admission: _admit)
    place = -1
    for place, event in enumerate(stream):  # (its last place is read after it)
        if rejects:  # (found while the reader looked for this event: after the one before)
            after = (previous, base + place - 1) if place else (-math.inf, index)
            yield from ((REJECT, item, (*after, 1, item.line)) for item in rejects)
            rejects.clear()
        end = event[3]
        if end < previous:
            ordered = False
        previous = end
        reason = intake.rejection(event, -math.inf)
        if reason is None:
            last = max(last, end)
            taken += 1
            yield EVENT, base + place, event, None
        else:
            where = next(p for p in positions if p.holds(event))
            found = where.rejected(str(EventError(reason, event)))  # as reasoner run says
            yield EVENT, base + place, event, (found.file, found.line, found.reason)
    after = (previous, base + place) if place >= 0 else (-math.inf, index)
    yield from ((REJECT, item, (*after, 1, item.line)) for item in rejects)
    counts = rdf.get("counts")
    unmatched = 0 if counts is None else counts.unmatched
    yield FILE, index, FileInfo(ordered, taken, last, style.iso, unmatched)


def read_in_order(
    archive: Archive, arities: dict[str, set[int]], files: list[tuple[int, str]]
) -> Iterator[tuple[Any, ...]] | None:
    """:func:`read_files` by the format's ``in_order`` reader (the files merged by time, read at
    once), or None: the format has none, or a file is out of time order or unreadable from
    some line on (nothing was handed over yet: the files are read again, by their readers)."""
    entry = REGISTRY[archive.format]
    if entry.in_order is None or entry.holds is None:
        return None
    merge, readings = _Merged.open(archive, arities, files, entry.holds[2])
    merged = entry.in_order(readings)
    return None if merged is None else merge.records(merged, Intake(arities, archive.max_span, 0))


def read_labelled(
    archive: Archive, arities: dict[str, set[int]], files: list[tuple[int, str]]
) -> Iterator[tuple[Any, ...]] | None:
    """:func:`read_in_order` by the format's ``labelled`` reader, which gives each event's file
    and line at C level: the same records, but each event numbered by its file's index and its
    line, not its place in the file (what a keyed task reading its own files needs: numbers that
    order its events; the shuffle path's admission finds late events by their places). None as
    :func:`read_in_order`."""
    entry = REGISTRY[archive.format]
    if entry.labelled is None or entry.holds is None:
        return None
    merge, readings = _Merged.open(archive, arities, files, entry.holds[2])
    labelled = entry.labelled(readings)
    if labelled is None:
        return None
    return merge.labelled(labelled, Intake(arities, archive.max_span, 0))


class _Merged:
    """Numbering the events of files merged by time: each event's file found by its key (the
    argument at ``at``: a file holds one key) and its reader's position (naming the event it
    yielded last, and its line), its sequence number its file's index and its place there
    (:meth:`labelled`: its line). The readers' rejections are keyed (:data:`NoteKey`) after
    the event the merge gave last when it hands them over: the one their file gave before
    them, as in ``reasoner run``."""

    def __init__(self, files: list[tuple[int, str]], at: int) -> None:
        self.files, self.at = files, at
        self.wheres: list[Position] = []
        self.styles = [TimeStyle() for _ in files]  # (the readers')
        self.rejects: list[tuple[Rejected, NoteKey]] = []  # (the readers', keyed)
        self.bases = [index * FILE_STRIDE for index, _ in files]
        self.taken = [0] * len(files)  # each file's events the engine takes
        self.last = [-math.inf] * len(files)  # the latest end of those
        # the events the merge gave last: a labelled merge's row, else the chunk being
        # pulled (events, numbers) and the last event of the chunk before, (end, seq)
        self.labelled_merge: Labelled | None = None
        self.pulled: tuple[list[Event], list[int]] = ([], [])
        self.tail: tuple[Any, int] | None = None

    @classmethod
    def open(
        cls, archive: Archive, arities: dict[str, set[int]], files: list[tuple[int, str]], at: int
    ) -> tuple[_Merged, list[Any]]:
        """The numbering of ``files`` and their readings' events (to merge)."""
        merge = cls(files, at)
        readings = []
        for i, ((index, path), style) in enumerate(zip(files, merge.styles, strict=True)):
            context = ReadContext(partial(merge.note, i), arities, {}, style)
            try:
                readings.append(read_share(archive.format, Share(path), context))
            except (ReasonerError, OSError) as error:
                raise FileError(index, error) from error
        merge.wheres = [reading.positions[0] for reading in readings]
        return merge, [reading.events for reading in readings]

    def note(self, i: int, rejected: Rejected) -> None:
        """A rejection of the reader of file ``i``, keyed after the event the merge gave last
        (the merge hands it over right after the event its file gave before it)."""
        if self.labelled_merge is not None:
            row = self.labelled_merge.last
            after = None if row is None else (row[2][3], self.bases[row[0]] + row[1])
        else:
            events, seqs = self.pulled
            after = (events[-1][3], seqs[-1]) if events else self.tail
        key = (-math.inf, self.files[i][0]) if after is None else after
        self.rejects.append((rejected, (*key, 1, rejected.line)))

    def records(self, merged: Iterator[Event], intake: Intake) -> Iterator[tuple[Any, ...]]:
        """The records of :func:`read_files`, the events the engine takes as ``(TAKEN, seqs,
        events, their types)`` chunks."""
        wheres, at, bases = self.wheres, self.at, self.bases
        counts = [0] * len(self.files)  # each file's events so far
        slots: dict[Any, int] = {}  # each key's file (of several: the one read last)
        while True:
            chunk: list[Event] = []
            seqs: list[int] = []
            self.pulled = chunk, seqs  # (read by note: the rejections handed while pulling)
            files: list[int] = []
            lines: list[int] = []
            # (the loop runs per event: only what is not done a chunk at a time below)
            for event in islice(merged, SHUFFLED):
                i = slots.get(event[1][at])
                if i is None or wheres[i].event is not event:
                    i = slots[event[1][at]] = next(
                        j for j, w in enumerate(wheres) if w.holds(event)
                    )
                place = counts[i]
                counts[i] = place + 1
                chunk.append(event)
                seqs.append(bases[i] + place)
                files.append(i)
                lines.append(wheres[i].line)
            if not chunk:
                break
            self.tail = chunk[-1][3], seqs[-1]
            yield from self._checked(chunk, seqs, files, lines, intake)
        yield from self._ends()

    def labelled(self, merged: Labelled, intake: Intake) -> Iterator[tuple[Any, ...]]:
        """:meth:`records` of a labelled merge, a block at a time, numbered by line."""
        bases = self.bases
        self.labelled_merge = merged  # (its last row keys the rejections: note)
        for files, lines, events in merged.blocks():
            seqs = list(map(add, map(bases.__getitem__, files), lines))  # (at C level)
            for start in range(0, len(events), SHUFFLED):
                cut = slice(start, start + SHUFFLED)
                yield from self._checked(events[cut], seqs[cut], files[cut], lines[cut], intake)
        yield from self._ends()

    def _ends(self) -> Iterator[tuple[Any, ...]]:
        """After the events: the readers' rejections and each file's :class:`FileInfo`."""
        for item, key in self.rejects:
            yield REJECT, item, key
        for i, (index, _) in enumerate(self.files):
            yield FILE, index, FileInfo(True, self.taken[i], self.last[i], self.styles[i].iso, 0)

    def _checked(
        self,
        chunk: list[Event],
        seqs: list[int],
        files: list[int],
        lines: list[int],
        intake: Intake,
    ) -> Iterator[tuple[Any, ...]]:
        """The chunk's records, checked as an engine checks events (at once when it takes
        them all, as it mostly does)."""
        limit = math.inf if intake.max_span is None else intake.max_span
        taken, last = self.taken, self.last
        types = kinds(chunk)  # (the checks and the routing both want them)
        if acceptable(chunk, -math.inf, intake.arities, limit, types):
            for i, count in Counter(files).items():
                taken[i] += count
            for i, end in dict(zip(files, map(_end, chunk), strict=True)).items():
                last[i] = end  # (in time order: a file's last is its latest)
            yield TAKEN, seqs, chunk, types
            return
        for seq, event, i, line in zip(seqs, chunk, files, lines, strict=True):
            reason = intake.rejection(event, -math.inf)
            if reason is None:
                taken[i] += 1
                last[i] = event[3]
                yield EVENT, seq, event, None
            else:  # (as reasoner run says)
                rejected = (self.wheres[i].file, line, str(EventError(reason, event)))
                yield EVENT, seq, event, rejected


def route(
    records: Iterable[tuple[Any, ...]],
    keys: dict[EventType, int],
    raw_types: set[EventType] | None,
    n: int,
) -> Iterator[tuple[int, tuple[Any, ...]]]:
    """Each record with its partition: the events of keyed types as
    :func:`keyed_record` chunks of about :data:`SHUFFLED` in partition ``key_owner(key, n)``
    (as the router of ``reasoner run --workers`` spreads keys: equal keys, such as 1 and 1.0,
    in one partition), one the global stage reads ``(GLOBAL, seq, event, None)`` in
    partition ``n``, and so are the rejects, the files' counts, the events rejected on
    reading and (as a stub, for the times only) the events no rule reads."""
    router = _Router(keys, raw_types, n)
    for record in records:
        if record[0] == TAKEN:
            yield from router.chunk(record[1], record[2], record[3])
        elif record[0] != EVENT or record[3] is not None:
            yield n, record
        else:
            yield from router.event(record[1], record[2])
    yield from router.flush(0)


class _Router:
    """:func:`route`'s keyed events, held per partition until a chunk is full."""

    def __init__(self, keys: dict[EventType, int], raw_types: set[EventType] | None, n: int):
        self.keys, self.raw_types, self.n = keys, raw_types, n
        self.owners = Owners(n)
        self.held: list[tuple[list[int], list[Event]]] = [([], []) for _ in range(n)]

    def event(self, seq: int, event: Event) -> Iterator[tuple[int, tuple[Any, ...]]]:
        """One event's records (its keyed record held)."""
        kind = _type(event)
        position = self.keys.get(kind)
        if position is not None:
            seqs, events = self.held[self.owners[event[1][position]]]
            seqs.append(seq)
            events.append(event)
        if self.raw_types is None or kind in self.raw_types:
            yield self.n, (GLOBAL, seq, event, None)
        elif position is None:
            stub = tuple.__new__(Event, (event[0], (None,) * len(event[1]), event[2], event[3]))
            yield self.n, (EVENT, seq, stub, None)
        if position is not None:
            yield from self.flush(SHUFFLED)

    def chunk(
        self, seqs: list[int], events: list[Event], found: set[EventType]
    ) -> Iterator[tuple[int, tuple[Any, ...]]]:
        """A chunk's records (``found``: its event types): at once when its events are of one
        keyed type the global stage does not read (a MesoWest archive's readings); else an
        event at a time."""
        kind = next(iter(found))
        position = self.keys.get(kind)
        if len(found) > 1 or position is None or self.raw_types is None or kind in self.raw_types:
            for seq, event in zip(seqs, events, strict=True):
                yield from self.event(seq, event)
            return
        held = self.held
        owners = map(self.owners.__getitem__, map(itemgetter(position), map(_args, events)))
        for seq, event, owner in zip(seqs, events, owners, strict=True):
            mine = held[owner]
            mine[0].append(seq)
            mine[1].append(event)
        yield from self.flush(SHUFFLED)

    def flush(self, size: int) -> Iterator[tuple[int, tuple[Any, ...]]]:
        """The records of the partitions holding at least ``size`` events (0: all of them)."""
        for owner, (seqs, events) in enumerate(self.held):
            if seqs and len(seqs) >= size:
                yield owner, keyed_record(seqs, events)
                self.held[owner] = ([], [])


def keyed_record(seqs: list[int], events: list[Event]) -> tuple[Any, ...]:
    """The shuffle's record of keyed events (with their sequence numbers): columns, not an
    Event each (pickled as a few tuples: a pickled Event costs its class's reduction).

    >>> record = keyed_record([7], [Event.at("a", ("k", 1), 3)])
    >>> list(keyed_events(record))
    [(3, 7, Event(name='a', args=('k', 1), start=3, end=3))]
    """
    return (KEYED, tuple(seqs), *zip(*events, strict=True))


def keyed_events(record: tuple[Any, ...]) -> Iterator[tuple[Any, int, Event]]:
    """The ``(end, seq, event)`` of a :func:`keyed_record` (the events rebuilt, no Python code
    running per event)."""
    _, seqs, names, args, starts, ends = record
    events = map(_MAKE, repeat(Event), zip(names, args, starts, ends, strict=True))
    return zip(ends, seqs, events, strict=True)


def _type(event: Event) -> EventType:
    return event[0], len(event[1])
