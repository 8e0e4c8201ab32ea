"""Events as JSON lines: the CLI's input and output format (issue 3's contract).

Input, one event per line, ordered by time::

    {"name": "stock", "args": [1, 101.5, 300], "time": 17}
    {"name": "fire", "args": [{"iri": "http://ex.org/s1"}], "start": "2021-01-10T06:00:00Z",
     "end": "2021-01-10T09:00:00Z"}

Times are non-negative numbers or ISO-8601 strings; ``{"iri": ...}`` is an IRI, other
strings and numbers are constants, nested lists are lists (tuples). As an extension for
round trips, ``{"functor": f, "args": [...]}`` is a compound value. Output, one detection
per line: ``{"name":"ce1","args":[],"start":3,"end":9}``; a detection of an engine built
with ``provenance=True`` has one more key, ``"sources"``: the input events it was built from,
each a record of the same form (``[{"name":"a","args":[],"start":3,"end":3}, ...]``); one
built with ``explain=True`` also has ``"why"``, the derivation as a tree
(:func:`reasoner.runtime.explain.to_json`, without the detection's own fields).

Reading and writing are on the hot path of the CLI, so both go through msgspec, whose C
decoder and encoder work on typed records: a line whose arguments are all numbers and strings
is decoded, validated and turned into a tuple in one call; detections are encoded a thousand
lines per call. Lines are read as bytes: a UTF-8 byte order mark is skipped, and a line that
is not UTF-8 is rejected on its own like any other bad line.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import compress, islice, repeat
from operator import attrgetter, itemgetter, le
from pathlib import Path
from typing import Annotated, Any, BinaryIO, TextIO

import msgspec
from msgspec import UNSET

from connectors.events.rejects import (
    InputFormatError,
    Position,
    Rejected,
    RejectHandler,
    log_rejected,
)
from connectors.events.stopping import standard_input
from connectors.events.times import MAX_TIME, TimeStyle, epoch_to_iso, parse_time
from reasoner.runtime.events import Event, rejection
from reasoner.values import IRI, Struct, Time, Value, json_value

_PLAIN = frozenset((int, float, str))
_BOM = b"\xef\xbb\xbf"


class _Line(msgspec.Struct, gc=False):
    """One line's fields as the JSON gives them (``UNSET``: absent); :func:`_event` checks them."""

    name: Any = None
    args: Any = ()
    time: Any = None
    start: Any = UNSET
    end: Any = UNSET


class _PlainLine(_Line, gc=False):
    """A line whose arguments are all numbers or strings, decoded straight into a tuple."""

    args: tuple[int | float | str, ...] = ()


_decode_plain = msgspec.json.Decoder(_PlainLine).decode
_decode_any = msgspec.json.Decoder(_Line).decode


def read_jsonl(
    source: str | Path | TextIO | BinaryIO,
    *,
    style: TimeStyle | None = None,
    on_reject: RejectHandler | None = None,
    arities: dict[str, set[int]] | None = None,
    positions: list[Position] | None = None,
    span: tuple[int, int | None] | None = None,
) -> Iterator[Event]:
    """Read events from a JSON-lines file, skipping (and reporting) malformed lines.

    Args:
        source: a path, ``"-"`` for standard input, or an open text or binary stream.
        style: set to ``iso=True`` as soon as a line uses an ISO-8601 time, so that a
            :class:`JsonLinesWriter` sharing it writes times back in that form.
        on_reject: called with a :class:`Rejected` (file, line, reason) for each bad
            line (bad JSON or UTF-8, missing name, bad time, start after end ...); default:
            log it.
        arities: the argument counts of the event names the rules read; an event of such a
            name with another count (e.g. its partition key missing) is a bad line.
        positions: a list the reader adds its :class:`Position` to, to find the line of an
            event rejected later.
        span: ``(start, stop)``: read only the lines whose first byte lies in that byte range
            of the file (``stop`` None: to its end), numbered as in the whole file, so that
            spans cut anywhere give, in order, the whole file's events and rejections.

    Returns:
        A lazy iterator of events in file order.

    Raises:
        InputFormatError: when a named file does not exist (checked at once) or cannot be
            read (raised on iteration).

    Example:
        >>> import io
        >>> list(read_jsonl(io.StringIO('{"name": "a", "args": ["x"], "time": 5}')))
        [Event(name='a', args=('x',), start=5, end=5)]
    """
    if isinstance(source, str | Path) and str(source) != "-" and not Path(source).is_file():
        what = "is a folder, not an events file" if Path(source).is_dir() else "no such events file"
        raise InputFormatError(f"{source}: {what}")
    if isinstance(source, str | Path):
        file = "<stdin>" if str(source) == "-" else str(source)
    else:
        file = str(getattr(source, "name", "<stream>"))
    where = Position(file)
    if positions is not None:
        positions.append(where)
    style, on_reject = style or TimeStyle(), on_reject or log_rejected
    if span is not None:
        if not isinstance(source, str | Path) or str(source) == "-":
            raise ValueError("a span of a JSON-lines input needs a named file")
        return _read_span(Path(source), span, where, style, on_reject, arities)
    return _read(source, where, style, on_reject, arities)


