"""JSON-lines input read by the workers of ``reasoner run --workers N``: every worker reads
the whole input as the router would, and keeps the events of the keys it owns
(:func:`line_sources`; the router only merges, :mod:`reasoner.runtime.shares`).

A JSON-lines file holds the events of every key, in time order, so it cannot be divided by
file (MesoWest, :mod:`connectors.events.shares`) nor by byte range (a key's events lie all
over it). Each worker instead replays the router's reading: the same events, line numbers and
reasons (:func:`~connectors.events.jsonl.read_jsonl_blocks`, a block of lines at a time), the
files merged as ``reasoner run`` merges them (by heap, ties in file order), each event numbered
by its place in that merged stream (the same in every worker) and checked against the stream's
clock as the router's engine would (a late event, one lasting longer than ``--max-span``:
refused with the router's reason). An event then goes to the worker the router would send it
to (:func:`~reasoner.runtime.batches.key_owner` of its key; an event of no keyed type to worker
0); the others are dropped unbuilt. Every worker must still decode every line: whether a line is
an event at all (valid JSON, a name, a time ...) moves the numbering and the clock, and a scan
for the key alone cannot tell. So the cost per line is kept down instead: with one file, a block
whose events all come in order and within ``--max-span`` is taken whole, a column at a time
(:meth:`LineReader._take_all`), and only the worker's own events are built; nothing is checked,
pickled or sent per event by the router.

What only one process may report is reported by one: worker 0 reports the malformed lines
(keyed after the merged event read before them, as the router prints them), the owner of an
event its refusal. A reader marks the run's time style when it meets an ISO-8601 time; the
router writes detections that way from then on, so the workers read only when the style is
settled before the first event (it is ISO when the first lines read mark it: worker 0 says so
with an ``iso`` note before any other; otherwise no file may hold a time given as text, else
the router reads the input).
"""

from __future__ import annotations

import heapq
import math
import mmap
import re
from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import compress, count, islice, repeat
from operator import ge, itemgetter, le, sub
from typing import Any

from connectors.events.inputs import REGISTRY, ReadContext, Share, read_share
from connectors.events.jsonl import LineBlock, read_jsonl_blocks
from connectors.events.merge import merge_labelled
from connectors.events.rejects import Rejected
from connectors.events.times import TimeStyle
from reasoner.errors import EventError, ReasonerError
from reasoner.runtime.batches import Kind, Owners
from reasoner.runtime.events import Event, rejection
from reasoner.runtime.shares import Chunk, Note, NoteKey

#: A time given as text (ISO-8601) in a file: what would mark the run's style while reading
#: (also a key of a nested object: the router reads then).
_TEXT_TIMES = [re.compile(rb'"' + key + rb'"\s*:\s*"') for key in (b"time", b"start", b"end")]

#: An event of the merged input: ``(end, file, block, index)`` (the block's event ``index``).
Item = tuple[Any, int, LineBlock, int]


def line_sources(
    fmt: str,
    paths: Sequence[str],
    workers: int,
    keys: dict[Kind, int],
    arities: dict[str, set[int]],
    max_span: Any,
) -> list[LineShare] | None:
    """Each worker's share of ``paths`` (the whole input, kept for the keys it owns), or None
    when the workers cannot read it: a format not divided by lines, or standard input.

    Args:
        fmt: a registered format.
        paths: the input files, in input order.
        workers: the number of workers.
        keys: each keyed event type's key position (``Partitioning.key_positions()``).
        arities: the argument counts of the event names the rules read.
        max_span: the engine's ``max_span`` (None: any).

    Returns:
        One :class:`LineShare` per worker, or None.

    Example:
        >>> line_sources("jsonl", ["-"], 2, {}, {}, None) is None
        True
    """
    if REGISTRY[fmt].split != "lines" or "-" in paths:
        return None
    return [
        LineShare(fmt, tuple(paths), me, workers, keys, arities, max_span) for me in range(workers)
    ]


@dataclass(frozen=True, slots=True)
class LineShare:
    """Worker ``me`` of ``workers``'s share (see :func:`line_sources`); called in the
    worker, it opens the files (a :class:`~reasoner.runtime.shares.Source`)."""

    fmt: str
    paths: tuple[str, ...]
    me: int
    workers: int
    keys: dict[Kind, int]
    arities: dict[str, set[int]]
    max_span: Any

    def __call__(self) -> LineReader:
        return LineReader(self)


