"""Seed 004's deductive examples through the engine, against RDF knowledge files."""

from __future__ import annotations

from pathlib import Path

from reasoner.knowledge.snapshot import KnowledgeBase
from reasoner.language.parser import parse_file
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