def _read(
    source: str | Path | TextIO | BinaryIO,
    where: Position,
    style: TimeStyle,
    on_reject: RejectHandler,
    arities: dict[str, set[int]] | None,
) -> Iterator[Event]:
    if isinstance(source, str | Path):
        if str(source) == "-":
            stdin = _without_bom(standard_input())
            yield from _events(stdin, where, style, on_reject, arities)
            return
        try:
            with open(source, "rb") as stream:
                yield from _events(_without_bom(stream), where, style, on_reject, arities)
        except OSError as exc:
            raise InputFormatError(f"{source}: cannot read events: {exc}") from exc
    else:
        yield from _events(source, where, style, on_reject, arities)


def _read_span(
    path: Path,
    span: tuple[int, int | None],
    where: Position,
    style: TimeStyle,
    on_reject: RejectHandler,
    arities: dict[str, set[int]] | None,
) -> Iterator[Event]:
    start, stop = span
    try:
        with open(path, "rb") as stream:
            if start == 0:
                _without_bom(stream)
            else:  # a line that began before ``start`` belongs to the span before
                stream.seek(start - 1)
                if stream.read(1) != b"\n":
                    stream.readline()
            first = stream.tell()
            number = 1 + _newlines(path, first)
            yield from _events(
                _lines_to(stream, first, stop, first if start else 0),
                where,
                style,
                on_reject,
                arities,
                number,
            )
    except OSError as exc:
        raise InputFormatError(f"{path}: cannot read events: {exc}") from exc


def _newlines(path: Path, stop: int) -> int:
    """How many line ends the file has before byte ``stop`` (its lines before it)."""
    count = 0
    with open(path, "rb") as stream:
        while stop > 0:
            chunk = stream.read(min(stop, 1 << 20))
            if not chunk:
                break
            count += chunk.count(b"\n")
            stop -= len(chunk)
    return count


def _lines_to(stream: BinaryIO, at: int, stop: int | None, begins: int) -> Iterator[bytes]:
    """The lines of ``stream`` (now at byte ``at``) that begin before ``stop``; the first
    begins at ``begins`` (0 for the file's first line, before a byte order mark)."""
    for line in stream:
        if stop is not None and begins >= stop:
            return
        at += len(line)
        begins = at
        yield line


