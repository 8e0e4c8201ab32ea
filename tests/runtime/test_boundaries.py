"""Interval boundaries through the engine: for every interval operator, every consumption
policy and every arrival order of events that end together, the detections of a fixed table of
start/end equalities, worked out by hand from the operator's definition (docs/semantics.md).

The reference evaluator must agree with every row, so a row that is wrong by hand shows too.
Each row is also run with the engine told the longest input span and collecting after every
event, so that a goal freed too early shows as a missing detection.
"""

from __future__ import annotations

from itertools import permutations

import pytest

from reasoner.language.loader import load_rules
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.semantics.reference import derive

POLICIES = ("unrestricted", "recent", "chronological")

Interval = tuple[int, int]
#: (a, b, the intervals of d) for ``d <- a OP b.``; None: that event is absent.
Row = tuple[Interval, Interval, tuple[Interval, ...]]

# fmt: off
BINARY: dict[str, list[Row]] = {
    # [s1, e2] where e1 < s2
    "SEQ": [
        ((1, 2), (3, 4), ((1, 4),)),
        ((1, 2), (2, 4), ()),          # e1 == s2
        ((1, 1), (1, 1), ()),          # two points at the same time
        ((1, 3), (2, 4), ()),          # overlapping
        ((2, 2), (1, 3), ()),          # b started before a
        ((0, 0), (1, 1), ((0, 1),)),   # time 0
    ],
    # [min(s1, s2), max(e1, e2)] in any order
    "AND": [
        ((1, 2), (3, 4), ((1, 4),)),
        ((3, 4), (1, 2), ((1, 4),)),   # b first
        ((2, 3), (1, 4), ((1, 4),)),   # a inside b
        ((1, 1), (1, 1), ((1, 1),)),   # together
        ((1, 4), (2, 2), ((1, 4),)),
    ],
    # as AND, and max(s1, s2) < min(e1, e2)
    "PAR": [
        ((1, 3), (2, 4), ((1, 4),)),
        ((1, 2), (2, 4), ()),          # touching: overlap of length 0
        ((1, 1), (1, 1), ()),          # two points at the same time
        ((1, 4), (2, 3), ((1, 4),)),   # b inside a
        ((1, 3), (1, 3), ((1, 3),)),   # the same interval
        ((2, 2), (1, 3), ()),          # a point inside b: overlap of length 0
        ((2, 4), (1, 3), ((1, 4),)),   # b first
        ((1, 2), (3, 4), ()),
    ],
    # same start and same end
    "EQUALS": [
        ((1, 3), (1, 3), ((1, 3),)),
        ((1, 3), (2, 3), ()),
        ((1, 2), (1, 3), ()),
        ((2, 2), (2, 2), ((2, 2),)),
        ((1, 1), (2, 2), ()),
    ],
    # [s1, e2] where e1 == s2
    "MEETS": [
        ((1, 2), (2, 4), ((1, 4),)),
        ((1, 2), (3, 4), ()),
        ((1, 3), (2, 4), ()),
        ((2, 2), (2, 2), ((2, 2),)),   # a point meets a point
        ((1, 2), (2, 2), ((1, 2),)),
        ((2, 4), (1, 2), ()),          # b meets a, not a meets b
    ],
    # [s2, e2] where s2 < s1 <= e1 < e2
    "DURING": [
        ((2, 3), (1, 4), ((1, 4),)),
        ((1, 3), (1, 4), ()),          # starting together
        ((2, 4), (1, 4), ()),          # ending together
        ((2, 2), (1, 4), ((1, 4),)),   # a point strictly inside
        ((1, 1), (1, 4), ()),          # a point at the start
        ((4, 4), (1, 4), ()),          # a point at the end
        ((1, 4), (1, 4), ()),
        ((1, 4), (2, 3), ()),          # b inside a, not a inside b
    ],
    # [s1, e2] where s1 == s2 and e1 < e2
    "STARTS": [
        ((1, 2), (1, 3), ((1, 3),)),
        ((1, 3), (1, 3), ()),          # ending together too
        ((2, 2), (1, 3), ()),
        ((1, 1), (1, 3), ((1, 3),)),   # a point at b's start
        ((1, 4), (1, 3), ()),          # a ends after b
        ((0, 2), (1, 3), ()),
    ],
    # [s2, e1] where e1 == e2 and s2 < s1
    "FINISHES": [
        ((2, 3), (1, 3), ((1, 3),)),
        ((1, 3), (1, 3), ()),          # starting together too
        ((3, 3), (1, 3), ((1, 3),)),   # a point at b's end
        ((2, 2), (1, 3), ()),
        ((0, 3), (1, 3), ()),          # a starts before b
        ((2, 3), (1, 4), ()),
    ],
}

