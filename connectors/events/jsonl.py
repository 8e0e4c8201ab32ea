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

import json
import sys
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any, BinaryIO, TextIO

import msgspec
from msgspec import UNSET

from connectors.events.rejects import (
    InputFormatError,
    Position,
    Rejected,
    RejectHandler,
    log_rejected,
)
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
            stdin = _without_bom(sys.stdin.buffer)
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