def _events(
    lines: Iterable[bytes | str],
    where: Position,
    style: TimeStyle,
    on_reject: RejectHandler,
    arities: dict[str, set[int]] | None = None,
    first: int = 1,
) -> Iterator[Event]:
    file = where.file
    decode_plain, decode_any, unset, new = _decode_plain, _decode_any, UNSET, tuple.__new__
    for number, line in enumerate(lines, first):
        event = None
        try:
            record: _Line = decode_plain(line)
            # The common case, accepted here: a name, plain arguments and integer times (the
            # Event built by tuple.__new__, at C level: Event.__new__ is a Python call).
            name, time, start, end = record.name, record.time, record.start, record.end
            if type(name) is str and name:
                if time is None:
                    if type(start) is int and type(end) is int and 0 <= start <= end <= MAX_TIME:
                        event = new(Event, (name, record.args, start, end))
                elif (
                    type(time) is int and 0 <= time <= MAX_TIME and start is unset and end is unset
                ):
                    event = new(Event, (name, record.args, time, time))
        except ValueError:  # not plain arguments, or no JSON object at all
            try:
                record = decode_any(line)
            except ValueError as exc:
                if line.strip():  # blank lines are allowed and silently skipped
                    on_reject(Rejected(file, number, _reason(line, exc)))
                continue
        if event is None:
            try:
                event = _event(record, style)
            except ValueError as exc:
                on_reject(Rejected(file, number, str(exc)))
                continue
        if arities is not None:
            allowed = arities.get(event[0])
            if allowed is not None and len(event[1]) not in allowed:
                # e.g. an event whose partition key argument is missing
                reason = rejection(event, 0, arities, None, 0)
                on_reject(Rejected(file, number, str(reason)))
                continue
        where.line, where.event = number, event
        yield event


#: How many bytes :func:`read_jsonl_blocks` reads at a time (a block: the whole lines in them;
#: 64 KiB: its columns stay in the cache, where a block of 1 MiB took 3 times as long).
BLOCK_BYTES = 1 << 16

_NAME, _ARGS, _TIME = attrgetter("name"), attrgetter("args"), attrgetter("time")
_START, _END = attrgetter("start"), attrgetter("end")
_Name = Annotated[str, msgspec.Meta(min_length=1)]
_Clock = Annotated[int, msgspec.Meta(ge=0, le=MAX_TIME)]


class _TimeLine(msgspec.Struct, gc=False, forbid_unknown_fields=True):
    """A line :func:`_events` takes at once, with ``time``: when msgspec decodes a line as one
    (every key known, every value of its type), :class:`_PlainLine` decodes it to the same
    values (the last of a repeated key, as here) and :func:`_events` accepts them as they are."""

    name: _Name
    time: _Clock
    args: tuple[int | float | str, ...] = ()


class _SpanLine(msgspec.Struct, gc=False, forbid_unknown_fields=True):
    """As :class:`_TimeLine`, with ``start`` and ``end`` (``start <= end`` checked apart)."""

    name: _Name
    start: _Clock
    end: _Clock
    args: tuple[int | float | str, ...] = ()


_decode_times = msgspec.json.Decoder(_TimeLine).decode_lines
_decode_spans = msgspec.json.Decoder(_SpanLine).decode_lines


@dataclass(frozen=True, slots=True)
class LineBlock:
    """The events of consecutive lines of a JSON-lines file, as columns (one item per event):
    ``names``, ``args``, ``starts``, ``ends`` and ``lines`` (its line number); ``rejected``:
    the malformed lines among them, each after how many of the block's events it comes;
    ``kinds``: the event types ``(name, arity)`` among them when the reader has them (None:
    not known); ``built``: the events when the reader built them (None: :meth:`event` builds
    one).

    Example:
        >>> block = LineBlock(["a"], [("x",)], [5], [5], range(3, 4), [])
        >>> block.event(0)
        Event(name='a', args=('x',), start=5, end=5)
    """

    names: Sequence[str]
    args: Sequence[tuple[Value, ...]]
    starts: Sequence[Time]
    ends: Sequence[Time]
    lines: Sequence[int]
    rejected: list[tuple[int, Rejected]]
    kinds: set[tuple[str, int]] | None = None
    built: list[Event] | None = None

    def event(self, index: int) -> Event:
        """The block's event ``index``, as :func:`read_jsonl` gives it."""
        if self.built is not None:
            return self.built[index]
        # (tuple.__new__, at C level, as the reader builds it: Event.__new__ is a Python call)
        item = (self.names[index], self.args[index], self.starts[index], self.ends[index])
        return tuple.__new__(Event, item)

    def chosen(self, selectors: Sequence[bool]) -> Iterator[Event]:
        """The block's events whose selector is true, in order (built at C level)."""
        if self.built is not None:
            return compress(self.built, selectors)
        columns = (self.names, self.args, self.starts, self.ends)
        items = zip(*(compress(column, selectors) for column in columns), strict=True)
        return map(tuple.__new__, repeat(Event), items)


