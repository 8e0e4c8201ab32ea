"""Reading an archive of MesoWest exports column by column, and merging it by time in one sort.

:func:`merge_files` gives exactly what the heap merge of the files' row loops gives
(:func:`connectors.events.merge.merge_streams` over :class:`MesoWestFile` iterators): the same
events in the same order, each file's ``where`` naming the line of the event yielded last, and
every rejection handed to the file's ``on_reject`` at the same moment. It is faster because the
work per row is done a column at a time:

* Files whose data rows are plain (no quotes, comment or blank lines, lone carriage returns)
  and share a column layout are parsed by pyarrow's CSV reader in one call, every cell as
  text; times, numbers, conditions and station ids are then checked and converted a column at
  a time. A file with any row this cannot take exactly as the row loop would (a malformed row,
  an ISO time in another spelling, ``M`` or ``NaN`` for a missing value) is read by the row
  loop instead, eagerly, each of its rejections noted with the event it follows.
* Each file is ordered by time (as exports are), so the heap merge's order is a stable sort of
  all rows, taken in file order, by time: one numpy sort instead of a heap operation per row.
  Should a file be out of time order, the archive goes through the heap merge, as before.
* The heap merge reads a file's rows up to its next event when the event before it is taken,
  and every file up to its first event when the first event is asked for: so a rejection noted
  after a file's k-th event is handed over when the event after that one is asked for, and one
  noted before a file's first event when the first event of all is asked for (files in order).

Reading is eager (the archive's columns are held, about 80 bytes a row); events are built a
block at a time as they are taken.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from connectors.events.rejects import InputFormatError, Rejected
from connectors.mesowest.reader import NONE, SENSOR_READING, Cell, condition_value
from reasoner.runtime.events import Event

if TYPE_CHECKING:
    import pyarrow as pa

    from connectors.mesowest.reader import MesoWestFile

_END = attrgetter("end")
_SPELLING = "2021-01-10T06:20:00Z"  # the one time spelling taken a column at a time
_FIXED = [4, 7, 10, 13, 16, 19]
_FIXED_BYTES = np.frombuffer(b"--T::Z", np.uint8)
_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
_MONTH_DAYS = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
_CONDITION = 5  # the condition's argument position (after Station and Time); text, not a number
_NUMBERS = (0, 1, 2, 3, 4, 6)  # the other positions
_BLOCK = 4096  # events built per step
_BATCH_BYTES = 16 << 20  # rows parsed per pyarrow call (its tables take a few times that)

#: A row-loop file's note: the index of the event it follows (-1: before the first), and the
#: rejection, or the error that ended the file.
Noted = tuple[int, Rejected | InputFormatError]


@dataclass
class _Rows:
    """The archive's rows, column by column, in pieces (a group of files or one file each)."""

    file: list[np.ndarray] = field(default_factory=list)  # the file's index in the archive
    line: list[np.ndarray] = field(default_factory=list)
    time: list[np.ndarray] = field(default_factory=list)  # epoch seconds (float64: the key)
    numbers: list[list[np.ndarray]] = field(default_factory=list)  # at _NUMBERS; NaN: none
    condition: list[np.ndarray] = field(default_factory=list)  # an index into ``words``
    words: list[Any] = field(default_factory=lambda: [NONE])
    built: dict[int, Event] = field(default_factory=dict)  # row: the row loop's event
    count: int = 0

    def add(
        self,
        file: np.ndarray,
        line: np.ndarray,
        time: np.ndarray,
        numbers: list[np.ndarray],
        condition: np.ndarray,
    ) -> None:
        self.file.append(file)
        self.line.append(line)
        self.time.append(time)
        self.numbers.append(numbers)
        self.condition.append(condition)
        self.count += len(file)

    def join(self) -> None:
        """Make each column one array (the pieces let go)."""

        def whole(pieces: list[np.ndarray], kind: Any) -> list[np.ndarray]:
            return [np.concatenate(pieces) if pieces else np.zeros(0, kind)]

        # a column at a time, each column's pieces let go before the next is joined
        self.file = whole(self.file, np.int32)
        self.line = whole(self.line, np.int64)
        self.time = whole(self.time, np.float64)
        self.condition = whole(self.condition, np.int32)
        numbers = []
        for k in range(len(_NUMBERS)):
            numbers += whole([piece[k] for piece in self.numbers], np.float64)
            for piece in self.numbers:
                piece[k] = numbers[-1][:0]
        self.numbers = [numbers]


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
    rows, order, noted = _sorted(files)
    if order is None:
        yield from heapq.merge(*files, key=_END)  # a file out of time order: no sort gives it
        return
    yield from _events(files, rows, order, noted)


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
    rows, order, noted = _sorted(files)
    failed = any(
        isinstance(item, InputFormatError) for _, items in noted.values() for _, item in items
    )
    return None if order is None or failed else _events(files, rows, order, noted)


