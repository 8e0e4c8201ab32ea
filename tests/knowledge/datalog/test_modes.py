"""A materialised rule calling an on-demand predicate before binding what it needs is refused
when the rules load (it used to give no answers, or an engine error); bound first, it runs."""

from __future__ import annotations

from itertools import product
from pathlib import Path

import pytest

from reasoner.errors import RuleCompileError
from reasoner.knowledge.goals import compile_goal
from reasoner.knowledge.program import program_knowledge
from reasoner.language.ast import Compound, Var
from reasoner.language.parser import parse
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event

E = [(1, 2), (2, 1), (3, 1), (2, 3)]
D = [1, 2, 3, 4]
FACTS = " ".join(f"e({x}, {y})." for x, y in E) + " " + " ".join(f"d({x})." for x in D)
Q0 = "q0(X, Y) :- \\+ e(Y, X).\n"


def _refusal(text: str) -> str:
    with pytest.raises(RuleCompileError) as caught:
        program_knowledge(parse(text, file="r.pl"))
    return str(caught.value).splitlines()[0]


def test_a_negated_on_demand_call_before_its_arguments_are_bound_is_refused() -> None:
    # was: q1 silently empty
    assert _refusal(FACTS + "\n" + Q0 + "q1(X, Y) :- q0(X, Y), X < Y.\n") == (
        "r.pl:3:13: variable 'X' is not bound when q0/2 is called: q0/2 is answered per call "
        "(top-down) and needs it bound (bind it by an earlier goal)"
    )


def test_an_arithmetic_on_demand_call_without_its_input_is_refused() -> None:
    # was: an engine error ("unbound variable") while the knowledge was built
    text = FACTS + "\nnext(X, Y) :- Y is X + 1.\nhop(X, Y) :- next(X, Y), d(X).\n"
    assert _refusal(text) == (
        "r.pl:3:14: variable 'X' is not bound when next/2 is called: next/2 is answered per "
        "call (top-down) and needs it bound (bind it by an earlier goal)"
    )


def test_a_call_through_another_on_demand_predicate_is_refused_under_negation_too() -> None:
    # q2 is on demand (Y > 0 needs Y) and passes X and Y to q0: the negated call gives
    # both, the last call only X
    text = (
        FACTS + "\n" + Q0 + "q2(X, Y) :- Y > 0, q0(X, Y).\np(X) :- d(X), \\+ q2(X, 1), q2(X, _Z).\n"
    )
    assert _refusal(text) == (
        "r.pl:4:28: variable '_Z' is not bound when q2/2 is called: q2/2 is answered per call "
        "(top-down) and needs it bound (bind it by an earlier goal)"
    )


def test_bound_first_the_same_calls_run_bottom_up() -> None:
    text = (
        FACTS
        + "\n"
        + Q0
        + "q1(X, Y) :- d(X), d(Y), q0(X, Y), X < Y.\n"
        + "next(X, Y) :- Y is X + 1.\nhop(X, Y) :- d(X), next(X, Y).\n"
    )
    kb = program_knowledge(parse(text))
    q1 = {(x, y) for x, y in product(D, D) if (y, x) not in E and x < y}
    assert q1 == {(1, 4), (2, 3), (2, 4), (3, 4)}  # e(2, 1), e(3, 1) exclude the others
    assert set(kb.solve("q1", (None, None))) == q1
    assert set(kb.solve("hop", (None, None))) == {(x, x + 1) for x in D}


def test_a_rule_that_only_renames_an_on_demand_predicate_is_refused() -> None:
    # read bottom-up, it would ask q0 for every pair: written after d(X), d(Y) it runs
    assert _refusal(FACTS + "\n" + Q0 + "same(X, Y) :- q0(X, Y).\n") == (
        "r.pl:3:15: variable 'X' is not bound when q0/2 is called: q0/2 is answered per call "
        "(top-down) and needs it bound (bind it by an earlier goal)"
    )


def test_an_on_demand_rule_may_call_one_its_caller_binds() -> None:
    # q1 is itself on demand (X < Y needs both): its ground calls give q0 its inputs
    kb = program_knowledge(parse(FACTS + "\n" + Q0 + "q1(X, Y) :- X < Y, q0(X, Y).\n"))
    holds = compile_goal(Compound("q1", (Var("A"), Var("B"))), {})
    found = {(a, b) for a, b in product(D, D) if holds.holds({"A": a, "B": b}, kb)}
    assert found == {(x, y) for x, y in product(D, D) if (y, x) not in E and x < y}


def test_the_engine_refuses_the_program_at_load(tmp_path: Path) -> None:
    rules = FACTS + "\n" + Q0 + "q1(X, Y) :- q0(X, Y), X < Y.\nhit(X) <- a(X, Y) WHERE q1(X, Y).\n"
    with pytest.raises(RuleCompileError, match="variable 'X' is not bound when q0/2 is called"):
        Engine(rules).push(Event.at("a", (1, 3), 1))


# An event rule's condition starts with what its pattern binds: a(X) binds X, not Y.
HIT = "hit(X, Y) <- a(X) WHERE q0(X, Y).\n"
HIT_REFUSAL = (
    "r.event:3:25: variable 'Y' is not bound when q0/2 is called: q0/2 is answered per call "
    "(top-down) and needs it bound (bind it by an earlier goal)"
)


def test_a_condition_calling_an_on_demand_predicate_unbound_is_refused_at_load() -> None:
    # was: per event, "head variable 'Y' is not bound by the body" (or silently nothing)
    with pytest.raises(RuleCompileError) as caught:
        Engine(parse(FACTS + "\n" + Q0 + HIT, file="r.event"))
    assert str(caught.value).splitlines()[0] == HIT_REFUSAL


def test_an_event_multiply_goal_calling_one_unbound_is_refused_at_load() -> None:
    rules = FACTS + "\n" + Q0 + "\nhit(X, Y) <- a(X) EVENT_MULTIPLY q0(X, Y).\n"
    with pytest.raises(RuleCompileError) as caught:
        Engine(parse(rules, file="r.event"))
    assert str(caught.value).splitlines()[0] == (
        "r.event:4:34: variable 'Y' is not bound when q0/2 is called: q0/2 is answered per call "
        "(top-down) and needs it bound (bind it by an earlier goal)"
    )


@pytest.mark.parametrize(
    "rule",
    [
        "hit(X, Y) <- a(X) WHERE (d(Y), q0(X, Y)).\n",
        "hit(X, Y) <- a(X) SEQ b(Y) WHERE q0(X, Y).\n",
    ],
)
def test_a_condition_binding_what_the_call_needs_first_runs(rule: str) -> None:
    events = [Event.at("a", (x,), t) for t, x in enumerate(D, start=1)]
    if "b(Y)" in rule:
        events += [Event.at("b", (y,), 10 + t) for t, y in enumerate(D)]
    found = {e.args for e in Engine(FACTS + "\n" + Q0 + rule).run(events)}
    # q0(X, Y) holds when e(Y, X) is not a fact: every pair but (2, 1), (1, 2), (1, 3), (3, 2)
    assert found == {(x, y) for x, y in product(D, D) if (y, x) not in E}
    assert len(found) == 12
