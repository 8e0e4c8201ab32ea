"""Garbage-collection boundaries: a goal the engine frees early (knowing the longest input
span, a window, or that a NOT goal is blocked for good) must still be there for a partner at
the very edge of what can still come, typically one starting exactly at ``now - max_span``.

Each stream is pushed with a collection after every event; ``x`` is an event no rule reads,
which only moves time on. Expected detections are worked out by hand (and the reference
evaluator must agree).
"""

from __future__ import annotations

import pytest

from reasoner.language.loader import load_rules
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.semantics.reference import derive

POLICIES = ("unrestricted", "recent", "chronological")

# (rules, max_span, stream as (name, start, end), the detections as (name, start, end))
# fmt: off
CASES = [
    # STARTS keeps a while a b may still start with it: at 3 with max span 2, b starts >= 1.
    ("d <- a STARTS b.", 2, [("a", 1, 2), ("x", 3, 3), ("b", 1, 3)], [("d", 1, 3)]),
    # MEETS keeps a while a b may still start at its end: at 4, b starts >= 2.
    ("d <- a MEETS b.", 2, [("a", 1, 2), ("x", 4, 4), ("b", 2, 4)], [("d", 1, 4)]),
    # DURING keeps a while a b may still start before it: at 3, b starts >= 1 < 2.
    ("d <- a DURING b.", 2, [("a", 2, 2), ("x", 3, 3), ("b", 1, 3)], [("d", 1, 3)]),
    # PAR keeps either side while a partner may start before its end: at 4, >= 2 < 3.
    ("d <- a PAR b.", 2, [("a", 1, 3), ("x", 4, 4), ("b", 2, 4)], [("d", 1, 4)]),
    ("d <- a PAR b.", 2, [("b", 1, 3), ("x", 4, 4), ("a", 2, 4)], [("d", 1, 4)]),
    # max span 0: instantaneous inputs; a starting at 1 still starts a derived e at 1.
    ("e <- a SEQ b.\nd <- c STARTS e.", 0,
     [("c", 1, 1), ("a", 1, 1), ("x", 5, 5), ("b", 6, 6)], [("e", 1, 6), ("d", 1, 6)]),
    # A NOT goal is blocked for good only by a c ending before every future b's start:
    # at 5, b starts >= 3, and c ends at 3, which blocks nothing starting at 3.
    ("d <- NOT(c).[a, b].", 2,
     [("a", 1, 1), ("c", 2, 3), ("x", 5, 5), ("b", 3, 5)], [("d", 1, 5)]),
    ("d <- NOT(c).[a, b].", 2, [("a", 1, 1), ("c", 2, 2), ("x", 5, 5), ("b", 3, 5)], []),
    # A blocker starting just after the stored a's end must stay.
    ("d <- NOT(c).[a, b].", None, [("a", 1, 1), ("c", 2, 2), ("x", 3, 3), ("b", 4, 4)], []),
    ("d <- NOT(c).[a, b].", 0, [("a", 1, 1), ("c", 2, 2), ("x", 3, 3), ("b", 4, 4)], []),
    # A window of 3 keeps what starts exactly 3 before now, and no longer.
    ("d <- (a SEQ b).3.", None, [("a", 1, 1), ("x", 3, 3), ("b", 4, 4)], [("d", 1, 4)]),
    ("d <- (a SEQ b).3.", None, [("a", 1, 1), ("x", 4, 4), ("b", 5, 5)], []),
    ("d <- (a PAR b).3.", 3, [("a", 1, 2), ("x", 4, 4), ("b", 1, 4)], [("d", 1, 4)]),
    ("d <- ((a SEQ b).2 SEQ c).4.", None,
     [("a", 1, 1), ("b", 3, 3), ("x", 4, 4), ("c", 5, 5)], [("d", 1, 5)]),
]
# fmt: on


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(("rules", "max_span", "stream", "expected"), CASES)
def test_collection_keeps_what_a_partner_at_the_edge_needs(
    rules: str,
    max_span: int | None,
    stream: list[tuple[str, int, int]],
    expected: list[tuple[str, int, int]],
    policy: str,
) -> None:
    events = [Event(name, (), start, end) for name, start, end in stream]
    reference = derive(load_rules(rules), events)
    assert {(d.name, d.start, d.end) for d in reference} == set(expected)
    engine = Engine(rules, policy=policy, max_span=max_span)
    found = []
    for event in events:
        found += engine.push(event)
        engine.collect()
    assert sorted((d.name, d.start, d.end) for d in found) == sorted(expected)