def read_jsonl_blocks(
    path: str, arities: dict[str, set[int]] | None = None, size: int | None = None
) -> Iterator[LineBlock]:
    """The events and rejections of a JSON-lines file, a block of whole lines (about ``size``
    bytes) at a time: what :func:`read_jsonl` gives, the same events, line numbers and
    reasons, without a Python step per line where it can.

    A block whose every line is one JSON object of plain arguments and integer times
    (``{"name":"a","args":["x",1],"start":5,"end":5}``, the form :class:`JsonLinesWriter`
    writes, or ``"time":5``) is decoded by one msgspec call and checked a column at a time;
    that call reads values separated by any whitespace, so a block is taken this way only
    when every line starts with ``{`` and ends with ``}``, and there are as many values as
    lines: a value cannot then span two lines (a string holds no raw line end, and after a
    closing ``}`` an opening ``{`` can only start a new value), so each line holds exactly
    its own value. Any other block (a malformed line, a blank one, ISO times, IRIs ...) is
    read line by line by :func:`read_jsonl`'s loop. The time style is not marked (the caller
    settles it).

    Args:
        path: a JSON-lines file.
        arities: as :func:`read_jsonl`'s.
        size: the bytes read at a time (None: :data:`BLOCK_BYTES`).

    Returns:
        A lazy iterator of :class:`LineBlock` in file order.

    Raises:
        InputFormatError: when the file does not exist (at once) or cannot be read.

    Example:
        >>> import tempfile
        >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        ...     _ = f.write('{"name":"a","args":["x"],"time":5}\\nnot json\\n')
        >>> blocks = read_jsonl_blocks(f.name, size=35)  # (a block per line)
        >>> [(b.names, b.ends, list(b.lines), [r.line for _, r in b.rejected]) for b in blocks]
        [(['a'], [5], [1], []), ([], [], [], [2])]
    """
    if not Path(path).is_file():
        what = "is a folder, not an events file" if Path(path).is_dir() else "no such events file"
        raise InputFormatError(f"{path}: {what}")
    return _blocks(path, arities, size or BLOCK_BYTES)


def _blocks(path: str, arities: dict[str, set[int]] | None, size: int) -> Iterator[LineBlock]:
    where, number, rest = Position(path), 1, b""
    try:
        with open(path, "rb") as stream:
            data = _without_bom(stream).read(size)
            while data:
                data = rest + data
                cut = data.rfind(b"\n") + 1
                rest = data[cut:]
                if cut:
                    count = data.count(b"\n", 0, cut)
                    yield _block(data[:cut], data[:cut], count, number, where, arities)
                    number += count
                data = stream.read(size)
    except OSError as exc:
        raise InputFormatError(f"{path}: cannot read events: {exc}") from exc
    if rest:  # (the last line, with no line end: decoded with one, read as it is)
        yield _block(rest + b"\n", rest, 1 + rest.count(b"\n"), number, where, arities)


def _block(
    ended: bytes,
    data: bytes,
    count: int,
    number: int,
    where: Position,
    arities: dict[str, set[int]] | None,
) -> LineBlock:
    """The block of the ``count`` lines ``data`` (the first numbered ``number``; ``ended``:
    them with a line end after the last)."""
    columns = _plain_block(ended, count, arities)
    if columns is not None:
        names, args, starts, ends, kinds = columns
        numbers = range(number, number + count)
        return LineBlock(names, args, starts, ends, numbers, [], kinds)
    events: list[Event] = []
    lines: list[int] = []
    rejected: list[tuple[int, Rejected]] = []

    def reject(line: Rejected) -> None:
        rejected.append((len(events), line))

    for event in _events(io.BytesIO(data), where, TimeStyle(), reject, arities, number):
        events.append(event)
        lines.append(where.line)
    names, args = list(map(itemgetter(0), events)), list(map(itemgetter(1), events))
    starts, ends = list(map(itemgetter(2), events)), list(map(itemgetter(3), events))
    return LineBlock(names, args, starts, ends, lines, rejected, None, events)


