"""Generated join probes: their source reads as intended, and the binary-search skips (PAR's
too-early partners, NOT's blocked left occurrences) never change a detection or its order,
under every consumption policy."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from strategies import patterns, programs, streams

from reasoner.errors import RuleCompileError
from reasoner.language.ast import Binary, EventAtom, EventRule, Not, Number, Pattern, Program, Var
from reasoner.language.check import bound_variables
from reasoner.language.loader import load_rules
from reasoner.runtime import probes
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.runtime.probes import ProbeSpec, probe_source
from reasoner.semantics.reference import derive


def test_a_chronological_seq_probe_consumes_the_first_fitting_partner() -> None:
    source = probe_source(
        ProbeSpec("seq", "chronological", 1, [0], [1], 2, "none", False, True, False, False)
    )
    assert "key = rv[0]" in source  # the join key, inlined
    assert "values = lv + (rv[1], )" in source  # the right values the left lacks
    assert "if (le < rs):" in source and "if check(values):" in source
    assert "del bucket[index]" in source and "break" in source  # consumed: stop looking
    assert "r_buckets" not in source  # SEQ never stores its right side


def test_par_probes_skip_partners_by_binary_search_only_when_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = ProbeSpec("par", "unrestricted", 0, [], [], 0, "keep", False, False, False, True)
    assert "bisect_right(bucket, ls, key=END)" in probe_source(spec)
    assert "(lw, rw)" in probe_source(spec)  # provenance pairs the two partners
    monkeypatch.setattr(probes, "SKIP_BY_END", False)
    assert "bisect_right" not in probe_source(spec)


def _detections(program: Program, stream: list[Event], policy: str) -> list[Event]:
    try:
        engine = Engine(program, policy=policy)
    except RuleCompileError as error:
        # The one restriction the engine has over the reference (docs/semantics.md).
        if "OR inside a negated pattern" not in str(error):
            raise
        reject()
    return [d for event in stream for d in engine.push(event)]


def _rule(body: Pattern) -> Program:
    bound = sorted(bound_variables(body))
    head = EventAtom("d", (Var(bound[0]),) if bound else (Number(0),))
    return Program((EventRule(head, body),))


#: Rules whose top operator is one that skips: PAR, or NOT with its blocker.
skipping_rules = st.one_of(
    st.builds(lambda p, q: _rule(Binary("par", p, q)), patterns, patterns),
    st.builds(lambda n, p, q: _rule(Not(n, p, q)), patterns, patterns, patterns),
)


@st.composite
def long_streams(draw: st.DrawFn) -> list[Event]:
    """Up to 30 events over 12 time units, many of them intervals (so that PAR overlaps)."""
    events = []
    for _ in range(draw(st.integers(0, 30))):
        end = draw(st.integers(0, 12))
        start = max(end - draw(st.integers(0, 4)), 0)
        name = draw(st.sampled_from(["a", "b", "c"]))
        events.append(Event(name, (draw(st.sampled_from([1, 2])),), start, end))
    return sorted(events, key=lambda e: e.end)


def _both_ways(program: Program, stream: list[Event], policy: str) -> list[Event]:
    """The detections, the same with and without skipping (and, unrestricted, the
    reference evaluator's)."""
    skipping = _detections(program, stream, policy)
    probes.SKIP_BY_END = False
    try:
        scanning = _detections(program, stream, policy)
    finally:
        probes.SKIP_BY_END = True
    assert skipping == scanning
    if policy == "unrestricted":
        assert set(skipping) == derive(program, stream)
    return skipping


#: Hand-worked streams where skipping matters: PAR partners that end too early to overlap
#: the arriving occurrence, and a NOT goal blocked before the right one arrives.
SKIPPED = [
    (
        "d <- a PAR b.",
        [("a", 1, 2), ("a", 2, 3), ("a", 4, 5), ("a", 3, 6), ("b", 5, 7)],
        [("d", 3, 7)],
    ),
    ("d <- NOT(c).[a, b].", [("a", 1, 1), ("c", 2, 2), ("a", 3, 3), ("b", 4, 4)], [("d", 3, 4)]),
]


@pytest.mark.parametrize("policy", ["unrestricted", "chronological", "recent"])
@pytest.mark.parametrize(("rules", "stream", "expected"), SKIPPED)
def test_skipping_by_end_finds_the_partner_after_the_skipped_ones(
    rules: str,
    stream: list[tuple[str, int, int]],
    expected: list[tuple[str, int, int]],
    policy: str,
) -> None:
    events = [Event(name, (), start, end) for name, start, end in stream]
    found = _both_ways(load_rules(rules), events, policy)
    assert [(d.name, d.start, d.end) for d in found] == expected


POLICIES = st.sampled_from(["unrestricted", "chronological", "recent"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(skipping_rules, long_streams(), POLICIES)
def test_skipping_by_end_changes_no_detection(
    program: Program, stream: list[Event], policy: str
) -> None:
    _both_ways(program, stream, policy)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), streams(), POLICIES)
def test_skipping_by_end_changes_no_detection_of_random_programs(
    program: Program, stream: list[Event], policy: str
) -> None:
    _both_ways(program, stream, policy)