def _sorted(
    files: Sequence[MesoWestFile],
) -> tuple[_Rows, np.ndarray | None, dict[int, tuple[int, list[Noted]]]]:
    """Read every file: its rows, their merged order (None: a file is out of time order) and
    what the row-loop files noted."""
    rows = _Rows()
    taken = _read_columns(files, rows)
    noted = {i: _read_rows(file, i, rows) for i, file in enumerate(files) if not taken[i]}
    rows.join()
    [time], [source] = rows.time, rows.file
    in_files = np.argsort(source, kind="stable")  # rows in file order, each file's in its order
    key, owner = time[in_files], source[in_files]
    if np.any((key[1:] < key[:-1]) & (owner[1:] == owner[:-1])):
        return rows, None, noted
    return rows, in_files[np.argsort(key, kind="stable")], noted


def _read_columns(files: Sequence[MesoWestFile], rows: _Rows) -> list[bool]:
    """Add to ``rows`` the files that are read a column at a time; whether each file was.

    Files of one layout are parsed together, about ``_BATCH_BYTES`` of rows at a time (the
    text and its tables are let go before the next batch is read).
    """
    taken = [False] * len(files)
    groups: dict[tuple[Any, ...], list[int]] = {}
    for index, file in enumerate(files):
        groups.setdefault(_layout(file), []).append(index)
    for members in groups.values():
        batch: list[tuple[int, bytes]] = []
        size = 0
        for number, index in enumerate(members, 1):
            body = _body(files[index])
            if body is not None:
                batch.append((index, body))
                size += len(body)
            if batch and (size >= _BATCH_BYTES or number == len(members)):
                for added in _read_group(files, batch, rows):
                    taken[added] = True
                batch, size = [], 0
    return taken


def _body(file: MesoWestFile) -> bytes | None:
    """A file's data rows when pyarrow cuts them into the row loop's cells and lines; else None."""
    try:
        with open(file.path, "rb") as stream:
            data = stream.read()
    except OSError:
        return None  # (the row loop reports it, when the heap merge would)
    if b'"' in data or data.count(b"\r") != data.count(b"\r\n"):
        return None
    start = 0
    for _ in range(file.data_from - 1):
        start = data.find(b"\n", start) + 1
        if start == 0:
            return None
    body = data[start:]
    if body and not body.endswith(b"\n"):
        body += b"\n"
    # Comment and blank lines are skipped by the row loop but counted as lines.
    if body.startswith((b"#", b"\n", b"\r\n")) or b"\n#" in body or b"\n\n" in body:
        return None
    return None if b"\n\r\n" in body else body


def _layout(file: MesoWestFile) -> tuple[Any, ...]:
    """What files must share to be parsed as one table."""
    cells = tuple((c.at, c.position, c.name, file.units[c.name]) for c in file.cells)
    return file.width, file.id_at, file.time_at, cells


def _read_group(
    files: Sequence[MesoWestFile], members: list[tuple[int, bytes]], rows: _Rows
) -> list[int]:
    """Parse files of one layout as one table; add the rows of each file whose rows all convert
    as the row loop converts them. Returns the files added (a table pyarrow cannot parse, for a
    row with a wrong cell count: each file alone)."""
    counts = np.array([body.count(b"\n") for _, body in members])
    first = files[members[0][0]]
    table = _parse(first, b"".join(body for _, body in members)) if counts.sum() else None
    if table is None or table.num_rows != counts.sum():
        if len(members) == 1:
            return []
        return [i for member in members for i in _read_group(files, [member], rows)]
    indices = np.array([index for index, _ in members], np.int32)
    source = np.repeat(indices, counts)
    ok, time = _times(table.column("time"))
    ok &= _ids(table.column("id"), [files[i].station.id for i, _ in members], counts)
    none = np.full(len(source), np.nan)  # (a column the files lack)
    numbers = dict.fromkeys(_NUMBERS, none)
    condition = np.zeros(len(source), np.int32)
    for cell in first.cells:
        column = table.column(f"c{cell.at}")
        if cell.position == _CONDITION:
            condition = _conditions(column, rows.words)
        else:
            good, numbers[cell.position] = _numbers(column, cell)
            ok &= good
    line = np.concatenate(
        [np.arange(n) + files[i].data_from for i, n in zip(indices, counts, strict=True)]
    )
    keep = ~np.isin(source, source[~ok])
    rows.add(
        source[keep], line[keep], time[keep], [numbers[p][keep] for p in _NUMBERS], condition[keep]
    )
    return np.unique(source[keep]).tolist()


