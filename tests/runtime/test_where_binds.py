"""WHERE conditions that bind variables the pattern leaves free (docs/language.md)."""

from __future__ import annotations

import pytest

from reasoner.errors import RuleCompileError
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.semantics.reference import derive

CREDIT = """
credit_status(1, good). credit_status(1, checked). credit_status(2, bad).
creditBid(Id, Price, Status) <- bid(Id, Price) WHERE credit_status(Id, Status).
"""


def _found(engine: Engine, events: list[Event]) -> list[tuple[object, ...]]:
    return [(d.name, *d.args, d.start, d.end) for e in events for d in engine.push(e)]


def test_a_knowledge_predicate_binds_one_occurrence_per_solution() -> None:
    bids = [Event.at("bid", (1, 5), 1), Event.at("bid", (2, 20), 2), Event.at("bid", (3, 7), 3)]
    assert _found(Engine(CREDIT), bids) == [
        ("creditBid", 1, 5, "good", 1, 1),
        ("creditBid", 1, 5, "checked", 1, 1),
        ("creditBid", 2, 20, "bad", 2, 2),
    ]


def test_bound_values_join_later_operators_and_tests_after_them() -> None:
    rules = """
    region(s1, north). region(s1, coast). region(s2, south).
    alert(S, R) <- reading(S, T) WHERE (region(S, R), T > 40).
    pair(X, Y) <- (a(X) WHERE Y is X + 1) SEQ b(Y).
    """
    stream = [
        Event.at("reading", ("s1", 45), 1),
        Event.at("reading", ("s2", 30), 2),
        Event.at("a", (1,), 3),
        Event.at("b", (3,), 4),
        Event.at("b", (2,), 5),
    ]
    assert _found(Engine(rules), stream) == [
        ("alert", "s1", "north", 1, 1),
        ("alert", "s1", "coast", 1, 1),
        ("pair", 1, 2, 3, 5),
    ]


def test_equal_solutions_give_one_occurrence() -> None:
    # p(1, 1) and p(1, 2) give the same Y = 1 twice for X = 1.
    rules = "p(1, 1). p(1, 2).\nc(X, Y) <- a(X) WHERE (p(X, Z), Y = X, Z > 0)."
    assert _found(Engine(rules), [Event.at("a", (1,), 1)]) == [("c", 1, 1, 1, 1)]


@pytest.mark.parametrize("policy", ["unrestricted", "recent", "chronological"])
def test_the_engine_agrees_with_the_reference(policy: str) -> None:
    rules = "c(Id, S) <- (bid(Id, P) SEQ win(Id)) WHERE (credit_status(Id, S), P > 4)."
    program = Engine(CREDIT + rules).program
    stream = [Event.at("bid", (1, 5), 1), Event.at("bid", (2, 3), 2), Event.at("win", (1,), 3)]
    engine = Engine(CREDIT + rules, policy=policy)
    found = {d for e in stream for d in engine.push(e)}
    assert found == derive(program, stream)
    assert {(d.name, d.args) for d in found} == {
        ("creditBid", (1, 5, "good")),
        ("creditBid", (1, 5, "checked")),
        ("creditBid", (2, 3, "bad")),
        ("c", (1, "good")),
        ("c", (1, "checked")),
    }


def test_a_variable_compared_before_anything_binds_it_is_an_error() -> None:
    with pytest.raises(RuleCompileError) as info:
        Engine("c(X, Y) <- a(X) WHERE (Y < X, Y is X - 1).")
    assert "unbound variable 'Y' in WHERE" in str(info.value)


def test_a_binding_condition_over_an_event_another_rule_names_differently() -> None:
    # b(X) and b(Y) are one shared source; the condition must read b's value as Y.
    engine = Engine("d(X) <- a(X) SEQ b(X).\ne(Y, Z) <- b(Y) WHERE Z is Y + 1.")
    assert _found(engine, [Event.at("b", (1,), 0)]) == [("e", 1, 2, 0, 0)]
