"""What readers do with input they cannot use: report it, skip it, lose nothing else.

A reader that meets a malformed line or row builds a :class:`Rejected` record (file, line,
reason), hands it to the caller's callback and carries on with the next line. Problems that
make a whole file unreadable (a missing header, an unknown unit) raise
:class:`InputFormatError` instead, before any event is produced.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from reasoner.errors import ReasonerError

_log = logging.getLogger("connectors.events")


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


#: A callback receiving each rejected line; readers continue after it returns.
RejectHandler = Callable[[Rejected], None]


def log_rejected(rejected: Rejected) -> None:
    """The default handler: log the rejection as a warning (the reader skips the line).

    Args:
        rejected: the skipped line.

    Example:
        >>> log_rejected(Rejected("in.jsonl", 3, "missing 'name'"))
    """
    _log.warning("skipped %s", rejected)