def _parse(file: MesoWestFile, body: bytes) -> pa.Table | None:
    """The columns the reader takes, as text (an empty cell null); None if pyarrow refuses."""
    import pyarrow as pa
    from pyarrow import csv

    names = [f"c{i}" for i in range(file.width)]
    names[file.id_at], names[file.time_at] = "id", "time"
    wanted = ["id", "time", *(f"c{cell.at}" for cell in file.cells)]
    try:
        return csv.read_csv(
            pa.py_buffer(body),
            # one thread: the batches are small, and the other core is the engine's
            read_options=csv.ReadOptions(column_names=names, use_threads=False),
            convert_options=csv.ConvertOptions(
                column_types=dict.fromkeys(wanted, pa.string()),
                include_columns=wanted,
                null_values=[""],
                strings_can_be_null=True,
            ),
        )
    except pa.ArrowException:  # a row with another cell count, a cell that is not UTF-8
        return None


def _times(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """Which cells are times spelt ``YYYY-MM-DDTHH:MM:SSZ`` (a real date and time, from 1970
    on), and their epoch seconds; the row loop takes the others (other spellings, rejections).

    The cells are read as a matrix of bytes: no parsing per cell, and nothing accepted that
    ``datetime.fromisoformat`` would read otherwise.
    """
    array = column.combine_chunks()
    at = array.offset
    offsets = np.frombuffer(array.buffers()[1], np.int32)[at : at + len(array) + 1]
    data = np.frombuffer(array.buffers()[2] or b"", np.uint8)
    width = len(_SPELLING)
    ok = (offsets[1:] - offsets[:-1]) == width
    cells: np.ndarray | None
    if ok.all():  # (as exports are) the cells lie end to end: a view of the bytes
        cells = data[offsets[0] : offsets[-1]].reshape(-1, width)
    else:
        cells = data[offsets[:-1][ok, None] + np.arange(width)] if ok.any() else None
    seconds = np.zeros(len(array), np.int64)
    if cells is None:
        return ok, seconds.astype(np.float64)
    digits = cells.astype(np.int16) - ord("0")
    fits = np.all(cells[:, _FIXED] == _FIXED_BYTES, axis=1)
    fits &= np.all((digits[:, _DIGITS] >= 0) & (digits[:, _DIGITS] <= 9), axis=1)

    def number(*at: int) -> np.ndarray:
        value = np.zeros(len(cells), np.int64)
        for i in at:
            value = value * 10 + digits[:, i].astype(np.int64)
        return value

    year, month, day = number(0, 1, 2, 3), number(5, 6), number(8, 9)
    hour, minute, second = number(11, 12), number(14, 15), number(17, 18)
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    length = _MONTH_DAYS[np.clip(month, 1, 12)] + (leap & (month == 2))
    fits &= (year >= 1970) & (month >= 1) & (month <= 12) & (day >= 1) & (day <= length)
    fits &= (hour <= 23) & (minute <= 59) & (second <= 59)
    # days since 1970-01-01 of a date of the proleptic Gregorian calendar (H. Hinnant's
    # days_from_civil, for years from 1 on)
    shifted = year - (month <= 2)
    era, within = shifted // 400, shifted % 400
    of_year = (153 * np.where(month > 2, month - 3, month + 9) + 2) // 5 + day - 1
    days = era * 146097 + within * 365 + within // 4 - within // 100 + of_year - 719468
    seconds[ok] = days * 86400 + hour * 3600 + minute * 60 + second
    ok[ok] = fits
    return ok, seconds.astype(np.float64)


def _ids(column: pa.ChunkedArray, idents: list[str], counts: np.ndarray) -> np.ndarray:
    """Which cells name the station of their file's header (as the row loop compares them)."""
    encoded = column.combine_chunks().dictionary_encode()
    number = {ident: n for n, ident in enumerate(dict.fromkeys(idents))}
    words = encoded.dictionary.to_pylist()
    named = np.array([number.get(word.strip(), -1) for word in words] + [-2])
    found = named[encoded.indices.fill_null(len(words)).to_numpy()]
    return found == np.repeat([number[ident] for ident in idents], counts)


def _numbers(column: pa.ChunkedArray, cell: Cell) -> tuple[np.ndarray, np.ndarray]:
    """Which cells are numbers or empty, and their values in the canonical unit (NaN: none).

    NaN, infinities and cells ``float()`` refuses are left to the row loop (which turns some
    into ``none`` and rejects the others).
    """
    import pyarrow as pa

    empty = column.is_null().to_numpy()
    try:
        values = np.array(column.cast(pa.float64()).to_numpy())  # (a copy: written below)
        ok = np.isfinite(values) | empty
    except pa.ArrowInvalid:  # some cell is no number as pyarrow reads them: ask float()
        values, ok = np.full(len(empty), np.nan), empty.copy()
        for at, text in enumerate(column.to_pylist()):
            if text is not None:
                try:
                    values[at] = float(text)
                    ok[at] = math.isfinite(values[at])
                except ValueError:
                    pass
    values[~ok | empty] = np.nan
    if cell.convert is not None:
        present = ~np.isnan(values)
        values[present] = [cell.convert(x) for x in values[present].tolist()]
    return ok, values


def _conditions(column: pa.ChunkedArray, words: list[Any]) -> np.ndarray:
    """The condition cells as indices into ``words`` (extended; index 0 is ``none``)."""
    encoded = column.combine_chunks().dictionary_encode()
    base = len(words)
    words.extend(condition_value(word) for word in encoded.dictionary.to_pylist())
    indices = encoded.indices.fill_null(-1).to_numpy().astype(np.int32)
    return np.where(indices < 0, 0, indices + base).astype(np.int32)


def _read_rows(file: MesoWestFile, index: int, rows: _Rows) -> tuple[int, list[Noted]]:
    """Read a file with the row loop now; add its events to ``rows``. Returns its first row's
    number in ``rows`` and what it noted."""
    noted: list[Noted] = []
    events: list[Event] = []
    lines: list[int] = []

    def note(rejected: Rejected) -> None:
        noted.append((len(events) - 1, rejected))

    try:
        for event in file.rows(note):
            events.append(event)
            lines.append(file.where.line)
    except InputFormatError as error:  # unreadable from some row on: raised when reached
        noted.append((len(events) - 1, error))
    start = rows.count
    rows.built.update(zip(range(start, start + len(events)), events, strict=True))
    count = len(events)
    rows.add(
        np.full(count, index, np.int32),
        np.array(lines, np.int64),
        np.array([float(event[3]) for event in events], np.float64),
        [np.full(count, np.nan) for _ in _NUMBERS],
        np.zeros(count, np.int32),
    )
    return start, noted


def _events(
    files: Sequence[MesoWestFile],
    rows: _Rows,
    order: np.ndarray,
    noted: dict[int, tuple[int, list[Noted]]],
) -> Iterator[Event]:
    """The events in ``order``, each file's rejections handed over when the heap merge would."""
    first, after = _slots(noted, order)
    for index, item in first:
        _hand_over(files[index], item)
    wheres = [file.where for file in files]
    idents = [file.station.id for file in files]
    [source], [line], [seconds], [numbers], [condition] = (
        rows.file,
        rows.line,
        rows.time,
        rows.numbers,
        rows.condition,
    )
    words = np.array(rows.words + [None], dtype=object)[:-1]  # (a list or tuple stays whole)
    built = np.zeros(len(source), bool)
    built[list(rows.built)] = True
    marks = iter(sorted(after))
    mark = next(marks, -1)
    make = tuple.__new__
    for start in range(0, len(order), _BLOCK):
        block = order[start : start + _BLOCK]
        owners = source[block].tolist()
        times = seconds[block].astype(np.int64).tolist()
        a, b, c, d, e, g = (_values(column[block]) for column in numbers)
        f = words[condition[block]].tolist()
        events = [
            make(Event, (SENSOR_READING, (idents[o], t, a1, b1, c1, d1, e1, f1, g1), t, t))
            for o, t, a1, b1, c1, d1, e1, f1, g1 in zip(
                owners, times, a, b, c, d, e, f, g, strict=True
            )
        ]
        for at in np.flatnonzero(built[block]).tolist():
            events[at] = rows.built[int(block[at])]
        for at, (owner, number, event) in enumerate(
            zip(owners, line[block].tolist(), events, strict=True), start
        ):
            where = wheres[owner]
            where.line, where.event = number, event
            yield event
            if at == mark:
                for index, item in after[at]:
                    _hand_over(files[index], item)
                mark = next(marks, -1)


def _values(numbers: np.ndarray) -> list[Any]:
    """Numbers as Python floats, NaN as ``none``."""
    values: list[Any] = numbers.tolist()
    for at in np.flatnonzero(np.isnan(numbers)).tolist():
        values[at] = NONE
    return values


def _slots(
    noted: dict[int, tuple[int, list[Noted]]], order: np.ndarray
) -> tuple[list[tuple[int, Any]], dict[int, list[tuple[int, Any]]]]:
    """When each noted item is handed over: before the first event (in file order), or after
    the event at a place of ``order``."""
    place = np.empty(len(order), np.int64)
    place[order] = np.arange(len(order))
    first: list[tuple[int, Any]] = []
    after: dict[int, list[tuple[int, Any]]] = {}
    for index in sorted(noted):
        start, items = noted[index]
        for follows, item in items:
            if follows < 0:
                first.append((index, item))
            else:
                after.setdefault(int(place[start + follows]), []).append((index, item))
    return first, after


def _hand_over(file: MesoWestFile, item: Rejected | InputFormatError) -> None:
    if isinstance(item, InputFormatError):
        raise item
    file.on_reject(item)
