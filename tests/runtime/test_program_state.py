"""A compiled program apart from its state: one compilation serves many keys' engines, each
with state of its own; generated heads talk to a sink; options are one checked record; one
intake checks events for every engine front."""

from __future__ import annotations

import math

import pytest

import reasoner.runtime.program as program_module
from reasoner.errors import EngineError, EventError
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.runtime.generated import generated_source
from reasoner.runtime.intake import Intake
from reasoner.runtime.options import EngineOptions
from reasoner.runtime.program import compile_rules
from reasoner.runtime.stages import GlobalStage, StageEngine, stage_engine

RULES = "c(X) <- a(X) SEQ b(X). s(N) <- aggregate(count, a(_), N, time(5))."


def test_engines_of_one_compiled_program_keep_their_own_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compiled = compile_rules(RULES, EngineOptions(max_span=0))

    def refused(*_: object) -> None:
        raise AssertionError("compiled again")

    monkeypatch.setattr(program_module, "compile_program", refused)
    monkeypatch.setattr(program_module, "load_rules", refused)
    first, second = Engine.of(compiled), Engine.of(compiled)
    assert first.push(Event.at("a", (1,), 1)) == [Event("s", (1,), 1, 1)]
    assert first.push(Event.at("b", (1,), 2)) == [Event("c", (1,), 1, 2)]
    assert second.push(Event.at("b", (1,), 2)) == []  # (no a seen by this key)
    assert (first.stored(), second.stored()) == (2, 0)
    assert first.options() == second.options() == {**EngineOptions(max_span=0).as_dict()}


def test_an_engine_of_a_compiled_program_runs_as_one_built_from_the_rules() -> None:
    events = [Event.at("a", (i % 3,), i) for i in range(1, 20)]
    events += [Event.at("b", (i % 3,), i) for i in range(20, 30)]
    built = Engine(RULES, policy="recent")
    of = Engine.of(compile_rules(RULES, EngineOptions(policy="recent")))
    assert list(built.run(events)) == list(of.run(events))
    assert built.snapshot() == of.snapshot()


def test_generated_heads_write_to_the_sink_not_the_engine() -> None:
    engine = Engine(RULES)
    for head in engine.wiring.heads:
        source = generated_source(head)
        assert source is not None and "sink." in source and "engine" not in source


def test_options_are_checked_once_with_the_engines_messages() -> None:
    with pytest.raises(EngineError, match="unknown tie-break 'long'"):
        EngineOptions(tie_break="long")  # type: ignore[arg-type]
    with pytest.raises(EngineError, match="lateness must be a non-negative number, not -1"):
        EngineOptions(lateness=-1)
    with pytest.raises(EngineError, match="max_span must be a non-negative number or None"):
        Engine("c <- a.", max_span=math.nan)
    assert EngineOptions(explain=True).fingerprinted()["provenance"] is True
    assert "explain" not in EngineOptions().fingerprinted()


def test_the_intake_checks_counts_and_releases_in_time_order() -> None:
    counts = {"events_in": 0, "rejected": 0}
    intake = Intake({"a": {1}}, 2, 3, counts)
    for t in (5, 4, 9):
        intake.admit(Event.at("a", (t,), t), -math.inf)
    with pytest.raises(EventError, match="a takes 1 argument"):
        intake.admit(Event.at("a", (), 1), -math.inf)
    with pytest.raises(EventError, match="longer than the engine's max_span 2"):
        intake.check(Event("a", (1,), 0, 5), -math.inf)
    assert counts == {"events_in": 3, "rejected": 2}
    assert [e.end for e in intake.due(intake.released)] == [4, 5]
    assert [e.end for e in intake.due(math.inf)] == [9]


def test_the_stage_factory_chooses_the_stage_engine() -> None:
    program = compile_rules("c(X) <- a(X) SEQ b(X). d <- c(X).").program
    options = EngineOptions(max_span=3, provenance=True)
    one = stage_engine(program, None, options)
    assert type(one) is Engine and one.settings == options
    keyed = stage_engine(program, (0,), options, marking=True)
    assert type(keyed) is StageEngine and keyed.wiring.marking
    assert keyed.settings == options
    assert [r.head.name for r in keyed.program.event_rules] == ["c"]
    # the global remainder takes derived events of any span
    remainder = stage_engine(program, (1,), options, remainder=True)
    assert type(remainder) is StageEngine and not remainder.wiring.marking
    assert remainder.settings == EngineOptions(provenance=True)
    reading = stage_engine(program, (1,), options, remainder=True, reads_keyed=True)
    assert type(reading) is GlobalStage and reading.settings.max_span is None
