"""A knowledge version handed to a ParallelEngine between two events is taken by every worker
and the global stage at that event, as one engine taking it there."""

from __future__ import annotations

import itertools

import pytest

from reasoner.errors import EngineError
from reasoner.knowledge.versions import KnowledgeBase, KnowledgeVersion
from reasoner.language.parser import parse
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Detection, Event
from reasoner.runtime.explain import explain, to_json
from reasoner.runtime.order import event_order
from reasoner.runtime.parallel import ParallelEngine

# hot/2 is keyed by the sensor (it runs in the workers); pair/2 joins two sensors (the global
# stage, reading what the workers derive); both ask the knowledge.
RULES = """
hot(S, T) <- reading(S, T) WHERE limit(S, L), T > L.
pair(S1, S2) <- hot(S1, _T1) SEQ hot(S2, _T2) WHERE near(S1, S2).
"""
V1 = {"limit": {"s1": 30, "s2": 30, "s3": 50}, "near": {("s1", "s2"), ("s2", "s3")}}
V2 = {"limit": {"s1": 40, "s2": 20, "s3": 45}, "near": {("s2", "s1"), ("s1", "s3")}}
READINGS = [
    ("s1", 35), ("s2", 25), ("s3", 48), ("s1", 38), ("s2", 35), ("s3", 55),
    ("s1", 38), ("s2", 28), ("s3", 47), ("s1", 50), ("s2", 22), ("s3", 60),
]  # fmt: skip
STREAM = [Event.at("reading", (s, value), at) for at, (s, value) in enumerate(READINGS, 1)]


def _version(version: dict) -> KnowledgeVersion:
    facts = [f"limit({s}, {v})." for s, v in version["limit"].items()]
    facts += [f"near({a}, {b})." for a, b in sorted(version["near"])]
    return KnowledgeBase(program=parse(" ".join(facts)), entailment="none").current()


def _expected(switch: int) -> list[Event]:
    """What the rules mean when events 1..switch see V1 and the later ones V2 (a rule's
    condition is asked when its last event comes)."""

    def version(i: int) -> dict:
        return V1 if i < switch else V2

    hot = [
        (i, Event.at("hot", e.args, e.end))
        for i, e in enumerate(STREAM)
        if e.args[1] > version(i)["limit"][e.args[0]]
    ]
    pairs = [
        Event("pair", (a.args[0], b.args[0]), a.end, b.end)
        for (_, a), (j, b) in itertools.combinations(hot, 2)
        if (a.args[0], b.args[0]) in version(j)["near"]
    ]
    return event_order([e for _, e in hot] + pairs)


def _run(engine: Engine | ParallelEngine, switch: int, new: KnowledgeVersion) -> list[Event]:
    found: list[Event] = []
    for i, event in enumerate(STREAM):
        if i == switch:
            engine.use_knowledge(new)
        found += engine.push(event)
    return event_order(found + engine.flush())


@pytest.mark.parametrize("switch", [0, 4, 6, 11, 12])
def test_workers_take_a_new_version_at_the_event_one_engine_does(switch: int) -> None:
    expected = _expected(switch)
    single = Engine(RULES, knowledge=_version(V1))
    assert _run(single, switch, _version(V2)) == expected
    v1 = _version(V1)
    for workers, batch in itertools.product((1, 2), (3, 5, 2048)):
        with ParallelEngine(RULES, workers=workers, batch=batch, knowledge=lambda: v1) as engine:
            assert engine.workers == workers and engine.partitioning.remainder
            assert _run(engine, switch, _version(V2)) == expected, (workers, batch)


def test_the_versions_give_different_detections() -> None:
    """(So the test above can fail: a switch taken too early or too late shows.)"""
    outcomes = [_expected(switch) for switch in range(len(STREAM) + 1)]
    assert len({tuple(o) for o in outcomes}) == len(outcomes)
    # events 1-4 against V1 (s1's limit 30), the later ones against V2 (s1, s3 near)
    assert _expected(4)[:5] == [
        Event("hot", ("s1", 35), 1, 1),
        Event("hot", ("s1", 38), 4, 4),
        Event("hot", ("s2", 35), 5, 5),
        Event("pair", ("s1", "s3"), 1, 6),
        Event("pair", ("s1", "s3"), 4, 6),
    ]


def test_explanations_after_a_switch_cite_the_new_version() -> None:
    def why(found: list[Event]) -> list[object]:
        return [to_json(explain(d)) for d in found if isinstance(d, Detection)]

    single = Engine(RULES, knowledge=_version(V1), explain=True)
    expected = _run(single, 6, _version(V2))
    v1 = _version(V1)
    with ParallelEngine(RULES, workers=2, batch=4, knowledge=lambda: v1, explain=True) as engine:
        found = _run(engine, 6, _version(V2))
    assert found == expected and why(found) == why(expected)
    text = str(why(found))  # s1's limit: 30 before the switch, 40 after
    assert "'fact': 'limit', 'args': ['s1', 30]" in text
    assert "'fact': 'limit', 'args': ['s1', 40]" in text


def test_a_program_changing_static_rules_refuses_given_knowledge() -> None:
    rules = "hot(S, T) <- reading(S, T).\nnoop <- hot(_S, _T) do ins_static_rule(s1 :- s2).\n"
    with ParallelEngine(rules, workers=2, batch=1) as engine:
        assert engine.push(STREAM[0]) == []
        with pytest.raises(EngineError, match="<rules>:2:1: ins_static_rule"):
            engine.use_knowledge(_version(V2))
        assert [d.name for d in engine.flush()] == ["hot", "noop"]


def test_events_in_the_lateness_buffer_take_the_new_version_as_in_one_engine() -> None:
    # Arrival order differs from time order by up to 2; the buffer holds the last events.
    arrival = [STREAM[i] for i in (1, 0, 2, 4, 3, 5, 7, 6, 8, 10, 9, 11)]

    def run(engine: Engine | ParallelEngine, switch: int) -> list[Event]:
        found: list[Event] = []
        for i, event in enumerate(arrival):
            if i == switch:
                engine.use_knowledge(_version(V2))
            found += engine.push(event)
        return event_order(found + engine.flush())

    v1 = _version(V1)
    outcomes = set()
    for switch in (3, 7):
        expected = run(Engine(RULES, knowledge=_version(V1), lateness=2), switch)
        outcomes.add(tuple(expected))
        with ParallelEngine(RULES, workers=2, batch=2, knowledge=lambda: v1, lateness=2) as engine:
            assert run(engine, switch) == expected, switch
    assert len(outcomes) == 2
