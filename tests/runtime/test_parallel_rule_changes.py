"""Rules changed between two events of a ParallelEngine (``reasoner run --watch-rules
--workers``): every stage changes at that event, as one engine; a change the stages cannot
follow exactly is refused, changing nothing."""

from __future__ import annotations

import itertools
from dataclasses import fields, is_dataclass, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from strategies import keyed_streams, partitionable_programs

from reasoner.errors import EngineError, ReasonerError, RuleCompileError
from reasoner.language.ast import EventAtom, EventRule, Program
from reasoner.language.parser import parse
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Detection, Event
from reasoner.runtime.explain import explain, to_json
from reasoner.runtime.order import event_order
from reasoner.runtime.parallel import ParallelEngine

# rise/3 is keyed by the sensor (the workers); pair/2 joins two sensors' rises (the global
# stage, reading what the workers derive).
RISE = "rise(S, A, B) <- reading(S, A) SEQ reading(S, B) WHERE B > A."
PAIR = "pair(S1, S2) <- rise(S1, _A, _B) SEQ rise(S2, _C, _D) WHERE S1 < S2."
RULES = f"{RISE}\n{PAIR}\n"
VALUES = [(1, 5), (2, 7), (1, 6), (3, 2), (2, 9), (3, 4), (1, 3), (2, 8), (3, 6), (1, 4)]
STREAM = [Event.at("reading", args, at) for at, args in enumerate(VALUES, 1)]

CHANGES = {
    "a keyed rule added": ([], "drop(S, A, B) <- reading(S, A) SEQ reading(S, B) WHERE B < A."),
    "a global rule added": ([], "after(S1, S2) <- pair(S1, S2) SEQ rise(S1, _A, _B)."),
    "the keyed rule replaced": ([RISE], "rise(S, A, B) <- reading(S, A) SEQ reading(S, B)."),
    "the global rule removed": ([PAIR], ""),
}


def _rule(text: str):  # type: ignore[no-untyped-def]
    return parse(text).event_rules[0]


def _run(engine: Engine | ParallelEngine, at: int, removed: list[str], added: str) -> list[Event]:
    found: list[Event] = []
    for i, event in enumerate(STREAM):
        if i == at:
            engine.change_rules([_rule(r) for r in removed], parse(added))
        found += engine.push(event)
    return event_order(found + engine.flush())


@pytest.mark.parametrize("change", CHANGES)
def test_every_stage_changes_at_the_event_one_engine_does(change: str) -> None:
    removed, added = CHANGES[change]
    unchanged = _run(Engine(RULES), len(STREAM), [], "")
    for at in (0, 2, 4):
        expected = _run(Engine(RULES), at, removed, added)
        assert expected != unchanged  # (so a change made at another event shows)
        for workers, batch in itertools.product((1, 2), (3, 2048)):
            with ParallelEngine(RULES, workers=workers, batch=batch) as engine:
                assert engine.workers == workers and engine.partitioning.remainder == (1,)
                assert _run(engine, at, removed, added) == expected, (at, workers, batch)


def test_a_replaced_rule_changes_at_every_position_as_one_engine() -> None:
    removed, added = CHANGES["the keyed rule replaced"]
    outputs = set()
    for at in range(len(STREAM)):
        expected = _run(Engine(RULES), at, removed, added)
        outputs.add(tuple(expected))
        with ParallelEngine(RULES, workers=2, batch=3) as engine:
            assert _run(engine, at, removed, added) == expected, at
    assert len(outputs) == len(STREAM)  # (every position gives other detections)


def test_explanations_read_the_changed_rules() -> None:
    def why(found: list[Event]) -> list[object]:
        return [to_json(explain(d)) for d in found if isinstance(d, Detection)]

    removed, added = CHANGES["the keyed rule replaced"]
    expected = _run(Engine(RULES, explain=True), 5, removed, added)
    with ParallelEngine(RULES, workers=2, batch=3, explain=True) as engine:
        found = _run(engine, 5, removed, added)
    assert found == expected and why(found) == why(expected)


