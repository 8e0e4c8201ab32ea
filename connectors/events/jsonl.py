"""Events as JSON lines: the CLI's input and output format (issue 3's contract).

Input, one event per line, ordered by time::

    {"name": "stock", "args": [1, 101.5, 300], "time": 17}
    {"name": "fire", "args": [{"iri": "http://ex.org/s1"}], "start": "2021-01-10T06:00:00Z",
     "end": "2021-01-10T09:00:00Z"}

Times are non-negative numbers or ISO-8601 strings; ``{"iri": ...}`` is an IRI, other
strings and numbers are constants, nested lists are lists (tuples). As an extension for
round trips, ``{"functor": f, "args": [...]}`` is a compound value. Output, one detection
per line: ``{"name": "ce1", "args": [], "start": 3, "end": 9}``; a detection of an engine built
with ``provenance=True`` has one more key, ``"sources"``: the input events it was built from,
each a record of the same form (``[{"name": "a", "args": [], "start": 3, "end": 3}, ...]``).

Reading is on the hot path of the CLI, so the per-line work is the JSON scanner and a few
type checks; arguments are only walked again when one of them is not a plain constant.
"""

from __future__ import annotations

import json
import json.scanner
import sys
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any, TextIO

from connectors.events.rejects import InputFormatError, Rejected, RejectHandler, log_rejected
from connectors.events.times import TimeStyle, epoch_to_iso, parse_time
from reasoner.runtime.events import Event
from reasoner.values import IRI, Struct, Time, Value, json_value

_PLAIN = frozenset((int, float, str))
_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
# What json.loads runs, minus its checks (typeshed types the decoder argument oddly).
_scan = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


