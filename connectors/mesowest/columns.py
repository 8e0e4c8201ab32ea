"""Converting blocks of MesoWest rows a column at a time, exactly as the row loop converts a row.

Blocks of data rows of files of one column layout (:func:`layout`) are parsed together by
pyarrow's CSV reader, every cell as text (:func:`convert`); times, numbers, conditions and
station ids are then checked and converted a column at a time. A block is taken only when
pyarrow cuts it into the row loop's lines and cells (no quotes, comment or blank lines, lone
carriage returns) and every row of it converts as the row loop converts it; any other block (a
row with another cell count, an ISO time in another spelling, ``M`` or ``NaN`` for a missing
value, a number ``float()`` reads otherwise, a station id other than the header's) is left to
the row loop.

pyarrow is asked only for what runs in its C++ (parsing, casts, dictionary encoding): building
its scalars or arrays from Python objects would import pandas, a second of start-up.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from connectors.mesowest.reader import NONE, Cell, condition_value
from reasoner.values import Value

if TYPE_CHECKING:
    import pyarrow as pa

    from connectors.mesowest.reader import MesoWestFile

_SPELLING = "2021-01-10T06:20:00Z"  # the one time spelling taken a column at a time
_FIXED = [4, 7, 10, 13, 16, 19]
_FIXED_BYTES = np.frombuffer(b"--T::Z", np.uint8)
_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
_MONTH_DAYS = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
_CONDITION = 5  # the condition's argument position (after Station and Time); text, not a number

#: The argument positions (after Station and Time) of the numbers, in :attr:`Converted.numbers`.
NUMBERS = (0, 1, 2, 3, 4, 6)


@dataclass(frozen=True, slots=True)
class Body:
    """Whole lines of one file's data rows: ``lines`` of them, the first one line ``line`` of
    the file (each ends in a line end but perhaps a file's last)."""

    ident: str  # the file's station (each row must name it)
    data: bytes
    lines: int
    line: int


class Words:
    """Condition texts as indices into :attr:`values` (index 0 is ``none``), each distinct text
    converted once (:func:`~connectors.mesowest.reader.condition_value`).

    Example:
        >>> words = Words()
        >>> words.add(["snow", "71", "snow"]).tolist(), words.values
        ([1, 2, 1], ['none', 'snow', 71])
    """

    def __init__(self) -> None:
        self.values: list[Value] = [NONE]
        self.index: dict[str, int] = {}

    def add(self, texts: list[str]) -> np.ndarray:
        """The indices of ``texts`` (new ones converted and added)."""
        index, values = self.index, self.values
        for text in texts:
            if text not in index:
                index[text] = len(values)
                values.append(condition_value(text))
        return np.array([index[text] for text in texts], np.int32)


@dataclass(frozen=True, slots=True)
class Converted:
    """The rows of the blocks taken, a column at a time, in block order.

    ``taken``: per block, whether its rows are here (all of them); ``time``: epoch seconds;
    ``numbers``: at :data:`NUMBERS` (NaN: none); ``condition``: indices into the
    :class:`Words`.
    """

    taken: np.ndarray
    line: np.ndarray
    time: np.ndarray
    numbers: list[np.ndarray]
    condition: np.ndarray


def layout(file: MesoWestFile) -> tuple[Any, ...]:
    """What files must share for their rows to be parsed as one table."""
    cells = tuple((c.at, c.position, c.name, file.units[c.name]) for c in file.cells)
    return file.width, file.id_at, file.time_at, cells


def convert(file: MesoWestFile, bodies: Sequence[Body], words: Words) -> Converted:
    """Parse ``bodies`` (of files laid out as ``file``) and convert their rows.

    Args:
        file: a file of the layout (its columns and units).
        bodies: blocks of rows, of one or several files, each of one file.
        words: where condition texts are numbered.

    Returns:
        The rows of each block whose rows all convert as the row loop converts them.

    Example:
        >>> from connectors.mesowest.reader import MesoWestFile
        >>> f = MesoWestFile("data/mesowest/sample/KSLC.csv")
        >>> row, odd = b"KSLC,2021-01-10T00:00:00Z,34.8,56,10.3,,10,clear,0\\n", b"KSLC,x\\n"
        >>> found = convert(f, [Body("KSLC", row, 1, 9), Body("KSLC", odd, 1, 10)], Words())
        >>> found.taken.tolist(), found.time.tolist(), found.numbers[0].tolist()
        ([True, False], [1610236800], [34.8])
    """
    taken = np.zeros(len(bodies), bool)
    parts: list[tuple[np.ndarray, ...]] = []
    members = list(range(len(bodies)))
    data = _joined(bodies, members)
    joined: bytes | None = data
    if not _plain(data):  # (exports are: all blocks checked at once; else one at a time)
        members, joined = [i for i in members if _plain(bodies[i].data)], None
    for group, table in _parsed(file, bodies, members, joined):
        ok, *columns = _columns(file, [bodies[i] for i in group], table, words)
        taken[group] = ok
        parts.append(tuple(columns))
    if len(parts) == 1:
        [(line, time, condition, *values)] = parts
    else:
        empty = (np.zeros(0, np.int64),) * 2 + (np.zeros(0, np.int32),) + (np.zeros(0),) * 6
        line, time, condition, *values = (
            np.concatenate(column) for column in zip(*(parts or [empty]), strict=True)
        )
    return Converted(taken, line, time, values, condition)


def _joined(bodies: Sequence[Body], members: list[int]) -> bytes:
    """The data of ``members``, one after the other, each ending in ``\\n``."""
    return b"".join(
        bodies[i].data if bodies[i].data.endswith(b"\n") else bodies[i].data + b"\n"
        for i in members  # (only a file's last line may lack it)
    )


def _plain(data: bytes) -> bool:
    """Whether pyarrow cuts ``data`` into the row loop's cells, and its lines too but blank
    ones (pyarrow skips them: the rows then are too few)."""
    if b'"' in data:  # (one byte sought: a fast scan)
        return False
    if b"#" in data and (data.startswith(b"#") or b"\n#" in data):
        return False
    # (a lone carriage return ends a line for the row loop, not for pyarrow)
    return b"\r" not in data or data.count(b"\r") == data.count(b"\r\n")


def _parsed(
    file: MesoWestFile, bodies: Sequence[Body], members: list[int], data: bytes | None
) -> Iterator[tuple[list[int], pa.Table]]:
    """The tables of ``members`` (their ``data``, if joined already) parsed together: all in
    one, or when pyarrow refuses (a row with another cell count) or cuts them otherwise, each
    half apart, down to single blocks (those refused alone are left out)."""
    if not members:
        return
    table = _parse(file, _joined(bodies, members) if data is None else data)
    if table is not None and table.num_rows == sum(bodies[i].lines for i in members):
        yield members, table
    elif len(members) > 1:
        half = len(members) // 2
        yield from _parsed(file, bodies, members[:half], None)
        yield from _parsed(file, bodies, members[half:], None)


def _columns(
    file: MesoWestFile, bodies: list[Body], table: pa.Table, words: Words
) -> tuple[np.ndarray, ...]:
    """Whether each body's rows all convert, and the rows of those that do: line, time,
    condition and the numbers."""
    counts = np.array([body.lines for body in bodies])
    ok, time = _times(table.column("time"))
    ok &= _ids(table.column("id"), [body.ident for body in bodies], counts)
    none = np.full(len(ok), np.nan)  # (a column the files lack)
    numbers = dict.fromkeys(NUMBERS, none)
    condition = np.zeros(len(ok), np.int32)
    for cell in file.cells:
        column = table.column(f"c{cell.at}")
        if cell.position == _CONDITION:
            condition = _conditions(column, words)
        else:
            good, numbers[cell.position] = _numbers(column, cell)
            ok &= good
    starts = np.cumsum(counts) - counts
    line = np.arange(len(ok)) + np.repeat([b.line for b in bodies] - starts, counts)
    block_ok = np.logical_and.reduceat(ok, starts) if len(ok) else np.ones(0, bool)
    columns = [line, time, condition, *(numbers[p] for p in NUMBERS)]
    if not block_ok.all():
        keep = np.repeat(block_ok, counts)
        columns = [column[keep] for column in columns]
    return (block_ok, *columns)


def _parse(file: MesoWestFile, body: bytes) -> pa.Table | None:
    """The columns the reader takes, as text (an empty cell null), those with few distinct
    values (station, time, condition) dictionary-encoded; None if pyarrow refuses."""
    import pyarrow as pa
    from pyarrow import csv

    names = [f"c{i}" for i in range(file.width)]
    names[file.id_at], names[file.time_at] = "id", "time"
    wanted = ["id", "time", *(f"c{cell.at}" for cell in file.cells)]
    types = dict.fromkeys(wanted, pa.string())
    few = ["id", "time", *(f"c{c.at}" for c in file.cells if c.position == _CONDITION)]
    types.update(dict.fromkeys(few, pa.dictionary(pa.int32(), pa.string())))
    try:
        return csv.read_csv(
            pa.py_buffer(body),
            # one thread: the blocks are small, and the other core is the engine's; one
            # chunk: the columns need no joining
            read_options=csv.ReadOptions(
                column_names=names, use_threads=False, block_size=len(body) + 1
            ),
            convert_options=csv.ConvertOptions(
                column_types=types,
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
    Each distinct text is read once."""
    texts, indices = _encoded(column)
    ok, seconds = _epoch(texts)
    return np.append(ok, False)[indices], np.append(seconds, 0)[indices]


def _epoch(array: pa.StringArray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_times` of distinct texts. The cells are read as a matrix of bytes: no parsing
    per cell, and nothing accepted that ``datetime.fromisoformat`` would read otherwise."""
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
        return ok, seconds
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
    return ok, seconds


def _ids(column: pa.ChunkedArray, idents: list[str], counts: np.ndarray) -> np.ndarray:
    """Which cells name the station of their file's header (as the row loop compares them)."""
    texts, indices = _encoded(column)
    number = {ident: n for n, ident in enumerate(dict.fromkeys(idents))}
    named = np.array([number.get(text.strip(), -1) for text in texts.to_pylist()] + [-2])
    return named[indices] == np.repeat([number[ident] for ident in idents], counts)


def _encoded(column: pa.ChunkedArray) -> tuple[pa.StringArray, np.ndarray]:
    """A dictionary-encoded column's distinct texts and each cell's index among them (a
    null's: their number)."""
    encoded = (
        column.chunk(0) if column.num_chunks == 1 else column.unify_dictionaries().combine_chunks()
    )
    texts = encoded.dictionary
    indices = _values(encoded.indices, np.int32).astype(np.int64)
    nulls = _nulls(encoded.indices)
    if nulls is not None:
        indices[nulls] = len(texts)
    return texts, indices


def _values(array: pa.Array, kind: type) -> np.ndarray:
    """The values of an array of fixed-width numbers, as a view (a null's is any number)."""
    start = array.offset
    return np.frombuffer(array.buffers()[1], kind)[start : start + len(array)]


def _nulls(array: pa.Array) -> np.ndarray | None:
    """Where an array's nulls are (None: it has none), read from its validity bits (pyarrow's
    own conversions to numpy import pandas)."""
    if not array.null_count:
        return None
    bits = np.frombuffer(array.buffers()[0], np.uint8)
    start = array.offset
    return np.unpackbits(bits, bitorder="little")[start : start + len(array)] == 0


def _numbers(column: pa.ChunkedArray, cell: Cell) -> tuple[np.ndarray, np.ndarray]:
    """Which cells are numbers or empty, and their values in the canonical unit (NaN: none).

    NaN, infinities and cells ``float()`` refuses are left to the row loop (which turns some
    into ``none`` and rejects the others).
    """
    import pyarrow as pa

    array = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    nulls = _nulls(array)
    empty = np.zeros(len(array), bool) if nulls is None else nulls
    try:
        values = _values(array.cast(pa.float64()), np.float64).copy()  # (written below)
        ok = np.isfinite(values) | empty
    except pa.ArrowInvalid:  # some cell is no number as pyarrow reads them: ask float()
        values, ok = np.full(len(empty), np.nan), empty.copy()
        for at, text in enumerate(array.to_pylist()):
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


def _conditions(column: pa.ChunkedArray, words: Words) -> np.ndarray:
    """The condition cells as indices into ``words`` (an empty cell's is 0: ``none``)."""
    texts, indices = _encoded(column)
    return np.append(words.add(texts.to_pylist()), np.int32(0))[indices]
