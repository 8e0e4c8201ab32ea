"""``reasoner run --provenance``: detections come out with the input events they were built from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rdflib import Dataset, Graph, Namespace, URIRef
from rdflib.namespace import RDF
from rdflib.term import Node

from connectors.cli import main

R = Namespace("urn:reasoner:vocab#")
TIME = Namespace("http://www.w3.org/2006/time#")
PROV = Namespace("http://www.w3.org/ns/prov#")
RULES = """
fire(R) <- smoke(R) SEQ heat(R, T) WHERE T > 50.
spread <- fire("r1") AND fire("r2").
"""
EVENTS = [
    {"name": "smoke", "args": ["r1"], "time": 1},
    {"name": "smoke", "args": ["r2"], "time": 2},
    {"name": "heat", "args": ["r1", 40], "time": 3},  # too cool: used by no detection
    {"name": "heat", "args": ["r1", 60], "time": 4},
    {"name": "door", "args": ["r1"], "time": 4.5},  # in no rule
    {"name": "heat", "args": ["r2", 70], "time": 5},
]
# (name, args, start, end) of each detection -> the indices in EVENTS of its inputs
USED = {
    ("fire", ("r1",), 1, 4): [0, 3],
    ("fire", ("r2",), 2, 5): [1, 5],
    ("spread", (), 1, 5): [0, 1, 3, 5],
}

# rdflib's TriG parser warns about its own deprecated internals.
pytestmark = pytest.mark.filterwarnings(r"ignore::DeprecationWarning:rdflib\..*")


def _run(tmp_path: Path, *options: str) -> str:
    rules, events, out = tmp_path / "fire.event", tmp_path / "fire.jsonl", tmp_path / "out"
    rules.write_text(RULES, encoding="utf-8")
    events.write_text("".join(json.dumps(e) + "\n" for e in EVENTS), encoding="utf-8")
    assert main(["run", str(rules), "--events", str(events), "--output", str(out), *options]) == 0
    return out.read_text(encoding="utf-8")


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _event(graph: Graph, node: Node) -> tuple[str, tuple[object, ...], float, float]:
    """The (name, args, start, end) a resource of the output describes."""
    arity = graph.value(node, R.arity).toPython()
    args = tuple(graph.value(node, RDF[f"_{i}"]).toPython() for i in range(1, arity + 1))
    interval = graph.value(node, TIME.hasTime)
    start, end = (
        graph.value(
            graph.value(graph.value(interval, role), TIME.inTimePosition), TIME.numericPosition
        )
        for role in (TIME.hasBeginning, TIME.hasEnd)
    )
    name = str(graph.value(node, R.event))
    return name, args, _number(start.toPython()), _number(end.toPython())


def _input(index: int) -> tuple[str, tuple[object, ...], float, float]:
    event = EVENTS[index]
    return event["name"], tuple(event["args"]), event["time"], event["time"]  # type: ignore[arg-type]


def test_trig_output_links_each_detection_to_exactly_the_inputs_it_used(tmp_path: Path) -> None:
    dataset = Dataset()
    dataset.parse(data=_run(tmp_path, "--provenance", "--output-format", "trig"), format="trig")
    graphs = [g for g in dataset.graphs() if len(g)]
    assert len(graphs) == len(USED)
    found = {}
    for graph in graphs:
        detection = URIRef(str(graph.identifier))
        assert graph.value(detection, RDF.type) == R.Detection
        sources = list(graph.objects(detection, PROV.wasDerivedFrom))
        assert all(graph.value(s, RDF.type) == R.InputEvent for s in sources)
        found[_event(graph, detection)] = sorted(_event(graph, s) for s in sources)
    assert found == {key: sorted(_input(i) for i in used) for key, used in USED.items()}


def test_jsonl_output_lists_the_sources_and_is_unchanged_without_provenance(
    tmp_path: Path,
) -> None:
    with_sources = [json.loads(line) for line in _run(tmp_path, "--provenance").splitlines()]
    plain = [json.loads(line) for line in _run(tmp_path).splitlines()]
    assert [{k: v for k, v in d.items() if k != "sources"} for d in with_sources] == plain
    for detection in with_sources:
        key = (detection["name"], tuple(detection["args"]), detection["start"], detection["end"])
        expected = [
            {"name": EVENTS[i]["name"], "args": EVENTS[i]["args"], "start": t, "end": t}
            for i in USED[key]
            for t in [EVENTS[i]["time"]]
        ]
        assert detection["sources"] == expected  # in time order


def test_without_provenance_the_rdf_output_has_no_input_events(tmp_path: Path) -> None:
    text = _run(tmp_path, "--output-format", "nquads")
    assert text.count("vocab#Detection>") == len(USED)
    assert "wasDerivedFrom" not in text and "InputEvent" not in text


def test_a_missing_store_is_an_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules, events, missing = tmp_path / "fire.event", tmp_path / "fire.jsonl", tmp_path / "kb"
    rules.write_text(RULES, encoding="utf-8")
    events.write_text(json.dumps(EVENTS[0]) + "\n", encoding="utf-8")
    assert main(["run", str(rules), "--events", str(events), "--store", str(missing)]) == 1
    assert f"reasoner: {missing}: no knowledge store there" in capsys.readouterr().err
    assert not missing.exists()
