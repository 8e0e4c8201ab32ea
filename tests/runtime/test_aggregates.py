"""Aggregates: the incremental windows equal a brute-force recomputation (the reference
evaluator) at every detection, for random streams, functions and windows."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasoner.language.ast import (
    Aggregate,
    Atom,
    Binary,
    Compound,
    EventAtom,
    EventRule,
    Program,
    Var,
)
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.semantics.reference import derive

FUNCTIONS = ["count", "sum", "avg", "min", "max", "stddev"]
WINDOWS = st.one_of(
    st.none(),
    st.tuples(st.just("count"), st.integers(1, 4)),
    st.tuples(st.just("time"), st.integers(1, 5)),
)


def _function(name: str) -> Atom | Compound:
    return Atom("count") if name == "count" else Compound(name, (Var("V"),))


@st.composite
def programs(draw: st.DrawFn) -> Program:
    """One sliding and one started aggregate over reading(G, V)."""
    items = EventAtom("reading", (Var("G"), Var("V")))
    sliding = Aggregate(_function(draw(st.sampled_from(FUNCTIONS))), items, Var("R"), draw(WINDOWS))
    started = Binary(
        "seq",
        EventAtom("start", (Var("G"),)),
        Aggregate(_function(draw(st.sampled_from(FUNCTIONS))), items, Var("R"), draw(WINDOWS)),
    )
    return Program(
        (
            EventRule(EventAtom("slide", (Var("G"), Var("R"))), sliding),
            EventRule(EventAtom("since", (Var("G"), Var("R"))), started),
        )
    )


@st.composite
def streams(draw: st.DrawFn) -> list[Event]:
    """Readings at distinct times (so "the last N" has no ties) and a few starts."""
    times = sorted(draw(st.sets(st.integers(0, 14), max_size=10)))
    events = []
    for t in times:
        group = draw(st.sampled_from([1, 2]))
        if draw(st.integers(0, 3)) == 0:
            events.append(Event.at("start", (group,), t))
        else:
            events.append(Event.at("reading", (group, draw(st.integers(0, 9))), t))
    return events


def _rounded(events: set[Event]) -> set[tuple[object, ...]]:
    return {
        (e.name, tuple(round(a, 9) if isinstance(a, float) else a for a in e.args), e.start, e.end)
        for e in events
    }


def _detections(program: Program, stream: list[Event], until: int, collect: bool) -> set[Event]:
    engine = Engine(program, max_span=0 if collect else None)
    found: set[Event] = set()
    for item in stream:
        found.update(engine.push(item))
        if collect:
            engine.collect()
    found.update(engine.advance(until))
    return found


@settings(max_examples=400, deadline=None)
@given(programs(), streams(), st.booleans())
def test_aggregates_equal_brute_force(program: Program, stream: list[Event], collect: bool) -> None:
    until = 20
    expected = derive(program, stream, until=until)
    assert _rounded(_detections(program, stream, until, collect)) == _rounded(expected)


def test_a_time_window_reports_when_a_reading_leaves_without_new_input() -> None:
    engine = Engine("load(G, N) <- aggregate(count, job(G, _J), N, time(10)).")
    assert engine.push(Event.at("job", ("a", 1), 0)) == [Event("load", ("a", 1), 0, 0)]
    assert engine.push(Event.at("job", ("a", 2), 4)) == [Event("load", ("a", 2), 0, 4)]
    assert engine.advance(9) == []
    # the first job leaves at 10, the second at 14: the count drops with no job arriving
    assert engine.advance(20) == [Event("load", ("a", 1), 4, 10), Event("load", ("a", 0), 14, 14)]


def test_filters_on_the_aggregate_and_on_its_inputs() -> None:
    rules = "hot(S, A) <- aggregate(avg(T), (temp(S, T) WHERE T > 0), A, count(3)) WHERE A > 40."
    engine = Engine(rules)
    found = []
    for t, (station, value) in enumerate([("x", 30), ("x", 50), ("x", -100), ("x", 60)]):
        found += engine.push(Event.at("temp", (station, value), t))
    # inputs below zero are ignored; avg(30, 50) = 40 is not above 40, avg(30, 50, 60) is
    assert [(e.args, e.start, e.end) for e in found] == [(("x", pytest.approx(140 / 3)), 0, 3)]


def test_window_sizes_do_not_change_the_work_per_event() -> None:
    # A count window of 10,000 keeps the last 9,999 values and updates in O(1): the state
    # is the window, not a history.
    engine = Engine("s(T) <- aggregate(sum(V), v(V), T, count(10000)).")
    for t in range(20_000):
        (last,) = engine.push(Event.at("v", (1,), t))
    assert last.args == (10_000,)
    assert engine.stored() == 10_000
