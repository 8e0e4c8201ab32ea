"""JSON-lines input read by the workers of ``reasoner run --workers N``: every worker reads
the whole input as the router would, and keeps the events of the keys it owns
(:func:`line_sources`; the router only merges, :mod:`reasoner.runtime.shares`).

A JSON-lines file holds the events of every key, in time order, so it cannot be divided by
file (MesoWest, :mod:`connectors.events.shares`) nor by byte range (a key's events lie all
over it). Each worker instead replays the router's reading: the same readers, merged as
``reasoner run`` merges them (:func:`~connectors.events.merge.merge_labelled`), each event
numbered by its place in that merged stream (the same in every worker) and checked against
the stream's clock as the router's engine would (a late event, one lasting longer than
``--max-span``: refused with the router's reason). An event then goes to the worker the
router would send it to (:func:`~reasoner.runtime.batches.key_owner` of its key; an event of
no keyed type to worker 0); the others are dropped unbuilt into anything more. So a worker
parses every line (measured in docs/scale-out.md: a key alone costs about half a full
parse), but nothing is checked, pickled or sent per event by the router.

What only one process may report is reported by one: worker 0 reports the malformed lines
(keyed after the merged event read before them, as the router prints them), the owner of an
event its refusal. A reader marks the run's time style when it meets an ISO-8601 time; the
router writes detections that way from then on, so the workers read only when the style is
settled before the first event (it is ISO when the first lines read mark it: worker 0 says so
with an ``iso`` note before any other; otherwise no file may hold a time given as text, else
the router reads the input).
"""

from __future__ import annotations

import math
import mmap
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import chain
from typing import Any

from connectors.events.inputs import REGISTRY, ReadContext, Share, read_share
from connectors.events.merge import merge_labelled
from connectors.events.rejects import Position, Rejected
from connectors.events.times import TimeStyle
from reasoner.errors import EventError, ReasonerError
from reasoner.runtime.batches import Kind, Owners
from reasoner.runtime.events import Event, rejection
from reasoner.runtime.shares import Chunk, Note, NoteKey

#: A time given as text (ISO-8601) in a file: what would mark the run's style while reading
#: (also a key of a nested object: the router reads then).
_TEXT_TIMES = [re.compile(rb'"' + key + rb'"\s*:\s*"') for key in (b"time", b"start", b"end")]


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
        self.positions: list[Position] = []
        self.merged: Iterator[tuple[int, Event]] = iter(())  # (the file, an event)

    def open(self) -> str | None:
        """Open the files and read up to the first event; why the workers cannot read them
        (None: they can)."""
        share, style = self.share, TimeStyle()
        on_reject = self.reject if share.me == 0 else _ignored
        context = ReadContext(on_reject, share.arities, {}, style)
        try:
            streams = [read_share(share.fmt, Share(path), context) for path in share.paths]
            for reading in streams:
                self.positions += reading.positions  # (one per file)
            merged = merge_labelled(*(reading.events for reading in streams))
            first = next(merged, None)  # (the merge reads each file up to its first event)
            # (worker 0 searches the files: its answer alone sends the input to the router)
            if share.me == 0 and not style.iso and any(map(_text_times, share.paths)):
                return "a time is given as ISO-8601 text after the first events"
        except (ReasonerError, OSError) as error:  # (the router reads them, and reports it)
            return str(error)
        if style.iso and share.me == 0:  # (before any other note: nothing written yet)
            self.notes.insert(0, ((-math.inf, -1, 0, 0), ("iso", None)))
        self.merged = merged if first is None else chain((first,), merged)
        return None

    def reject(self, rejected: Rejected) -> None:
        """A malformed line (keyed by :meth:`_keyed` after the event read before it)."""
        self.malformed.append(rejected)

    def _keyed(self, now: Any, seq: int) -> None:
        """Key the malformed lines read since the event at ``seq`` (``now``: the clock
        after it)."""
        for rejected in self.malformed:
            self.notes.append(((now, seq, 1, self.count), ("malformed", rejected)))
            self.count += 1
        self.malformed.clear()

    def chunks(self, size: int) -> Iterator[Chunk]:
        """This worker's events, ``size`` at a time, numbered by their places in the merged
        stream, with the notes handed while reading them."""
        share, malformed = self.share, self.malformed
        me, keys, owners = share.me, share.keys, Owners(share.workers)
        span = math.inf if share.max_span is None else share.max_span
        events: list[Event] = []
        seqs: list[int] = []
        places: list[tuple[int, int]] = []  # (file, line) of each event kept
        positions = self.positions
        now: Any = -math.inf  # the stream's clock: the end of the last event taken
        seq = -1  # the place of the last event read in the merged stream
        for file, event in self.merged:
            if malformed:  # (read while the merge took this event)
                self._keyed(now, seq)
            seq += 1
            end = event[3]
            at = keys.get((event[0], len(event[1])))
            owner = 0 if at is None else owners[event[1][at]]
            if end >= now and end - event[2] <= span:  # (what the router takes)
                now = end
                if owner == me:
                    events.append(event)
                    seqs.append(seq)
                    places.append((file, positions[file].line))
                    if len(seqs) == size:
                        yield self._chunk(events, seqs, places)
                        events, seqs, places = [], [], []
            elif owner == me:
                self._refuse(event, file, now, seq)
        self._keyed(now, seq)
        if events or self.notes:
            yield self._chunk(events, seqs, places)

    def _refuse(self, event: Event, file: int, now: Any, seq: int) -> None:
        """The note for the event at ``seq`` that the router's engine refuses at ``now``
        (late, or too long)."""
        share = self.share
        reason = rejection(event, now, share.arities, share.max_span, 0)
        assert reason is not None  # (it is late or too long)
        place = (file, self.positions[file].line)
        note = _refused(self.positions, [place], [event], 0, reason)
        self.notes.append(((now, seq, 0, 0), note))

    def _chunk(self, events: list[Event], seqs: list[int], places: list[tuple[int, int]]) -> Chunk:
        notes, self.notes = self.notes, []
        return Chunk(events, seqs, notes, partial(_refused, self.positions, places, events))


def _refused(
    positions: list[Position],
    places: list[tuple[int, int]],
    events: list[Event],
    index: int,
    reason: str,
) -> Note:
    """The note of event ``index`` refused: its file and line, and the reason as the router
    reports it (the EventError's text, the event with it)."""
    file, line = places[index]
    text = str(EventError(reason, events[index]))
    return ("refused", Rejected(positions[file].file, line, text))


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