#: (a, c, b, the intervals of d) for ``d <- NOT(c).[a, b]``: a SEQ b, unless some c lies
#: strictly between a's end and b's start.
NEGATION: list[tuple[Interval, Interval | None, Interval, tuple[Interval, ...]]] = [
    ((1, 1), None, (3, 3), ((1, 3),)),
    ((1, 1), (2, 2), (3, 3), ()),        # strictly between
    ((1, 1), (1, 2), (3, 3), ((1, 3),)), # c starts when a ends
    ((1, 1), (2, 3), (3, 3), ((1, 3),)), # c ends when b starts
    ((1, 2), (2, 2), (4, 4), ((1, 4),)), # a point c at a's end
    ((1, 1), (3, 3), (3, 3), ((1, 3),)), # a point c at b's start
    ((1, 1), (0, 2), (3, 3), ((1, 3),)), # c starts before a ends
    ((1, 1), (2, 2), (2, 3), ((1, 3),)), # a point c at b's start (b an interval)
    ((1, 1), (2, 3), (4, 5), ()),
    ((1, 2), (4, 4), (2, 3), ()),        # no a SEQ b at all (e1 == s2)
]
# fmt: on


def _orders(events: list[Event]) -> list[list[Event]]:
    """Every arrival order of ``events`` by end time (events ending together in any order)."""
    return [
        list(order)
        for order in permutations(events)
        if all(x.end <= y.end for x, y in zip(order, order[1:], strict=False))
    ]


def _detect(rules: str, stream: list[Event], policy: str, *, collect: bool) -> set[Interval]:
    max_span = max(e.end - e.start for e in stream) if collect else None
    engine = Engine(rules, policy=policy, max_span=max_span)
    found = []
    for event in stream:
        found += engine.push(event)
        if collect:
            engine.collect()
    assert all(d.name == "d" for d in found)
    return {(d.start, d.end) for d in found}


def _check(rules: str, events: list[Event], expected: tuple[Interval, ...]) -> None:
    assert {(d.start, d.end) for d in derive(load_rules(rules), events)} == set(expected)
    orders = _orders(events)
    assert orders  # the table's events can arrive in end order
    for policy in POLICIES:
        for order in orders:
            for collect in (False, True):
                found = _detect(rules, order, policy, collect=collect)
                assert found == set(expected), (policy, order, collect)


BINARY_CASES = [(op, *row) for op, rows in BINARY.items() for row in rows]


@pytest.mark.parametrize(("op", "a", "b", "expected"), BINARY_CASES)
def test_interval_operator_boundary(
    op: str, a: Interval, b: Interval, expected: tuple[Interval, ...]
) -> None:
    _check(f"d <- a {op} b.", [Event("a", (), *a), Event("b", (), *b)], expected)


@pytest.mark.parametrize(("a", "c", "b", "expected"), NEGATION)
def test_negation_boundary(
    a: Interval, c: Interval | None, b: Interval, expected: tuple[Interval, ...]
) -> None:
    events = [Event("a", (), *a), Event("b", (), *b)]
    if c is not None:
        events.append(Event("c", (), *c))
    _check("d <- NOT(c).[a, b].", events, expected)
