"""The bar of issue 23: every detection of the shipped blizzard demo, explained, names the
readings and the knowledge facts it needed; ``reasoner explain`` prints each."""

from __future__ import annotations

from pathlib import Path

import pytest

from connectors.cli import main
from connectors.events.jsonl import JsonLinesWriter
from connectors.events.times import TimeStyle
from connectors.mesowest.blizzard import WRITTEN
from connectors.mesowest.knowledge import open_knowledge
from connectors.mesowest.replay import replay
from connectors.mesowest.rules import BLIZZARD_RULES, DEFINITIONS
from reasoner.knowledge.justify import Fact
from reasoner.runtime.explain import Step, explain
from reasoner.values import IRI

OM = "http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#"
ER = "https://w3id.org/etalis-reasoner/ns#"
NOAA = DEFINITIONS["noaa"]


def _lines(path: Path, text: str) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.startswith(text))


def _facts(step: Step, predicate: str) -> list[Fact]:
    return [f for f in step.facts() if f.predicate == predicate]


def test_every_blizzard_detection_names_its_readings_and_knowledge(
    sample_store: Path,
    sample_files: tuple[Path, ...],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    kb = open_knowledge(sample_store, "noaa")
    knowledge = kb.current()
    result = replay(kb.program, sample_files, knowledge=knowledge, progress=False, explain=True)
    written = [d for d in result.detections if d.name in WRITTEN]
    names = [d.name for d in written]
    assert (names.count("blizzardWarning"), names.count("blizzardArea")) == (3, 2)
    conditions = _lines(NOAA, "blizzard_conditions(")
    becomes = _lines(BLIZZARD_RULES, "becomes_blizzard(")
    near_station = _lines(BLIZZARD_RULES, "near_station(")
    near_place = _lines(BLIZZARD_RULES, "near_place(")

    def asserted(fact: Fact) -> bool:
        """Whether the store's asserted graph holds the triple."""
        s, o = fact.args
        return any(kb.store.triples(s, IRI(fact.predicate), o, graph=None))

    for detection in written:
        step = explain(detection)
        readings = [e for e in step.events() if e.name == "sensor_reading"]
        stations = {e.args[0] for e in readings}
        # every reading behind it meets the NOAA conditions, and says so through the rule
        assert readings and all(
            e.args[4] >= 35 and e.args[6] < 0.25 and e.args[7] in ("snow", "heavy snow")
            for e in readings
        )
        assert {f.args for f in _facts(step, "blizzard_conditions")} == {
            (e.args[4], e.args[6], e.args[7]) for e in readings
        }
        assert {f.rule for f in _facts(step, "blizzard_conditions")} == {f"{NOAA}:{conditions}"}
        # every triple at a leaf is in the asserted graph
        leaves = [f for f in step.facts() if f.is_triple]
        assert all(f.graph == "asserted" and asserted(f) for f in leaves)
        match detection.name:
            case "blizzardWarning":
                station, start, end = detection.args
                assert stations == {station}
                assert min(e.end for e in readings) == start and max(e.end for e in readings) == end
                assert len(readings) >= 4
                [fact] = [g.facts[0] for g in step.goals]
                assert (fact.predicate, fact.rule) == (
                    "becomes_blizzard",
                    f"{BLIZZARD_RULES}:{becomes}",
                )
            case "blizzardArea":
                anchor, members, count = detection.args
                assert stations == set(members) and count == len(members)
                # each joiner reached the anchor through the station knowledge
                pairs = {f.args for f in _facts(step, "near_station")}
                assert pairs == {(s, anchor) for s in members if s != anchor}
                for fact in _facts(step, "near_station"):
                    assert fact.rule == f"{BLIZZARD_RULES}:{near_station}"
                    assert [p.predicate for p in fact.premises] == [
                        OM + "ID",
                        ER + "nearStation",
                        OM + "ID",
                    ]
            case "blizzardPlace":
                anchor, station, place, name, km = detection.args
                [fact] = _facts(step, "near_place")
                assert fact.args == (station, place, name, km)
                assert fact.rule == f"{BLIZZARD_RULES}:{near_place}"
                assert len(fact.premises) == 5 and all(asserted(p) for p in fact.premises)

    # reasoner explain prints one tree per detection, readings and knowledge included
    out = tmp_path / "detections.jsonl"
    with out.open("w", encoding="utf-8") as stream:
        JsonLinesWriter(stream, TimeStyle(iso=True)).write_all(written)
    rules = [str(BLIZZARD_RULES), str(NOAA)]
    assert main(["explain", str(out), "--rules", *rules, "--only", "blizzardArea"]) == 0
    printed = capsys.readouterr().out
    trees = printed.split("\n\n")
    day = "2021-01-11T"
    assert [tree.splitlines()[0] for tree in trees if tree] == [
        f'blizzardArea("KOGD", ["KSLC", "KOGD"], 2) from {day}04:40:00Z to {day}08:40:00Z',
        f'blizzardArea("KOGD", ["KEVW", "KSLC", "KOGD"], 3) from {day}04:40:00Z to {day}11:00:00Z',
    ]
    assert 'near_station("KSLC", "KOGD")  [inferred by ' in trees[0]
    assert 'input sensor_reading("KSLC", 1610354400' in trees[0]
    assert "om:ID" in trees[0] and "er:nearStation" in trees[0]
