"""Time stamps at the connector boundary: numbers or ISO-8601 text in, epoch seconds inside.

Inputs give times as non-negative numbers or ISO-8601 strings; the engine only sees seconds
since the epoch. A :class:`TimeStyle` remembers whether any input used ISO text so that
writers can give detections back in the same form.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from fractions import Fraction
from functools import lru_cache

from reasoner.values import Time

#: The latest time an input may give: 2^53 seconds (285 million years), below which float
#: seconds are exact; one absurd time stamp would otherwise make every later event late.
MAX_TIME = 2**53


@dataclass(slots=True)
class TimeStyle:
    """Shared, mutable record of how the input wrote its times (``iso`` once any was ISO)."""

    iso: bool = False


def parse_time(value: object) -> Time:
    """Convert a number or an ISO-8601 string to non-negative epoch seconds.

    Naive ISO times are taken as UTC. Whole seconds become ``int`` so that times print
    without a spurious ``.0``.

    Args:
        value: a JSON number or an ISO-8601 string.

    Returns:
        Seconds since 1970-01-01T00:00:00Z.

    Raises:
        ValueError: with a short reason when the value is no valid time.

    Example:
        >>> parse_time("1970-01-01T00:01:00Z"), parse_time(2.5)
        (60, 2.5)
    """
    if isinstance(value, int | float | Fraction) and type(value) is not bool:
        if not 0 <= value <= MAX_TIME:  # also catches NaN and infinities
            raise ValueError(f"time {value!r} is not a non-negative number up to {MAX_TIME}")
        return value
    if isinstance(value, str):
        return iso_to_epoch(value)
    raise ValueError(f"time {value!r} is neither a number nor an ISO-8601 string")


def iso_to_epoch(text: str) -> Time:
    """Convert ISO-8601 text to epoch seconds (naive times are UTC).

    Args:
        text: e.g. ``"2021-01-10T06:20:00Z"``.

    Returns:
        Seconds since the epoch, an ``int`` when whole.

    Raises:
        ValueError: when the text is no ISO-8601 time or lies before 1970.

    Example:
        >>> iso_to_epoch("1970-01-02T00:00:00")
        86400
    """
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"time {text!r} is not ISO-8601") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    seconds = moment.timestamp()
    if seconds < 0:
        raise ValueError(f"time {text!r} lies before 1970")
    return int(seconds) if seconds.is_integer() else seconds


# (an output's times recur: a reading's time in every station's detections, a detection's start
# and end in its sources' and others'; formatting one costs 100 times a lookup)
@lru_cache(maxsize=4096)
def epoch_to_iso(seconds: Time) -> str:
    """Format epoch seconds as UTC ISO-8601 text ending in ``Z``.

    Args:
        seconds: non-negative seconds since the epoch.

    Returns:
        e.g. ``"2021-01-10T06:20:00Z"`` (fractions of a second only when present).

    Example:
        >>> epoch_to_iso(86400)
        '1970-01-02T00:00:00Z'
    """
    moment = datetime.fromtimestamp(float(seconds), UTC)
    return moment.isoformat(timespec="microseconds" if moment.microsecond else "seconds")[:-6] + "Z"
