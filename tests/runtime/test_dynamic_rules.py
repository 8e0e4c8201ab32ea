"""Rules added and removed while the stream runs (Engine.add_rules / remove_rules).

The contract, checked against engines that never changed:
- the rules already running detect exactly what they would have detected without the change;
- a rule added when the clock is at T detects exactly what it would in an engine with no
  other rule whose clock was moved to T before the rule was added (no partial match built
  from an event processed before it was added; no time point at or before T);
- a removed rule detects nothing after its removal.
Streams have no repeated event (a repeat at the time of the change is a duplicate for the
running engine, and a first event for the fresh one).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from strategies import programs, streams
from test_aggregates import programs as aggregate_programs
from test_aggregates import streams as aggregate_streams

from connectors.cli import main
from reasoner.errors import (
    EngineError,
    ReasonerError,
    RuleCompileError,
    RuleSyntaxError,
    SnapshotError,
)
from reasoner.language.ast import EventAtom, Program
from reasoner.language.parser import parse
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event

POLICIES = ("unrestricted", "recent", "chronological")
END = 30  # the clock is moved here at the end, to fire the windows and time points left


def _renamed(node: Any, rename: Callable[[str], str]) -> Any:
    """``node`` (an AST) with every event name passed through ``rename``."""
    if isinstance(node, EventAtom):
        return dataclasses.replace(node, name=rename(node.name))
    if isinstance(node, tuple):
        return tuple(_renamed(item, rename) for item in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        changes = {
            f.name: _renamed(getattr(node, f.name), rename)
            for f in dataclasses.fields(node)
            if f.init
        }
        return dataclasses.replace(node, **changes)
    return node


def _to_e(name: str) -> str:
    """d0, d1, ... (the heads of ``programs()``) become e0, e1, ...: a second program
    reading the same inputs whose heads no rule of the first reads."""
    return "e" + name[1:] if name.startswith("d") else name


def _distinct(stream: list[Event]) -> list[Event]:
    return list(dict.fromkeys(stream))


def _feed(engine: Engine, stream: list[Event]) -> list[Event]:
    out = []
    for event in stream:
        out.extend(engine.push(event))
    return out


def _fresh(program: Program, now: float, options: dict[str, Any]) -> Engine:
    """The reference for rules added at ``now``: an engine with no other rule, its clock
    moved to ``now``, then given them."""
    engine = Engine(Program(), **options)
    if now >= 0:
        engine.advance(now)
    engine.add_rules(program)
    return engine


def _family(events: list[Event], prefix: str) -> list[Event]:
    return [e for e in events if e.name.startswith(prefix)]


def _check_added(
    old: Program, new: Program, stream: list[Event], cut: int, options: dict[str, Any]
) -> None:
    try:
        unchanged = Engine(old, **options)
        live = Engine(old, **options)
    except RuleCompileError:
        reject()
    expected_old = _feed(unchanged, stream) + unchanged.advance(END)
    found = _feed(live, stream[:cut])
    now = live.now
    try:
        live.add_rules(new)
    except RuleCompileError:
        reject()
    found += _feed(live, stream[cut:]) + live.advance(END)
    fresh = _fresh(new, now, options)
    expected_new = _feed(fresh, stream[cut:]) + fresh.advance(END)
    old_heads = {r.head.name for r in old.event_rules}
    assert [e for e in found if e.name in old_heads] == expected_old
    assert [e for e in found if e.name not in old_heads] == expected_new


def _check_removed(
    kept: Program, doomed: Program, stream: list[Event], cut: int, options: dict[str, Any]
) -> None:
    try:
        unchanged = Engine(kept, **options)
        both = Engine(kept + doomed, **options)
        live = Engine(kept + doomed, **options)
    except RuleCompileError:
        reject()
    expected_kept = _feed(unchanged, stream) + unchanged.advance(END)
    before = _feed(both, stream[:cut])
    found = _feed(live, stream[:cut])
    assert found == before
    removed = set()
    for name, arity in dict.fromkeys((r.head.name, len(r.head.args)) for r in doomed.event_rules):
        removed |= {r.head.name for r in live.remove_rules(f"{name}/{arity}")}
    assert removed == {r.head.name for r in doomed.event_rules}
    after = _feed(live, stream[cut:]) + live.advance(END)
    kept_heads = {r.head.name for r in kept.event_rules}
    assert [e for e in found + after if e.name in kept_heads] == expected_kept
    assert [e for e in after if e.name not in kept_heads] == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), programs(), streams(), st.integers(0, 9), st.sampled_from(POLICIES))
def test_added_rules_leave_the_others_alone_and_start_from_scratch(
    old: Program, new: Program, stream: list[Event], cut: int, policy: str
) -> None:
    stream = _distinct(stream)
    _check_added(old, _renamed(new, _to_e), stream, min(cut, len(stream)), {"policy": policy})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    programs(),
    programs(),
    st.booleans(),
    streams(),
    st.integers(0, 9),
    st.sampled_from(POLICIES),
)
def test_removed_rules_leave_the_others_alone(
    kept: Program, other: Program, copy: bool, stream: list[Event], cut: int, policy: str
) -> None:
    # A copy of the kept rules under other heads shares every node with them.
    doomed = _renamed(kept if copy else other, _to_e)
    stream = _distinct(stream)
    _check_removed(kept, doomed, stream, min(cut, len(stream)), {"policy": policy})


@settings(max_examples=60, deadline=None)
@given(
    aggregate_programs(),
    aggregate_programs(),
    aggregate_streams(),
    st.integers(0, 10),
    st.sampled_from(POLICIES),
)
def test_aggregate_windows_survive_rules_added_and_removed(
    old: Program, other: Program, stream: list[Event], cut: int, policy: str
) -> None:
    new = _renamed(other, lambda name: {"slide": "slide2", "since": "since2"}.get(name, name))
    cut = min(cut, len(stream))
    _check_added(old, new, stream, cut, {"policy": policy})
    _check_removed(old, new, stream, cut, {"policy": policy})


def _names(events: list[Event]) -> list[tuple[Any, ...]]:
    return [(e.name, e.args, e.start, e.end) for e in events]


def test_a_new_rule_reads_what_old_rules_derive_from_then_on() -> None:
    engine = Engine("c(X) <- a(X) SEQ b(X).")
    engine.push(Event.at("a", (1,), 1))
    engine.push(Event.at("b", (1,), 2))  # c(1)[1,2], before the new rule
    engine.add_rules("d(X) <- c(X) SEQ e. f(X) <- g(X).\nc(X) <- h(X).")
    assert _names(engine.push(Event.at("e", (), 3))) == []
    assert _names(engine.push(Event.at("a", (2,), 4))) == []
    assert _names(engine.push(Event.at("b", (2,), 5))) == [("c", (2,), 4, 5)]
    assert _names(engine.push(Event.at("h", (3,), 6))) == [("c", (3,), 6, 6)]
    assert _names(engine.push(Event.at("e", (), 7))) == [
        ("d", (2,), 4, 7),
        ("d", (3,), 6, 7),
    ]


def test_time_points_of_an_added_rule_fire_only_after_now() -> None:
    engine = Engine("c <- a SEQ b.")
    engine.push(Event.at("a", (), 5))
    engine.add_rules("early <- 3 SEQ b. at_now <- 5 SEQ b. later <- 6 SEQ b.")
    assert _names(engine.push(Event.at("b", (), 7))) == [
        ("c", (), 5, 7),
        ("later", (), 6, 7),
    ]


def test_remove_by_label_head_or_rule() -> None:
    text = (
        "r1 'rule:' c(X) <- a(X) SEQ b(X).\n"
        "r1 'rule:' d <- b(1).\n"
        "c(X) <- x(X).\n"
        "e(X) <- a(X) SEQ b(X).\n"
    )
    engine = Engine(text)
    removed = engine.remove_rules("r1")  # every rule labelled r1, as ETALIS's del_event_rule
    assert [(r.label, r.head.name) for r in removed] == [("r1", "c"), ("r1", "d")]
    assert [r.head.name for r in engine.remove_rules("e(X) <- a(X) SEQ b(X).")] == ["e"]
    assert [r.head.name for r in engine.program.event_rules] == ["c"]
    assert engine.network() == "n4 = source x(X)  -> (X)\nrule 2: c(X) <- n4\n"
    assert _names(engine.push(Event.at("x", (7,), 1))) == [("c", (7,), 1, 1)]
    assert [r.head.name for r in engine.remove_rules("c/1")] == ["c"]
    assert engine.network() == "\n"
    assert engine.push(Event.at("x", (7,), 2)) == []
    assert engine.unread() == {"x": 1}  # no rule reads x any more


def test_a_removed_rule_leaves_the_shared_nodes_of_the_others() -> None:
    engine = Engine("c(X) <- a(X) SEQ b(X) SEQ f.\nd(X) <- a(X) SEQ b(X).")
    engine.push(Event.at("a", (1,), 1))
    engine.push(Event.at("b", (1,), 2))
    assert engine.stored() == 2  # a(1) waiting for b, and a SEQ b waiting for f
    engine.remove_rules("d")
    assert engine.stored() == 2
    engine.remove_rules("c")
    assert engine.stored() == 0
    engine.add_rules("c(X) <- a(X) SEQ b(X) SEQ f.")
    assert _names(engine.push(Event.at("f", (), 3))) == []


def test_removing_cancels_timers_and_windows() -> None:
    engine = Engine("s(R) <- aggregate(sum(V), reading(V), R, time(4)). t <- 10 SEQ b.")
    engine.push(Event.at("reading", (2,), 1))
    assert len(engine.runtime.timers) == 2  # the reading leaving the window; 10
    engine.remove_rules("s")
    assert len(engine.runtime.timers) == 1
    engine.remove_rules("t")
    assert (engine.runtime.timers, engine.stored()) == ([], 0)
    assert _names(engine.advance(20)) == []


def test_bad_changes_change_nothing() -> None:
    text = "c <- a SEQ b.\nd <- NOT(c).[a, b]."
    engine, unchanged = Engine(text), Engine(text)
    engine.push(Event.at("a", (), 1))
    unchanged.push(Event.at("a", (), 1))
    network = engine.network()
    with pytest.raises(EngineError, match="no rule is labelled or derives 'nothing'"):
        engine.remove_rules("nothing")
    with pytest.raises(RuleSyntaxError):
        engine.add_rules("e <- a SEQ.")
    with pytest.raises(RuleCompileError, match="recursion"):
        engine.add_rules("c <- d SEQ b.")  # c, read under NOT by d, would depend on d
    # refused when the knowledge is built: q0/2 is answered per call and needs Y bound
    with pytest.raises(ReasonerError, match="'Y' is not bound when q0/2 is called"):
        engine.add_rules("q0(X, Y) :- \\+ e(Y, X).\nh(X, Y) <- g(X) WHERE q0(X, Y).")
    assert engine.network() == network
    assert engine.program == Engine(text).program
    assert engine.push(Event.at("b", (), 2)) == unchanged.push(Event.at("b", (), 2))


def test_snapshots_follow_the_changes() -> None:
    def changed() -> Engine:
        engine = Engine("c(X) <- a(X) SEQ b(X).\nd <- a(1) SEQ e.")
        engine.push(Event.at("a", (1,), 1))
        engine.remove_rules("d")
        engine.add_rules("f(X) <- b(X) SEQ e.")
        return engine

    first = changed()
    first.push(Event.at("b", (1,), 2))
    data = first.snapshot()
    second = changed()
    second.restore(data)
    assert _names(second.push(Event.at("e", (), 3))) == [("f", (1,), 2, 3)]
    with pytest.raises(SnapshotError, match="another program"):
        Engine("c(X) <- a(X) SEQ b(X).\nd <- a(1) SEQ e.").restore(data)


def test_callbacks_change_the_rules_once_the_event_is_processed() -> None:
    # ETALIS's dynamic_updates_01, its actions as callbacks: a(X) SEQ b(X) inserts d(Y) <- c(Y),
    # b(X) deletes rule r1; events a(1), b(1), c(1), a(1) give d(1) and e(1) once each.
    engine = Engine("go(X) <- a(X) SEQ b(X).\nr1 'rule:' e(X) <- a(X).\nstop(X) <- b(X).")
    engine.on("go", lambda _: engine.add_rules("d(Y) <- c(Y)."))
    removed: list[object] = []
    engine.on("stop", lambda _: removed.extend(engine.remove_rules("r1 'rule:' e(X) <- a(X).")))
    found = [engine.push(Event.at(name, (1,), t)) for t, name in enumerate("abca", start=1)]
    assert [_names(f) for f in found] == [
        [("e", (1,), 1, 1)],
        [("go", (1,), 1, 2), ("stop", (1,), 2, 2)],  # neither change sees this event
        [("d", (1,), 3, 3)],
        [],
    ]
    assert [r.label for r in removed] == ["r1"]  # (what will be removed, when asked)
    assert [r.head.name for r in engine.program.event_rules] == ["go", "stop", "d"]


def test_a_callback_asking_for_a_rule_that_is_not_there_fails_at_once() -> None:
    engine = Engine("c <- a.")
    engine.on("c", lambda _: engine.remove_rules("nothing"))
    with pytest.raises(EngineError, match="no rule is labelled or derives 'nothing'"):
        engine.push(Event.at("a", (), 1))


ETALIS_DYNAMIC = """\
go_event <- a(X) SEQ b(X) do ins_event_rule('d(Y) <- c(Y).').
r1 'rule:' e(X) <- a(X).
stop_event <- b(X) do del_event_rule(r1).
noop_event <- c(X) do del_event_rule(no_such_label).
"""


def test_etalis_ins_event_rule_and_del_event_rule_actions(tmp_path: Path) -> None:
    # ETALIS's dynamic_updates_01 (the rule to delete named by its label): events a(1), b(1),
    # c(1), a(1) give d(1) and e(1) once each.
    rules = tmp_path / "dynamic.event"
    rules.write_text(ETALIS_DYNAMIC)
    assert main(["check", str(rules)]) == 0
    engine = Engine(rules)
    found = [_names(engine.push(Event.at(name, (1,), t))) for t, name in enumerate("abca", 1)]
    assert found == [
        [("e", (1,), 1, 1)],
        [("go_event", (), 1, 2), ("stop_event", (), 2, 2)],
        [("noop_event", (), 3, 3), ("d", (1,), 3, 3)],  # (deleting no rule does nothing)
        [],
    ]
    assert [r.head.name for r in engine.program.event_rules] == [
        "go_event",
        "stop_event",
        "noop_event",
        "d",
    ]


UNBOUND_CALL = (
    "<rules>:1:24: variable 'Y' is not bound when q0/2 is called: q0/2 is answered per call "
    "(top-down) and needs it bound (bind it by an earlier goal)"
)
ON_DEMAND = "q0(X, Y) :- \\+ e(Y, X).\ne(1, 2).\nh(X) <- g(X).\n"


def _given_version(text: str) -> Engine:
    from reasoner.knowledge.versions import KnowledgeBase

    program = parse(text)
    return Engine(program, knowledge=KnowledgeBase([], program=program).current())


@pytest.mark.parametrize("make", [Engine, _given_version], ids=["own", "snapshot"])
def test_change_calling_on_demand_predicate_unbound_is_refused_changing_nothing(make):
    engine, untouched = make(ON_DEMAND), make(ON_DEMAND)
    before = engine.program
    with pytest.raises(RuleCompileError) as refused:
        engine.change_rules([before.event_rules[0]], parse("h2(X, Y) <- g(X) WHERE q0(X, Y)."))
    assert str(refused.value) == UNBOUND_CALL
    assert engine.program == before
    events = [Event("g", (1,), 1, 1), Event("g", (2,), 2, 2)]
    assert [engine.push(e) for e in events] == [untouched.push(e) for e in events]
    assert engine.push(Event("g", (3,), 3, 3)) == [Event("h", (3,), 3, 3)]


def test_add_calling_on_demand_predicate_unbound_to_given_version_is_refused():
    engine = _given_version(ON_DEMAND)
    before = engine.program
    with pytest.raises(RuleCompileError) as refused:
        engine.add_rules("h2(X, Y) <- g(X) WHERE q0(X, Y).")
    assert str(refused.value) == UNBOUND_CALL
    assert engine.program == before
    assert engine.push(Event("g", (1,), 1, 1)) == [Event("h", (1,), 1, 1)]
