"""Many keys under one compiled program: each key's engine (``Engine.of``) is a copy of the
program's template nodes (reasoner/runtime/instances.py), with state of its own, that runs
as an engine built from the rules would, and costs no code generation."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, reject, settings
from strategies import programs, streams

import reasoner.runtime.generated as generated_module
import reasoner.runtime.inline as inline_module
from reasoner.errors import RuleCompileError
from reasoner.language.ast import Program
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.runtime.generated import generated_source
from reasoner.runtime.options import EngineOptions
from reasoner.runtime.program import compile_rules

RULES_DIR = Path(__file__).resolve().parents[2] / "rules"
RULE_FILES = sorted(RULES_DIR.glob("*.event"))
RULES = (
    "c(X) <- a(X) SEQ b(X). s(N) <- aggregate(count, a(_), N, time(5)). "
    "n(X) <- NOT(x(X)).[a(X), b(X)]. p(X) <- a(X) PAR b(X). w <- a(_) WHERE 1 < 2."
)


def _compiled_or_reject(program: Program, **options: object) -> tuple[Engine, object]:
    try:
        built = Engine(program, **options)  # type: ignore[arg-type]
    except RuleCompileError as error:
        if "OR inside a negated pattern" not in str(error):
            raise
        reject()
    return built, compile_rules(program, EngineOptions(**options))  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), streams(ties=None))
def test_keys_run_as_engines_built_from_the_rules(program: Program, stream: list[Event]) -> None:
    built, compiled = _compiled_or_reject(program, max_span=None)
    first, second, idle = (Engine.of(compiled) for _ in range(3))  # type: ignore[arg-type]
    fresh = Engine.of(compiled).snapshot()  # type: ignore[arg-type]
    for event in stream:  # interleaved: one key's events never reach another's state
        expected = built.push(event)
        assert first.push(event) == expected
        assert second.push(event) == expected
    assert built.snapshot() == first.snapshot() == second.snapshot()
    assert idle.stored() == 0 and idle.snapshot() == fresh
    assert idle.stats().events_in == 0


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.name)
def test_a_key_of_every_rule_file_is_the_engine_built_from_it(path: Path) -> None:
    built = Engine([path])
    key = Engine.of(compile_rules([path]))
    assert key.network() == built.network()
    assert key.snapshot() == built.snapshot()
    sources = [generated_source(f) for fused in key.wiring.routes.values() for f in fused]
    assert sources == [generated_source(f) for fused in built.wiring.routes.values() for f in fused]


def test_keys_share_no_state_and_their_code_holds_their_own_nodes() -> None:
    compiled = compile_rules(RULES, EngineOptions(max_span=0, provenance=True))
    first, second = Engine.of(compiled), Engine.of(compiled)
    seen: list[Event] = []
    second.on(None, seen.append)
    assert first.push(Event.at("a", (1,), 1)) == [Event("s", (1,), 1, 1), Event("w", (), 1, 1)]
    assert first.push(Event.at("b", (1,), 2)) == [
        Event("c", (1,), 1, 2),
        Event("n", (1,), 1, 2),
    ]
    assert second.push(Event.at("b", (1,), 2)) == [] and seen == []
    assert second.push(Event.at("a", (2,), 3))[0] == Event("s", (1,), 3, 3)
    assert (first.stats().detections, second.stats().detections) == (4, 2)
    assert first.now == 2 and second.now == 3
    for node_a, node_b in zip(first.wiring.nodes, second.wiring.nodes, strict=True):
        assert node_a is not node_b and node_a.runtime is first.runtime
    for fused in first.wiring.routes.values():
        for function in fused:
            owned = [v for v in function.__globals__.values() if v in second.wiring.nodes]
            assert owned == []


def test_a_key_takes_rule_changes_and_snapshots_of_its_own() -> None:
    compiled = compile_rules("c(X) <- a(X) SEQ b(X).")
    first, second = Engine.of(compiled), Engine.of(compiled)
    first.add_rules("d(X) <- b(X) SEQ a(X).")
    _ = first.push(Event.at("b", (1,), 1)), second.push(Event.at("b", (1,), 1))
    assert first.push(Event.at("a", (1,), 2)) == [Event("d", (1,), 1, 2)]
    assert second.push(Event.at("a", (1,), 2)) == []
    third = Engine.of(compiled)
    third.restore(second.snapshot())
    assert third.push(Event.at("b", (1,), 3)) == [Event("c", (1,), 2, 3)]
    assert second.stored() == 1 and second.push(Event.at("b", (1,), 3))


def test_keys_after_the_first_generate_and_compile_no_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compiled = compile_rules(RULES)
    Engine.of(compiled)

    def refused(*_: object) -> None:
        raise AssertionError("code generated again")

    monkeypatch.setattr(generated_module, "define", refused)
    monkeypatch.setattr(generated_module, "compile", refused, raising=False)
    monkeypatch.setattr(inline_module, "define", refused)
    monkeypatch.setattr(inline_module, "inline", refused)
    monkeypatch.setattr("reasoner.runtime.wiring.inline", refused)
    monkeypatch.setattr("reasoner.runtime.build.define", refused)
    monkeypatch.setattr("reasoner.runtime.probes.define", refused)
    monkeypatch.setattr("reasoner.runtime.nodes.define", refused)
    monkeypatch.setattr("reasoner.runtime.build.compile_goal", refused)
    key = Engine.of(compiled)
    assert key.push(Event.at("a", (1,), 1)) == [Event("s", (1,), 1, 1), Event("w", (), 1, 1)]
    assert key.push(Event.at("b", (1,), 2))[0] == Event("c", (1,), 1, 2)


def test_conditions_running_actions_build_each_keys_nodes() -> None:
    # do(...) in a condition runs the action of the engine it was built for
    compiled = compile_rules("c(X) <- a(X) WHERE do(note(X)).")
    notes: list[tuple[str, object]] = []
    first = Engine.of(compiled, actions={"note": lambda x: notes.append(("first", x))})
    second = Engine.of(compiled, actions={"note": lambda x: notes.append(("second", x))})
    _ = first.push(Event.at("a", (1,), 1)), second.push(Event.at("a", (2,), 1))
    assert notes == [("first", 1), ("second", 2)]


@pytest.mark.parametrize(
    "options",
    [{}, {"explain": True}, {"provenance": True}, {"lateness": 1}],
    ids=["plain", "explain", "provenance", "lateness"],
)
def test_keys_with_alarms_time_points_and_options(options: dict[str, object]) -> None:
    rules = (
        "exceptionAlarm(b, 2) <- a(X).\nafter_b <- b SEQ x.\n"
        "c(X) <- a(X) SEQ y(X) WHERE X > 0.\nt <- 5 SEQ x."
    )
    events = [Event.at("a", (1,), 1), Event.at("x", (), 2), Event.at("y", (1,), 3)]
    events += [Event.at("x", (), 4), Event.at("x", (), 6)]
    built = Engine(rules, **options)  # type: ignore[arg-type]
    compiled = compile_rules(rules, EngineOptions(**options))  # type: ignore[arg-type]
    Engine.of(compiled)
    key = Engine.of(compiled)
    expected, found = list(built.run(events)), list(key.run(events))
    assert found == expected and len(found) == 5
    assert [getattr(e, "sources", None) for e in found] == [
        getattr(e, "sources", None) for e in expected
    ]
    assert key.snapshot() == built.snapshot()


def test_a_compiled_program_pickles_without_its_template() -> None:
    import pickle

    compiled = compile_rules("c(X) <- a(X) SEQ b(X).")
    Engine.of(compiled)
    shipped = pickle.loads(pickle.dumps(compiled))
    key = Engine.of(shipped)
    key.push(Event.at("a", (1,), 1))
    assert key.push(Event.at("b", (1,), 2)) == [Event("c", (1,), 1, 2)]
