"""ETALIS's alarms: ``exceptionAlarm(h, D) <- p`` and ``exceptionAlarmAbsoluteDatime(h, T) <- p``
derive ``h`` later, when the stream's clock (event time) reaches the alarm's time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from connectors.cli import main
from reasoner.errors import EngineError, EventError
from reasoner.language.loader import load_rules
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.runtime.explain import explain, to_json
from reasoner.runtime.order import event_order
from reasoner.runtime.parallel import ParallelEngine
from reasoner.semantics.reference import derive
from reasoner.semantics.whynot import why_not

RULES = """
exceptionAlarm(b(X), 1) <- a(X).
exceptionAlarmAbsoluteDatime(c(X), T) <- a(X) WHERE (current_datime(N), datime_plus_sec(N, 2, T)).
"""


def test_a_relative_alarm_rings_its_delay_after_the_detection() -> None:
    engine = Engine(RULES)
    assert engine.push(Event.at("a", (1,), 10)) == []
    assert engine.next_timer == 11
    assert engine.push(Event.at("x", (), 10.5)) == []
    assert engine.advance(11) == [Event("b", (1,), 10, 11)]
    assert engine.advance(12) == [Event("c", (1,), 10, 12)]
    assert engine.next_timer is None  # rung alarms are gone
    assert engine.stats().detections == 2


def test_a_ringing_alarm_derives_as_a_head_does() -> None:
    engine = Engine("exceptionAlarm(b, 1) <- a(X).\nafter_b <- b SEQ x.")
    told: list[Event] = []
    engine.on("b", told.append)
    engine.push(Event.at("a", (1,), 10))
    engine.push(Event.at("a", (2,), 10))  # the same b [10, 11]: one detection, one duplicate
    assert engine.advance(11) == [Event("b", (), 10, 11)]
    assert told == [Event("b", (), 10, 11)]
    assert engine.stats().duplicates == 1
    assert engine.push(Event.at("x", (), 12)) == [Event("after_b", (), 10, 12)]


def test_an_alarm_rings_before_the_events_of_its_time() -> None:
    engine = Engine(
        "exceptionAlarm(b, 2) <- a.\nwith_x <- b AND x.\nafter_b <- b SEQ x.\n"
        "exceptionAlarm(late, 1) <- b."
    )
    engine.push(Event.at("a", (), 1))
    # x at 3: the alarm at 3 rings first, so b [1, 3] and x [3, 3] happened together.
    assert engine.push(Event.at("x", (), 3)) == [
        Event("b", (), 1, 3),
        Event("with_x", (), 1, 3),
    ]
    # An alarm's event starts alarms of its own (the start is kept: [1, 4]).
    assert engine.push(Event.at("x", (), 5)) == [
        Event("late", (), 1, 4),
        Event("with_x", (), 1, 5),
        Event("after_b", (), 1, 5),
    ]


def test_alarms_whose_time_has_passed_or_is_no_number_never_ring() -> None:
    engine = Engine(
        "exceptionAlarmAbsoluteDatime(b(T), T) <- a(T).\n"  # an absolute time already past
        "exceptionAlarm(c(D), D) <- a(D).\n"  # a delay from the event: 0 or less, or an atom
    )
    for time, value in ((5, 3), (6, 0), (7, -1), (8, "soon")):
        engine.push(Event.at("a", (value,), time))
    assert engine.next_timer is None
    assert engine.advance(100) == []
    engine.push(Event.at("a", (150,), 120))  # in the future: both ring
    assert engine.next_timer == 150
    assert engine.advance(300) == [Event("b", (150,), 120, 150), Event("c", (150,), 120, 270)]


def test_a_pending_alarm_survives_a_snapshot() -> None:
    engine = Engine(RULES, provenance=True)
    trigger = Event.at("a", (7,), 1)
    engine.push(trigger)
    data = engine.snapshot()
    restored = Engine(RULES, provenance=True)
    restored.restore(data)
    assert restored.next_timer == 2
    rung = restored.advance(3)
    assert rung == [Event("b", (7,), 1, 2), Event("c", (7,), 1, 3)]
    assert [d.sources for d in rung] == [(trigger,), (trigger,)]  # type: ignore[attr-defined]
    assert engine.advance(3) == rung
    assert restored.snapshot() == engine.snapshot()


def test_removing_an_alarm_rule_drops_its_pending_alarms() -> None:
    engine = Engine("r1 'rule:' exceptionAlarm(b, 5) <- a.\nexceptionAlarm(c, 5) <- a.")
    engine.push(Event.at("a", (), 1))
    engine.remove_rules("r1")
    assert engine.advance(10) == [Event("c", (), 1, 6)]


def test_a_pending_alarm_keeps_the_partners_its_event_can_still_meet() -> None:
    # With instantaneous inputs (max_span=0) the engine frees goals no later input can
    # complete; b [1, 3] from the alarm starts before x [2, 2], so x must be kept.
    engine = Engine("exceptionAlarm(b, 2) <- a.\nc <- x DURING b.", max_span=0)
    engine.push(Event.at("a", (), 1))
    engine.push(Event.at("x", (), 2))
    engine.collect()
    assert engine.stored() == 1
    assert engine.advance(3) == [Event("b", (), 1, 3), Event("c", (), 1, 3)]


def test_the_engine_agrees_with_the_reference_evaluator() -> None:
    rules = RULES + "d(X) <- b(X) SEQ c(X).\ne(X) <- a(X) SEQ b(X).\n"
    rules += "exceptionAlarm(f(X), 3) <- e(X)."
    stream = [Event.at("a", (i % 3,), t) for i, t in enumerate((1, 1.5, 4, 4.2, 9, 9.5, 10))]
    engine = Engine(rules)
    found = [d for event in stream for d in engine.push(event)] + engine.advance(20)
    assert sorted(found) == sorted(derive(load_rules(rules), stream, until=20))
    # 7 b and 7 c; d and e: 5 pairs of a(X) at t < t' (X = 0: 3, X = 1: 1, X = 2: 1); f: 5
    assert len(found) == len(set(found)) == 7 + 7 + 5 + 5 + 5


def test_reasoner_run_until_moves_the_clock_at_the_end(tmp_path: Path) -> None:
    rules, events = tmp_path / "alarm.event", tmp_path / "events.jsonl"
    rules.write_text(RULES, encoding="utf-8")
    events.write_text('{"name": "a", "args": [1], "time": 10}\n', encoding="utf-8")
    found = []
    for until in ((), ("--until", "11.5"), ("--until", "12"), ("--until", "5")):
        out = tmp_path / "out.jsonl"
        assert main(["run", str(rules), "--events", str(events), "--output", str(out), *until]) == 0
        found.append([json.loads(line) for line in out.read_text().splitlines()])
    b = {"name": "b", "args": [1], "start": 10, "end": 11}
    c = {"name": "c", "args": [1], "start": 10, "end": 12}
    assert found == [[], [b], [b, c], []]


@pytest.mark.parametrize("workers", [1, 2])
def test_parallel_workers_ring_the_alarms_of_their_keys(workers: int) -> None:
    # Keyed by X: each worker keeps its alarms; the clock moves on in every worker, so b(2)
    # rings at 11.5 though no event of key 2 comes then.
    rules = "exceptionAlarm(b(X), 1) <- a(X).\nc(X) <- b(X) SEQ a(X)."
    stream = [Event.at("a", (k,), t) for k, t in ((1, 10), (2, 10.5), (1, 12), (2, 13))]
    expected = event_order(Engine(rules).run(stream))
    assert sorted(expected) == sorted(
        [
            Event("b", (1,), 10, 11),
            Event("b", (2,), 10.5, 11.5),
            Event("c", (1,), 10, 12),
            Event("b", (1,), 12, 13),
            Event("c", (2,), 10.5, 13),
        ]
    )
    with ParallelEngine(rules, workers=workers, batch=1) as engine:
        assert list(engine.run(stream)) == expected


def test_why_not_says_the_alarm_had_not_rung() -> None:
    program = load_rules("exceptionAlarm(b(X), 2) <- a(X).\nc(X) <- b(X) SEQ a(X).")
    stream = [Event.at("a", (1,), 10), Event.at("a", (1,), 11)]
    answer = why_not(program, stream, "b(1)")
    assert sorted(r.message for m in answer.near_misses for r in m.reasons) == [
        "its alarm rings at 12, after the stream's end (reasoner run --until moves the clock on)",
        "its alarm rings at 13, after the stream's end (reasoner run --until moves the clock on)",
    ]
    never = load_rules("exceptionAlarmAbsoluteDatime(b(T), T) <- a(T).")
    (miss,) = why_not(never, [Event.at("a", (5,), 9)], "b(5)").near_misses
    assert [r.kind for r in miss.reasons] == ["alarm"]
    assert (
        miss.reasons[0].message
        == "its alarm's time 5 is not later than the detection at 9: it never rings"
    )


def test_an_alarm_rule_is_shown_as_written() -> None:
    engine = Engine("exceptionAlarm(b(X), 1) <- a(X) WHERE X > 0.", explain=True)
    assert engine.network().splitlines()[-1] == "rule 0: exceptionAlarm(b(X), 1) <- n1"
    engine.push(Event.at("a", (1,), 10))
    (rung,) = engine.advance(11)
    shown = to_json(explain(rung))
    assert shown["rule"]["head"] == "exceptionAlarm(b(X), 1)"
    assert shown["from"] == [{"event": {"name": "a", "args": [1], "start": 10, "end": 10}}]


PARALLEL_RULES = "exceptionAlarm(b(X), 1) <- a(X).\nc(X) <- b(X) SEQ a(X).\ne <- b(1) AND b(2)."
PARALLEL_STREAM = [Event.at("a", (1,), 10), Event.at("a", (2,), 10.5)]


@pytest.mark.parametrize("workers", [1, 2])
def test_parallel_advance_rings_the_alarms_after_the_stream(workers: int) -> None:
    # b(1) rings at 11, b(2) at 11.5 (the stream ends at 10.5); e from the remainder at 11.5
    expected = [Event("b", (1,), 10, 11), Event("e", (), 10, 11.5), Event("b", (2,), 10.5, 11.5)]
    single = Engine(PARALLEL_RULES)
    found = [d for event in PARALLEL_STREAM for d in single.push(event)] + single.advance(20)
    assert event_order(found) == expected
    with ParallelEngine(PARALLEL_RULES, workers=workers, batch=1) as engine:
        assert [d for event in PARALLEL_STREAM for d in engine.push(event)] == []
        assert engine.flush() == []
        assert engine.advance(11.2) == [expected[0]]  # (what ends at 11.2 waits for flush)
        assert engine.now == 11.2
        assert engine.advance(20) + engine.flush() == expected[1:]
        with pytest.raises(EventError, match="cannot move the clock back from 20 to 19"):
            engine.advance(19)


def test_advance_waits_for_the_lateness_buffer() -> None:
    # Moving the clock past buffered events would leave them behind it, never processed.
    engine = Engine(PARALLEL_RULES, lateness=1)
    engine.push(PARALLEL_STREAM[0])
    with pytest.raises(EngineError, match="flush before advance"):
        engine.advance(20)
    assert engine.flush() == []
    assert engine.advance(20) == [Event("b", (1,), 10, 11)]


def test_parallel_advance_waits_for_the_lateness_buffer() -> None:
    with ParallelEngine(PARALLEL_RULES, workers=2, lateness=1) as engine:
        engine.push(PARALLEL_STREAM[0])
        with pytest.raises(EngineError, match="flush before advance"):
            engine.advance(20)
        assert engine.flush() == []
        assert engine.advance(20) + engine.flush() == [
            Event("b", (1,), 10, 11),
        ]


def test_reasoner_run_until_with_workers_writes_what_one_process_derives(tmp_path: Path) -> None:
    rules, events = tmp_path / "alarm.event", tmp_path / "events.jsonl"
    rules.write_text(PARALLEL_RULES, encoding="utf-8")
    events.write_text(
        '{"name": "a", "args": [1], "time": 10}\n{"name": "a", "args": [2], "time": 10.5}\n',
        encoding="utf-8",
    )
    written = []
    for workers in ((), ("--workers", "1"), ("--workers", "2")):
        out = tmp_path / "out.jsonl"
        argv = ["run", str(rules), "--events", str(events), "--output", str(out), *workers]
        assert main([*argv, "--until", "20"]) == 0
        written.append(out.read_bytes())
    b1 = {"name": "b", "args": [1], "start": 10, "end": 11}
    b2 = {"name": "b", "args": [2], "start": 10.5, "end": 11.5}
    e = {"name": "e", "args": [], "start": 10, "end": 11.5}
    # one process writes in derivation order, --workers in the defined order (end, start, ...)
    assert [json.loads(line) for line in written[0].decode().splitlines()] == [b1, b2, e]
    assert written[1] == written[2]
    assert [json.loads(line) for line in written[1].decode().splitlines()] == [b1, e, b2]
