"""Every shell and SPARQL example of README.md and docs/ runs (issue 19).

Each fenced ``bash`` or ``sparql`` block is found by its file and first line; a new example
must get an entry below: how it is run here, or which test runs it and why there.
Shell blocks run with bash in a scratch folder holding the repository's ``rules``, ``data``,
``ontologies`` and ``examples`` and ``.venv`` (this interpreter's environment), as a user of a
clone runs them; SPARQL blocks run against an endpoint holding the detections they ask about.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from reasoner.knowledge.store import Store
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.server import EndpointConfig, SparqlServer

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: Shell blocks run here: what their output (stdout and stderr) must contain.
SHELL = {
    ("README.md", ".venv/bin/reasoner --help"): [
        "usage: reasoner",
        '"name":"ce6"',
        "200 events, 629 detections written, 0 malformed lines and 0 rejected events skipped",
    ],
    ("explain.md", "cat > door.event <<'EOF'"): [
        'intrusion("yard") occurred:\n  intrusion("yard")@[300, 330]\n',
        'stopped: NOT(badge("lab")) is violated: badge("lab")@10 happened between its bounds\n'
        "note: 'intrusion' occurred with other arguments: intrusion(\"yard\")@[300, 330]\n"
        "exit status 5\n",
        "stopped: the window of 60 was exceeded: it lasted 100, 40 too long\n"
        "note: 'intrusion' occurred with other arguments: intrusion(\"yard\")@[300, 330]\n"
        "exit status 5\n",
    ],
    (
        "explain.md",
        ".venv/bin/reasoner why-not rules/blizzard.event rules/blizzard_noaa.event --format mesowest \\",  # noqa: E501
    ): [
        "WHERE blizzard_conditions(Wind, Visibility, Condition) fails with Wind = 9.1, "
        'Visibility = 10.0, Condition = "clear")\nexit status 5\n',
    ],
    ("ep-sparql.md", "cat > drops.rq <<'EOF'"): [
        '{"head":{"vars":["company","ceo","before","after"]},"results":{"bindings":[{"company":'
        '{"type":"uri","value":"http://ex.org/acme"},"ceo":{"type":"literal","value":"Ann"},'
        '"before":{"type":"literal","value":"100","datatype":'
        '"http://www.w3.org/2001/XMLSchema#integer"},"after":{"type":"literal","value":"60",'
        '"datatype":"http://www.w3.org/2001/XMLSchema#integer"}}]},"start":1,"end":5}\n',
        "drops(Company, Ceo, Before, After) <- (triple(Company, ex:hasStockPrice, Before) SEQ "
        "triple(Company, ex:hasStockPrice, After) WHERE rdf(Company, ex:ceo, Ceo), "
        "After < Before * 0.7).10.\n",
        "4 events, 1 detections written",
    ],
    ("explain.md", "cat > fires.jsonl <<'EOF'"): [
        'enhancedFire("California", <http://etalis.example.org/data/Observ_1>) from 0 to 3600\n'
        "├─ by rule enhancedFire(Area, Obs)  rules/weather.event:51:1\n",
        "      └─ <http://etalis.example.org/data/Observ_1> rdf:type wt:WindObservation  "
        "[inferred by rdfs9]\n"
        "         ├─ <http://etalis.example.org/data/Observ_1> rdf:type wt:Diablo  [asserted]\n"
        "         └─ wt:Diablo rdfs:subClassOf wt:WindObservation  [asserted]\n",
    ],
    ("rdf-streams.md", "cat > fire.jsonl <<'EOF'"): [
        '{"name":"fire","args":["room1"],"start":10,"end":12,"sources":[',
        "<http://www.w3.org/ns/prov#wasDerivedFrom>",
    ],
}
#: Shell blocks that serve until interrupted: run with a free port, stopped with SIGTERM.
SERVING = {
    ("api.md", ".venv/bin/reasoner run rules/weather.event --events examples/data/fires.jsonl \\"),
}
#: Slow shell blocks (a Spark build), run here too.
SLOW = {
    (
        "pipeline.md",
        "reasoner knowledge build --out kb --stations data/stations/us-mountain-stations.csv \\",
    ): [  # noqa: E501
        '"name":"placeNearWarning","args":["KSLC",{"iri":"https://sws.geonames.org/',
        '"name":"areaWarning","args":["KSLC","KOGD"]',
    ],
}
#: SPARQL blocks: the rows they must answer over the detections of SPARQL_DATA.
SPARQL = {
    ("endpoint.md", "PREFIX r: <urn:reasoner:vocab#>"): [
        {"station": "KSLC", "from": "2021-01-11T04:40:00Z"}
    ],
    ("rdf-streams.md", "PREFIX r: <urn:reasoner:vocab#>"): [
        {"detection": "fire", "input": "heat"},
        {"detection": "fire", "input": "smoke"},
    ],
}
#: Blocks run by other tests, and why there.
ELSEWHERE = {
    (
        "README.md",
        "bash scripts/demo.sh     # the main job: blizzard detection on the shipped MesoWest sample",  # noqa: E501
    ): "demo.sh runs `reasoner mesowest blizzard`: tests/test_packaging.py runs it from an installed wheel; scripts/test.sh is what runs this test",  # noqa: E501
    (
        "README.md",
        ".venv/bin/reasoner mesowest blizzard      # what scripts/demo.sh runs",
    ): "tests/test_packaging.py (a minute of Spark)",  # noqa: E501
    ("mesowest.md", ".venv/bin/reasoner mesowest blizzard"): "tests/test_packaging.py",
    (
        "mesowest.md",
        "bash scripts/demo.sh --serve 0 --speed 3600 --keep-serving",
    ): "NOT RUN as written (72 s of paced replay, then serves until Ctrl-C): tests/connectors/mesowest/test_blizzard_job.py runs the job with serve=0 and a fast speed",  # noqa: E501
    (
        "mesowest.md",
        ".venv/bin/reasoner run rules/blizzard.event rules/blizzard_noaa.event --format mesowest \\",  # noqa: E501
    ): "NOT RUN: needs the store the main job builds; the same replay (library calls) is in tests/connectors/mesowest/test_live_page.py",  # noqa: E501
    (
        "rdf-streams.md",
        "reasoner mesowest to-rdf data/mesowest/sample/*.csv --out sample.trig",
    ): "NOT RUN as written: STORE is a placeholder; tests/connectors/rdf/test_mesowest_rdf.py runs to-rdf and `run --format rdf` with the blizzard rules",  # noqa: E501
    (
        "testing.md",
        "bash scripts/mutants.sh --list                  # the mutants' names",
    ): "NOT RUN: the mutation check runs chosen suites once per mutant (minutes, Spark included); it is a development tool outside scripts/test.sh",  # noqa: E501
    (
        "architecture.md",
        "python scripts/architecture_graph.py   # writes docs/img/architecture.png, prints the layers",  # noqa: E501
    ): "NOT RUN: it rewrites the committed picture docs/img/architecture.png; run by hand after moving code between packages",  # noqa: E501
    (
        "scale-out.md",
        "nice python benchmarks/bench_spark_detection.py --only replay --blizzard --stations 2000 --days 20",  # noqa: E501
    ): "NOT RUN: a benchmark (many minutes of Spark and of reasoner run over 2,880,000 readings); tests/connectors/spark/test_spark_replay.py runs its replay part on a small archive",  # noqa: E501
    (
        "scale-out.md",
        "python benchmarks/bench_scaleout.py --only archive --spark --days 20 --repeat 3    # or --days 2",  # noqa: E501
    ): "NOT RUN: a benchmark (minutes of reasoner run and Spark over 2,880,000 readings); tests/test_benchmarks.py runs bench_scaleout.py --quick",  # noqa: E501
    (
        "pipeline.md",
        "# from Maven Central (needs network access when Spark starts):",
    ): "a template (`...` stands for the build options) that downloads from Maven Central; tests run offline",  # noqa: E501
}


def _blocks() -> dict[tuple[str, str], tuple[str, str]]:
    """(file name, first line) -> (language, text) of every bash and sparql block."""
    found: dict[tuple[str, str], tuple[str, str]] = {}
    for doc in DOCS:
        for lang, text in re.findall(r"^```(\w*)\n(.*?)^```", doc.read_text(), re.S | re.M):
            if lang in ("bash", "sparql"):
                found[(doc.name, text.splitlines()[0])] = (lang, text)
    return found


BLOCKS = _blocks()


def test_every_example_is_run() -> None:
    covered = set(SHELL) | SERVING | set(SLOW) | set(SPARQL) | set(ELSEWHERE)
    assert set(BLOCKS) == covered


def _scratch(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    for name in ("rules", "data", "ontologies", "examples"):
        (tmp_path / name).symlink_to(ROOT / name)
    venv = Path(sys.executable).parent.parent
    (tmp_path / ".venv").symlink_to(venv)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    return tmp_path, env


def _shell(tmp_path: Path, text: str) -> str:
    cwd, env = _scratch(tmp_path)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", text],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


@pytest.mark.parametrize("key", sorted(SHELL))
def test_shell_example(key: tuple[str, str], tmp_path: Path) -> None:
    output = _shell(tmp_path, BLOCKS[key][1])
    for expected in SHELL[key]:
        assert expected in output


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(SLOW))
def test_slow_shell_example(key: tuple[str, str], tmp_path: Path) -> None:
    output = _shell(tmp_path, BLOCKS[key][1])
    for expected in SLOW[key]:
        assert expected in output


@pytest.mark.parametrize("key", sorted(SERVING))
def test_serving_example(key: tuple[str, str], tmp_path: Path) -> None:
    cwd, env = _scratch(tmp_path)
    text = re.sub(r"--serve \d+", "--serve 0", BLOCKS[key][1])
    with subprocess.Popen(
        ["bash", "-c", f"exec {text}"],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as server:
        assert server.stderr is not None and server.stdout is not None
        lines = []
        while not (line := server.stderr.readline()).startswith("replay done; serving"):
            assert line, "".join(lines)
            lines.append(line)
        server.send_signal(signal.SIGTERM)
        try:
            assert server.wait(timeout=60) == 0
        finally:
            server.kill()  # (a no-op once it exited; never leaves the exit waiting on it)
        detections = [json.loads(row)["name"] for row in server.stdout.read().splitlines()]
    assert detections == ["windSpeedIncrease", "fire", "fireAlarm"]


def _published() -> Store:
    store = Store()
    server = SparqlServer(store, EndpointConfig(port=0))
    blizzard = Event("blizzard", ("KSLC",), 1610340000, 1610362800)  # 04:40 to 11:00 UTC
    server.publish_detections([blizzard])
    engine = Engine("fire(R) <- smoke(R) SEQ heat(R).", provenance=True)
    engine.push(Event("smoke", ("room1",), 10, 10))
    server.publish_detections(engine.push(Event("heat", ("room1",), 12, 12)), dates=False)
    return store


@pytest.mark.parametrize("key", sorted(SPARQL))
def test_sparql_example(key: tuple[str, str]) -> None:
    answer = _published().query(BLOCKS[key][1])
    rows = [{k: str(v) for k, v in zip(answer.variables, row, strict=True)} for row in answer.rows]
    assert sorted(rows, key=lambda r: sorted(r.items())) == SPARQL[key]


def test_the_docs_stand_alone() -> None:
    """No page points outside the repository; every repository file a command names exists."""
    for doc in DOCS:
        text = doc.read_text()
        for outside in ("SEMANTICS.md", "/work/", "../shared"):
            assert outside not in text, f"{doc.name} points at {outside}"
    for (name, _), (lang, block) in BLOCKS.items():
        if lang == "bash":
            # (a path inside a URL, http://example.org/data/x, is no repository path)
            pattern = r"(?<![/.\w])((?:rules|data|examples|ontologies)/[\w./-]+)"
            for path in re.findall(pattern, block):
                if "*" not in path:
                    assert (ROOT / path).exists(), f"{name} names {path}"
