"""Merging an archive of MesoWest exports by time while it is read, a round of blocks at a time.

:func:`merge_files` gives exactly what the heap merge of the files' row loops gives
(``heapq.merge(*files, key=end)``): the same events in the same order, each file's ``where``
naming the line of the event yielded last, and every rejection handed to the file's
``on_reject`` at the same moment. It is faster because rows are read in blocks, converted a
column at a time (:mod:`connectors.mesowest.columns`), put in order by numpy and built into
events a block at a time:

* The heap merge's order is a stable sort of all rows, taken in file order, by the running
  maximum of each file's times (the *key*): a row earlier than one before it in its file comes
  right after that one, as the heap cannot take it before its file's earlier rows. So rows are
  ordered by ``(key, file, row)``.
* Files are read in rounds (:class:`FileBlocks`: blocks of whole lines, about 8 KiB a file):
  every file whose last key is below the round's target reads blocks until it is past it
  (the first round: until each file gave a reading). No row still unread can come before a
  row whose ``(key, file)`` lies below every unfinished file's ``(last key, file)``: those are
  handed out, the others wait for the next round. Memory holds a round's blocks and rows, not
  the archive; the first event comes after the first round.
* The heap merge reads a file's rows up to its next event when the event before it is taken,
  and every file up to its first event when the first event is asked for: so a rejection noted
  after a file's k-th event is handed over when the event after that one is asked for, and one
  noted before a file's first event when the first event of all is asked for (files in order).
  A file's last row read is held back until the file is read past it: every rejection after
  a row is known when the row is handed out.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING, Any

import numpy as np

from connectors.events.rejects import InputFormatError, Position, Rejected
from connectors.mesowest.blocks import CHUNK, FileBlocks, Rows
from connectors.mesowest.columns import NUMBERS, Body, Converted, Words, convert, layout
from connectors.mesowest.reader import NONE, SENSOR_READING
from reasoner.runtime.events import Event

if TYPE_CHECKING:
    from connectors.mesowest.reader import MesoWestFile

_ROUND_BYTES = 16 << 20  # read per round, over all files (a file reads 8 KiB to 1 MiB)
_BLOCK = 4096  # events built per step
_FILE_BITS = 21  # a key and a file's index as one number: whole seconds << 21 | index
_MAKE = tuple.__new__

#: A rejection or error to hand over, and the index of its file in the archive.
Handed = tuple[int, Rejected | InputFormatError]


def merge_files(files: Sequence[MesoWestFile]) -> Iterator[Event]:
    """The readings of ``files`` merged by time, exactly as the heap merge of their row loops.

    Nothing is read before the first event is asked for (as with the heap merge).

    Args:
        files: opened exports (headers read); each hands its rejections to its ``on_reject``.

    Returns:
        A lazy iterator of ``sensor_reading`` events; equal times keep the order of ``files``.

    Example:
        >>> from pathlib import Path
        >>> from connectors.mesowest.reader import MesoWestFile
        >>> paths = sorted(Path("data/mesowest/sample").glob("*.csv"))
        >>> next(merge_files([MesoWestFile(p) for p in paths])).args[0]
        'KEVW'
    """
    archive = _Archive(files)
    return _events(archive, archive.rounds())


def merge_in_order(files: Sequence[MesoWestFile]) -> Iterator[Event] | None:
    """:func:`merge_files`, read at once, when every file is in time order and readable to its
    end; else None. Then no event of the merged stream is late, and the events of any subset
    of an archive's files come in the order they come in the whole archive's merge (a worker
    reading its share of the files sees its events as the router would send them).

    Args:
        files: opened exports (headers read), as for :func:`merge_files`.

    Returns:
        The lazy iterator of :func:`merge_files` (the files already read), or None.
    """
    archive = _Archive(files)
    rounds = list(archive.rounds())  # (the rows as columns, about 90 bytes each)
    return None if archive.dipped or archive.failed else _events(archive, iter(rounds))


class Labelled:
    """The events of :func:`merge_in_order_labelled`, a block at a time (:meth:`blocks`);
    ``last``: the row ``(the file's index, its line, the event)`` a rejection being handed over
    follows (None before the first event), read by whoever keys the rejection (it is set then
    only: nothing runs per event for it)."""

    def __init__(self, archive: _Archive, rounds: Iterator[_Round]) -> None:
        self.last: tuple[int, int, Event] | None = None
        self._archive, self._rounds = archive, rounds

    def blocks(self) -> Iterator[tuple[list[int], list[int], list[Event]]]:
        """The events in order, a block at a time: the files' indexes, the lines and the events
        (three lists), the rejections among the block's rows handed over before it is given."""
        files = self._archive.files
        for part, events, due in _blocks(self._archive, self._rounds):
            block = (part["file"].tolist(), part["line"].tolist(), list(events))
            for at, handed in due.items():  # (in order)
                self.last = (block[0][at], block[1][at], block[2][at])
                for index, item in handed:
                    _hand_over(files[index], item)
            yield block


def merge_in_order_labelled(files: Sequence[MesoWestFile]) -> Labelled | None:
    """:func:`merge_in_order` with each event's file (its index in ``files``) and line, for a
    worker numbering its events at C level; the files' ``where`` are not kept up to date (their
    rejections are handed over as by :func:`merge_in_order`).

    Args:
        files: opened exports (headers read), as for :func:`merge_files`.

    Returns:
        The events labelled (:class:`Labelled`), or None as :func:`merge_in_order`.

    Example:
        >>> from pathlib import Path
        >>> from connectors.mesowest.reader import MesoWestFile
        >>> paths = sorted(Path("data/mesowest/sample").glob("*.csv"))
        >>> merged = merge_in_order_labelled([MesoWestFile(p) for p in paths])
        >>> files, lines, events = next(merged.blocks())
        >>> (paths[files[0]].stem, lines[0], events[0].args[0])
        ('KEVW', 9, 'KEVW')
    """
    archive = _Archive(files)
    rounds = list(archive.rounds())
    return None if archive.dipped or archive.failed else Labelled(archive, iter(rounds))


#: A row: the file's index, the row's place among the file's readings, its line, time and key,
#: its condition (an index into the archive's words), its event when the row loop built it (a
#: key of ``_Archive.built``; -1: none) and its numbers. Rows are numpy records: put in order
#: or split a record at a time.
_ROW = np.dtype(
    [
        ("file", np.int32),
        ("condition", np.int32),
        ("seq", np.int64),
        ("line", np.int64),
        ("time", np.int64),
        ("key", np.float64),
        ("built", np.int64),
        ("numbers", np.float64, (len(NUMBERS),)),
    ]
)


@dataclass(frozen=True, slots=True)
class _Round:
    """A round's rows to hand out, in order; the rejections (and an error) to hand over
    before the first of them, and after the row at each place."""

    rows: np.ndarray  # of _ROW
    order: np.ndarray  # the places of those handed out, in order
    before: list[Handed]
    after: dict[int, list[Handed]]


class _Archive:
    """The files' blocks, read in rounds."""

    def __init__(self, files: Sequence[MesoWestFile]) -> None:
        self.files = files
        self.blocks = [FileBlocks(file, index) for index, file in enumerate(files)]
        self.layouts = [layout(file) for file in files]
        self.spans = np.zeros(len(files))  # the times a file's last block spanned
        self.words = Words()
        self.built: dict[int, Event] = {}  # events the row loop built, until handed out
        self.next_built = 0
        self.handed = np.zeros(len(files), np.int64)  # each file's readings handed out
        self.dipped = False  # a time below an earlier one of its file
        self.failed = False  # a file unreadable from some row on
        self.fractional = False  # a time with a fraction of a second (read by the row loop)
        share = _ROUND_BYTES // max(len(files), 1)
        self.size = min(max(share // CHUNK, 1), 128) * CHUNK

    def rounds(self) -> Iterator[_Round]:
        """The rows in order, a round at a time."""
        held = np.zeros(0, _ROW)
        target = None  # the first round: every file up to its first reading
        while True:
            rows = np.concatenate([held, *self._read(target)])
            order, code = self._order(rows)
            live = [blocks for blocks in self.blocks if not blocks.done]
            count = len(rows)
            if live:
                key, file = min((blocks.last, blocks.index) for blocks in live)
                count = _before(rows, order, code, key, file)
            held = rows[order[count:]]
            yield self._round(rows, order[:count], first=target is None)
            if not live:
                return
            step = float(np.median(self.spans[[blocks.index for blocks in live]]))
            target = max(key + step, float(np.nextafter(key, np.inf)))

    def _order(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The places of ``rows`` (a file's in their order) by ``(key, file, seq)``, and the
        sorted codes of ``(key, file)`` when whole seconds and few files make them one number
        (a sort of one key instead of three)."""
        if self.fractional or len(self.files) > 1 << _FILE_BITS:
            return np.lexsort((rows["seq"], rows["file"], rows["key"])), None
        code = (rows["key"].astype(np.int64) << _FILE_BITS) | rows["file"]
        order = np.argsort(code, kind="stable")
        return order, code[order]

    def _read(self, target: float | None) -> list[np.ndarray]:
        """Read blocks until every file is past ``target`` (None: has given a reading)."""
        parts: list[np.ndarray] = []
        while True:
            todo = [
                blocks
                for blocks in self.blocks
                if not blocks.done
                and (blocks.count == 0 if target is None else blocks.last < target)
            ]
            if not todo:
                return parts
            groups: dict[Any, list[tuple[FileBlocks, Body]]] = {}
            for blocks in todo:
                found = blocks.next(self.size)
                if isinstance(found, Body):
                    groups.setdefault(self.layouts[blocks.index], []).append((blocks, found))
                elif found is not None:
                    parts.append(self._built(blocks, found))
            for group in groups.values():
                bodies = [body for _, body in group]
                converted = convert(self.files[group[0][0].index], bodies, self.words)
                parts.append(self._columns(group, converted))
                for (blocks, body), taken in zip(group, converted.taken.tolist(), strict=True):
                    if not taken:
                        parts.append(self._built(blocks, blocks.read_rows(body)))

    def _columns(self, group: list[tuple[FileBlocks, Body]], converted: Converted) -> np.ndarray:
        """The rows of the blocks taken a column at a time, numbered and keyed."""
        taken = [pair for pair, ok in zip(group, converted.taken.tolist(), strict=True) if ok]
        counts = np.array([body.lines for _, body in taken], np.int64)
        ends = np.cumsum(counts)
        starts = ends - counts
        before = np.array([blocks.count for blocks, _ in taken], np.int64)
        rows = np.empty(len(converted.time), _ROW)
        rows["seq"] = np.arange(len(rows)) + np.repeat(before - starts, counts)
        rows["file"] = np.repeat([blocks.index for blocks, _ in taken], counts)
        rows["line"], rows["time"] = converted.line, converted.time
        rows["condition"], rows["built"] = converted.condition, -1
        for k, column in enumerate(converted.numbers):
            rows["numbers"][:, k] = column
        key = self._keys(converted.time.astype(np.float64), counts, starts, taken)
        rows["key"] = key
        for (blocks, _), start, end in zip(taken, starts.tolist(), ends.tolist(), strict=True):
            self.spans[blocks.index] = key[end - 1] - key[start]
            blocks.took(end - start, float(key[end - 1]))
        return rows

    def _keys(
        self,
        time: np.ndarray,
        counts: np.ndarray,
        starts: np.ndarray,
        taken: list[tuple[FileBlocks, Body]],
    ) -> np.ndarray:
        """The running maximum of each block's times, from its file's last key."""
        last = np.array([blocks.last for blocks, _ in taken], np.float64)
        key = np.maximum(time, np.repeat(last, counts))
        down = key[1:] < key[:-1]
        down[starts[1:] - 1] = False  # (between blocks)
        if down.any():
            block = np.repeat(np.arange(len(counts)), counts)
            low = key.min()
            width = key.max() - low + 1  # (keys are whole seconds: exact)
            key = np.maximum.accumulate(key - low + block * width) - block * width + low
        if not self.dipped and np.any(time < key):
            self.dipped = True
        return key

    def _built(self, blocks: FileBlocks, rows: Rows) -> np.ndarray:
        """Readings the row loop built, numbered and keyed."""
        keys, last = [], blocks.last
        for event in rows.events:
            end = event[3]
            if end != int(end) or end >= 1 << 40:
                self.fractional = True
            if end < last:
                self.dipped = True
            else:
                last = end
            keys.append(last)
        start, self.next_built = self.next_built, self.next_built + len(keys)
        self.built.update(zip(range(start, self.next_built), rows.events, strict=True))
        count = len(keys)
        built = np.zeros(count, _ROW)
        built["file"], built["line"], built["key"] = blocks.index, rows.lines, keys
        built["seq"] = np.arange(blocks.count, blocks.count + count)
        built["built"] = np.arange(start, start + count)
        built["numbers"] = np.nan
        if keys:
            self.spans[blocks.index] = keys[-1] - keys[0]
        blocks.took(len(keys), last)
        return built

    def _round(self, rows: np.ndarray, out: np.ndarray, first: bool) -> _Round:
        """The round handing out the ``rows`` at ``out`` (in that order), with the rejections
        due: those before each file's first reading (the first round), and those after a
        reading handed out now."""
        files = rows["file"][out]
        if len(out):
            self.handed += np.bincount(files, minlength=len(self.blocks))
        before: list[Handed] = []
        due: list[tuple[int, int, Rejected | InputFormatError]] = []
        for blocks in self.blocks:
            for follows, item in blocks.due(int(self.handed[blocks.index])) if blocks.notes else ():
                self.failed = self.failed or isinstance(item, InputFormatError)
                if follows < 0:
                    before.append((blocks.index, item))
                else:
                    due.append((blocks.index, follows, item))
        assert first or not before
        after: dict[int, list[Handed]] = {}
        if due:
            code = (files.astype(np.int64) << 32) | rows["seq"][out]
            order = np.argsort(code)
            wanted = np.array([(index << 32) | follows for index, follows, _ in due], np.int64)
            places = order[np.searchsorted(code[order], wanted)]
            for place, (index, _, item) in zip(places.tolist(), due, strict=True):
                after.setdefault(place, []).append((index, item))
        return _Round(rows, out, before, after)


#: A block of merged rows: the rows (of ``_ROW``), their events (built as they are asked for),
#: and the rejections to hand over after the rows at the places given (within the block).
_Block = tuple[np.ndarray, Iterator[Event], dict[int, list[Handed]]]


def _blocks(archive: _Archive, rounds: Iterator[_Round]) -> Iterator[_Block]:
    """The rows of ``rounds`` a block at a time (:data:`_Block`), the rejections due before
    the first row handed over when the first block is asked for (as the heap merge does).

    The one loop over the merged rows: :func:`_events` gives them an event at a time,
    :class:`Labelled` a block at a time.
    """
    files = archive.files
    idents = _objects([file.station.id for file in files])
    words = _objects(archive.words.values)
    for found in rounds:
        for index, item in found.before:
            _hand_over(files[index], item)
        if len(words) != len(archive.words.values):
            words = _objects(archive.words.values)
        rows, order, after = found.rows, found.order, found.after
        marks = sorted(after)
        for start in range(0, len(order), _BLOCK):
            part = rows[order[start : start + _BLOCK]]
            stop = start + len(part)
            cut = bisect_left(marks, stop)
            due = {at - start: after[at] for at in marks[:cut]}
            marks = marks[cut:]
            yield part, _built_events(part, idents, words, archive.built), due


def _events(archive: _Archive, rounds: Iterator[_Round]) -> Iterator[Event]:
    """The events of ``rounds``, each file's rejections handed over when the heap merge would.

    The file of the event yielded last names it and its line (``where``); the file before it
    lets its event go (its ``event`` None, its ``line`` kept): an event held until its file's
    next one would outlive hundreds of others and be freed cold.
    """
    files = archive.files
    wheres = _objects([file.where for file in files])
    last = Position("")
    for part, events, due in _blocks(archive, rounds):
        owners, lines = wheres[part["file"]].tolist(), part["line"].tolist()
        if not due:  # (no rejection to hand over)
            for where, line, event in zip(owners, lines, events, strict=True):
                last.event = None
                where.line, where.event = line, event
                last = where
                yield event
            continue
        for at, (where, line, event) in enumerate(zip(owners, lines, events, strict=True)):
            last.event = None
            where.line, where.event = line, event
            last = where
            yield event
            for index, item in due.get(at, ()):
                _hand_over(files[index], item)


def _before(
    rows: np.ndarray, order: np.ndarray, code: np.ndarray | None, key: float, file: int
) -> int:
    """How many rows (in ``order``) lie before ``(key, file)``."""
    if code is not None:
        return int(np.searchsorted(code, (int(key) << _FILE_BITS) | file, "left"))
    keys = rows["key"][order]
    low, high = np.searchsorted(keys, key, "left"), np.searchsorted(keys, key, "right")
    return int(low + np.searchsorted(rows["file"][order[low:high]], file, "left"))


def _built_events(
    rows: np.ndarray, idents: np.ndarray, words: np.ndarray, built: dict[int, Event]
) -> Iterator[Event]:
    """The events of ``rows``, each built when it is asked for (those the row loop built taken
    from ``built``).

    Built by ``map`` and ``zip`` over lists of plain values: no Python code runs per event, and
    no event exists before it is wanted (an event waiting in a list would outlive collections
    and be promoted to the oldest generation, whose collections then grow frequent).
    """
    ids = idents[rows["file"]].tolist()
    times = rows["time"].tolist()
    numbers = rows["numbers"]
    a, b, c, d, e, g = (_values(numbers[:, k]) for k in range(len(NUMBERS)))
    f = words[rows["condition"]].tolist()
    args = zip(ids, times, a, b, c, d, e, f, g, strict=True)
    events = map(
        _MAKE, repeat(Event), zip(repeat(SENSOR_READING), args, times, times, strict=False)
    )
    made = np.flatnonzero(rows["built"] >= 0).tolist()
    if not made:
        return events
    listed: list[Event] = list(events)
    for at in made:
        listed[at] = built.pop(int(rows["built"][at]))
    return iter(listed)


def _values(numbers: np.ndarray) -> list[Any]:
    """Numbers as Python floats, NaN as ``none``."""
    missing = np.flatnonzero(np.isnan(numbers))
    if len(missing) * 8 < len(numbers):  # (a few: put in place one by one)
        values: list[Any] = numbers.tolist()
        for at in missing.tolist():
            values[at] = NONE
        return values
    objects = numbers.astype(object)
    objects[missing] = NONE
    return objects.tolist()


def _objects(values: list[Any]) -> np.ndarray:
    """``values`` as a one-dimensional array of objects (a tuple or list among them stays
    whole)."""
    return np.array([*values, None], dtype=object)[:-1]


def _hand_over(file: MesoWestFile, item: Rejected | InputFormatError) -> None:
    if isinstance(item, InputFormatError):
        raise item
    file.on_reject(item)