class LineReader:
    """A worker's reading of the whole input, keeping its keys' events (the module doc).

    Args:
        share: what it reads and keeps.
    """

    def __init__(self, share: LineShare) -> None:
        self.share = share
        self.notes: list[tuple[NoteKey, Note]] = []
        self.count = 0  # the notes' order
        self.malformed: list[Rejected] = []  # read since the last event: not keyed yet
        self.report = self.malformed.append if share.me == 0 else _ignored
        self.owners = Owners(share.workers)
        self.now: Any = -math.inf  # the stream's clock: the end of the last event taken
        self.seq = -1  # the place of the last event read in the merged stream
        # the events kept and not sent yet, their places, (file, line) of each
        self.events: list[Event] = []
        self.seqs: list[int] = []
        self.places: list[tuple[int, int]] = []

    def open(self) -> str | None:
        """Read each file up to its first event, as the router's merge first reads them;
        why the workers cannot read them (None: they can)."""
        share, style = self.share, TimeStyle()
        context = ReadContext(_ignored, share.arities, {}, style)
        streams: list[Iterable[Event]] = []
        try:
            for path in share.paths:
                streams.append(read_share(share.fmt, Share(path), context).events)
            next(merge_labelled(*streams), None)
            # (worker 0 searches the files: its answer alone sends the input to the router)
            if share.me == 0 and not style.iso and any(map(_text_times, share.paths)):
                return "a time is given as ISO-8601 text after the first events"
        except (ReasonerError, OSError) as error:  # (the router reads them, and reports it)
            return str(error)
        finally:
            _close(streams)
        if style.iso and share.me == 0:  # (before any other note: nothing written yet)
            self.notes.append(((-math.inf, -1, 0, 0), ("iso", None)))
        return None

    def _keyed(self, now: Any, seq: int) -> None:
        """Key the malformed lines read since the event at ``seq`` (``now``: the clock
        after it)."""
        for rejected in self.malformed:
            self.notes.append(((now, seq, 1, self.count), ("malformed", rejected)))
            self.count += 1
        self.malformed.clear()

    def chunks(self, size: int) -> Iterator[Chunk]:
        """This worker's events, ``size`` at a time, numbered by their places in the merged
        stream, with the notes handed while reading them. One file is walked a block at a
        time: a block of events in time order, none refused, is taken whole with a few
        C-level passes (:meth:`_take_all`); several files are merged event by event."""
        share = self.share
        files = [read_jsonl_blocks(path, share.arities) for path in share.paths]
        try:
            if len(files) == 1:
                for block in files[0]:
                    if self.malformed:  # (read after the last event)
                        self._keyed(self.now, self.seq)
                    if not block.rejected and self._in_order(block):
                        yield from self._take_all(block, size)
                    else:
                        yield from self._walk(self._items(0, [block]), size)
            else:  # (tuples compare by end, then by file: the ties in file order, as merged)
                yield from self._walk(heapq.merge(*map(self._items, count(), files)), size)
        finally:  # (a share halted: its files closed now, not when collected)
            _close(files)
        self._keyed(self.now, self.seq)
        if self.events or self.notes:
            yield self._chunk(len(self.events))

    def _items(self, file: int, blocks: Iterable[LineBlock]) -> Iterator[Item]:
        """The events of ``file``'s blocks as ``(end, file, block, index)``, each malformed
        line reported as a reader reports it: while reading on to the next event."""
        report = self.report
        for block in blocks:
            ends, rejected = block.ends, block.rejected
            if not rejected:
                yield from zip(ends, repeat(file), repeat(block), range(len(ends)))
                continue
            at = 0
            for index, end in enumerate(ends):
                while at < len(rejected) and rejected[at][0] == index:
                    report(rejected[at][1])
                    at += 1
                yield end, file, block, index
            for _, line in rejected[at:]:
                report(line)

    def _walk(self, items: Iterable[Item], size: int) -> Iterator[Chunk]:
        """Take the merged events ``items`` one by one: checked against the stream's clock
        as the router's engine checks them, kept (or refused) when this worker owns them."""
        share, malformed, owners = self.share, self.malformed, self.owners
        me, keys = share.me, share.keys
        span = math.inf if share.max_span is None else share.max_span
        events, seqs, places = self.events, self.seqs, self.places
        now, seq = self.now, self.seq
        for end, file, block, index in items:
            if malformed:  # (read while the merge took this event)
                self._keyed(now, seq)
            seq += 1
            args = block.args[index]
            at = keys.get((block.names[index], len(args)))
            owner = 0 if at is None else owners[args[at]]
            if end >= now and end - block.starts[index] <= span:  # (what the router takes)
                now = end
                if owner == me:
                    events.append(block.event(index))
                    seqs.append(seq)
                    places.append((file, block.lines[index]))
                    if len(seqs) == size:
                        self.now, self.seq = now, seq
                        yield self._chunk(size)
            elif owner == me:
                self._refuse(block.event(index), (file, block.lines[index]), now, seq)
        self.now, self.seq = now, seq

    def _in_order(self, block: LineBlock) -> bool:
        """Whether the router's engine takes every event of ``block`` (none ends before the
        one before it, none lasts longer than ``max_span``)."""
        ends, span = block.ends, self.share.max_span
        if not ends:
            return True
        if not ends[0] >= self.now or not all(map(le, ends, islice(ends, 1, None))):
            return False
        return span is None or all(map(ge, repeat(span), map(sub, ends, block.starts)))

    def _take_all(self, block: LineBlock, size: int) -> Iterator[Chunk]:
        """Take every event of ``block`` (:meth:`_in_order`) and keep this worker's."""
        ends, base = block.ends, self.seq + 1
        if not ends:
            return
        self.now, self.seq = ends[-1], self.seq + len(ends)
        chosen = self._chosen(block)
        if chosen is None:
            return
        self.events += block.chosen(chosen)
        self.seqs += compress(range(base, self.seq + 1), chosen)
        self.places += zip(repeat(0), compress(block.lines, chosen))  # (the one file's)
        while len(self.seqs) >= size:
            yield self._chunk(size)

    def _chosen(self, block: LineBlock) -> list[bool] | None:
        """Whether this worker owns each event of ``block`` (None: none): an event of a keyed
        type the owner of its key, any other worker 0."""
        share, owners = self.share, self.owners
        keys, names, args = share.keys, block.names, block.args
        kinds = block.kinds
        if kinds is None:
            kinds = set(zip(names, map(len, args), strict=True))
        found: Iterable[int]
        if len(kinds) == 1:  # (one event type, the common case: a column at a time)
            at = keys.get(next(iter(kinds)))
            if at is None:
                return [True] * len(names) if share.me == 0 else None
            found = map(owners.__getitem__, map(itemgetter(at), args))
        else:
            found = [
                0 if (at := keys.get((name, len(values)))) is None else owners[values[at]]
                for name, values in zip(names, args, strict=True)
            ]
        return list(map(share.me.__eq__, found))

    def _refuse(self, event: Event, place: tuple[int, int], now: Any, seq: int) -> None:
        """The note for the event at ``seq`` that the router's engine refuses at ``now``
        (late, or too long)."""
        share = self.share
        reason = rejection(event, now, share.arities, share.max_span, 0)
        assert reason is not None  # (it is late or too long)
        note = _refused(share.paths, [place], [event], 0, reason)
        self.notes.append(((now, seq, 0, 0), note))

    def _chunk(self, size: int) -> Chunk:
        """The first ``size`` events kept, with the notes handed so far."""
        notes, self.notes = self.notes, []
        events, seqs, places = self.events[:size], self.seqs[:size], self.places[:size]
        del self.events[:size], self.seqs[:size], self.places[:size]
        return Chunk(events, seqs, notes, partial(_refused, self.share.paths, places, events))


def _refused(
    paths: Sequence[str],
    places: list[tuple[int, int]],
    events: list[Event],
    index: int,
    reason: str,
) -> Note:
    """The note of event ``index`` refused: its file and line, and the reason as the router
    reports it (the EventError's text, the event with it)."""
    file, line = places[index]
    text = str(EventError(reason, events[index]))
    return ("refused", Rejected(paths[file], line, text))


def _close(streams: Iterable[Iterable[Any]]) -> None:
    """Close each of ``streams`` that is a generator, and the file it reads with it: now, not
    when the garbage collector finds it."""
    for stream in streams:
        if isinstance(stream, Generator):
            stream.close()


def _ignored(rejected: Rejected) -> None:
    """A malformed line another worker reports."""


def _text_times(path: str) -> bool:
    """Whether ``path`` may give a time as text (:data:`_TEXT_TIMES`, or a ``\\u`` escape)."""
    with open(path, "rb") as file:
        if not file.seek(0, 2):
            return False
        with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
            # (a literal first: each searched at C speed, where one alternation is 3 times slower)
            return data.find(rb"\u") >= 0 or any(text.search(data) for text in _TEXT_TIMES)
