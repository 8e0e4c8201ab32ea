"""The engine's API: bad input is rejected and changes nothing, time points, heartbeats,
rules added while running, callbacks, status and statistics."""

from __future__ import annotations

from fractions import Fraction

import pytest

from reasoner.errors import EngineError, EventError, RuleCompileError
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event


def names(events: list[Event]) -> list[tuple[str, tuple[object, ...], object, object]]:
    return [(e.name, e.args, e.start, e.end) for e in events]


def test_a_late_event_is_rejected_with_its_reason_and_changes_nothing() -> None:
    engine = Engine("c(X) <- a(X) SEQ b(X).")
    engine.push(Event.at("a", (1,), 5))
    before = engine.stats()
    with pytest.raises(EventError, match="late: ends at 3, before the current time 5"):
        engine.push(Event.at("a", (1,), 3))
    assert engine.stats().stored == before.stored
    assert engine.stats().rejected == 1
    assert names(engine.push(Event.at("b", (1,), 6))) == [("c", (1,), 5, 6)]


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        (Event.at("a", (1, 2), 1), "a takes 1 argument"),
        (Event("a", (1,), 3, 2), "start 3 is after end 2"),
        (Event.at("a", (1,), -1), "non-negative"),
        (Event.at("a", (1,), "noon"), "non-negative numbers"),  # type: ignore[arg-type]
    ],
)
def test_malformed_events_are_rejected(event: Event, reason: str) -> None:
    engine = Engine("c(X) <- a(X) SEQ b(X).")
    with pytest.raises(EventError, match=reason):
        engine.push(event)
    assert engine.stats().events_in == 0


def test_identical_inputs_count_once_and_each_detection_is_reported_once() -> None:
    engine = Engine("c <- a AND b.\nc <- b AND a.")
    engine.push(Event.at("a", (), 1))
    assert engine.push(Event.at("a", (), 1)) == []
    assert names(engine.push(Event.at("b", (), 2))) == [("c", (), 1, 2)]


def test_time_points_fire_when_the_stream_reaches_them() -> None:
    engine = Engine("alarm <- 5. late(X) <- a(X) DURING (2 SEQ 6).")
    engine.push(Event.at("a", (1,), 3))
    assert engine.advance(4) == []
    assert names(engine.advance(5)) == [("alarm", (), 5, 5)]
    assert names(engine.push(Event.at("b", (), 7))) == [("late", (1,), 2, 6)]


def test_exact_fractions_are_times() -> None:
    engine = Engine("c <- a SEQ b.")
    engine.push(Event.at("a", (), Fraction(1, 3)))
    assert names(engine.push(Event.at("b", (), Fraction(1, 2)))) == [
        ("c", (), Fraction(1, 3), Fraction(1, 2))
    ]


def test_rules_added_while_running_keep_the_existing_state() -> None:
    engine = Engine("c <- a SEQ b.")
    engine.push(Event.at("a", (), 1))
    engine.add_rules("d <- b SEQ e.")
    assert names(engine.push(Event.at("b", (), 2))) == [("c", (), 1, 2)]
    assert names(engine.push(Event.at("e", (), 3))) == [("d", (), 2, 3)]


def test_callbacks_status_and_stats() -> None:
    engine = Engine("c(X) <- a(X) SEQ b(X).")
    seen: list[Event] = []
    engine.on("c", seen.append)
    engine.push(Event.at("a", (1,), 1))
    engine.push(Event.at("a", (2,), 2))
    assert engine.status() == [{"rule": 0, "head": "c", "waiting": {"n2": 2}}]
    engine.push(Event.at("b", (2,), 3))
    assert names(seen) == [("c", (2,), 2, 3)]
    stats = engine.stats()
    assert (stats.events_in, stats.detections, stats.stored) == (3, 1, 2)


def test_arithmetic_in_heads_and_where() -> None:
    engine = Engine("income(P1 + P2) <- income(P1) SEQ sell(P2).\nincome(P) <- sell(P).")
    engine.push(Event.at("sell", (10,), 1))
    found = engine.push(Event.at("sell", (5,), 2))
    assert sorted(names(found)) == [("income", (5,), 2, 2), ("income", (15,), 1, 2)]


def test_runaway_recursion_names_the_rule() -> None:
    engine = Engine("r 'rule:' n(X + 1) <- n(X) AND tick.\nn(0) <- tick.", max_derivations=50)
    with pytest.raises(EngineError, match="runaway recursion.*by r"):
        engine.push(Event.at("tick", (), 1))


def test_unknown_policy_is_a_compile_error() -> None:
    with pytest.raises(RuleCompileError, match="unknown consumption policy 'newest'"):
        Engine("c <- a SEQ b.", policy="newest")


def test_static_facts_answer_where_and_event_multiply() -> None:
    engine = Engine(
        "b(Y) <- a(X) EVENT_MULTIPLY p(X, Y).\n"
        "big(X) <- a(X) WHERE \\+ small(X).\n"
        "p(1, 2). p(1, 3). small(1)."
    )
    assert sorted(names(engine.push(Event.at("a", (1,), 1)))) == [
        ("b", (2,), 1, 1),
        ("b", (3,), 1, 1),
    ]
    assert names(engine.push(Event.at("a", (7,), 2))) == [("big", (7,), 2, 2)]


def test_a_lateness_bound_reorders_events_within_it() -> None:
    engine = Engine("c <- a SEQ b.", lateness=5)
    assert engine.push(Event.at("b", (), 4)) == []
    assert engine.push(Event.at("a", (), 2)) == []  # out of order, within the bound
    assert names(engine.push(Event.at("x", (), 9))) == [("c", (), 2, 4)]  # 2 and 4 released
    with pytest.raises(EventError, match="beyond the lateness bound 5"):
        engine.push(Event.at("a", (), 1))
    engine.push(Event.at("a", (), 10))
    assert names(engine.push(Event.at("b", (), 11))) == []  # still buffered
    assert names(engine.flush()) == [("c", (), 2, 11), ("c", (), 10, 11)]


def test_where_conjuncts_sharing_a_local_variable_are_tested_together() -> None:
    # f(X, _Y) finds the _Y that _Y > 1 tests: the two conjuncts must not be split apart.
    engine = Engine("f(1, 5). f(2, 0). c(X) <- a(X) WHERE (f(X, _Y), _Y > 1).")
    assert engine.push(Event.at("a", (1,), 1)) == [Event("c", (1,), 1, 1)]
    assert engine.push(Event.at("a", (2,), 2)) == []
