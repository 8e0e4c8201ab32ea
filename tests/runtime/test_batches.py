"""Chunks of input events checked and shared out at once (reasoner.runtime.batches)."""

from __future__ import annotations

import math
import zlib
from fractions import Fraction

import pytest

from reasoner.errors import EventError
from reasoner.runtime.batches import Owners, acceptable, kinds, share
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Detection, Event

ARITIES = {"a": {1}, "b": {2}}
GOOD = [Event.at("a", (1,), 2), Event("b", (1, 2), 1, 3), Event.at("zzz", (), 3)]


def test_a_chunk_every_engine_takes_is_acceptable() -> None:
    assert acceptable(GOOD, 2, ARITIES, 2)
    assert acceptable([Event("a", (1,), Fraction(1, 2), 1.5)], -math.inf, ARITIES, math.inf)


@pytest.mark.parametrize(
    "bad",
    [
        Detection("a", (1,), 3, 3),  # not exactly an Event (one by one: the engine decides)
        ("a", (1,), 3, 3),  # not an Event
        Event("a", (1,), True, 3),  # a bool is no time
        Event("a", (1,), 3, "4"),
        Event("a", (1,), -1, 3),
        Event("a", (1,), 4, 3),  # starts after it ends
        Event("a", (1,), math.nan, 3),
        Event("a", (1,), 3, math.nan),
        Event("a", (1,), 0, 3),  # lasts 3, longer than the span limit 2
        Event.at("b", (1,), 3),  # b takes 2 arguments
        Event.at("a", (1,), 1),  # ends before the ones before it (and before now)
    ],
)
def test_one_bad_event_makes_the_chunk_unacceptable(bad: object) -> None:
    chunk = [*GOOD[:2], bad, GOOD[2]]
    assert not acceptable(chunk, 2, ARITIES, 2)  # type: ignore[arg-type]
    # and each one is refused by an engine (or, for a Detection, checked one by one)
    if type(bad) is not Detection:
        with pytest.raises(EventError):
            engine = Engine("a(X) <- b(X, _). c <- zzz.", max_span=2)
            for event in chunk:
                engine.push(event)  # type: ignore[arg-type]


def test_ends_before_now_or_going_back_are_unacceptable() -> None:
    assert not acceptable(GOOD, 4, ARITIES, 2)
    assert not acceptable([GOOD[1], GOOD[0]], 0, ARITIES, 2)  # ends 3, then 2
    assert not acceptable([], 0, ARITIES, 2)  # (nothing to take)


def test_kinds() -> None:
    assert kinds(GOOD) == {("a", 1), ("b", 2), ("zzz", 0)}
    assert kinds([Event.at("a", (1,), 1), Event.at("a", (1, 2), 1)]) == {("a", 1), ("a", 2)}


def _owner(value: object, workers: int) -> int:
    return zlib.crc32(repr(value).encode("utf-8")) % workers


def test_share_sends_keyed_events_to_their_keys_owner() -> None:
    chunk = [Event.at("r", (f"S{i}", i), i) for i in range(40)]
    shares, raw = share(chunk, 100, {("r", 2): 0}, set(), Owners(3))
    assert raw == []
    for worker, (seqs, rows) in enumerate(shares):
        mine = [i for i in range(40) if _owner(f"S{i}", 3) == worker]
        assert seqs == [100 + i for i in mine]
        assert rows == [tuple(chunk[i]) for i in mine]
        assert all(type(row) is tuple for row in rows)
    assert sorted(s for seqs, _ in shares for s in seqs) == list(range(100, 140))
    ([(seqs, rows)], _) = share(chunk, 7, {("r", 2): 0}, set(), Owners(1))
    assert (seqs, rows) == (list(range(7, 47)), list(map(tuple, chunk)))


def test_share_of_mixed_types() -> None:
    """k/1 is keyed by its argument, m/2 by its second; g/1 is read by the global stage only;
    u/0 by no rule (worker 0 counts it)."""
    chunk = [
        Event.at("k", ("x",), 1),
        Event.at("g", (5,), 1),
        Event.at("m", (0, "y"), 2),
        Event.at("u", (), 2),
        Event.at("m", (1, "x"), 3),
    ]
    keys = {("k", 1): 0, ("m", 2): 1}
    shares, raw = share(chunk, 0, keys, {("g", 1), ("m", 2)}, Owners(2))
    expected: list[tuple[list[int], list[tuple]]] = [([], []), ([], [])]
    for seq, key in ((0, "x"), (2, "y"), (4, "x")):
        expected[_owner(key, 2)][0].append(seq)
        expected[_owner(key, 2)][1].append(tuple(chunk[seq]))
    expected[0][0].append(3)
    expected[0][1].append(tuple(chunk[3]))
    expected = [(sorted(s), [tuple(chunk[i]) for i in sorted(s)]) for s, _ in expected]
    assert shares == expected
    assert raw == [(1, chunk[1]), (2, chunk[2]), (4, chunk[4])]


def test_equal_keys_stay_with_the_first_ones_owner() -> None:
    owners = Owners(7)
    assert owners[1] == _owner(1, 7)
    assert owners[1.0] == owners[1] != _owner(1.0, 7)
