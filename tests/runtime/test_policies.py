"""The consumption-policy examples of SEMANTICS.md, through the API and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event

RULES = "ie <- a SEQ b.\ne <- ie SEQ c."
STREAM = [("a", 1), ("a", 2), ("a", 3), ("b", 4), ("b", 5), ("c", 6)]
EXPECTED = {
    "chronological": [("ie", 1, 4), ("ie", 2, 5), ("e", 1, 6)],
    "recent": [("ie", 3, 4), ("ie", 3, 5), ("e", 3, 6)],
    "unrestricted": [
        ("ie", 1, 4), ("ie", 2, 4), ("ie", 3, 4),
        ("ie", 1, 5), ("ie", 2, 5), ("ie", 3, 5),
        ("e", 1, 6), ("e", 2, 6), ("e", 3, 6),
    ],
}  # fmt: skip


@pytest.mark.parametrize("policy", sorted(EXPECTED))
def test_policy_example_through_the_api(policy: str) -> None:
    engine = Engine(RULES, policy=policy)
    found = [d for name, t in STREAM for d in engine.push(Event.at(name, (), t))]
    assert [(d.name, d.start, d.end) for d in found] == EXPECTED[policy]


@pytest.mark.parametrize("policy", sorted(EXPECTED))
def test_policy_example_through_the_cli(policy: str, tmp_path: Path) -> None:
    rules = tmp_path / "example.event"
    rules.write_text(RULES, encoding="utf-8")
    events = "".join(json.dumps({"name": n, "args": [], "time": t}) + "\n" for n, t in STREAM)
    result = subprocess.run(
        [sys.executable, "-m", "connectors.cli", "run", str(rules), "--policy", policy],
        input=events,
        capture_output=True,
        text=True,
        check=True,
    )
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(d["name"], d["start"], d["end"]) for d in lines] == EXPECTED[policy]


def test_a_rule_can_override_the_program_policy() -> None:
    rules = "r1([property(consumption_policy, recent)]) 'rule:' ie <- a SEQ b."
    engine = Engine(rules, policy="chronological")
    found = [d for name, t in STREAM[:5] for d in engine.push(Event.at(name, (), t))]
    assert [(d.start, d.end) for d in found] == [(3, 4), (3, 5)]


@pytest.mark.parametrize(("tie_break", "expected"), [("longer", (1, 6)), ("shorter", (2, 6))])
def test_recent_tie_break_between_occurrences_ending_together(
    tie_break: str, expected: tuple[int, int]
) -> None:
    # Two complex a's end at 3: [1, 3] and [2, 3]; the recent policy keeps one of them.
    engine = Engine("e <- a SEQ c.", policy="recent", tie_break=tie_break)
    engine.push(Event("a", (), 1, 3))
    engine.push(Event("a", (), 2, 3))
    assert [(d.start, d.end) for d in engine.push(Event.at("c", (), 6))] == [expected]


POLICIES = ("unrestricted", "recent", "chronological")


@pytest.mark.parametrize("policy", POLICIES)
def test_an_event_type_repeated_later_in_a_rule(policy: str) -> None:
    # b3 first meets the stored a SEQ b [1, 2] at the outer SEQ, then forms a SEQ b [1, 3]
    # below it; under recent, [1, 3] used to replace [1, 2] before b3 reached the outer SEQ.
    engine = Engine("c <- a SEQ b SEQ b.", policy=policy)
    found = [
        d for name, t in [("a", 1), ("b", 2), ("b", 3)] for d in engine.push(Event.at(name, (), t))
    ]
    assert [(d.name, d.start, d.end) for d in found] == [("c", 1, 3)]


def test_a_repeated_event_type_with_variables_under_recent() -> None:
    engine = Engine("c(X, Z) <- a(X, Y1) SEQ a(X, Y2) SEQ a(X, Z).", policy="recent")
    found = [d for t in range(1, 5) for d in engine.push(Event.at("a", (1, t), t))]
    assert [(d.args, d.start, d.end) for d in found] == [((1, 3), 1, 3), ((1, 4), 2, 4)]


@pytest.mark.parametrize("policy", POLICIES)
def test_a_partner_the_window_excludes_is_neither_chosen_nor_consumed(policy: str) -> None:
    # a1 is too old for b11 under the window 5: chronological pairs b11 with a10 instead.
    engine = Engine("c <- (a SEQ b SEQ c).5.", policy=policy)
    stream = [("a", 1), ("a", 10), ("b", 11), ("c", 12)]
    found = [d for name, t in stream for d in engine.push(Event.at(name, (), t))]
    assert [(d.name, d.start, d.end) for d in found] == [("c", 10, 12)]


def test_recent_meets_uses_the_latest_right_occurrence_point_or_not() -> None:
    # b[1,2] is the latest b at 2 (longer first), so a[1,2] meets no b; a[0,2] met b[2,2]
    # when b[2,2] arrived.
    engine = Engine("c <- a MEETS b.", policy="recent")
    stream = [
        Event("a", (), 0, 2),
        Event("b", (), 1, 2),
        Event("b", (), 2, 2),
        Event("a", (), 1, 2),
    ]
    assert [(d.start, d.end) for e in stream for d in engine.push(e)] == [(0, 2)]
