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
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import unquote, urlparse

from connectors.events.inputs import open_events
from connectors.events.rejects import InputFormatError, Position, Rejected
from connectors.events.times import TimeStyle
from reasoner.runtime.batches import key_text
from reasoner.runtime.checkpoint import encode
from reasoner.runtime.events import Event

#: The group of a program that does not partition, and the group rejected lines pass through.
WHOLE, REJECTS = "", "\0rejects"

#: What Spark's timestamps and pandas hold: event times (seconds) below this are accepted.
LAST_TIME = 4_500_000_000  # 2112-08-07

#: The columns of a parsed row (a rejected line has no event and a reason).
SCHEMA = "key string, file string, line int, event string, reason string, iso boolean, end_us long"

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
