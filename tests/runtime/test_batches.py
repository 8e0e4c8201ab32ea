"""Chunks of input events checked and shared out at once (reasoner.runtime.batches)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import zlib
from fractions import Fraction

import pytest

from reasoner.errors import EventError
from reasoner.runtime.batches import Owners, acceptable, key_owner, kinds, mine, share
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Detection, Event
from reasoner.values import IRI, Struct

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
        Event("a", (1,), True, 1),  # (equal to its end, but not a number type)
        Event("a", (1,), 3, 3.5),
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
    assert not acceptable([Event.at("a", (1,), -1)], -math.inf, ARITIES, 2)
    assert not acceptable([Event.at("a", (1,), -0.5), GOOD[0]], -math.inf, ARITIES, 2)
    assert acceptable([Event.at("a", (1,), 0), GOOD[0]], -math.inf, ARITIES, 2)


def test_the_types_a_caller_gives_are_checked_as_the_chunks() -> None:
    assert acceptable(GOOD, 2, ARITIES, 2, kinds(GOOD))
    assert not acceptable(GOOD, 2, ARITIES, 2, {("b", 1)})  # (used as given: b takes 2)


def test_kinds() -> None:
    assert kinds(GOOD) == {("a", 1), ("b", 2), ("zzz", 0)}
    assert kinds([Event.at("a", (1,), 1), Event.at("a", (1, 2), 1)]) == {("a", 1), ("a", 2)}


def _owner(value: object, workers: int) -> int:
    return zlib.crc32(repr(value).encode("utf-8")) % workers


def test_share_sends_keyed_events_to_their_keys_owner() -> None:
    chunk = [Event.at("r", (f"S{i}", i), i) for i in range(40)]
    owner, shares, raw = share(chunk, {("r", 2): 0}, set(), Owners(3))
    assert raw == []
    assert owner == bytes(_owner(f"S{i}", 3) for i in range(40))
    for worker, rows in enumerate(shares):
        numbers = [100 + i for i in range(40) if _owner(f"S{i}", 3) == worker]
        assert list(mine(100, owner, worker, rows)) == [(n, tuple(chunk[n - 100])) for n in numbers]
        assert all(type(row) is tuple for row in rows)
    assert sum(map(len, shares)) == 40
    owner, [rows], _ = share(chunk, {("r", 2): 0}, set(), Owners(1))
    assert owner is None and rows == list(map(tuple, chunk))
    assert list(mine(7, owner, 0, rows)) == list(enumerate(map(tuple, chunk), 7))


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
    owner, shares, raw = share(chunk, keys, {("g", 1), ("m", 2)}, Owners(2))
    x, y = _owner("x", 2), _owner("y", 2)
    assert owner == bytes([x, 2, y, 0, x])  # 2: the global stage's alone
    for worker in (0, 1):
        expected = [(i, tuple(chunk[i])) for i in range(5) if owner[i] == worker]
        assert shares[worker] == [row for _, row in expected]
        assert list(mine(0, owner, worker, shares[worker])) == expected
    assert raw == [(1, chunk[1]), (2, chunk[2]), (4, chunk[4])]


def test_owners_of_many_workers_are_a_list() -> None:
    chunk = [Event.at("r", (i,), 0) for i in range(600)]
    owner, shares, _ = share(chunk, {("r", 1): 0}, set(), Owners(300))
    assert owner == [_owner(i, 300) for i in range(600)]
    assert list(mine(0, owner, 299, shares[299])) == [
        (i, ("r", (i,), 0, 0)) for i in range(600) if _owner(i, 300) == 299
    ]


EQUAL_KEYS = [
    [1, 1.0, Fraction(1), True],
    [0, 0.0, -0.0, Fraction(0), False],
    [2**60, float(2**60)],
    [0.5, Fraction(1, 2)],
    [(1, (2.5, "x")), (1.0, (Fraction(5, 2), "x"))],
    [Struct("f", (2, IRI("http://e/a"))), Struct("f", (2.0, IRI("http://e/a")))],
]


@pytest.mark.parametrize("group", EQUAL_KEYS)
def test_keys_the_engine_joins_as_one_have_one_owner(group: list[object]) -> None:
    assert all(value == group[0] for value in group)  # (one key for the engine's dicts)
    for workers in (2, 7, 1000):
        assert {key_owner(value, workers) for value in group} == {key_owner(group[0], workers)}
        owners = Owners(workers)
        assert [owners[value] for value in reversed(group)] == [key_owner(group[0], workers)] * len(
            group
        )


def test_key_owners_are_pinned_and_the_same_in_every_process() -> None:
    # Strings and integers keep the owners of crc32(repr(key)); other numbers are exact ratios.
    assert key_owner("S1", 1000) == zlib.crc32(b"'S1'") % 1000 == 411
    assert key_owner(2.5, 1000) == zlib.crc32(b"5/2") % 1000 == 812
    assert key_owner(IRI("a"), 1000) == zlib.crc32(b"IRI(value='a')") % 1000
    assert IRI("a") != "a" and key_owner("a", 1000) != key_owner(IRI("a"), 1000)
    assert key_owner(0.1, 1000) == zlib.crc32(str(Fraction(0.1)).encode()) % 1000
    assert 0 <= key_owner(math.nan, 7) < 7
    values = ["S1", 2.5, (1, "x"), IRI("http://e/a"), Struct("f", (0.5,))]
    code = (
        "from reasoner.runtime.batches import key_owner; from reasoner.values import IRI, Struct;"
        f"print([key_owner(v, 2**31) for v in {values!r}])"
    )
    for seed in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert out == f"{[key_owner(v, 2**31) for v in values]}\n"
