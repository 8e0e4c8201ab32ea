"""What readers do with input they cannot use: report it, skip it, lose nothing else.

A reader that meets a malformed line or row builds a :class:`Rejected` record (file, line,
reason), hands it to the caller's callback and carries on with the next line. Problems that
make a whole file unreadable (a missing header, an unknown unit) raise
:class:`InputFormatError` instead, before any event is produced. A reader also keeps a
:class:`Position`: the line of the event it yielded last, so that an event the engine refuses
later (a late one) is reported with its file and line too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reasoner.errors import ReasonerError


class InputFormatError(ReasonerError):
    """An input file that cannot be read at all (unopenable, or a broken header)."""


@dataclass(frozen=True, slots=True)
class Rejected:
    """One skipped line or row of an input file, with the reason it was skipped."""

    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"


class Position:
    """Where a reader is: its file, and the line of the event it yielded last.

    A reader sets ``line`` and ``event`` before it yields (two stores, no formatting); a
    merged stream holds each reader's next event back until it is wanted, so the reader whose
    ``event`` is the one being processed still points at its line.

    Example:
        >>> where = Position("in.jsonl")
        >>> where.line, where.event = 7, "e"
        >>> str(where.rejected("late")), where.holds("e")
        ('in.jsonl:7: late', True)
    """

    __slots__ = ("event", "file", "line")

    def __init__(self, file: str) -> None:
        self.file = file
        self.line = 0
        self.event: Any = None

    def holds(self, event: object) -> bool:
        """Whether ``event`` is the one this reader yielded last (the very object)."""
        return self.event is event

    def rejected(self, reason: str) -> Rejected:
        """The rejection of the event at this position."""
        return Rejected(self.file, self.line, reason)


#: A callback receiving each rejected line; readers continue after it returns.
RejectHandler = Callable[[Rejected], None]


def log_rejected(rejected: Rejected) -> None:
    """The default handler: log the rejection as a warning (the reader skips the line).

    Args:
        rejected: the skipped line.

    Example:
        >>> log_rejected(Rejected("in.jsonl", 3, "missing 'name'"))
    """
    import logging  # (here: a command that reports rejections itself never loads it)

    logging.getLogger("connectors.events").warning("skipped %s", rejected)
