"""Engine snapshots: restoring at any point continues exactly as if nothing happened; bad
snapshots are refused with a clear error and change nothing."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from strategies import programs, streams
from test_aggregates import programs as aggregate_programs
from test_aggregates import streams as aggregate_streams

from reasoner.errors import RuleCompileError, SnapshotError
from reasoner.language.ast import Program
from reasoner.runtime.checkpoint import encode
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Detection, Event
from reasoner.runtime.explain import explain, to_json

POLICIES = ("unrestricted", "recent", "chronological")


def _seen(d: Event) -> tuple[Any, ...]:
    """A detection, its sources and, from an explaining engine, its explanation."""
    return (
        d,
        d.sources,
        to_json(explain(d)) if isinstance(d, Detection) and d.derivation else None,
    )


def _run(engine: Engine, stream: list[Event]) -> list[tuple[Any, ...]]:
    out = []
    for item in stream:
        out.extend(map(_seen, engine.push(item)))
    out.extend(map(_seen, engine.advance(30)))
    return out


def _check_restore(program: Program, stream: list[Event], cut: int, options: dict) -> None:
    try:
        whole = _run(Engine(program, **options), stream)
    except RuleCompileError:
        reject()
    first = Engine(program, **options)
    before = []
    for item in stream[:cut]:
        before.extend(map(_seen, first.push(item)))
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
    st.sampled_from(("", "provenance", "explain")),
    st.booleans(),
)
def test_restore_at_any_point_gives_the_same_detections(
    program: Program,
    stream: list[Event],
    cut: int,
    policy: str,
    record: str,
    bounded: bool,
) -> None:
    # (with explain, the explanations too: the derivations of stored events are kept)
    max_span = max((e.end - e.start for e in stream), default=0) if bounded else None
    options = {"policy": policy, "max_span": max_span, **({record: True} if record else {})}
    _check_restore(program, stream, min(cut, len(stream)), options)


@settings(max_examples=100, deadline=None)
@given(aggregate_programs(), aggregate_streams(), st.integers(0, 10), st.sampled_from(POLICIES))
def test_restore_keeps_aggregate_windows_and_timers(
    program: Program, stream: list[Event], cut: int, policy: str
) -> None:
    _check_restore(program, stream, min(cut, len(stream)), {"policy": policy})


def test_explanations_after_a_restore_are_those_of_an_uninterrupted_run() -> None:
    rules = (
        "near(a, b). near(b, c).\n"
        "warn(X, Y) <- alarm(X) WHERE near(X, Y).\n"
        "pair(X, Z) <- warn(X, Y) SEQ warn(Y, Z).\n"
    )
    first = Engine(rules, explain=True)
    assert [d.name for d in first.push(Event.at("alarm", ("a",), 1))] == ["warn"]
    second = Engine(rules, explain=True)
    second.restore(first.snapshot())  # warn(a, b) is stored, with how it was derived
    pair = [d for d in second.push(Event.at("alarm", ("b",), 2)) if d.name == "pair"]
    near = {"fact": "near", "graph": "asserted", "rule": "<rules>:1"}  # (facts: the line)

    def warn(x: str, y: str, t: int) -> dict[str, Any]:
        alarm = {"name": "alarm", "args": [x], "start": t, "end": t}
        return {
            "event": {"name": "warn", "args": [x, y], "start": t, "end": t},
            "rule": {"head": "warn(X, Y)", "at": "<rules>:2:1"},
            "from": [{"event": alarm}],
            "where": [
                {
                    "goal": "near(X, Y)",
                    "at": "<rules>:2:30",
                    "values": {"X": x, "Y": y},
                    "facts": [{**near, "args": [x, y]}],
                }
            ],
        }

    assert [to_json(explain(d)) for d in pair] == [
        {
            "event": {"name": "pair", "args": ["a", "c"], "start": 1, "end": 2},
            "rule": {"head": "pair(X, Z)", "at": "<rules>:3:1"},
            "from": [warn("a", "b", 1), warn("b", "c", 2)],
            "where": [],
        }
    ]


def test_explain_counts_in_the_fingerprint_only_when_on() -> None:
    # Snapshots of engines without explain read as before the option existed (the fingerprint
    # is the network and the other options); an explaining engine takes only its own kind.
    rules = "c(X) <- a(X) SEQ b(X)."
    plain, explaining = Engine(rules, provenance=True), Engine(rules, explain=True)
    options = {"policy": "unrestricted", "tie_break": "longer", "max_derivations": 100_000,
               "lateness": 0, "max_span": None, "provenance": True}  # fmt: skip
    text = plain.network() + "\n" + json.dumps(options, sort_keys=True)
    before = hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert json.loads(plain.snapshot().partition(b"\n")[2])["fingerprint"] == before
    with pytest.raises(SnapshotError, match="provenance or explain differ"):
        explaining.restore(plain.snapshot())
    with pytest.raises(SnapshotError, match="provenance or explain differ"):
        plain.restore(explaining.snapshot())


def test_snapshots_of_a_program_with_many_facts_do_not_write_them_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No action changed the static rules: the fingerprint compares them without writing
    # them out (snapshots and restores cost nothing per fact); its value is unchanged.
    from reasoner.runtime import checkpoint

    dumped: list[object] = []
    write = checkpoint.dump
    monkeypatch.setattr(checkpoint, "dump", lambda node: dumped.append(node) or write(node))
    facts = "".join(f"near(s{i}, s{i + 1}).\n" for i in range(2000))
    engine = Engine("warn(X, Y) <- alarm(X) WHERE near(X, Y).\n" + facts)
    other = Engine("warn(X, Y) <- alarm(X) WHERE near(X, Y).\n" + facts)
    for t in range(1, 4):
        assert engine.push(Event.at("alarm", (f"s{t}",), t)) == [
            Event("warn", (f"s{t}", f"s{t + 1}"), t, t)
        ]
        other.restore(engine.snapshot())
    assert dumped == []
    options = {"policy": "unrestricted", "tie_break": "longer", "max_derivations": 100_000,
               "lateness": 0, "max_span": None, "provenance": False}  # fmt: skip
    text = engine.network() + "\n" + json.dumps(options, sort_keys=True)
    before = hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert json.loads(engine.snapshot().partition(b"\n")[2])["fingerprint"] == before


def test_the_events_of_the_current_time_point_are_written_in_json_text_order() -> None:
    # The order the format always had: by each event's json.dumps text (strings below '"'
    # and numbers sort as text), the body json.dumps's compact text of the whole state.
    engine = Engine("c(X) <- a(X) SEQ b(X).")
    args = ["a!", "a", "a, b", 9, 10, -1, 1.5, 1e20, ("t", 2), ("t",), True, None, "\u00e9"]
    for arg in args:
        engine.push(Event.at("a", (arg,), 5))
    engine.push(Event.at("b", ("x",), 5))
    engine.push(Event.at("a!", (1,), 5))
    body = engine.snapshot().partition(b"\n")[2]
    state = json.loads(body)
    events = [*(Event.at("a", (arg,), 5) for arg in args), Event.at("b", ("x",), 5)]
    events.append(Event.at("a!", (1,), 5))
    assert state["seen"] == sorted((encode(e) for e in events), key=json.dumps)
    assert body == json.dumps(state, separators=(",", ":")).encode("utf-8")


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
