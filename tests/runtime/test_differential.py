"""The incremental engine equals the reference evaluators on random programs and random
streams: the declarative one (unrestricted policy) and the operational one (every policy)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, event, example, given, reject, settings
from strategies import (
    STATIC_ANSWERS,
    edge_programs,
    edge_streams,
    forall_programs,
    knowledge_programs,
    programs,
    streams,
)

from reasoner.errors import EngineError, RuleCompileError
from reasoner.knowledge.facts import FactBase
from reasoner.language.ast import Binary, EventAtom, EventRule, Program, Var
from reasoner.language.parser import parse
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.semantics.operational import run
from reasoner.semantics.reference import derive


def _engine_detections(
    program: Program,
    stream: list[Event],
    *,
    collect: bool = False,
    max_span: int | None = None,
    policy: str = "unrestricted",
) -> set[Event]:
    """The engine's detections; with ``collect``, the engine is told the longest input span
    (by default the stream's) and frees what it can after every event, so that any goal freed
    too early shows as a missing detection."""
    if collect and max_span is None:
        max_span = max((e.end - e.start for e in stream), default=0)
    try:
        engine = Engine(program, max_span=max_span, policy=policy)
    except RuleCompileError as error:
        # The one restriction the engine has over the reference (docs/semantics.md).
        if "OR inside a negated pattern" not in str(error):
            raise
        reject()
    found: set[Event] = set()
    for item in stream:
        if collect:
            # Also collect once time reached the event's end but before the event: its
            # start may be exactly ``now - max_span``, the edge of what may be freed.
            found.update(engine.advance(item.end))
            engine.collect()
        found.update(engine.push(item))
        if collect:
            engine.collect()
    return found


def _operational(program: Program, stream: list[Event], policy: str) -> set[Event]:
    """The operational reference's detections; rejected: a program with an OR inside a
    negated pattern (it lifts ORs into alternative bodies as the compiler does, with the same
    limit)."""
    try:
        return set(run(program, stream, policy=policy))
    except RuleCompileError as error:
        if "OR inside a negated pattern" not in str(error):
            raise
        reject()
    except EngineError as error:
        # A known gap, seen rarely since FORALL_SEQ programs are no longer skipped: the
        # reference meets a STAR_TIMES outside SEQ in some rewritten body (to be found).
        if "Star is only allowed" not in str(error):
            raise
        reject()


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), streams(ties=None))
def test_engine_equals_reference(program: Program, stream: list[Event]) -> None:
    expected = derive(program, stream)
    event("some detections" if expected else "no detection")
    assert _engine_detections(program, stream) == expected


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(knowledge_programs(), streams())
def test_engine_with_static_rules_equals_reference_with_their_answers(
    program: Program, stream: list[Event]
) -> None:
    # The engine runs the static rules (top-down or materialised); the reference is given
    # their answers, computed directly in the strategy.
    answers = FactBase((name, row) for name, rows in STATIC_ANSWERS.items() for row in rows)
    expected = derive(program, stream, knowledge=answers)
    event("some detections" if expected else "no detection")
    assert _engine_detections(program, stream) == expected


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forall_programs(), streams(ties=True))
def test_forall_seq_equals_reference(program: Program, stream: list[Event]) -> None:
    # occurrences of the second operand ending together all take the waiting first ones,
    # whatever their order: random programs rarely have a FORALL_SEQ where that shows
    assert _engine_detections(program, stream) == derive(program, stream)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), streams(ties=None))
def test_garbage_collection_frees_nothing_still_needed(
    program: Program, stream: list[Event]
) -> None:
    assert _engine_detections(program, stream, collect=True) == derive(program, stream)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edge_programs, edge_streams())
def test_garbage_collection_keeps_partners_at_the_edge(
    program: Program, edge: tuple[int, list[Event]]
) -> None:
    max_span, stream = edge
    found = _engine_detections(program, stream, collect=True, max_span=max_span)
    assert found == derive(program, stream)


@settings(max_examples=100, deadline=None)
@given(streams())
def test_recursive_rule_equals_reference(stream: list[Event]) -> None:
    program = Program(
        (
            EventRule(EventAtom("d0", (Var("X"),)), EventAtom("a", (Var("X"),))),
            EventRule(
                EventAtom("d0", (Var("X"),)),
                Binary("and", EventAtom("d0", (Var("X"),)), EventAtom("c", (Var("X"),))),
            ),
        )
    )
    assert _engine_detections(program, stream) == derive(program, stream)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), streams(ties=None))
@example(  # an FNOT blocker longer than the window still blocks (it ends in the window)
    program=parse("d1(X) <- (b(X) FNOT b(X)).1."),
    stream=[Event("b", (1,), 5, 7), Event("b", (1,), 8, 8)],
)
def test_operational_reference_equals_declarative_one(
    program: Program, stream: list[Event]
) -> None:
    # The operational reference under the unrestricted policy is the declarative semantics.
    found = _operational(program, stream, "unrestricted")
    assert found == derive(program, stream)


@pytest.mark.parametrize("policy", ["recent", "chronological"])
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=programs(), stream=streams(ties=None))
def test_engine_equals_operational_reference(
    policy: str, program: Program, stream: list[Event]
) -> None:
    expected = _operational(program, stream, policy)
    found = _engine_detections(program, stream, policy=policy)
    event("some detections" if expected else "no detection")
    assert found == expected


@pytest.mark.parametrize("policy", ["recent", "chronological"])
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=programs(), stream=streams(ties=None))
# Under recent, a(1)[0,1] shadows a(1)[1,1] (equal ends: the longer wins) though it cannot
# be inside (0 seq 2): freed at time 1, it let a(1)[1,1] in and d2(1)[0,2] was detected.
@example(
    program=parse("d(X) <- a(X).\nd2(X) <- a(X) during (0 seq 2).\n"),
    stream=[Event("a", (1,), 0, 1), Event("a", (1,), 1, 1), Event("a", (1,), 2, 2)],
)
def test_garbage_collection_frees_nothing_still_needed_under_policies(
    policy: str, program: Program, stream: list[Event]
) -> None:
    expected = _operational(program, stream, policy)
    assert _engine_detections(program, stream, collect=True, policy=policy) == expected
