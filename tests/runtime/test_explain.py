"""Engine(explain=True): each detection's derivation, with the knowledge behind its conditions
justified down to asserted facts (seed 004's EnhancedFire, JetStreamWarning, the blizzard
area), and a property test that an explanation re-derives its detection on its own."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connectors.mesowest.rules import BLIZZARD_RULES, blizzard_program
from reasoner.errors import EngineError
from reasoner.knowledge.justify import Fact
from reasoner.knowledge.versions import KnowledgeBase
from reasoner.language.loader import parse_file
from reasoner.language.parser import parse
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.runtime.explain import Step, explain, to_json
from reasoner.values import IRI

ROOT = Path(__file__).resolve().parents[2]
WEATHER = str(ROOT / "rules" / "weather.event")
WT = "http://etalis.example.org/ontology/weather#"
EX = "http://etalis.example.org/data/"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
SUBCLASS = "http://www.w3.org/2000/01/rdf-schema#subClassOf"


def _tree(fact: Fact) -> tuple:
    """A fact as nested tuples: (predicate, args, graph, rule, premises)."""
    return (fact.predicate, fact.args, fact.graph, fact.rule, [_tree(p) for p in fact.premises])


def _enhanced_fire(entailment: str) -> Step:
    program = parse_file(WEATHER)
    knowledge = KnowledgeBase(
        [
            ROOT / "ontologies" / "weather.ttl",
            ROOT / "ontologies" / "examples" / "enhanced_fire.ttl",
        ],
        entailment=entailment,
        program=program,
    ).current()
    engine = Engine(program, knowledge=knowledge, explain=True)
    engine.push(Event.at("activeFire", ("California",), 0))
    [found] = engine.push(Event.at("weatherObservation", ("California", IRI(EX + "Observ_1")), 60))
    return explain(found)


def test_enhanced_fire_through_the_horn_subclass_rule() -> None:
    step = _enhanced_fire("none")
    assert step.rule is not None and step.rule.at == f"{WEATHER}:51:1"
    assert list(step.events()) == [
        Event.at("activeFire", ("California",), 0),
        Event.at("weatherObservation", ("California", IRI(EX + "Observ_1")), 60),
    ]
    [goal] = step.goals
    assert (goal.goal, goal.at) == ("instanceOf(Obs, wt:WindObservation)", f"{WEATHER}:52:11")
    obs, diablo, wind = IRI(EX + "Observ_1"), IRI(WT + "Diablo"), IRI(WT + "WindObservation")
    assert [_tree(f) for f in goal.facts] == [
        ("instanceOf", (obs, wind), "inferred", f"{WEATHER}:54", [
            (SUBCLASS, (diablo, wind), "asserted", None, []),
            ("instanceOf", (obs, diablo), "inferred", f"{WEATHER}:53", [
                (RDF_TYPE, (obs, diablo), "asserted", None, []),
            ]),
        ]),
    ]  # fmt: skip
    assert goal.facts[0].text == "instanceOf(A, Y) :- rdf(X, rdfs:subClassOf, Y), instanceOf(A, X)."


def test_enhanced_fire_through_rdfs_subclass_entailment() -> None:
    [goal] = _enhanced_fire("rdfs").goals
    obs, diablo, wind = IRI(EX + "Observ_1"), IRI(WT + "Diablo"), IRI(WT + "WindObservation")
    # The rule's first clause now reads the type RDFS inferred (rdfs9), from the asserted type.
    assert [_tree(f) for f in goal.facts] == [
        ("instanceOf", (obs, wind), "inferred", f"{WEATHER}:53", [
            (RDF_TYPE, (obs, wind), "inferred", "rdfs9", [
                (RDF_TYPE, (obs, diablo), "asserted", None, []),
                (SUBCLASS, (diablo, wind), "asserted", None, []),
            ]),
        ]),
    ]  # fmt: skip


def test_jet_stream_warning_through_the_horn_transitive_closure() -> None:
    engine = Engine(parse_file(WEATHER), explain=True)
    engine.push(Event.at("cat", ("p4",), 1))
    [found] = engine.push(Event.at("airplane", ("a1", "p1"), 2))
    [goal] = explain(found).goals
    assert [_tree(f) for f in goal.facts] == [
        ("connected", ("p1", "p4"), "inferred", f"{WEATHER}:44", [
            ("linked", ("p1", "p2"), "asserted", f"{WEATHER}:45", []),
            ("connected", ("p2", "p4"), "inferred", f"{WEATHER}:44", [
                ("linked", ("p2", "p3"), "asserted", f"{WEATHER}:46", []),
                ("connected", ("p3", "p4"), "inferred", f"{WEATHER}:43", [
                    ("linked", ("p3", "p4"), "asserted", f"{WEATHER}:47", []),
                ]),
            ]),
        ]),
    ]  # fmt: skip


def test_jet_stream_warning_through_owl_transitive_property() -> None:
    program = parse(
        f":- prefix(wt, '{WT}').\n"
        "warning(P, C) <- cat(C) SEQ airplane(P, Pos) WHERE wt:linked(Pos, C)."
    )
    knowledge = KnowledgeBase(
        [ROOT / "ontologies" / "weather.ttl", ROOT / "ontologies" / "examples" / "jet_stream.ttl"],
        entailment="owl-rl",
        program=program,
    ).current()
    engine = Engine(program, knowledge=knowledge, explain=True)
    engine.push(Event.at("cat", (IRI(EX + "p3"),), 1))
    [found] = engine.push(Event.at("airplane", ("a1", IRI(EX + "p1")), 2))
    [goal] = explain(found).goals
    linked, p1, p2, p3 = WT + "linked", IRI(EX + "p1"), IRI(EX + "p2"), IRI(EX + "p3")
    transitive = (RDF_TYPE, (IRI(linked), IRI("http://www.w3.org/2002/07/owl#TransitiveProperty")),
                  "asserted", None, [])  # fmt: skip
    assert [_tree(f) for f in goal.facts] == [
        (linked, (p1, p3), "inferred", "prp-trp", [
            (linked, (p1, p2), "asserted", None, []),
            (linked, (p2, p3), "asserted", None, []),
            transitive,
        ]),
    ]  # fmt: skip


OM = "http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#"
ER = "https://w3id.org/etalis-reasoner/ns#"


def test_blizzard_area_through_neighbour_stations(tmp_path: Path) -> None:
    # Two stations within 300 km of each other (as `reasoner knowledge build` writes them).
    kb_file = tmp_path / "kb.nt"
    kb_file.write_text(
        "".join(f'<urn:s:{s}> <{OM}ID> "{s}" .\n' for s in "AB")
        + f"<urn:s:A> <{ER}nearStation> <urn:s:B> .\n<urn:s:B> <{ER}nearStation> <urn:s:A> .\n"
    )
    program = blizzard_program("noaa")
    engine = Engine(program, knowledge=KnowledgeBase([kb_file], program=program).current(),
                    explain=True)  # fmt: skip
    readings = [_reading("A", k * 1200) for k in range(10)] + [
        _reading("B", 3 * 3600 + k * 1200) for k in range(10)
    ]
    found = [d for r in sorted(readings, key=lambda e: e.end) for d in engine.push(r)]
    [area] = [d for d in found if d.name == "blizzardArea"]
    step = explain(area)
    assert area.args == ("A", ("B", "A"), 2)
    # blizzardArea <- areaSettling <- (areaSettling of A's warning) AND warningNear(A, B, ...)
    [settling] = step.inputs
    assert (
        settling.rule is not None and settling.rule.head == "areaSettling(A, Stations, N + 1, T4)"
    )
    near = [s for s in settling.inputs if s.event.name == "warningNear"]
    assert [s.event.args for s in near] == [("A", "B", 3 * 3600, 6 * 3600)]
    [multiply] = near[0].goals
    assert multiply.goal == "near_station(S, A)"
    om_id, near_station = OM + "ID", ER + "nearStation"
    assert [_tree(f) for f in multiply.facts] == [
        ("near_station", ("B", "A"), "inferred", f"{BLIZZARD_RULES}:71", [
            (om_id, (IRI("urn:s:B"), "B"), "asserted", None, []),
            (near_station, (IRI("urn:s:B"), IRI("urn:s:A")), "asserted", None, []),
            (om_id, (IRI("urn:s:A"), "A"), "asserted", None, []),
        ]),
    ]  # fmt: skip
    # The warnings' readings are all input events of the area, A's first.
    readings_used = [e for e in step.events() if e.name == "sensor_reading"]
    assert readings_used[0] == readings[0] and readings[10] in readings_used


def _reading(station: str, t: int) -> Event:
    return Event.at("sensor_reading", (station, t, 20.0, 95, 40.0, "none", 0.1, "snow", 0.1), t)


def test_json_form_of_an_explanation() -> None:
    engine = Engine(
        "near(a, b).\n"
        "far(X, Y) :- near(X, Y).\n"
        "warn(X, Y) <- alarm(X) WHERE far(X, Y).\n"
        "twice(X) <- warn(X, _) SEQ alarm(X).",
        explain=True,
    )
    engine.push(Event.at("alarm", ("a",), 1))
    [twice] = [d for d in engine.push(Event.at("alarm", ("a",), 2)) if d.name == "twice"]
    assert to_json(explain(twice)) == {
        "event": {"name": "twice", "args": ["a"], "start": 1, "end": 2},
        "rule": {"head": "twice(X)", "at": "<rules>:4:1"},
        "from": [
            {
                "event": {"name": "warn", "args": ["a", "b"], "start": 1, "end": 1},
                "rule": {"head": "warn(X, Y)", "at": "<rules>:3:1"},
                "from": [{"event": {"name": "alarm", "args": ["a"], "start": 1, "end": 1}}],
                "where": [
                    {
                        "goal": "far(X, Y)",
                        "at": "<rules>:3:30",
                        "values": {"X": "a", "Y": "b"},
                        "facts": [
                            {
                                "fact": "far",
                                "args": ["a", "b"],
                                "graph": "inferred",
                                "rule": "<rules>:2",
                                "text": "far(X, Y) :- near(X, Y).",
                                "from": [
                                    {
                                        "fact": "near",
                                        "args": ["a", "b"],
                                        "graph": "asserted",
                                        "rule": "<rules>:1",
                                    }
                                ],
                            }
                        ],
                    }
                ],
            },
            {"event": {"name": "alarm", "args": ["a"], "start": 2, "end": 2}},
        ],
        "where": [],
    }


def test_a_branch_not_taken_and_a_negated_pattern_use_no_knowledge() -> None:
    engine = Engine(
        "hot(1). cold(2).\n"
        "x(V) <- (a(V) WHERE hot(V)) OR (b(V) WHERE cold(V)).\n"
        "y <- NOT(c WHERE hot(1)).[a(_), b(_)].",
        explain=True,
    )
    found = engine.push(Event.at("b", (2,), 1))
    [x] = [d for d in found if d.name == "x"]
    assert [(g.goal, [f.args for f in g.facts]) for g in explain(x).goals] == [("cold(V)", [(2,)])]
    engine.push(Event.at("a", (1,), 2))
    [y] = [d for d in engine.push(Event.at("b", (2,), 3)) if d.name == "y"]
    assert explain(y).goals == ()


def test_explain_needs_an_engine_built_to_explain() -> None:
    engine = Engine("c <- a SEQ b.", provenance=True)
    engine.push(Event.at("a", (), 1))
    [found] = engine.push(Event.at("b", (), 2))
    with pytest.raises(EngineError, match="explain=True"):
        explain(found)


# ---------------------------------------------------------------- re-derivation property

RULES = (
    "connected(X, Y) :- linked(X, Y).\n"
    "connected(X, Z) :- linked(X, Y), connected(Y, Z).\n"
    "warning(P, C) <- cat(C) SEQ airplane(P, Pos) WHERE connected(Pos, C).\n"
    "twice(P) <- warning(P, C) SEQ airplane(P, Pos) WHERE connected(Pos, C), \\+ linked(C, Pos).\n"
)
POINTS = st.sampled_from(["p1", "p2", "p3", "p4"])
EVENTS = st.one_of(
    st.builds(lambda c: ("cat", (c,)), POINTS),
    st.builds(lambda p, c: ("airplane", (p, c)), st.sampled_from(["a1", "a2"]), POINTS),
)


def _engine(links: list[tuple[str, str]]) -> Engine:
    facts = "".join(f"linked({a}, {b}).\n" for a, b in links)
    return Engine(facts + RULES, explain=True)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(POINTS, POINTS), max_size=6),
    st.lists(EVENTS, min_size=1, max_size=8),
)
def test_every_explanation_rederives_its_detection_from_its_own_facts_alone(
    links: list[tuple[str, str]], stream: list[tuple[str, tuple[str, ...]]]
) -> None:
    engine = _engine(links)
    events = [Event.at(name, args, t) for t, (name, args) in enumerate(stream, start=1)]
    detections = [d for e in events for d in engine.push(e)]
    for detection in detections:
        step = explain(detection)
        asserted = sorted({f.args for f in step.facts() if f.graph == "asserted"})
        # Only the explanation's input events and its asserted facts (\+ linked(C, Pos) holds
        # with fewer facts too): the detection comes back.
        alone = _engine(asserted)
        inputs = sorted(set(step.events()), key=lambda e: e.end)
        again = [d for e in inputs for d in alone.push(e)]
        assert detection in again
        # and every fact is what the knowledge holds
        for fact in step.facts():
            assert fact.predicate in ("linked", "connected")
            if fact.predicate == "linked":
                assert fact.args in links and fact.graph == "asserted"


def test_explaining_does_not_run_a_rule_action_again() -> None:
    out = io.StringIO()
    engine = Engine("c(X) <- a(X) do write(X).", explain=True, action_output=out)
    [found] = engine.push(Event.at("a", (7,), 1))
    assert out.getvalue() == "7"
    [goal] = explain(found).goals
    assert (goal.goal, goal.values, out.getvalue()) == ("do(write(X))", (("X", 7),), "7")
