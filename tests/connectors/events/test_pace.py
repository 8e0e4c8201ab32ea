"""``paced``: events held back to their scaled time, never ahead of it."""

from __future__ import annotations

import pytest

from connectors.events.pace import paced
from reasoner.errors import ReasonerError
from reasoner.runtime.events import Event


class FakeClock:
    """A clock that advances only when slept on (or by hand, for a slow consumer)."""

    def __init__(self) -> None:
        self.now = 100.0
        self.waits: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


def test_events_wait_for_their_scaled_time() -> None:
    clock = FakeClock()
    stream = [Event("r", (i,), t, t) for i, t in enumerate([1000, 1000, 1600, 4600])]
    out = []
    for event in paced(stream, 600, clock=clock, sleep=clock.sleep):
        out.append((event.args[0], clock.now))
    # 600 s of stream per second: +0 s, +0 s, +1 s, +6 s after the first event.
    assert out == [(0, 100.0), (1, 100.0), (2, 101.0), (3, 106.0)]
    assert clock.waits == [1.0, 5.0]


def test_a_slow_consumer_is_not_made_slower() -> None:
    clock = FakeClock()
    stream = [Event("r", (), 0, 0), Event("r", (), 10, 10), Event("r", (), 20, 20)]
    events = paced(stream, 10, clock=clock, sleep=clock.sleep)
    next(events)
    clock.now += 1.5  # the consumer took 1.5 s: the second event (due at +1 s) is late
    next(events)
    assert clock.waits == []
    next(events)  # due at +2 s, now +1.5 s
    assert clock.waits == [0.5]


@pytest.mark.parametrize("speed", [0, -1, float("nan")])
def test_speed_must_be_positive(speed: float) -> None:
    with pytest.raises(ReasonerError, match="the replay speed must be positive"):
        paced([Event("r", (), 0, 0)], speed)  # refused at once, before any event
