"""ETALIS's alarms: rules whose head is derived later, when the stream's clock reaches a time.

``exceptionAlarm(h, D) <- p`` derives ``h`` over ``[s, e + D]`` for every occurrence ``[s, e]``
of ``p``; ``exceptionAlarmAbsoluteDatime(h, T) <- p`` over ``[s, T]``. The rule's output
schedules a timer (:class:`AlarmTimer`) on the engine's clock, which runs on event time: the
alarm rings when an event (or :meth:`~reasoner.runtime.engine.Engine.advance`) moves the clock
to its time or past it, before the events of that time are processed. A time that is not a
number, or not later than the detection (a delay of zero or less, an absolute time already
past), schedules nothing: such an alarm could never ring.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reasoner.compiler.network import Output
from reasoner.runtime.events import Event
from reasoner.runtime.generated import define
from reasoner.values import NUMBER_TYPES


class AlarmTimer:
    """A pending alarm: ``ring(event, output)`` derives ``event`` (it ends at the alarm's
    time) as the rule ``output`` would have."""

    __slots__ = ("event", "output", "ring")

    def __init__(self, event: Event, output: Output, ring: Callable[[Event, Output], None]):
        self.event = event
        self.output = output
        self.ring = ring

    def __call__(self) -> None:
        self.ring(self.event, self.output)

    def __repr__(self) -> str:
        return f"AlarmTimer({self.event!r})"


def alarm_head(
    out: Output, absolute: bool, arguments: str, scope: dict[str, Any], trace: list[str]
) -> Callable[..., None]:
    """An alarm rule's output ``derive(v, s, e, w)``: the head event, ending at the alarm's
    time, handed to ``scope["schedule"](time, timer)``.

    ``arguments`` is Python source of the tuple of the head's arguments followed by the
    alarm's time term, evaluated over the body's values ``v``; ``trace`` the lines (at depth
    0) that record provenance or a derivation on ``event``.
    """
    at = "values[-1]" if absolute else "e + values[-1]"
    lines = [
        "def derive(v, s, e, w):",
        f"    values = {arguments}",
        "    if type(values[-1]) in numbers:",
        f"        at = {at}",
        "        if at > runtime.now:",
        "            event = new(kind, (name, values[:-1], s, at))",
        *("            " + line for line in trace),
        "            schedule(at, timer(event, rule, ring))",
    ]
    scope.update(numbers=NUMBER_TYPES, timer=AlarmTimer)
    return define("\n".join(lines) + "\n", f"alarm {out.head.name}", scope)
