"""Event occurrences: what enters the engine and what it detects."""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Any

from reasoner.values import NUMBER_TYPES, Time, Value


class Event(tuple[Any, ...]):
    """An occurrence of ``name(args...)`` over the interval [start, end].

    An atomic (input) event has ``start == end``; use :meth:`at` to build one. Events are
    immutable 4-tuples ``(name, args, start, end)`` with named fields: the engine derives
    several events per input event, and a tuple is the cheapest immutable record Python
    builds (a frozen dataclass costs twice as much).

    ``sources`` is empty, except on detections of an engine built with ``provenance=True``:
    there it holds the input events the detection was built from, in time order. It takes
    no part in equality.

    >>> Event.at("stock", ("GO", 101.5, 300), 17)
    Event(name='stock', args=('GO', 101.5, 300), start=17, end=17)
    """

    __slots__ = ()
    __match_args__ = ("name", "args", "start", "end")

    if TYPE_CHECKING:
        name: str
        args: tuple[Value, ...]
        start: Time
        end: Time
    else:
        name = property(itemgetter(0), doc="The event's name.")
        args = property(itemgetter(1), doc="The event's arguments.")
        start = property(itemgetter(2), doc="When the event starts.")
        end = property(itemgetter(3), doc="When the event ends.")

    sources: tuple[Event, ...] = ()

    def __new__(cls, name: str, args: tuple[Value, ...], start: Time, end: Time) -> Event:
        return tuple.__new__(cls, (name, args, start, end))

    def __getnewargs__(self) -> tuple[Any, ...]:
        return tuple(self)

    def __repr__(self) -> str:
        return f"Event(name={self[0]!r}, args={self[1]!r}, start={self[2]!r}, end={self[3]!r})"

    @classmethod
    def at(cls, name: str, args: tuple[Value, ...], time: Time) -> Event:
        """An atomic event at one time point."""
        return cls(name, tuple(args), time, time)


class Detection(Event):
    """A detection that records the input events it was built from (``sources``) and, from
    an engine built with ``explain=True``, its ``derivation``
    (:class:`~reasoner.runtime.explain.Derivation`)."""

    # No __slots__: the instance dictionary holds ``sources`` (and ``derivation``).
    derivation: Any = None


def is_time(value: Any) -> bool:
    """Whether ``value`` is a time: a number of an exact number type (not ``bool``), not
    negative (NaN fails the comparison)."""
    return type(value) in NUMBER_TYPES and value >= 0


def rejection(
    event: Event, now: Time, arities: dict[str, set[int]], max_span: Time | None, lateness: Time
) -> str | None:
    """Why ``event`` cannot be processed at time ``now`` by an engine reading the event names
    of ``arities`` (None: it can)."""
    if not isinstance(event, Event):
        return "not an Event"
    name, args, start, end = event
    if not (is_time(start) and is_time(end)):
        return "times must be non-negative numbers"
    if start > end:
        return f"start {start} is after end {end}"
    if max_span is not None and end - start > max_span:
        return f"lasts {end - start}, longer than the engine's max_span {max_span}"
    if end < now:
        late = f"late: ends at {end}, before the current time {now}"
        if lateness:
            late += f" (beyond the lateness bound {lateness})"
        return late
    known = arities.get(name)
    if known is not None and len(args) not in known:
        expected = " or ".join(str(a) for a in sorted(known))
        return f"{name} takes {expected} argument(s), not {len(args)}"
    return None
