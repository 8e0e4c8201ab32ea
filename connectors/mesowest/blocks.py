"""Reading one MesoWest export a block of lines at a time, as its row loop would read it.

A :class:`FileBlocks` hands out the data rows of one export in blocks of whole lines
(:class:`~connectors.mesowest.columns.Body`), numbered as in the file, to be converted a column
at a time with other files' blocks; a block the columns cannot take is read by the row loop
(:meth:`FileBlocks.read_rows`). It keeps what the merge of an archive needs of the file: how
many readings it gave, the running maximum of their times, and the rejections noted after each
reading (:data:`Noted`).

Why reads end on multiples of 8 KiB: the row loop decodes its file 8 KiB at a time
(``TextIOWrapper``'s chunk), so a byte that is not UTF-8 ends it (``InputFormatError``) at the
first line reaching into that chunk, after the readings before it. A block is handed out only
when every chunk it reaches into has been checked; once one is not UTF-8 (or the file cannot be
read), the file's own row loop takes over, read again from its start and the readings already
handed out skipped, so that it fails exactly where it would have.
"""

from __future__ import annotations

import codecs
import io
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass

from connectors.events.rejects import InputFormatError, Rejected
from connectors.mesowest.columns import Body
from connectors.mesowest.reader import MesoWestFile
from reasoner.runtime.events import Event

#: The row loop's decoding chunk: reads end on its multiples.
CHUNK = 8192

#: A rejection, or the error that ended the file, and the index of the reading it follows in
#: the file (-1: before the first).
Noted = tuple[int, Rejected | InputFormatError]

_PULLED = 4096  # readings taken from the row loop per block, once it reads the file


@dataclass(frozen=True, slots=True)
class Rows:
    """Readings the row loop built, and their lines."""

    events: list[Event]
    lines: list[int]


class FileBlocks:
    """One export's data rows, a block at a time.

    Args:
        file: the export (header read).
        index: its place in the archive.

    Example:
        >>> blocks = FileBlocks(MesoWestFile("data/mesowest/sample/KSLC.csv"), 0)
        >>> body = blocks.next(CHUNK)
        >>> body.line, body.data[:24]
        (9, b'KSLC,2021-01-10T00:00:00')
    """

    def __init__(self, file: MesoWestFile, index: int) -> None:
        self.file, self.index = file, index
        self.count = 0  # the readings handed out (as columns or built)
        self.last = -math.inf  # the running maximum of their times
        self.done = False
        self.notes: list[Noted] = []
        self._offset = 0  # the bytes read so far
        self._carry = b""  # the start of a line read in part
        self._line = 0  # the line number of the carry's first line (0: header not passed)
        self._decoder: codecs.IncrementalDecoder | None = None  # once a byte is not ASCII
        self._loop: Iterator[Event] | None = None  # the row loop, once it reads the file
        self._seen = 0  # readings the row loop built (skipped ones too)
        self._resume = 0  # the row loop's first line not handed out before it took over

    def next(self, size: int) -> Body | Rows | None:
        """The next block: lines from about ``size`` bytes on (a multiple of :data:`CHUNK`),
        or readings the row loop built; None when no line is complete yet or the file is
        done."""
        if self.done:
            return None
        if self._loop is not None:
            return self._pulled()
        try:
            raw = _pread(str(self.file.path), size, self._offset)
        except OSError:
            return self._looped()
        end = len(raw) < size
        if not self._valid(raw, end):
            return self._looped()
        self._offset += len(raw)
        data = self._carry + raw
        if not self._line:  # (the file from its start: the header's lines first)
            start = self._data_start(data)
            if start is None:
                if end:
                    return self._looped()
                self._carry = data
                return None
            if data.count(b"\r", 0, start) != data.count(b"\r\n", 0, start):
                return self._looped()  # (a lone carriage return: the row loop numbers lines)
            self._line, data = self.file.data_from, data[start:]
        cut = len(data) if end else data.rfind(b"\n") + 1
        data, self._carry = data[:cut], data[cut:]
        self.done = end
        if not data:
            return None
        first, self._line = self._line, self._line + _lines(data)
        return Body(self.file.station.id, data, self._line - first, first)

    def read_rows(self, body: Body) -> Rows:
        """The row loop's readings of a block the columns did not take (its rejections
        noted)."""
        lines = io.StringIO(body.data.decode("utf-8"), newline="")  # (its line ends)
        events: list[Event] = []
        numbers: list[int] = []
        where = self.file.where
        for event in self.file.read_lines(lines, body.line, self._note):
            events.append(event)
            numbers.append(where.line)
            self._seen += 1
        return Rows(events, numbers)

    def took(self, count: int, last: float) -> None:
        """``count`` readings handed out, the running maximum of times now ``last``."""
        self.count += count
        self.last = last
        if self._loop is None:
            self._seen = self.count

    def due(self, handed: int) -> list[Noted]:
        """The notes that follow one of the first ``handed`` readings, taken away."""
        at = 0
        while at < len(self.notes) and self.notes[at][0] < handed:
            at += 1
        due, self.notes = self.notes[:at], self.notes[at:]
        return due

    def _note(self, rejected: Rejected) -> None:
        if self._loop is None or rejected.line >= self._resume:  # (else noted before)
            self.notes.append((self._seen - 1, rejected))

    def _valid(self, raw: bytes, end: bool) -> bool:
        """Whether ``raw`` continues valid UTF-8 (and ends it, at the file's end)."""
        if self._decoder is None:
            if raw.isascii():
                return True
            self._decoder = codecs.getincrementaldecoder("utf-8")()
        try:
            self._decoder.decode(raw, end)
        except UnicodeDecodeError:
            return False
        return True

    def _data_start(self, data: bytes) -> int | None:
        """Where the data rows start in ``data`` (the file from its start); None while the
        header's lines are not all in it."""
        start = 0
        for _ in range(self.file.data_from - 1):
            start = data.find(b"\n", start) + 1
            if not start:
                return None
        return start

    def _looped(self) -> Rows:
        """Hand the file to its row loop, from its start (the readings handed out skipped)."""
        self._loop = self.file.rows(self._note)
        self._seen, self._resume = 0, self._line
        return self._pulled()

    def _pulled(self) -> Rows:
        """The row loop's next readings (the file done when it ends or fails)."""
        assert self._loop is not None
        events: list[Event] = []
        numbers: list[int] = []
        where = self.file.where
        try:
            while len(events) < _PULLED:
                event = next(self._loop, None)
                if event is None:
                    self.done = True
                    break
                self._seen += 1
                if where.line >= self._resume:  # (those handed out as blocks are skipped)
                    events.append(event)
                    numbers.append(where.line)
        except InputFormatError as error:  # unreadable from some row on: raised when reached
            # (not before the readings handed out: a file unreadable since, deleted say)
            self.notes.append((max(self._seen, self.count) - 1, error))
            self.done = True
        return Rows(events, numbers)


def _pread(path: str, size: int, offset: int) -> bytes:
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.pread(fd, size, offset)
    finally:
        os.close(fd)


def _lines(data: bytes) -> int:
    """The lines in ``data`` as the row loop counts them (``\\n``, ``\\r\\n`` and a lone ``\\r``
    end one)."""
    count = data.count(b"\n")
    if b"\r" in data:
        count += data.count(b"\r") - data.count(b"\r\n")
    return count if data.endswith((b"\n", b"\r")) else count + 1