def read_jsonl(
    source: str | Path | TextIO,
    *,
    style: TimeStyle | None = None,
    on_reject: RejectHandler | None = None,
) -> Iterator[Event]:
    """Read events from a JSON-lines file, skipping (and reporting) malformed lines.

    Args:
        source: a path, ``"-"`` for standard input, or an open text stream.
        style: set to ``iso=True`` as soon as a line uses an ISO-8601 time, so that a
            :class:`JsonLinesWriter` sharing it writes times back in that form.
        on_reject: called with a :class:`Rejected` (file, line, reason) for each bad
            line (bad JSON, missing name, bad time, start after end ...); default: log it.

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
        raise InputFormatError(f"{source}: no such events file")
    return _read(source, style or TimeStyle(), on_reject or log_rejected)


def _read(
    source: str | Path | TextIO, style: TimeStyle, on_reject: RejectHandler
) -> Iterator[Event]:
    if isinstance(source, str | Path):
        if str(source) == "-":
            yield from _events(sys.stdin, "<stdin>", style, on_reject)
            return
        try:
            with open(source, encoding="utf-8") as stream:
                yield from _events(stream, str(source), style, on_reject)
        except (OSError, UnicodeDecodeError) as exc:
            raise InputFormatError(f"{source}: cannot read events: {exc}") from exc
    else:
        yield from _events(source, getattr(source, "name", "<stream>"), style, on_reject)


def _events(
    stream: TextIO, file: str, style: TimeStyle, on_reject: RejectHandler
) -> Iterator[Event]:
    for number, line in enumerate(stream, 1):
        try:
            obj = _decode_line(line)
        except ValueError as exc:
            if line.strip():  # blank lines are allowed and silently skipped
                on_reject(Rejected(file, number, f"bad JSON: {exc}"))
            continue
        try:
            yield _event(obj, style)
        except ValueError as exc:
            on_reject(Rejected(file, number, str(exc)))


def _decode_line(line: str) -> Any:
    """``json.loads(line)``, calling the decoder's scanner directly for a line that starts
    with its value and ends after it (json.loads' own checks cost more than the scan)."""
    try:
        obj, end = _scan(line, 0)
    except (StopIteration, ValueError):
        return json.loads(line)  # leading blanks, or the error message to report
    if end != len(line) and line[end:].strip():
        return json.loads(line)  # raises: extra data
    return obj


def _event(obj: Any, style: TimeStyle) -> Event:
    """Build one event from a decoded line; ValueError carries the reason for rejection."""
    if type(obj) is not dict:
        raise ValueError("a line must be a JSON object")
    name = obj.get("name")
    if type(name) is not str or not name:
        raise ValueError("missing or empty 'name'")
    raw = obj.get("args", ())
    if type(raw) is not list and raw != ():
        raise ValueError("'args' must be a list")
    args = _decode_args(raw)
    time = obj.get("time")
    if time is not None:
        if "start" in obj or "end" in obj:
            raise ValueError("give either 'time' or 'start' and 'end', not both")
        # Integer times are the common case: skip the general parser for them.
        start = end = time if type(time) is int and time >= 0 else _time(time, style)
        return Event(name, args, start, end)
    start_raw, end_raw = obj.get("start"), obj.get("end")
    if start_raw is None or end_raw is None:
        raise ValueError("missing 'time' (or both 'start' and 'end')")
    # Integer times are the common case: skip the general parser for them.
    start = start_raw if type(start_raw) is int and start_raw >= 0 else _time(start_raw, style)
    end = end_raw if type(end_raw) is int and end_raw >= 0 else _time(end_raw, style)
    if start > end:
        raise ValueError(f"start {start_raw!r} is after end {end_raw!r}")
    return Event(name, args, start, end)


def _time(value: object, style: TimeStyle) -> Time:
    if type(value) is str:
        style.iso = True
    return parse_time(value)


def _decode_args(items: Any) -> tuple[Value, ...]:
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


class JsonLinesWriter:
    """Writes detections as JSON lines, times as numbers or (if the input used ISO) as ISO.

    A detection with ``sources`` (``Engine(provenance=True)``) gets them as a ``"sources"``
    list of records of the same form, after its own fields.

    Args:
        out: an open text stream.
        style: the :class:`TimeStyle` shared with the readers; ISO output once ``iso`` is set.

    Example:
        >>> import io
        >>> buffer = io.StringIO()
        >>> JsonLinesWriter(buffer).write(Event("ce1", (), 3, 9))
        >>> buffer.getvalue()
        '{"name": "ce1", "args": [], "start": 3, "end": 9}\\n'
    """

    def __init__(self, out: TextIO, style: TimeStyle | None = None) -> None:
        self.out = out
        self.style = style or TimeStyle()
        self._names: dict[str, str] = {}  # event name -> the line's text up to the arguments

    def write(self, event: Event) -> None:
        """Write one event as one line, with its ``sources`` when it has any."""
        self.out.write(self.line(event))

    def line(self, event: Event) -> str:
        """The line :meth:`write` writes for ``event`` (newline included)."""
        name, args, start, end = event
        if type(start) is int and type(end) is int and not self.style.iso and not event.sources:
            # The common case, formatted directly: the text json would write for the record.
            for item in args:
                if type(item) is not int and type(item) is not str:
                    break
            else:
                quoted = self._names.get(name)
                if quoted is None:
                    quoted = self._names[name] = '{"name": ' + _encode(name) + ', "args": ['
                listed = ", ".join([repr(a) if type(a) is int else _encode(a) for a in args])
                return f'{quoted}{listed}], "start": {start}, "end": {end}}}\n'
        record = self._record(event)
        if event.sources:
            record["sources"] = [self._record(source) for source in event.sources]
        return _encode(record) + "\n"

    def _record(self, event: Event) -> dict[str, Any]:
        args = event.args
        for item in args:
            if type(item) not in _PLAIN:
                encoded: list[Any] = [json_value(value) for value in args]
                break
        else:
            encoded = list(args)
        if self.style.iso:
            start: Any = epoch_to_iso(event.start)
            end: Any = start if event.end == event.start else epoch_to_iso(event.end)
        else:
            start, end = json_value(event.start), json_value(event.end)
        return {"name": event.name, "args": encoded, "start": start, "end": end}

    def write_all(self, events: Iterable[Event]) -> int:
        """Write every event (a thousand lines per write call); return how many."""
        count = 0
        line, write = self.line, self.out.write
        items = iter(events)
        while chunk := [line(event) for event in islice(items, 1024)]:
            write("".join(chunk))
            count += len(chunk)
        return count

