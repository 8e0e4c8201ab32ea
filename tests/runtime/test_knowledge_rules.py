"""Seed 004's deductive examples through the engine, against RDF knowledge files."""

from __future__ import annotations

from pathlib import Path

import pytest

from reasoner.errors import KnowledgeError
from reasoner.knowledge.snapshot import KnowledgeBase
from reasoner.language.loader import parse_file
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
    ).snapshot()
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
    engine = Engine(program, knowledge=kb.snapshot())
    s1 = IRI("http://ex.org/s1")
    assert engine.push(Event.at("reading", (s1,), 1)) == []
    data.write_text("<http://ex.org/s1> <http://ex.org/status> <http://ex.org/critical> .\n")
    engine.use_knowledge(kb.refresh())
    assert [d.start for d in engine.push(Event.at("reading", (s1,), 2))] == [2]
    data.write_text("this is not turtle")
    with pytest.raises(KnowledgeError, match="refresh failed"):
        kb.refresh()
    engine.use_knowledge(kb.snapshot())  # the failed refresh left the current version
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
