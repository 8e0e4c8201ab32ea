"""Event files found by a Spark file source, read on the executors by ``reasoner run``'s readers.

Spark hands a Python worker the paths of new files; :func:`file_rows` reads one with
:func:`connectors.events.inputs.open_events` (as ``reasoner spark replay`` does: the files must
be readable at the same path on every executor), so a line is an event or a rejection with the
same reason and line number as in ``reasoner run``. Every row names its partition key value
(by the text of its equality class, :func:`reasoner.runtime.batches.key_text`, so that ``2``
and ``2.0`` are one key; one group for a program with a global remainder), so that Spark can
group by it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import unquote, urlparse

from connectors.events.inputs import open_events
from connectors.events.rejects import InputFormatError, Position, Rejected
from connectors.events.times import TimeStyle
from reasoner.errors import ReasonerError
from reasoner.runtime.batches import key_text
from reasoner.runtime.checkpoint import encode
from reasoner.runtime.events import Event

#: The group of a program that does not partition, and the group rejected lines pass through.
WHOLE, REJECTS = "", "\0rejects"

#: What Spark's timestamps and pandas hold: event times (seconds) below this are accepted.
LAST_TIME = 4_500_000_000  # 2112-08-07

#: A parsed row: key, file, line, the event as snapshot JSON (None: a rejected line), the
#: reason of a rejected line (else None), whether the file wrote ISO times, the event's end
#: in microseconds.
ParsedRow = tuple[str, str, int, str | None, str | None, bool, int]


@dataclass(frozen=True, slots=True)
class Keys:
    """How events are grouped: the key position of each keyed event type, or one group."""

    positions: tuple[tuple[tuple[str, int], int], ...]
    whole: bool  # the program has a global remainder: everything runs in one group
    _by_type: dict[tuple[str, int], int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_type", dict(self.positions))

    def key(self, event: Event) -> str:
        if self.whole:
            return WHOLE
        position = self._by_type.get((event.name, len(event.args)))
        return WHOLE if position is None else key_text(event.args[position])


def local_path(uri: str) -> str:
    """A file URI as Spark gives it, as a path for messages (other schemes kept)."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


class SourceError(ReasonerError):
    """A file of the source folder that changed after Spark listed it."""


def listed_rows(
    uri: str, size: int, listed: datetime, fmt: str, keys: Keys, arities: dict[str, set[int]]
) -> list[ParsedRow]:
    """The rows of a file (:func:`file_rows`) as Spark listed it: ``size`` bytes, modified
    at ``listed`` (checked before and after reading, for a local file).

    Raises:
        SourceError: the file changed since it was listed (written in place, not renamed in).
    """
    file = local_path(uri)
    local = urlparse(uri).scheme in ("", "file")
    if local:
        _check_listed(file, size, listed)
    rows = list(file_rows(uri, fmt, keys, arities))
    if local:
        _check_listed(file, size, listed)
    return rows


def _check_listed(file: str, size: int, listed: datetime) -> None:
    try:
        found = os.stat(file)
    except OSError:
        return  # (file_rows reports an unreadable file as a rejected line)
    if listed.tzinfo is None:
        listed = listed.replace(tzinfo=UTC)
    listed_ms = round(listed.timestamp() * 1000)
    if found.st_size != size or found.st_mtime_ns // 1_000_000 != listed_ms:
        raise SourceError(
            f"{file}: changed after it was taken into a micro-batch ({size} bytes listed, "
            f"{found.st_size} now): write files aside and rename them into the source "
            "folder, so that none is read half-written"
        )


def file_rows(uri: str, fmt: str, keys: Keys, arities: dict[str, set[int]]) -> Iterator[ParsedRow]:
    """The rows of one file: its events and its rejected lines (file and line each)."""
    file = local_path(uri)
    rejected: list[Rejected] = []
    style = TimeStyle()
    positions: list[Position] = []
    events: list[tuple[Event, int]] = []
    try:
        for event in open_events(file, fmt, style, rejected.append, {}, arities, positions):
            events.append((event, positions[0].line))
    except InputFormatError as error:  # unreadable, or a broken header: the whole file
        yield (REJECTS, file, 0, None, str(error), False, 0)
    key = keys.key
    for event, line in events:
        if event.end >= LAST_TIME:
            reason = f"ends at {event.end}, after the last time a stream orders ({LAST_TIME})"
            rejected.append(Rejected(file, line, reason))
            continue
        text = json.dumps(encode(event))
        yield (key(event), file, line, text, None, style.iso, int(event.end * 1_000_000))
    for r in rejected:
        yield (REJECTS, r.file, r.line, None, r.reason, False, 0)
