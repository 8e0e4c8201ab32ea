"""``reasoner run --serve``: detections and knowledge queried over real HTTP while serving."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from SPARQLWrapper import JSON, SPARQLWrapper

from connectors.cli import main

ROOT = Path(__file__).resolve().parents[3]
EX = "http://etalis.example.org/data/"
EVENTS = [
    {"name": "activeFire", "args": ["California"], "time": 0},
    {"name": "weatherObservation", "args": ["California", {"iri": EX + "Observ_1"}], "time": 3600},
    {"name": "weatherObservation", "args": ["California", {"iri": EX + "Observ_2"}], "time": 7200},
    {"name": "weatherObservation", "args": ["California", {"iri": EX + "Observ_3"}], "time": 9000},
]
KNOWLEDGE = ["ontologies/weather.ttl", "ontologies/examples/enhanced_fire.ttl"]
# Detections joined with the served knowledge: the wind speed of each observation.
FIRES = """
PREFIX r: <urn:reasoner:vocab#>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX time: <http://www.w3.org/2006/time#>
PREFIX wt: <http://etalis.example.org/ontology/weather#>
SELECT ?obs ?speed ?end WHERE {
  GRAPH <urn:reasoner:graph:detections> {
    ?d r:event "enhancedFire" ; rdf:_2 ?obs ;
       time:hasTime/time:hasEnd/time:inTimePosition/time:numericPosition ?end .
  }
  ?obs wt:speed ?speed .
} ORDER BY ?end
"""
COUNT = """
SELECT (COUNT(?d) AS ?n) WHERE {
  GRAPH <urn:reasoner:graph:detections> { ?d a <urn:reasoner:vocab#Detection> }
}
"""

DATES = """
SELECT (COUNT(?t) AS ?n) WHERE {
  GRAPH <urn:reasoner:graph:detections> { ?i <http://www.w3.org/2006/time#inXSDDateTimeStamp> ?t }
}
"""


def _run_args(tmp_path: Path) -> list[str]:
    events = tmp_path / "fire.jsonl"
    events.write_text("".join(json.dumps(e) + "\n" for e in EVENTS), encoding="utf-8")
    knowledge = [arg for path in KNOWLEDGE for arg in ("--knowledge", str(ROOT / path))]
    rules = str(ROOT / "rules" / "weather.event")
    return ["run", rules, "--events", str(events), *knowledge, "--entailment", "none"]


def _select(url: str, query: str) -> list[dict[str, str]]:
    client = SPARQLWrapper(url)
    client.setQuery(query)
    client.setReturnFormat(JSON)
    result: Any = client.queryAndConvert()
    return [{k: v["value"] for k, v in row.items()} for row in result["results"]["bindings"]]


def test_keep_serving_answers_queries_over_detections_and_knowledge(tmp_path: Path) -> None:
    output = tmp_path / "detections.jsonl"
    command = [sys.executable, "-m", "connectors.cli", *_run_args(tmp_path)]
    command += ["--serve", "0", "--keep-serving", "--output", str(output)]
    with subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=ROOT) as proc:
        assert proc.stderr is not None
        guard = threading.Timer(120, proc.kill)  # never hang the suite on a broken server
        guard.start()
        try:
            url = live = None
            for line in proc.stderr:
                found = re.search(r"SPARQL endpoint at (\S+) .*live view (\S+)\)", line)
                url, live = found.groups() if found else (url, live)
                if line.startswith("replay done; serving"):
                    break
            assert url is not None, "the endpoint URL was not printed"
            assert live == url.replace("/sparql", "/live")
            assert proc.poll() is None, "the command exited instead of serving"

            assert _select(url, FIRES) == [
                {"obs": EX + "Observ_1", "speed": "60", "end": "3600"},
                {"obs": EX + "Observ_2", "speed": "40", "end": "7200"},
            ]
            written = output.read_text(encoding="utf-8").splitlines()
            assert _select(url, COUNT) == [{"n": str(len(written))}]
            # the input's times are plain numbers: no invented dates on the instants
            assert _select(url, DATES) == [{"n": "0"}]
            # the live page's feed: every detection, then the end of the replay
            assert _live_events(live + "/events") == [
                *(("detection", json.loads(line)["name"]) for line in written),
                ("done", len(written)),
            ]

            proc.send_signal(signal.SIGTERM)
            rest = proc.stderr.read()
            assert proc.wait(timeout=60) == 0
        finally:
            guard.cancel()
            proc.kill()  # a no-op once it has exited
    assert f"{len(EVENTS)} events, {len(written)} detections written" in rest


def _live_events(url: str) -> list[tuple[str, Any]]:
    """(event type, name or count) of the live feed, up to its ``done`` event."""
    found: list[tuple[str, Any]] = []
    with urllib.request.urlopen(url, timeout=30) as stream:
        kind = None
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: "):
                data = json.loads(line.removeprefix("data: "))
                found.append((kind, data["count"] if kind == "done" else data["name"]))
                if kind == "done":
                    return found
    raise AssertionError("the live feed ended without a done event")


def test_without_keep_serving_the_endpoint_stops_with_the_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*_run_args(tmp_path), "--serve", "0", "--only", "enhancedFire"]) == 0
    out, err = capsys.readouterr()
    assert re.search(r"SPARQL endpoint at http://127\.0\.0\.1:\d+/sparql", err)
    assert [json.loads(line)["end"] for line in out.splitlines()] == [3600, 7200]
    assert not [t for t in threading.enumerate() if t.name.startswith("sparql")]


def test_a_busy_port_is_a_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main([*_run_args(tmp_path), "--serve", str(port)]) == 1
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


def test_speed_paces_the_replay_and_changes_no_detection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from connectors.events import pace

    assert main([*_run_args(tmp_path), "--only", "enhancedFire"]) == 0
    fast = capsys.readouterr().out
    speeds: list[float] = []
    paced = pace.paced

    def recording(events: Any, speed: float) -> Any:
        speeds.append(speed)
        return paced(events, speed)

    monkeypatch.setattr(pace, "paced", recording)  # (the command imports it when it runs)
    args = [*_run_args(tmp_path), "--only", "enhancedFire", "--speed", "90000"]
    assert main([*args, "--serve", "0", "--host", "127.0.0.1"]) == 0
    assert speeds == [90000.0]  # 9,000 s of stream in 0.1 s
    out, err = capsys.readouterr()
    assert out == fast
    assert re.search(r"SPARQL endpoint at http://127\.0\.0\.1:\d+/sparql", err)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--host", "0.0.0.0"], "reasoner: --host needs --serve: nothing to serve"),
        (["--speed", "0"], "reasoner: --speed must be positive, not 0.0"),
    ],
)
def test_serving_options_are_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert main([*_run_args(tmp_path), *extra]) == 1
    assert capsys.readouterr().err.strip() == message
