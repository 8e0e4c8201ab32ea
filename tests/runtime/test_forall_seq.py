"""ETALIS's ``p1 FORALL_SEQ p2``: each p2 combines with every p1 before it that no earlier p2
took, and takes them all, under every policy."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasoner.errors import EngineError
from reasoner.language.loader import load_rules
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.semantics.operational import run
from reasoner.semantics.reference import derive

POLICIES = ("unrestricted", "recent", "chronological")


def _detect(rules: str, stream: list[Event], policy: str = "unrestricted") -> list[Event]:
    engine = Engine(rules, policy=policy)
    return [d for event in stream for d in engine.push(event)]


@pytest.mark.parametrize("policy", POLICIES)
def test_each_second_takes_every_first_not_taken_yet(policy: str) -> None:
    stream = [
        Event.at("a", (1,), 1),
        Event.at("a", (1,), 2),
        Event.at("a", (2,), 3),  # another key: left for b(2)
        Event.at("b", (1,), 4),  # takes a(1)@1 and a(1)@2
        Event.at("b", (1,), 5),  # nothing left
        Event.at("a", (1,), 6),
        Event.at("b", (2,), 7),
        Event.at("b", (1,), 8),
    ]
    assert _detect("d(X) <- a(X) FORALL_SEQ b(X).", stream, policy) == [
        Event("d", (1,), 1, 4),
        Event("d", (1,), 2, 4),
        Event("d", (2,), 3, 7),
        Event("d", (1,), 6, 8),
    ]


def test_etalis_forall_seq_01() -> None:
    # ETALIS's examples/forall_seq_01: a(1), a(1), b(1) give d(1) twice (its default: recent).
    stream = [Event.at("a", (1,), 1), Event.at("a", (1,), 2), Event.at("b", (1,), 3)]
    found = _detect("d(X) <- a(X) 'forall_seq' b(X).", stream, "recent")
    assert found == [Event("d", (1,), 1, 3), Event("d", (1,), 2, 3)]


def test_the_rule_condition_is_checked_after_the_taking() -> None:
    # As in ETALIS, b(1, 5) takes both a's although the condition rejects both pairs.
    rules = "d(X, V) <- a(X, U) FORALL_SEQ b(X, V) WHERE V > U."
    stream = [
        Event.at("a", (1, 6), 1),
        Event.at("a", (1, 2), 2),
        Event.at("b", (1, 1), 3),
        Event.at("b", (1, 9), 4),
        Event.at("a", (1, 3), 5),
        Event.at("b", (1, 9), 6),
    ]
    assert _detect(rules, stream) == [Event("d", (1, 9), 5, 6)]


def test_it_survives_a_snapshot() -> None:
    rules = "d(X) <- a(X) FORALL_SEQ b(X)."
    engine = Engine(rules)
    engine.push(Event.at("a", (1,), 1))
    restored = Engine(rules)
    restored.restore(engine.snapshot())
    assert restored.push(Event.at("b", (1,), 2)) == [Event("d", (1,), 1, 2)]
    assert restored.push(Event.at("b", (1,), 3)) == []


def test_the_operational_reference_leaves_it_to_the_declarative_one() -> None:
    with pytest.raises(EngineError, match="does not cover FORALL_SEQ"):
        run(load_rules("d <- a FORALL_SEQ b."), [Event.at("a", (), 1)], policy="recent")


RULES = """
d(X) <- a(X) FORALL_SEQ b(X).
e(X) <- (a(X) SEQ c(X)) FORALL_SEQ b(X).
f <- (a(1) FORALL_SEQ b(Y)).3.
g(X) <- a(X) FORALL_SEQ (b(X) OR c(X)).
"""


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.integers(1, 2)), max_size=14))
def test_the_engine_equals_the_reference(items: list[tuple[str, int]]) -> None:
    # one event per time point: no two occurrences of the second operand end together
    stream = [Event.at(name, (key,), time) for time, (name, key) in enumerate(items, 1)]
    found = _detect(RULES, stream)
    assert len(found) == len(set(found))
    assert set(found) == derive(load_rules(RULES), stream)
