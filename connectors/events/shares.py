"""The input read by the workers of ``reasoner run --workers N``: each worker reads the files of
the keys it owns (:func:`file_sources`), merges them by time and runs them, and the router only
merges what they derive (:mod:`reasoner.runtime.shares`, docs/scale-out.md).

A file-split format (``InputFormat.split == "files"``) whose files each hold one key
(``InputFormat.holds``) can be so divided when the program keys those events by that argument:
every file of a key then goes to the worker the router would send the key's events to
(:func:`~reasoner.runtime.batches.key_owner`), so the partitions, and what each worker derives,
are those of the router's run. A worker's events are numbered ``file << 32 | line`` (the
file's place among the inputs, the event's line in its file): with each file in time order,
the whole input's merge is a stable sort by time over the files in input order, so
``(end, seq)`` orders any worker's events as that merge does. Rejections are keyed by the event
they follow
(the merge hands a file's rejection over when the event after its file's previous one is
asked for), so the router reports them in input order.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import count
from operator import or_
from typing import TYPE_CHECKING, Any

from connectors.events.inputs import REGISTRY, ReadContext, Share, read_share
from connectors.events.rejects import Position, Rejected
from connectors.events.times import TimeStyle
from reasoner.compiler.partition import Partitioning
from reasoner.errors import EventError, ReasonerError
from reasoner.runtime.batches import key_owner
from reasoner.runtime.events import Event
from reasoner.runtime.shares import Chunk, Note, NoteKey

if TYPE_CHECKING:
    from connectors.mesowest.archive import Labelled

#: The bits of a worker's event number below the file's place.
_PLACE = 32


def file_sources(
    fmt: str, paths: Sequence[str], workers: int, partitioning: Partitioning
) -> list[FileShare] | None:
    """Each worker's share of ``paths`` (files of format ``fmt``), or None when the workers
    cannot read the input themselves: a format not split by file (or whose time style is found
    only by reading), standard input, a program that does not key the files' events by the
    files' key, or a file whose key cannot be read (the router's reading reports it). Each
    file's key is read here once, and travels with the file.

    Args:
        fmt: a registered format.
        paths: the input files, in input order.
        workers: the number of workers.
        partitioning: the program's partition analysis.

    Returns:
        One :class:`FileShare` per worker (the files it reads, with their places among the
        inputs and their keys), or None.
    """
    entry = REGISTRY[fmt]
    if (
        entry.split != "files"
        or entry.key_of is None
        or entry.holds is None
        or entry.labelled is None
        or entry.times != "iso"  # (else the router learns how to write times by reading)
        or "-" in paths
    ):
        return None
    name, arity, position = entry.holds
    kind = (name, arity)
    key = partitioning.key_positions().get(kind)
    if key != position and (key is not None or kind in partitioning.reads):
        return None
    try:
        keys = [entry.key_of(path) for path in paths]
    except (ReasonerError, OSError):  # (the router reads the files, and reports it as ever)
        return None
    files: list[list[tuple[int, str, Any]]] = [[] for _ in range(workers)]
    for place, (path, held) in enumerate(zip(paths, keys, strict=True)):
        files[key_owner(held, workers)].append((place, path, held))
    return [FileShare(fmt, tuple(share)) for share in files]


@dataclass(frozen=True, slots=True)
class FileShare:
    """A worker's files ``(place among the inputs, path, the key it holds)``; called in the
    worker, it opens them (a :class:`~reasoner.runtime.shares.Source`)."""

    fmt: str
    files: tuple[tuple[int, str, Any], ...]

    def __call__(self) -> FileReader:
        return FileReader(self.fmt, self.files)


class FileReader:
    """A worker's files read, merged by time and numbered (see the module doc).

    Args:
        fmt: their format.
        files: ``(place among the inputs, path, the key it holds)``, in input order.
    """

    def __init__(self, fmt: str, files: tuple[tuple[int, str, Any], ...]) -> None:
        self.fmt, self.files = fmt, files
        self.notes: list[tuple[NoteKey, Note]] = []
        self.numbers = count()  # the notes' order
        self.wheres: list[Position] = []
        self.merged: Labelled | _Empty | None = None
        self.places = [place << _PLACE for place, _, _ in files]  # (each event's number's top)

    def open(self) -> str | None:
        """Read the files; why they cannot be run by this worker alone (None: they can)."""
        entry, style = REGISTRY[self.fmt], TimeStyle()
        streams = []
        try:
            for place, path, _ in self.files:
                context = ReadContext(partial(self.note, place), {}, {}, style)
                reading = read_share(self.fmt, Share(path), context)
                streams.append(reading.events)
                self.wheres.append(reading.positions[0])
            assert entry.labelled is not None
            self.merged = entry.labelled(streams) if streams else _Empty()
        except ReasonerError as error:  # (the router reads it again, and reports it)
            return str(error)
        if self.merged is None:
            return "a file is out of time order or unreadable from some row on"
        return None

    def note(self, place: int, rejected: Rejected) -> None:
        """A reader's rejection, keyed by where the merge hands it over (after the row it
        gave last)."""
        assert self.merged is not None
        row = self.merged.last
        after = (-math.inf, place) if row is None else (row[2][3], self.places[row[0]] | row[1])
        self.notes.append(((*after, 1, next(self.numbers)), ("malformed", rejected)))

    def chunks(self, size: int) -> Iterator[Chunk]:
        """The events, ``size`` at a time, numbered, with the notes handed while reading them
        (handed over a block of the merge at a time: a note may come with the chunk before
        the event it follows, never after it)."""
        assert self.merged is not None
        places = self.places
        paths = [where.file for where in self.wheres]
        for files, lines, events in self.merged.blocks():
            # (numbered at C level: nothing runs per event here)
            seqs = list(map(or_, map(places.__getitem__, files), lines))
            for start in range(0, len(events), size):
                notes, self.notes = self.notes, []
                # (rare: the note of a refused event found from the block when asked)
                refuse = partial(_refused, paths, files, lines, events, start)
                yield Chunk(events[start : start + size], seqs[start : start + size], notes, refuse)
        if self.notes:  # (after the last event)
            notes, self.notes = self.notes, []
            yield Chunk([], [], notes, partial(_refused, paths, [], [], [], 0))


class _Empty:
    """No files: no rows (and no row given last)."""

    last = None

    def blocks(self) -> Iterator[tuple[list[int], list[int], list[Event]]]:
        return iter(())


def _refused(
    paths: list[str],
    files: list[int],
    lines: list[int],
    events: list[Event],
    start: int,
    index: int,
    reason: str,
) -> Note:
    """The note of the event ``index`` of the chunk at ``start`` of a block (its files',
    lines' and events' lists) refused: its file and line, and the reason as one process
    reports it (the EventError's text, the event with it)."""
    at = start + index
    return ("refused", Rejected(paths[files[at]], lines[at], str(EventError(reason, events[at]))))