def test_a_change_moving_a_rule_out_of_the_workers_is_refused() -> None:
    # Three rules keyed by the reading's value: the analysis keys reading/2 by it, and rise/3
    # (keyed by the sensor) would have to leave the workers with its partial matches.
    added = parse(
        "same(A) <- reading(_S1, A) SEQ reading(_S2, A).\n"
        "same2(A) <- reading(_S1, A) AND reading(_S2, A).\n"
        "same3(A) <- reading(_S1, A) SEQ reading(_S2, A) SEQ reading(_S3, A).\n"
    )
    expected = _run(Engine(RULES), len(STREAM), [], "")
    with ParallelEngine(RULES, workers=2, batch=3) as engine:
        found = [d for event in STREAM[:4] for d in engine.push(event)]
        move = "<rules>:1:1: the partition analysis of the new rules moves this rule from the "
        with pytest.raises(EngineError, match=move + "workers to the global stage"):
            engine.change_rules([], added)
        found += [d for event in STREAM[4:] for d in engine.push(event)] + engine.flush()
    assert event_order(found) == expected


def test_removing_a_rule_not_in_use_is_refused() -> None:
    with ParallelEngine(RULES, workers=2) as engine, pytest.raises(EngineError, match="no rule"):
        engine.change_rules([_rule("x(S) <- reading(S, _A).")], parse(""))


def _renamed(node: Any, names: set[str]) -> Any:
    """``node`` with the event atoms named in ``names`` renamed ``name + "x"``."""
    if isinstance(node, EventAtom) and node.name in names:
        return replace(node, name=node.name + "x")
    if is_dataclass(node) and not isinstance(node, type):
        return replace(
            node, **{f.name: _renamed(getattr(node, f.name), names) for f in fields(node)}
        )
    if isinstance(node, tuple):
        return tuple(_renamed(x, names) for x in node)
    return node


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(
    partitionable_programs(),
    partitionable_programs(),
    keyed_streams(),
    st.data(),
    st.sampled_from(["unrestricted", "recent", "chronological"]),
)
def test_random_changes_of_random_keyed_programs_equal_one_engine(
    program: Program, other: Program, stream: list[Event], data: st.DataObject, policy: str
) -> None:
    # Remove some of the program's rules and add another program's (its heads renamed), at
    # some event; a change the stages cannot follow is refused (and skipped here).
    removed = [r for r in program.event_rules if data.draw(st.booleans())]
    added = _renamed(other, {r.head.name for r in other.event_rules})
    at = data.draw(st.integers(0, len(stream)))
    try:  # (a random program the compiler refuses, e.g. an OR under CNOT, is skipped)
        single = Engine(program, policy=policy, provenance=True)
        expected = _changed(single, stream, at, removed, added)
    except ReasonerError:
        reject()
    for workers, batch in ((1, 1), (2, 3)):
        with ParallelEngine(
            program, workers=workers, batch=batch, policy=policy, provenance=True
        ) as engine:
            try:
                found = _changed(engine, stream, at, removed, added)
            except EngineError:
                reject()
        assert found == expected
        assert [d.sources for d in found] == [d.sources for d in expected]


def _changed(
    engine: Engine | ParallelEngine,
    stream: list[Event],
    at: int,
    removed: list[EventRule],
    added: Program,
) -> list[Event]:
    found: list[Event] = []
    for i, event in enumerate([*stream, None]):
        if i == at:
            engine.change_rules(removed, added)
        if event is not None:
            found += engine.push(event)
    return event_order(found + engine.flush())


def test_a_rule_calling_an_on_demand_predicate_unbound_is_refused_changing_nothing() -> None:
    text = "q0(X, Y) :- \\+ e(Y, X).\ne(1, 2).\nh(X) <- g(X) SEQ k(X).\n"
    stream = [Event("g", (1,), 1, 1), Event("k", (1,), 2, 2), Event("k", (1,), 3, 3)]
    one = Engine(text)
    expected = event_order([d for event in stream for d in one.push(event)] + one.flush())
    with ParallelEngine(text, workers=2) as engine:
        before = engine.program
        with pytest.raises(RuleCompileError) as refused:
            engine.change_rules([before.event_rules[0]], parse("h2(X, Y) <- g(X) WHERE q0(X, Y)."))
        assert str(refused.value) == (
            "<rules>:1:24: variable 'Y' is not bound when q0/2 is called: q0/2 is answered "
            "per call (top-down) and needs it bound (bind it by an earlier goal)"
        )
        assert engine.program == before
        found = [d for event in stream for d in engine.push(event)] + engine.flush()
    assert event_order(found) == expected
    assert expected == [Event("h", (1,), 1, 2), Event("h", (1,), 1, 3)]
