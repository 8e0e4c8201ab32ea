"""Seed 004's deductive examples through the engine, against RDF knowledge files."""

from __future__ import annotations

from pathlib import Path

import pytest

from reasoner.errors import KnowledgeError
from reasoner.knowledge.goals import compile_goal
from reasoner.knowledge.program import program_knowledge
from reasoner.knowledge.versions import KnowledgeBase
from reasoner.language.ast import Compound, Var
from reasoner.language.loader import parse_file
from reasoner.language.parser import parse
from reasoner.runtime.conditions import condition
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.values import IRI

ROOT = Path(__file__).resolve().parents[2]
EX = "http://etalis.example.org/data/"


def test_enhanced_fire_needs_a_wind_observation_through_the_subclass_rule() -> None:
    program = parse_file(ROOT / "rules" / "weather.event")
    knowledge = KnowledgeBase(
        [
            ROOT / "ontologies" / "weather.ttl",
            ROOT / "ontologies" / "examples" / "enhanced_fire.ttl",
        ],
        entailment="none",  # the rule file's own instanceOf rules do the subclass reasoning
        program=program,
    ).current()
    engine = Engine(program, knowledge=knowledge)
    found = []
    for event in [
        Event.at("activeFire", ("California",), 0),
        Event.at("weatherObservation", ("California", IRI(EX + "Observ_1")), 3600),  # Diablo
        Event.at("weatherObservation", ("California", IRI(EX + "Observ_2")), 7200),  # Sundowner
        Event.at("weatherObservation", ("California", IRI(EX + "Observ_3")), 9000),  # temperature
        Event.at("weatherObservation", ("California", IRI(EX + "Observ_1")), 20000),  # too late
    ]:
        found += [
            (d.args[1].value, d.start, d.end)
            for d in engine.push(event)
            if d.name == "enhancedFire"
        ]
    assert found == [(EX + "Observ_1", 0, 3600), (EX + "Observ_2", 0, 7200)]


def test_a_knowledge_refresh_takes_effect_between_events(tmp_path: Path) -> None:
    rules = (
        ":- prefix(ex, 'http://ex.org/').\n"
        "alert(S) <- reading(S) WHERE rdf(S, ex:status, ex:critical)."
    )
    data = tmp_path / "status.ttl"
    data.write_text("<http://ex.org/s1> <http://ex.org/status> <http://ex.org/ok> .\n")
    program = parse_file(_write(tmp_path / "alert.event", rules))
    kb = KnowledgeBase([data], entailment="none", program=program)
    engine = Engine(program, knowledge=kb.current())
    s1 = IRI("http://ex.org/s1")
    assert engine.push(Event.at("reading", (s1,), 1)) == []
    data.write_text("<http://ex.org/s1> <http://ex.org/status> <http://ex.org/critical> .\n")
    engine.use_knowledge(kb.refresh())
    assert [d.start for d in engine.push(Event.at("reading", (s1,), 2))] == [2]
    data.write_text("this is not turtle")
    with pytest.raises(KnowledgeError, match="refresh failed"):
        kb.refresh()
    engine.use_knowledge(kb.current())  # the failed refresh left the current version
    assert [d.start for d in engine.push(Event.at("reading", (s1,), 3))] == [3]


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_non_ground_facts_hold_for_any_value() -> None:
    # ETALIS programs write "true for every driver" as a fact with a variable.
    engine = Engine(
        "anyone(_Driver).\nlimit(_, 20).\n"
        "ok(D) <- delivery(D) WHERE anyone(D), limit(D, 20).\n"
        "wrong(D) <- delivery(D) WHERE limit(D, 21)."
    )
    assert engine.push(Event.at("delivery", ("alice",), 1)) == [Event("ok", ("alice",), 1, 1)]


#: A WHERE and an EVENT_MULTIPLY calling static rules: risky/2 is answered top-down per call
#: (its comparisons need V), feeds/2 is recursive (materialised), with facts and negation.
PIPES = """
alarm(S, V) <- reading(S, V) WHERE risky(S, V).
spread(S, A) <- reading(S, V) WHERE V > 10 EVENT_MULTIPLY (feeds(S, A), \\+ shielded(A)).
risky(S, V) :- V >= 50, \\+ shielded(S), feeds(S, _).
risky(S, V) :- V >= 20, V < 30, critical(S).
feeds(X, Y) :- pipe(X, Y).
feeds(X, Z) :- pipe(X, Y), feeds(Y, Z).
pipe(a, b). pipe(b, c). pipe(c, d).
shielded(c).
critical(d).
"""


@pytest.mark.parametrize("store", [False, True], ids=["program", "version"])
def test_where_and_event_multiply_call_static_rules(store: bool) -> None:
    program = parse(PIPES)
    knowledge = KnowledgeBase([], entailment="none", program=program).current() if store else None
    engine = Engine(program, knowledge=knowledge)
    readings = [("a", 60), ("c", 70), ("d", 55), ("d", 25), ("b", 25), ("a", "none"), ("a", 5)]
    found = [
        sorted((d.name, d.args) for d in engine.push(Event.at("reading", args, t)))
        for t, args in enumerate(readings)
    ]
    assert found == [
        # a is not shielded and feeds b, c, d; of those, c is shielded
        [("alarm", ("a", 60)), ("spread", ("a", "b")), ("spread", ("a", "d"))],
        [("spread", ("c", "d"))],  # c is shielded: no alarm
        [],  # d feeds nothing
        [("alarm", ("d", 25))],  # critical, between 20 and 30
        [("spread", ("b", "d"))],  # b is not critical
        [],  # no number: every comparison fails
        [],
    ]


def test_a_where_call_is_given_the_values_themselves() -> None:
    # The generated condition calls big/2 on the values' positions (no environment); a
    # value the pattern left unbound (None) is left to the call to bind.
    kb = program_knowledge(parse("big(X, Y) :- X > 10, small(Y).\nsmall(1). small(2.0)."))
    goal = compile_goal(Compound("big", (Var("A"), Var("B"))), {})

    class Runtime:
        knowledge = kb

    check = condition([goal], ["B", "A", "C"], Runtime())
    cases = [(1, 11, 0), (2, 11, 0), (3, 11, 0), (1, 10, 0), (None, 11, 0), (1, "none", 0)]
    assert [check(values) for values in cases] == [True, True, False, False, True, False]
    assert [
        goal.holds({"A": a, "B": b} if b is not None else {"A": a}, kb) for b, a, _ in cases
    ] == [True, True, False, False, True, False]
