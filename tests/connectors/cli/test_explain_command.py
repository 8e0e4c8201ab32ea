"""``reasoner run --explain`` writes each detection's derivation; ``reasoner explain`` prints it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from connectors.cli import main

RULES = """:- prefix(ex, 'http://ex.org/').
near(a, b).
far(X, Y) :- near(X, Y).
warn(X, Y) <- alarm(X) WHERE far(X, Y).
twice(X) <- warn(X, _) SEQ alarm(X) WHERE rdf(X, ex:kind, ex:Station).
"""
KNOWLEDGE = """@prefix ex: <http://ex.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:kind rdfs:subPropertyOf ex:sort .
"""


def test_run_explain_writes_the_tree(tmp_path: Path) -> None:
    rules = tmp_path / "r.event"
    rules.write_text(RULES, encoding="utf-8")
    events = tmp_path / "e.jsonl"
    events.write_text('{"name": "alarm", "args": ["a"], "time": 1}\n', encoding="utf-8")
    out = tmp_path / "d.jsonl"
    args = ["run", str(rules), "--events", str(events), "--output", str(out), "--explain"]
    assert main(args) == 0
    [line] = out.read_text(encoding="utf-8").splitlines()
    alarm = {"name": "alarm", "args": ["a"], "start": 1, "end": 1}
    assert json.loads(line) == {
        "name": "warn",
        "args": ["a", "b"],
        "start": 1,
        "end": 1,
        "sources": [alarm],
        "why": {
            "rule": {"head": "warn(X, Y)", "at": f"{rules}:4:1"},
            "from": [{"event": alarm}],
            "where": [
                {
                    "goal": "far(X, Y)",
                    "at": f"{rules}:4:30",
                    "values": {"X": "a", "Y": "b"},
                    "facts": [
                        {
                            "fact": "far",
                            "args": ["a", "b"],
                            "graph": "inferred",
                            "rule": f"{rules}:3",
                            "text": "far(X, Y) :- near(X, Y).",
                            "from": [
                                {
                                    "fact": "near",
                                    "args": ["a", "b"],
                                    "graph": "asserted",
                                    "rule": f"{rules}:2",
                                }
                            ],
                        }
                    ],
                }
            ],
        },
    }


def test_explain_prints_a_tree_with_rules_events_and_knowledge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "r.event"
    kb = tmp_path / "kb.ttl"
    kb.write_text(KNOWLEDGE + "ex:a ex:kind ex:Station .\n", encoding="utf-8")
    events = tmp_path / "e.jsonl"
    events.write_text(
        '{"name": "alarm", "args": [{"iri": "http://ex.org/a"}], "time": 1}\n'
        '{"name": "alarm", "args": [{"iri": "http://ex.org/a"}], "time": 2}\n',
        encoding="utf-8",
    )
    rules.write_text(
        RULES.replace("near(a, b)", "near(ex:a, b)").replace("rdf(X, ex:kind", "rdf(X, ex:sort"),
        encoding="utf-8",
    )
    out = tmp_path / "d.jsonl"
    args = ["run", str(rules), "--events", str(events), "--output", str(out), "--explain"]
    assert main([*args, "--knowledge", str(kb)]) == 0
    capsys.readouterr()
    assert main(["explain", str(out), "--rules", str(rules), "--only", "twice"]) == 0
    r = str(rules)
    assert capsys.readouterr().out == (
        "twice(ex:a) from 1 to 2\n"
        f"├─ by rule twice(X)  {r}:5:1\n"
        "│  └─ twice(X) <- warn(X, _) SEQ alarm(X) WHERE rdf(X, ex:sort, ex:Station).\n"
        '├─ warn(ex:a, "b") at 1\n'
        f"│  ├─ by rule warn(X, Y)  {r}:4:1\n"
        "│  │  └─ warn(X, Y) <- alarm(X) WHERE far(X, Y).\n"
        "│  ├─ input alarm(ex:a) at 1\n"
        f'│  └─ where far(X, Y)  {r}:4:30  with X = ex:a, Y = "b"\n'
        f'│     └─ far(ex:a, "b")  [inferred by {r}:3: far(X, Y) :- near(X, Y).]\n'
        f'│        └─ near(ex:a, "b")  [asserted at {r}:2]\n'
        "├─ input alarm(ex:a) at 2\n"
        f"└─ where rdf(X, ex:sort, ex:Station)  {r}:5:43  with X = ex:a\n"
        "   └─ ex:a ex:sort ex:Station  [inferred by rdfs7]\n"
        "      ├─ ex:a ex:kind ex:Station  [asserted]\n"
        "      └─ ex:kind rdfs:subPropertyOf ex:sort  [asserted]\n"
        "\n"
    )


def test_explain_names_a_line_without_a_derivation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    detections = tmp_path / "d.jsonl"
    detections.write_text('{"name": "c", "args": [], "start": 1, "end": 2}\n', encoding="utf-8")
    assert main(["explain", str(detections)]) == 1
    assert capsys.readouterr().err == (
        f"reasoner: {detections}:1: no 'why' (write the detections with 'reasoner run --explain')\n"
    )


def test_explain_with_workers_writes_the_bytes_of_one_worker_and_one_engines_lines(
    tmp_path: Path,
) -> None:
    # warn/2 runs in the workers, pair/2 (two stations) in the router: its "why" holds the
    # workers' derivations.
    rules = tmp_path / "r.event"
    rules.write_text(
        "near(a, b). near(b, c). near(c, a).\n"
        "warn(S, Y) <- alarm(S) WHERE near(S, Y).\n"
        "pair(X, Z) <- warn(X, Y) SEQ warn(Y, Z).\n",
        encoding="utf-8",
    )
    events = tmp_path / "e.jsonl"
    lines = (json.dumps({"name": "alarm", "args": [s], "time": t}) for t, s in enumerate("abcab"))
    events.write_text("\n".join(lines) + "\n", encoding="utf-8")
    written = {}
    for workers in ([], ["--workers", "1"], ["--workers", "2"], ["--workers", "3"]):
        out = tmp_path / f"d{len(written)}.jsonl"
        command = ["run", str(rules), "--events", str(events), "--output", str(out), "--explain"]
        assert main([*command, *workers]) == 0
        written[" ".join(workers)] = out.read_bytes()
    one = written.pop("")
    assert len(set(written.values())) == 1
    assert sorted(written["--workers 2"].splitlines()) == sorted(one.splitlines())
    pairs = [json.loads(line) for line in one.splitlines() if b'"pair"' in line[:20]]
    assert len(pairs) == 5
    assert all(step["rule"]["head"] == "warn(S, Y)" for p in pairs for step in p["why"]["from"])
