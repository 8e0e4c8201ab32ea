"""Engine snapshots: restoring at any point continues exactly as if nothing happened; bad
snapshots are refused with a clear error and change nothing."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from strategies import programs, streams
from test_aggregates import programs as aggregate_programs
from test_aggregates import streams as aggregate_streams

from reasoner.errors import RuleCompileError, SnapshotError
from reasoner.language.ast import Program
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event

POLICIES = ("unrestricted", "recent", "chronological")


def _run(engine: Engine, stream: list[Event]) -> list[tuple[Event, tuple[Event, ...]]]:
    out = []
    for item in stream:
        out.extend((d, d.sources) for d in engine.push(item))
    out.extend((d, d.sources) for d in engine.advance(30))
    return out


def _check_restore(program: Program, stream: list[Event], cut: int, options: dict) -> None:
    try:
        whole = _run(Engine(program, **options), stream)
    except RuleCompileError:
        reject()
    first = Engine(program, **options)
    before = []
    for item in stream[:cut]:
        before.extend((d, d.sources) for d in first.push(item))
    data = first.snapshot()
    second = Engine(program, **options)
    second.restore(data)
    assert second.stats() == first.stats()
    assert second.snapshot() == data
    assert before + _run(second, stream[cut:]) == whole


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    programs(),
    streams(),
    st.integers(0, 9),
    st.sampled_from(POLICIES),
    st.booleans(),
    st.booleans(),
)
def test_restore_at_any_point_gives_the_same_detections(
    program: Program,
    stream: list[Event],
    cut: int,
    policy: str,
    provenance: bool,
    bounded: bool,
) -> None:
    max_span = max((e.end - e.start for e in stream), default=0) if bounded else None
    options = {"policy": policy, "provenance": provenance, "max_span": max_span}
    _check_restore(program, stream, min(cut, len(stream)), options)


@settings(max_examples=100, deadline=None)
@given(aggregate_programs(), aggregate_streams(), st.integers(0, 10), st.sampled_from(POLICIES))
def test_restore_keeps_aggregate_windows_and_timers(
    program: Program, stream: list[Event], cut: int, policy: str
) -> None:
    _check_restore(program, stream, min(cut, len(stream)), {"policy": policy})


def test_restore_keeps_the_lateness_buffer() -> None:
    rules = "c(X) <- a(X) SEQ b(X)."
    first = Engine(rules, lateness=5)
    assert first.push(Event.at("b", (1,), 4)) == []
    assert first.push(Event.at("a", (1,), 2)) == []
    second = Engine(rules, lateness=5)
    second.restore(first.snapshot())
    assert second.push(Event.at("z", (), 20)) == [Event("c", (1,), 2, 4)]


def test_values_of_every_kind_survive() -> None:
    from fractions import Fraction

    from reasoner.values import IRI, Struct

    rules = "c(X, Y) <- a(X) SEQ b(Y)."
    first = Engine(rules)
    value = (IRI("http://x"), Struct("f", (1, ("l", 2.5))), Fraction(1, 3), True, None, "s")
    first.push(Event("a", (value,), 1, 1))
    second = Engine(rules)
    second.restore(first.snapshot())
    assert second.push(Event.at("b", (float("inf"),), 2)) == [
        Event("c", (value, float("inf")), 1, 2)
    ]


def _stored_snapshot() -> tuple[str, bytes]:
    rules = "c(X) <- a(X) SEQ b(X)."
    engine = Engine(rules)
    engine.push(Event.at("a", (1,), 1))
    return rules, engine.snapshot()


def test_other_program_is_refused_and_nothing_changes() -> None:
    _, data = _stored_snapshot()
    other = Engine("c(X) <- a(X) AND b(X).")
    other.push(Event.at("a", (7,), 1))
    with pytest.raises(SnapshotError, match="another program"):
        other.restore(data)
    assert other.push(Event.at("b", (7,), 2)) == [Event("c", (7,), 1, 2)]


def test_other_options_are_refused() -> None:
    rules, data = _stored_snapshot()
    with pytest.raises(SnapshotError, match="other engine options"):
        Engine(rules, policy="recent").restore(data)


@pytest.mark.parametrize(
    ("mangle", "message"),
    [
        (lambda d: d[: len(d) - 7], "corrupt or truncated"),
        (lambda d: d.replace(b'"events_in":1', b'"events_in":2'), "corrupt or truncated"),
        (lambda d: d.replace(b"reasoner-snapshot 1 ", b"reasoner-snapshot 2 "), "version 2"),
        (lambda d: b"\x80\x04garbage", "not an engine snapshot"),
        (lambda d: b"", "not an engine snapshot"),
    ],
)
def test_bad_snapshots_are_refused(mangle: object, message: str) -> None:
    rules, data = _stored_snapshot()
    engine = Engine(rules)
    with pytest.raises(SnapshotError, match=message):
        engine.restore(mangle(data))  # type: ignore[operator]
    assert engine.stats().stored == 0


def test_the_format_is_plain_json_after_a_header() -> None:
    _, data = _stored_snapshot()
    header, body = data.split(b"\n", 1)
    assert header.split()[:2] == [b"reasoner-snapshot", b"1"]
    state = json.loads(body)
    assert state["now"] == 1 and state["counts"]["events_in"] == 1
    [join] = [n for n in state["nodes"] if n and "left" in n]
    assert join["left"] == [[1, [[["t", 1], 1, 1, None]]]]