def _plain_block(
    data: bytes, count: int, arities: dict[str, set[int]] | None
) -> tuple[list[Any], list[Any], list[Any], list[Any], set[tuple[str, int]]] | None:
    """The names, arguments, starts and ends of the ``count`` lines ``data`` (each ending with
    a line end), and the event types among them, when each line is an event :func:`_events`
    accepts at once (:class:`_TimeLine` or :class:`_SpanLine`, an allowed arity), decoded
    together; None otherwise."""
    # (every line starts with "{" and ends with "}": each line end but the last between "}"
    # and "{", one search; such matches cannot overlap)
    if not data.startswith(b"{") or not data.endswith(b"}\n"):
        return None
    if data.count(b"}\n{") != count - 1:
        return None
    spans = b'"start"' in data[: data.find(b"\n")]  # (the first line's form, for all)
    try:
        records = (_decode_spans if spans else _decode_times)(data)
    except ValueError:  # (another line: read one by one)
        return None
    if len(records) != count:  # (a line holding two values)
        return None
    names, args = list(map(_NAME, records)), list(map(_ARGS, records))
    arity = set(map(len, args))
    if len(arity) == 1 and names.count(names[0]) == count:  # (one type: no name hashed)
        kinds = {(names[0], arity.pop())}
    else:
        kinds = set(zip(names, map(len, args), strict=True))
    if arities:
        for name, length in kinds:
            allowed = arities.get(name)
            if allowed is not None and length not in allowed:
                return None  # (rejected one by one, with the reason)
    if spans:
        starts, ends = list(map(_START, records)), list(map(_END, records))
        if not all(map(le, starts, ends)):
            return None
    else:
        starts = ends = list(map(_TIME, records))
    return names, args, starts, ends, kinds


def _without_bom(stream: BinaryIO) -> BinaryIO:
    """``stream`` past a UTF-8 byte order mark, if it starts with one."""
    if stream.peek(3)[:3] == _BOM:  # type: ignore[attr-defined]
        stream.read(3)
    return stream


def _reason(line: bytes | str, error: ValueError) -> str:
    """Why a line that is no JSON object was rejected (json's wording for bad JSON)."""
    try:
        text = line.decode("utf-8") if isinstance(line, bytes) else line
    except UnicodeDecodeError as exc:
        return f"not UTF-8: byte {exc.start + 1} is {line[exc.start]:#04x} ({exc.reason})"
    if isinstance(error, msgspec.ValidationError):
        return "a line must be a JSON object"
    try:
        json.loads(text)
    except ValueError as exc:
        return f"bad JSON: {exc}"
    return f"bad JSON: {error}"  # what json accepts beyond the standard (NaN, Infinity)


def _event(record: _Line, style: TimeStyle) -> Event:
    """Build one event from a decoded line; ValueError carries the reason for rejection."""
    name = record.name
    if type(name) is not str or not name:
        raise ValueError("missing or empty 'name'")
    args = record.args if type(record) is _PlainLine else _decode_args(record.args)
    time = record.time
    if time is not None:
        if record.start is not UNSET or record.end is not UNSET:
            raise ValueError("give either 'time' or 'start' and 'end', not both")
        # Integer times are the common case: skip the general parser for them.
        start = end = time if type(time) is int and 0 <= time <= MAX_TIME else _time(time, style)
        return Event(name, args, start, end)
    start_raw, end_raw = record.start, record.end
    if start_raw is None or start_raw is UNSET or end_raw is None or end_raw is UNSET:
        raise ValueError("missing 'time' (or both 'start' and 'end')")
    # Integer times are the common case: skip the general parser for them.
    start = (
        start_raw
        if type(start_raw) is int and 0 <= start_raw <= MAX_TIME
        else _time(start_raw, style)
    )
    end = end_raw if type(end_raw) is int and 0 <= end_raw <= MAX_TIME else _time(end_raw, style)
    if start > end:
        raise ValueError(f"start {start_raw!r} is after end {end_raw!r}")
    return Event(name, args, start, end)


