"""ETALIS's ``p1 FORALL_SEQ p2``: each p2 combines with every p1 before it that no earlier p2
took, and takes them all, under every policy."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasoner.errors import RuleCompileError
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


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("order", [(1, 2), (2, 1)])
def test_seconds_ending_together_all_take_the_firsts(policy: str, order: tuple[int, int]) -> None:
    # b(1) and b(2) end at 2, in either order: each takes c@0 and c@1 (not c@2, which ends
    # with them); b(3) at 3 finds only c@2 left.
    stream = [
        Event.at("c", (7,), 0),
        Event.at("c", (8,), 1),
        *(Event.at("b", (x,), 2) for x in order),
        Event.at("c", (9,), 2),
        Event.at("b", (3,), 3),
    ]
    rules = "d(X, Y) <- c(Y) FORALL_SEQ b(X)."
    expected = [
        Event("d", (1, 7), 0, 2),
        Event("d", (1, 8), 1, 2),
        Event("d", (2, 7), 0, 2),
        Event("d", (2, 8), 1, 2),
        Event("d", (3, 9), 2, 3),
    ]
    assert sorted(_detect(rules, stream, policy)) == expected
    assert sorted(run(load_rules(rules), stream, policy=policy)) == expected


def test_what_one_end_time_took_is_not_shared_with_another_at_the_same_moment() -> None:
    # e(9) [1, 3] completes at time point 3, which the stream reaches with b(5) at 4: both are
    # processed at one moment, but e took a(1) at 3, before b ends, so b takes a(2) alone.
    rules = "d(X) <- a(Y) FORALL_SEQ (b(X) OR e(X)). e(9) <- c SEQ 3."
    stream = [Event.at("a", (1,), 0), Event.at("c", (), 1), Event.at("a", (2,), 2)]
    stream.append(Event.at("b", (5,), 4))
    found = [d for d in _detect(rules, stream) if d.name == "d"]
    assert found == [Event("d", (9,), 0, 3), Event("d", (5,), 2, 4)]
    assert set(found) == {d for d in derive(load_rules(rules), stream) if d.name == "d"}


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


def test_recursion_through_the_second_operand_is_refused_at_load_time(tmp_path: Path) -> None:
    # Whether a pair holds depends on the second operand's earlier occurrences, as a negation
    # does: d may not be read there through e.
    rules = tmp_path / "loop.event"
    rules.write_text("d(X) <- a(X) FORALL_SEQ e(X).\ne(X) <- b(X) OR (d(X) SEQ c(X)).\n")
    with pytest.raises(RuleCompileError) as info:
        Engine(rules)
    assert str(info.value).splitlines() == [
        f"{rules}:1:1: FORALL_SEQ's second operand through recursion: d -> e -> d",
        "    d(X) <- a(X) FORALL_SEQ e(X).",
        "    ^",
    ]


def test_recursion_through_the_first_operand_is_allowed() -> None:
    # a d ending before a b waits for it: b takes every waiting one, those of d included
    rules = "d(X) <- (a(X) OR d(X)) FORALL_SEQ b(X)."
    stream = [Event.at("a", (1,), 1), Event.at("b", (1,), 2), Event.at("b", (1,), 3)]
    expected = [Event("d", (1,), 1, 2), Event("d", (1,), 1, 3)]
    assert _detect(rules, stream) == expected
    assert derive(load_rules(rules), stream) == set(expected)


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("unrestricted", [(1, 4), (1, 5), (2, 4), (2, 5)]),
        # c@4 takes the oldest pair, c@5 the other one
        ("chronological", [(1, 4), (2, 5)]),
        # both pairs end at 3: the longer one is the latest, and stays so
        ("recent", [(1, 4), (1, 5)]),
    ],
)
def test_the_policy_applies_around_it(policy: str, expected: list[tuple[int, int]]) -> None:
    # a(1)@1 and a(1)@2 both pair with b(1)@3 (under every policy): [1, 3] and [2, 3]; the
    # rule's policy decides which of them each c(1) after them combines with.
    rules = "i(X) <- (a(X) FORALL_SEQ b(X)) SEQ c(X)."
    stream = [Event.at(n, (1,), t) for n, t in [("a", 1), ("a", 2), ("b", 3), ("c", 4), ("c", 5)]]
    expected_events = [Event("i", (1,), s, e) for s, e in expected]
    assert sorted(_detect(rules, stream, policy)) == expected_events
    assert sorted(run(load_rules(rules), stream, policy=policy)) == expected_events


RULES = """
d(X) <- a(X) FORALL_SEQ b(X).
e(X) <- (a(X) SEQ c(X)) FORALL_SEQ b(X).
f <- (a(1) FORALL_SEQ b(Y)).3.
g(X) <- a(X) FORALL_SEQ (b(X) OR c(X)).
h(X, Y) <- a(Y) FORALL_SEQ b(X).
i(X) <- (a(X) FORALL_SEQ b(X)) SEQ c(X).
j(X) <- c(X) SEQ (a(X) FORALL_SEQ b(Y)).
k(X) <- (a(X) FORALL_SEQ b(Y)) AND c(Y).
l(X) <- d(X) SEQ h(X, Y).
m(Y) <- (a(X) FORALL_SEQ b(Y)) WHERE X < Y.
"""


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from(POLICIES),
    st.lists(
        st.tuples(st.sampled_from("abc"), st.integers(1, 2), st.integers(0, 2), st.integers(0, 1)),
        max_size=14,
    ),
)
def test_the_engine_equals_the_references(
    policy: str, items: list[tuple[str, int, int, int]]
) -> None:
    # time steps of 0 to 2: events end together (ties) or leave a gap; some last 1
    stream, time = [], 0
    for name, key, step, length in items:
        time += step
        stream.append(Event(name, (key,), max(time - length, 0), time))
    program = load_rules(RULES)
    found = _detect(RULES, stream, policy)
    assert len(found) == len(set(found))
    assert set(found) == set(run(program, stream, policy=policy))
    if policy == "unrestricted":
        assert set(found) == derive(program, stream)
