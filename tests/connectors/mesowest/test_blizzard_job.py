"""The blizzard application end to end: knowledge reuse, replay, tables, figures, CLI."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from connectors.cli import main
from connectors.mesowest.blizzard import BlizzardJob, run_blizzard, stations_of
from connectors.mesowest.knowledge import open_knowledge, prepare_knowledge
from connectors.spark.build import read_manifest
from reasoner.errors import KnowledgeError

STATIONS = """\
station  readings  settlings (39)  warnings (40)  areas (42)
-------  --------  --------------  -------------  ----------
KEVW          216              31              1           1
KGJT          216               0              0           0
KJAC          216               0              0           0
KOGD          216              29              1           1
KPVU          216               0              0           0
KSLC          216              27              1           1
"""
AREAS = """\
area  stations        start             end               iterations
----  --------------  ----------------  ----------------  ----------
KOGD  KOGD KSLC KEVW  2021-01-11 04:40  2021-01-11 11:00           3
"""


def _assert_outputs(files: dict[str, Path]) -> None:
    assert set(files) == {"tables", "detections", "map", "timeline"}
    for kind in ("map", "timeline"):
        assert files[kind].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert files[kind].stat().st_size > 10_000


def test_the_job_reuses_the_knowledge_and_writes_tables_and_figures(
    sample_store: Path, sample_files, tmp_path: Path
) -> None:
    job = BlizzardJob(events=sample_files, out_dir=tmp_path, store_dir=sample_store, progress=False)
    result = run_blizzard(job)
    assert result.built_knowledge is False
    assert STATIONS in result.tables and AREAS in result.tables
    assert "KOGD  2021-01-11 04:40  KSLC     Salt Lake City     7.9" in result.tables
    assert len([line for line in result.tables.splitlines() if "2021-01-11 04:40  K" in line]) == 22
    assert result.files["tables"].read_text() == result.tables
    _assert_outputs(result.files)
    lines = [json.loads(line) for line in result.files["detections"].read_text().splitlines()]
    assert [(d["name"], d["args"][0]) for d in lines if d["name"] != "blizzardPlace"] == [
        ("blizzardWarning", "KOGD"),
        ("blizzardWarning", "KSLC"),
        ("blizzardArea", "KOGD"),
        ("blizzardWarning", "KEVW"),
        ("blizzardArea", "KOGD"),
    ]
    assert (
        lines[-1]["start"] == "2021-01-11T04:40:00Z" and lines[-1]["end"] == "2021-01-11T11:00:00Z"
    )
    located = [p for p in result.places if p.lat is not None and p.lon is not None]
    assert len(located) == 22 and all(40 < p.lat < 42 for p in located)  # type: ignore[operator]


def test_the_command_runs_the_job(
    sample_store: Path, sample_files, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = [arg for path in sample_files for arg in ("--events", str(path))]
    argv = [
        "mesowest",
        "blizzard",
        *events,
        "--definition",
        "weakened",
        "--out",
        str(tmp_path),
        "--store",
        str(sample_store),
        "--quiet",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert AREAS in out
    assert STATIONS.replace("27", "29") in out  # KSLC's 10:20 reading counts when weakened
    assert f"map: {tmp_path / 'map.png'}" in out
    _assert_outputs(
        {
            k: tmp_path / f
            for k, f in [
                ("tables", "tables.txt"),
                ("map", "map.png"),
                ("timeline", "timeline.png"),
                ("detections", "detections.jsonl"),
            ]
        }
    )


def test_knowledge_errors(sample_files, tmp_path: Path) -> None:
    with pytest.raises(KnowledgeError, match="no stations"):
        prepare_knowledge(tmp_path / "kb", [])
    (tmp_path / "kb").mkdir()
    with pytest.raises(KnowledgeError, match="exists but is no knowledge store"):
        prepare_knowledge(tmp_path / "kb", stations_of(sample_files))
    with pytest.raises(KnowledgeError, match="no built knowledge store"):
        open_knowledge(tmp_path / "kb")


def test_the_job_can_serve_its_detections_while_replaying(
    sample_store: Path, sample_files, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = BlizzardJob(
        events=sample_files,
        out_dir=tmp_path,
        store_dir=sample_store,
        progress=False,
        serve=0,
        speed=1e7,  # three days of readings in about 30 ms: paced, but quickly
    )
    result = run_blizzard(job)
    assert STATIONS in result.tables and AREAS in result.tables  # serving changes nothing
    warning = result.replay.named("blizzardWarning")[0]
    assert [s.name for s in warning.sources] == ["sensor_reading"] * 10  # provenance is on
    err = capsys.readouterr().err
    assert "SPARQL endpoint at http://127.0.0.1:" in err and "/live)" in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--keep-serving"], "reasoner: --keep-serving and --host need --serve: nothing to serve"),
        (
            ["--host", "0.0.0.0"],
            "reasoner: --keep-serving and --host need --serve: nothing to serve",
        ),
        (["--serve", "0", "--speed", "-1"], "reasoner: --speed must be positive, not -1.0"),
    ],
)
def test_serving_options_are_checked_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert main(["mesowest", "blizzard", "--out", str(tmp_path), *extra]) == 1
    assert capsys.readouterr().err.strip() == message
    assert list(tmp_path.iterdir()) == []  # nothing built, nothing written


def test_the_job_loads_the_weather_ontology_and_its_closure(sample_store: Path) -> None:
    import rdflib

    ontology = rdflib.Graph().parse(Path(__file__).parents[3] / "ontologies" / "weather.ttl")
    stages = {s["name"]: s["triples"] for s in read_manifest(sample_store)["stages"]}
    assert stages["ontologies"] == len(ontology)
    inferred = "".join(p.read_text() for p in (sample_store / "parts" / "inferred").glob("*.nt"))
    # wt:Diablo < wt:WindObservation < wt:WeatherObservation < sosa:Observation
    assert (
        "<http://etalis.example.org/ontology/weather#Diablo> "
        "<http://www.w3.org/2000/01/rdf-schema#subClassOf> "
        "<http://www.w3.org/ns/sosa/Observation> ."
    ) in inferred


def _background(argv: list[str]) -> subprocess.Popen[str]:
    """``reasoner ARGV`` started as a shell starts a background job: SIGINT ignored."""
    return subprocess.Popen(
        [sys.executable, "-m", "connectors.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )


def _stopped_at(process: subprocess.Popen[str], line: str) -> tuple[int, str, str]:
    """Send SIGTERM once ``line`` begins a line of stderr; the status, stdout, the rest of
    stderr (bounded: a process that hangs is killed, and the test fails)."""
    try:
        assert process.stderr is not None
        seen = ""
        while not seen.startswith(line):
            seen = process.stderr.readline()
            assert seen, f"exited before {line!r}"
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=180)
        return process.returncode, out, err
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=180)


def test_a_stop_signal_while_replaying_writes_nothing_and_while_serving_ends_it(
    sample_store: Path, sample_files, tmp_path: Path
) -> None:
    events = [arg for path in sample_files for arg in ("--events", str(path))]
    argv = ["mesowest", "blizzard", *events, "--store", str(sample_store), "--quiet"]
    argv += ["--serve", "0"]
    paced = _background([*argv, "--out", str(tmp_path / "a"), "--speed", "3600"])  # 72 s
    status, _, stderr = _stopped_at(paced, "SPARQL endpoint at")
    assert (status, stderr) == (143, "reasoner: terminated\n")
    assert not (tmp_path / "a").exists()  # (the tables and figures are the whole replay's)
    serving = _background([*argv, "--out", str(tmp_path / "b"), "--keep-serving"])
    status, out, stderr = _stopped_at(serving, "replay done; serving")
    assert (status, stderr) == (0, "")
    assert (tmp_path / "b" / "tables.txt").read_text() in out