def _time(value: object, style: TimeStyle) -> Time:
    if type(value) is str:
        style.iso = True
    return parse_time(value)


def _decode_args(items: Any) -> tuple[Value, ...]:
    if type(items) is not list and items != ():
        raise ValueError("'args' must be a list")
    for item in items:
        if type(item) not in _PLAIN:
            return tuple(_decode(value) for value in items)
    return tuple(items)


def _decode(value: Any) -> Value:
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is list:
        return tuple(_decode(item) for item in value)
    if kind is dict:
        if value.keys() == {"iri"} and type(value["iri"]) is str:
            return IRI(value["iri"])
        functor, args = value.get("functor"), value.get("args")
        if value.keys() == {"functor", "args"} and type(functor) is str and type(args) is list:
            return Struct(functor, tuple(_decode(item) for item in args))
    raise ValueError(
        f'unsupported argument {json.dumps(value)} (use a number, string, list or {{"iri": ...}})'
    )


class _Record(msgspec.Struct, gc=False):
    """One written line (``sources`` and ``why`` left out unless set)."""

    name: str
    args: Any
    start: Any
    end: Any
    sources: Any = UNSET
    why: Any = UNSET


# json_value is called for the one value type msgspec does not know: Fraction.
_encoder = msgspec.json.Encoder(enc_hook=json_value)


class JsonLinesWriter:
    """Writes detections as JSON lines, times as numbers or (if the input used ISO) as ISO.

    A detection with ``sources`` (``Engine(provenance=True)``) gets them as a ``"sources"``
    list of records of the same form, after its own fields; one with a derivation
    (``Engine(explain=True)``) also its tree as ``"why"`` (its events as such records).

    Args:
        out: an open text stream.
        style: the :class:`TimeStyle` shared with the readers; ISO output once ``iso`` is set.

    Example:
        >>> import io
        >>> buffer = io.StringIO()
        >>> JsonLinesWriter(buffer).write(Event("ce1", (), 3, 9))
        >>> buffer.getvalue()
        '{"name":"ce1","args":[],"start":3,"end":9}\\n'
    """

    def __init__(self, out: TextIO, style: TimeStyle | None = None) -> None:
        self.out = out
        self.style = style or TimeStyle()

    def write(self, event: Event) -> None:
        """Write one event as one line, with its ``sources`` when it has any."""
        self.write_all((event,))

    def write_all(self, events: Iterable[Event]) -> int:
        """Write every event (a thousand lines per write call); return how many."""
        count = 0
        record, encode, write = self._record, _encoder.encode_lines, self.out.write
        items = iter(events)
        while chunk := [record(event) for event in islice(items, 1024)]:
            write(encode(chunk).decode())
            count += len(chunk)
        return count

    def _record(self, event: Event) -> _Record:
        name, args, start, end = event
        for item in args:
            if type(item) not in _PLAIN:
                args = [json_value(value) for value in args]
                break
        if self.style.iso:
            iso = epoch_to_iso(start)
            start, end = iso, (iso if end == start else epoch_to_iso(end))
        if getattr(event, "derivation", None) is not None:
            sources = [self._record(s) for s in event.sources]
            return _Record(name, args, start, end, sources, self._why(event))
        if event.sources:
            return _Record(name, args, start, end, [self._record(s) for s in event.sources])
        return _Record(name, args, start, end)

    def _why(self, detection: Event) -> dict[str, Any]:
        """The explanation of a detection of ``Engine(explain=True)``, without the detection
        itself (the line's own fields)."""
        from reasoner.runtime.explain import explain, to_json

        tree = to_json(explain(detection), self._event)
        del tree["event"]
        return tree

    def _event(self, event: Event) -> _Record:
        name, args, start, end = event
        return self._record(Event(name, args, start, end))
