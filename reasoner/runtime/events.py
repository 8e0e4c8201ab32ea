"""Event occurrences: what enters the engine and what it detects."""

from __future__ import annotations

from dataclasses import dataclass

from reasoner.values import Time, Value


@dataclass(frozen=True, slots=True)
class Event:
    """An occurrence of ``name(args...)`` over the interval [start, end].

    An atomic (input) event has ``start == end``; use :meth:`at` to build one.

    >>> Event.at("stock", ("GO", 101.5, 300), 17)
    Event(name='stock', args=('GO', 101.5, 300), start=17, end=17)
    """

    name: str
    args: tuple[Value, ...]
    start: Time
    end: Time

    @classmethod
    def at(cls, name: str, args: tuple[Value, ...], time: Time) -> Event:
        """An atomic event at one time point."""
        return cls(name, tuple(args), time, time)
