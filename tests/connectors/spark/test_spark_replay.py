"""``reasoner spark replay`` gives ``reasoner run``'s detections, byte for byte, on local Spark:
generated MesoWest archives (the blizzard rules, all global; a keyed program with a global
rule after it), random partitionable programs, files out of time order, malformed lines."""

from __future__ import annotations

import io
import json
import math
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from connectors.cli import main
from connectors.events.jsonl import JsonLinesWriter
from connectors.events.merge import merge_streams
from connectors.mesowest.generator import Storm, generate
from connectors.spark.replay import Archive, replay
from reasoner.errors import ReasonerError, RuleCompileError
from reasoner.language.ast import Program, event_arities
from reasoner.language.parser import parse
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.runtime.options import EngineOptions
from reasoner.runtime.order import event_order
from tests.runtime.strategies import keyed_streams, partitionable_programs

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ROOT = Path(__file__).resolve().parents[3]
BLIZZARD = [str(ROOT / "rules" / "blizzard.event"), str(ROOT / "rules" / "blizzard_noaa.event")]

# Keyed by station (readings, cold spells), then a global rule over two stations.
COLD = r"""
cold(S, T) <- sensor_reading(S, T, Temp, _, _, _, _, _, _) WHERE Temp < 30.
spell(S, T1, T2) <- (cold(S, T1) SEQ cold(S, T2)).2h.
together(S1, S2, T) <- spell(S1, _, T) AND spell(S2, _, T) WHERE S1 \= S2.
"""


def _reasoner_run(*argv: str) -> tuple[int, str]:
    """``reasoner run`` in a fresh process (its workers fork: not from a process running a
    JVM); returns the exit status and standard error."""
    done = subprocess.run(
        [sys.executable, "-m", "connectors.cli", "run", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    return done.returncode, done.stderr


def _skipped(stderr: str) -> list[str]:
    return [
        line.removeprefix("skipped ") for line in stderr.splitlines() if line.startswith("skipped ")
    ]


def _rejects(out: Path) -> list[str]:
    lines = (out / "rejects.jsonl").read_text(encoding="utf-8").splitlines()
    return [f"{r['file']}:{r['line']}: {r['reason']}" for r in map(json.loads, lines)]


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five stations over two days, storms at two of them, one malformed row."""
    folder = tmp_path_factory.mktemp("mesowest")
    storms = [
        Storm("KSLC", datetime(2021, 1, 10, 6, tzinfo=UTC), hours=10),
        Storm("KOGD", datetime(2021, 1, 10, 9, tzinfo=UTC), hours=8),
    ]
    generate(folder, ["KSLC", "KOGD", "KPVU", "KJAC", "KEVW"], 2, 11, storms)
    with open(folder / "KPVU.csv", "a", encoding="utf-8") as f:
        f.write("KPVU,not a time,1,2,3\n")
    return folder


@pytest.mark.parametrize(
    "rules",
    ["blizzard", "cold", "cold, explained, recent", "cold, a file out of time order"],
)
def test_mesowest_replay_equals_reasoner_run(
    spark: SparkSession,
    archive: Path,
    tmp_path: Path,
    rules: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if rules == "blizzard":
        files = BLIZZARD
    else:
        (tmp_path / "cold.event").write_text(COLD, encoding="utf-8")
        files = [str(tmp_path / "cold.event")]
    if rules.endswith("out of time order"):  # (its task's files read by their row loops)
        archive = Path(shutil.copytree(archive, tmp_path / "archive"))
        lines = (archive / "KJAC.csv").read_text(encoding="utf-8").splitlines(keepends=True)
        lines[20], lines[30] = lines[30], lines[20]
        (archive / "KJAC.csv").write_text("".join(lines), encoding="utf-8")
    csvs = [str(p) for p in sorted(archive.glob("*.csv"))]
    expected = tmp_path / "run.jsonl"
    events = [a for path in csvs for a in ("--events", path)]
    options = ["--explain", "--policy", "recent"] if "explained" in rules else []
    status, stderr = _reasoner_run(
        *files, "--format", "mesowest", *events, *options, "--workers", "2", "--output",
        str(expected),
    )  # fmt: skip
    assert status == 3  # the malformed row
    out = tmp_path / "out"
    argv = ["spark", "replay", *files, "--format", "mesowest", "--events", str(archive), *options]
    capsys.readouterr()
    assert main([*argv, "--out", str(out)]) == 3
    assert (out / "detections.jsonl").read_bytes() == expected.read_bytes()
    # files each in time order: each keyed task reads its keys' files (no shuffle); else the
    # tasks find the file out of order and the files are read again, through the shuffle
    steps = capsys.readouterr().err
    assert "each keyed task reads the files of its keys" in steps
    assert ("reading through a shuffle" in steps) == rules.endswith("out of time order")
    assert _rejects(out) == _skipped(stderr) != []
    late = [line for line in _rejects(out) if ": late: " in line]
    assert bool(late) == rules.endswith("out of time order")
    # the executors' sorted runs (out/_runs) are gone once the output is written
    assert sorted(p.name for p in out.iterdir()) == ["detections.jsonl", "rejects.jsonl"]
    names = {json.loads(line)["name"] for line in expected.read_text().splitlines()}
    assert ("blizzardWarning" if rules == "blizzard" else "together") in names


def test_files_out_of_time_order_are_admitted_as_reasoner_run_merges_them(
    spark: SparkSession, tmp_path: Path
) -> None:
    rules = tmp_path / "r.event"
    rules.write_text("c(K, X, Y) <- a(K, X) SEQ b(K, Y).\nd(X) <- c(1, X, _) AND c(2, X, _).\n")
    lines = {
        "f0.jsonl": [("a", 1, 1, 1), ("b", 1, 2, 5), ("a", 2, 1, 3), ("b", 2, 3, 6)],
        "f1.jsonl": [("a", 2, 1, 2), ("b", 1, 4, 8), ("a", 1, 1, 4), ("b", 2, 5, 9)],
    }
    for name, items in lines.items():
        with open(tmp_path / name, "w", encoding="utf-8") as f:
            f.write("{\n" if name == "f1.jsonl" else "")  # (malformed, before its first event)
            for event, key, value, time in items:
                f.write(json.dumps({"name": event, "args": [key, value], "time": time}) + "\n")
            f.write("not json\n" if name == "f0.jsonl" else "")  # (after its last, at 6)
    paths = [str(tmp_path / name) for name in lines]
    for lateness in ("0", "3"):
        expected = tmp_path / f"run{lateness}.jsonl"
        _, stderr = _reasoner_run(
            str(rules),
            *(a for p in paths for a in ("--events", p)),
            "--lateness",
            lateness,
            "--workers",
            "1",
            "--output",
            str(expected),
        )
        out = tmp_path / f"out{lateness}"
        argv = ["spark", "replay", str(rules), "--events", *paths[:1], "--events", paths[1]]
        main([*argv, "--lateness", lateness, "--out", str(out)])
        assert (out / "detections.jsonl").read_text() == expected.read_text() != ""
        assert _rejects(out) == _skipped(stderr)
    # a(2, 1) at 3 and a(1, 1) at 4 are late; in the order of the merge, with the malformed
    # lines (f1's first before every event, f0's last after its event at 6: before f1's at 8)
    lines_of = [line.split(": ")[0][-10:] for line in _rejects(tmp_path / "out0")]
    assert lines_of == ["f1.jsonl:1", "f0.jsonl:3", "f0.jsonl:5", "f1.jsonl:4"]
    assert len(_rejects(tmp_path / "out3")) == 3  # a(1, 1) at 4: 5 was released at 8


def test_rule_errors_are_reported_before_spark_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "bad.event"
    rules.write_text("c <- a SEQ.\n")
    events = tmp_path / "e.jsonl"
    events.write_text("")
    argv = ["spark", "replay", str(rules), "--events", str(events), "--out", str(tmp_path / "o")]
    assert main(argv) == 1
    assert f"{rules}:1:" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def _expected(program: Program, streams: list[list[Event]], options: dict) -> list[Event]:
    try:
        return event_order(Engine(program, **options).run(merge_streams(*streams)))
    except RuleCompileError:
        reject()


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    partitionable_programs(),
    keyed_streams(),
    keyed_streams(),
    st.sampled_from(["unrestricted", "recent", "chronological"]),
    st.booleans(),
)
def test_random_partitionable_programs_equal_one_engine(
    spark: SparkSession,
    program: Program,
    first: list[Event],
    second: list[Event],
    policy: str,
    provenance: bool,
) -> None:
    options = {"policy": policy, "provenance": provenance}
    expected = _expected(program, [first, second], options)
    with tempfile.TemporaryDirectory() as folder:
        files = []
        for index, stream in enumerate((first, second)):
            path = Path(folder) / f"{index}.jsonl"
            with open(path, "w", encoding="utf-8") as out:
                JsonLinesWriter(out).write_all(stream)
            files.append(str(path))
        result = replay(
            spark.sparkContext,
            Archive(tuple(files), "jsonl", program),
            runs=Path(folder) / "runs",
            options=EngineOptions(**options),
        )
        try:
            found = "".join(result.lines)
        finally:
            result.close()
    written = io.StringIO()
    JsonLinesWriter(written).write_all(expected)
    assert found == written.getvalue()  # with provenance: the sources too
    assert result.events == len(first) + len(second)


def test_parquet_output_holds_the_json_lines_detections(
    spark: SparkSession, tmp_path: Path
) -> None:
    import pyarrow.parquet as pq

    rules = tmp_path / "r.event"
    rules.write_text("c(K, X, Y) <- a(K, X) SEQ a(K, Y).\n")
    events = tmp_path / "e.jsonl"
    events.write_text(
        "".join(
            json.dumps({"name": "a", "args": [k, t], "time": t}) + "\n"
            for t in range(4)
            for k in ("x", "y")
        )
    )
    base = ["spark", "replay", str(rules), "--events", str(events), "--out"]
    assert main([*base, str(tmp_path / "j")]) == 0
    assert main([*base, str(tmp_path / "p"), "--out-format", "parquet"]) == 0
    table = pq.read_table(tmp_path / "p" / "detections.parquet").to_pylist()
    lines = [
        json.loads(line) for line in (tmp_path / "j" / "detections.jsonl").read_text().splitlines()
    ]
    assert [(r["name"], json.loads(r["args"]), r["start"], r["end"]) for r in table] == [
        (r["name"], r["args"], r["start"], r["end"]) for r in lines
    ]
    assert len(lines) == 12  # per key: C(4, 2) = 6 pairs


def test_benchmark_quick_run_compares_equal_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))  # (it imports bench_scaleout)

    path = ROOT / "benchmarks" / "bench_spark_detection.py"
    spec = importlib.util.spec_from_file_location("bench_spark_detection", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path / "bench.json"
    argv = ["--only", "replay", "--stations", "3", "--days", "0.5", "--json", str(out)]
    assert bench.main(argv) == 0
    found = json.loads(out.read_text())["replay"]
    [size] = found["sizes"]
    assert (size["stations"], size["events"], size["equal"]) == (3, 3 * 36, True)
    # Spark's fixed cost was measured apart, on one reading, and taken off
    assert size["spark_net"]["wall_s"] == size["spark"]["wall_s"] - size["spark_fixed"]["wall_s"]
    assert size["engine_events_per_s"] > 0


def test_knowledge_reaches_the_keyed_rules_on_the_executors(
    spark: SparkSession, tmp_path: Path
) -> None:
    (tmp_path / "limits.ttl").write_text(
        "<http://ex.org/s1> <http://ex.org/limit> 30 .\n"
        "<http://ex.org/s2> <http://ex.org/limit> 20 .\n"
    )
    rules = tmp_path / "r.event"
    rules.write_text(
        ":- prefix(ex, 'http://ex.org/').\n"
        "hot(S, T) <- reading(S, T, V) WHERE rdf(S, ex:limit, L), V > L.\n"
        "pair(S, T1, T2) <- hot(S, T1) SEQ hot(S, T2).\n"
    )
    events = tmp_path / "e.jsonl"
    events.write_text(
        "".join(
            json.dumps(
                {"name": "reading", "args": [{"iri": f"http://ex.org/{s}"}, t, v], "time": t}
            )
            + "\n"
            for t in range(6)
            for s, v in (("s1", 25 + 2 * t), ("s2", 25 - 2 * t))
        )
    )
    knowledge = ["--knowledge", str(tmp_path / "limits.ttl")]
    expected = tmp_path / "run.jsonl"
    status, _ = _reasoner_run(
        str(rules), "--events", str(events), *knowledge, "--workers", "1", "--output", str(expected)
    )
    assert status == 0
    out = tmp_path / "out"
    assert (
        main(
            ["spark", "replay", str(rules), "--events", str(events), *knowledge, "--out", str(out)]
        )
        == 0
    )
    assert (out / "detections.jsonl").read_text() == expected.read_text()
    # s1 is over 30 at t = 3, 4, 5; s2 over 20 at t = 0, 1, 2: 3 hot and 3 pairs each
    assert len(expected.read_text().splitlines()) == 12


@pytest.mark.parametrize("explain", [False, True])
def test_the_programs_facts_and_rules_reach_the_keyed_rules_on_the_executors(
    spark: SparkSession, tmp_path: Path, explain: bool
) -> None:
    # The driver builds the knowledge of the facts and Horn rules (over/2 answered on demand)
    # once; the executors get the program without its facts (with --explain, with them: a
    # derivation names the line of each fact it used).
    rules = tmp_path / "r.event"
    rules.write_text(
        "limit(s1, 30).\nlimit(s2, 20).\nover(V, L) :- D is V - L, D > 0.\n"
        "hot(S, T) <- reading(S, T, V) WHERE limit(S, L), over(V, L).\n"
        "pair(S, T1, T2) <- hot(S, T1) SEQ hot(S, T2).\n"
    )
    events = tmp_path / "e.jsonl"
    events.write_text(
        "".join(
            json.dumps({"name": "reading", "args": [s, t, v], "time": t}) + "\n"
            for t in range(6)
            for s, v in (("s1", 25 + 2 * t), ("s2", 25 - 2 * t))
        )
    )
    flags = ["--explain"] if explain else []
    expected = tmp_path / "run.jsonl"
    status, _ = _reasoner_run(
        str(rules), "--events", str(events), *flags, "--workers", "2", "--output", str(expected)
    )
    assert status == 0
    out = tmp_path / "out"
    argv = ["spark", "replay", str(rules), "--events", str(events), *flags, "--out", str(out)]
    assert main(argv) == 0
    assert (out / "detections.jsonl").read_text() == expected.read_text()
    lines = expected.read_text().splitlines()
    assert len(lines) == 12  # 3 hot and 3 pairs per station
    assert not explain or f'"rule":"{rules}:2"' in expected.read_text()  # limit(s2, 20)


def test_rule_changing_actions_run_in_one_engine_as_reasoner_run(
    spark: SparkSession, tmp_path: Path
) -> None:
    # seen(E) would be keyed by E; ins_static_rule keeps every rule global, in one engine
    rules = tmp_path / "r.event"
    rules.write_text("noop <- a do ins_static_rule(s1 :- s2).\ns2.\nseen(E) <- x(E) WHERE s1.\n")
    events = tmp_path / "e.jsonl"
    events.write_text(
        '{"name":"x","args":[1],"time":1}\n{"name":"a","args":[],"time":2}\n'
        '{"name":"x","args":[3],"time":3}\n'
    )
    expected = tmp_path / "run.jsonl"
    status, _ = _reasoner_run(
        str(rules), "--events", str(events), "--workers", "2", "--output", str(expected)
    )
    assert status == 0
    out = tmp_path / "out"
    assert main(["spark", "replay", str(rules), "--events", str(events), "--out", str(out)]) == 0
    assert (out / "detections.jsonl").read_text() == expected.read_text()
    assert [json.loads(line)["name"] for line in expected.read_text().splitlines()] == [
        "noop",
        "seen",
    ]


SRBENCH = ROOT.parent / "shared" / "data" / "srbench"


@pytest.mark.skipif(
    not SRBENCH.is_dir(), reason="SRBench's observations are not beside the checkout"
)
def test_real_srbench_observations_replay_as_reasoner_run(
    spark: SparkSession, tmp_path: Path
) -> None:
    # 55,185 real readings of 384 stations: Spark gives run --workers 2's bytes, and the
    # detections of one engine (which writes them as they happen, not in the defined order).
    rules = [
        str(ROOT / "tests" / "fixtures" / "srbench" / "rules.event"),
        str(SRBENCH / "stations.event"),
    ]
    events = str(SRBENCH / "events.jsonl")
    single, parallel = tmp_path / "single.jsonl", tmp_path / "parallel.jsonl"
    for out, extra in ((single, []), (parallel, ["--workers", "2"])):
        status, _ = _reasoner_run(
            *rules, "--events", events, "--policy", "recent", *extra, "--output", str(out)
        )
        assert status == 0
    out = tmp_path / "spark"
    argv = ["spark", "replay", *rules, "--events", events, "--policy", "recent"]
    assert main([*argv, "--out", str(out)]) == 0
    assert (out / "detections.jsonl").read_bytes() == parallel.read_bytes()
    lines = single.read_text(encoding="utf-8").splitlines()
    assert sorted(lines) == sorted(parallel.read_text(encoding="utf-8").splitlines())
    names = [json.loads(line)["name"] for line in lines]
    with open(events, encoding="utf-8") as f:
        gusts = [e for e in map(json.loads, f) if e["args"][1] == "WindGust" and e["args"][2] > 25]
    assert names.count("gust") == len(gusts)
    assert {name: names.count(name) for name in set(names) - {"windAvg"}} == {
        "gust": 7,
        "windRise": 4,
        "muggy": 3,
        "squall": 5,
        "calmAfterGust": 3,
    }


# Facts for a WHERE goal, keyed rules (by S) and a global rule fed by them.
EXPLAINED = """limit(s1, 30).
limit(s2, 20).
hot(S, T) <- reading(S, T, V) WHERE limit(S, L), V > L.
pair(S, T1, T2) <- hot(S, T1) SEQ hot(S, T2).
both(S1, S2, T) <- pair(S1, _, T) AND pair(S2, _, T) WHERE S1 \\= S2.
"""


def test_explain_writes_what_reasoner_run_workers_explain_writes(
    spark: SparkSession, tmp_path: Path
) -> None:
    import pyarrow.parquet as pq

    rules = tmp_path / "r.event"
    rules.write_text(EXPLAINED)
    events = tmp_path / "e.jsonl"
    readings = [
        Event.at("reading", (s, t, v), t)
        for t in range(6)
        for s, v in (("s1", 25 + 2 * t), ("s2", 15 + 2 * t))
    ]
    events.write_text(
        "".join(
            json.dumps({"name": "reading", "args": list(e.args), "time": e.end}) + "\n"
            for e in readings
        )
    )
    expected = tmp_path / "run.jsonl"
    status, _ = _reasoner_run(
        str(rules), "--events", str(events), "--workers", "2", "--explain", "--output",
        str(expected),
    )  # fmt: skip
    assert status == 0
    out = tmp_path / "out"
    argv = ["spark", "replay", str(rules), "--events", str(events), "--explain", "--out"]
    assert main([*argv, str(out)]) == 0
    assert (out / "detections.jsonl").read_bytes() == expected.read_bytes()
    lines = [json.loads(line) for line in expected.read_text().splitlines()]
    assert main([*argv, str(tmp_path / "p"), "--out-format", "parquet"]) == 0
    table = pq.read_table(tmp_path / "p" / "detections.parquet").to_pylist()
    assert [json.loads(r["why"]) for r in table] == [d["why"] for d in lines]
    engine = Engine(EXPLAINED)
    one = event_order(d for e in readings for d in engine.push(e))
    assert [(d["name"], d["args"], d["start"], d["end"]) for d in lines] == [
        (d.name, list(d.args), d.start, d.end) for d in one
    ]
    # hot at 3, 4, 5 at each station (V > 30, V > 20): pairs (3, 4), (3, 5), (4, 5); both
    # stations' pairs end together at 4 and (two distinct starts) at 5, in both orders
    assert [d["name"] for d in lines].count("both") == 6
    first = next(d for d in lines if d["name"] == "both")
    assert first["args"] == ["s1", "s2", 4]
    assert [s["rule"]["at"] for s in first["why"]["from"]] == [f"{rules}:4:1"] * 2
    hot = first["why"]["from"][0]["from"][0]
    assert hot["rule"]["at"] == f"{rules}:3:1"
    assert hot["where"][0]["facts"] == [
        {"fact": "limit", "args": ["s1", 30], "graph": "asserted", "rule": f"{rules}:1"}
    ]


def test_an_executor_that_cannot_write_the_runs_folder_is_reported(tmp_path: Path) -> None:
    from connectors.spark.detect import Stage
    from connectors.spark.replay_keyed import ShuffledTask, check_runs
    from connectors.spark.replay_read import keyed_record
    from reasoner.language.loader import load_rules

    stage = Stage(load_rules("c(K, X) <- a(K, X)."))
    absent = tmp_path / "absent"  # (the driver's folder, not on this executor)
    task = ShuffledTask(stage, 1, set(), False, str(absent), None)
    [failed] = task(0, [keyed_record([0], [Event.at("a", ("k", 1), 1)])])
    written = re.escape(str(absent / ".run-00000.")) + "[0-9a-f]+"  # (written aside)
    host = re.escape(socket.gethostname())
    assert re.fullmatch(f"on {host}: \\[Errno 2\\] No such file or directory: '{written}'", failed)
    with pytest.raises(ReasonerError) as error:
        check_runs(absent, ["00000"], [failed])
    assert str(error.value) == (
        f"{absent}: an executor could not write there ({failed}): on a cluster, --out must be "
        "a folder the driver and every executor see (a shared file system), as the executors "
        "write their sorted runs under it"
    )


def test_runs_the_driver_cannot_see_are_reported_with_the_folder(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    # An executor of a cluster writes --out on its own disk: the driver finds no file there.
    context = type(spark.sparkContext)
    run_job = context.runJob
    out = tmp_path / "out"

    def elsewhere(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        found = run_job(self, *args, **kwargs)
        (out / "_runs" / "run-00001").unlink(missing_ok=True)
        return found

    monkeypatch.setattr(context, "runJob", elsewhere)
    rules = tmp_path / "r.event"
    rules.write_text("c(K, X, Y) <- a(K, X) SEQ a(K, Y).\n")
    events = tmp_path / "e.jsonl"
    events.write_text('{"name":"a","args":["x",1],"time":1}\n')
    argv = ["spark", "replay", str(rules), "--events", str(events), "--out", str(out)]
    assert main(argv) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"reasoner: {out / '_runs'}: 1 of the 4 files the executors wrote are not there "
        "(run-00001): on a cluster, --out must be a folder the driver and every executor see "
        "(a shared file system), as the executors write their sorted runs under it"
    )
    assert not (out / "_runs").exists()


def test_equal_keys_of_other_number_types_meet_in_one_partition(
    spark: SparkSession, tmp_path: Path
) -> None:
    # 2.0 and 2 are one key for the engine's joins (a hash of repr sent them apart).
    program = parse("c(X) <- a(X) SEQ b(X).")
    stream = [Event.at("a", (2.0,), 1), Event.at("b", (2,), 2), Event.at("b", (2.5,), 3)]
    path = tmp_path / "e.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        JsonLinesWriter(out).write_all(stream)
    assert spark.sparkContext.defaultParallelism == 2
    result = replay(
        spark.sparkContext,
        Archive((str(path),), "jsonl", program),
        runs=tmp_path / "runs",
        options=EngineOptions(),
    )
    try:
        found = "".join(result.lines)
    finally:
        result.close()
    expected = _expected(program, [stream], {})
    assert [(e.name, e.args, e.start, e.end) for e in expected] == [("c", (2.0,), 1, 2)]
    written = io.StringIO()
    JsonLinesWriter(written).write_all(expected)
    assert found == written.getvalue()


def _split_station(folder: Path, station: str) -> None:
    """Cut a station's export into two files (the second half with the header again)."""
    lines = (folder / f"{station}.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    header = [line for line in lines if not line.startswith(station)]
    rows = [line for line in lines if line.startswith(station)]
    half = len(rows) // 2
    (folder / f"{station}.csv").write_text("".join(header + rows[:half]), encoding="utf-8")
    (folder / f"{station}-2.csv").write_text("".join(header + rows[half:]), encoding="utf-8")


def _flat(records: Iterable[tuple[Any, ...]], numbered: bool = True) -> list[str]:
    """The read's records, chunks as one record per event, in a comparable order (without
    the events' numbers unless ``numbered``: those of events and of the events rejections
    follow)."""
    from connectors.spark.replay_read import EVENT, REJECT, TAKEN

    out: list[tuple[Any, ...]] = []
    for record in records:
        if record[0] == TAKEN:
            out += [(EVENT, seq, event, None) for seq, event in zip(*record[1:3], strict=True)]
        else:
            out.append(record)
    if not numbered:
        out = [(EVENT, None, *r[2:]) if r[0] == EVENT else r for r in out]
        out = [(*r[:2], _unnumbered(r[2])) if r[0] == REJECT else r for r in out]
    return sorted(map(repr, out))


def _unnumbered(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """A rejection's place in the merge without the number of the event it follows (before
    its file's first event: the file's index)."""
    return key if key[0] == -math.inf else (key[0], None, *key[2:])


def _stream(records: Iterable[tuple[Any, ...]]) -> list[Event]:
    """The events the engine takes, in the order their numbers give: (end, number)."""
    from connectors.spark.replay_read import EVENT, TAKEN

    taken: list[tuple[Any, int, Event]] = []
    for record in records:
        if record[0] == TAKEN:
            taken += [(e.end, seq, e) for seq, e in zip(*record[1:3], strict=True)]
        elif record[0] == EVENT and record[3] is None:
            taken.append((record[2].end, record[1], record[2]))
    return [e for _, _, e in sorted(taken, key=lambda t: t[:2])]


def test_the_column_reader_reads_mesowest_files_as_their_row_loops(tmp_path: Path) -> None:
    from connectors.spark.replay_read import read_each, read_in_order, read_labelled

    generate(tmp_path, ["KSLC", "KOGD", "KPVU", "KEVW"], 2, 11, [])
    _split_station(tmp_path, "KSLC")  # (a station's two files: each event's file found)
    with open(tmp_path / "KPVU.csv", "a", encoding="utf-8") as f:
        f.write("KPVU,not a time,1,2,3\n")  # malformed
    lines = (tmp_path / "KEVW.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    early = "KEVW,1969-12-31T23:00:00Z,1,2,3,,10,clear,0\n"  # (rejected before the first)
    first = next(i for i, line in enumerate(lines) if line.startswith("KEVW"))
    (tmp_path / "KEVW.csv").write_text("".join([*lines[:first], early, *lines[first:]]))
    paths = tuple(str(p) for p in sorted(tmp_path.glob("*.csv")))
    files = list(enumerate(paths))
    # (readings of another arity than the rules': every one refused, with its line)
    for rules, refused in ((COLD, 0), ("odd(S) <- sensor_reading(S, T, V).", 144 * 4)):
        program = parse(rules)
        archive, arities = Archive(paths, "mesowest", program), event_arities(program)
        merged = read_in_order(archive, arities, files)
        assert merged is not None
        found = _flat(merged)
        assert found == _flat(read_each(archive, arities, files))
        # numbered by line, not place: the same records, the events in the same order
        labelled = read_labelled(archive, arities, files)
        assert labelled is not None
        labelled = list(labelled)
        assert _flat(labelled, numbered=False) == _flat(
            read_each(archive, arities, files), numbered=False
        )
        assert _stream(labelled) == _stream(read_each(archive, arities, files))
        assert sum("sensor_reading takes 3 argument(s), not 9" in r for r in found) == refused
        assert sum("lies before 1970" in r or "expected 9 cells" in r for r in found) == 2
    # a file out of time order: read by the row loops (all the task's files)
    lines = (tmp_path / "KOGD.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    lines[-1], lines[-2] = lines[-2], lines[-1]
    (tmp_path / "KOGD.csv").write_text("".join(lines), encoding="utf-8")
    assert read_in_order(archive, arities, files) is None
    assert read_labelled(archive, arities, files) is None


def test_a_read_task_raises_the_gc_threshold_only_while_it_runs(tmp_path: Path) -> None:
    # Spark's serializer runs between the pairs: the process's own threshold holds there.
    import gc

    from connectors.spark.replay_read import read_files, read_task, route
    from reasoner.runtime.worker import YOUNG

    program = parse("c(X) <- a(X) SEQ b(X).")
    path = tmp_path / "e.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        JsonLinesWriter(out).write_all([Event.at("a", (1,), 1), Event.at("b", (2,), 2)])
    archive, arities = Archive((str(path),), "jsonl", program), event_arities(program)
    keys = {("a", 1): 0, ("b", 1): 0}
    files = [(0, str(path))]
    mine = gc.get_threshold()
    assert mine[0] != YOUNG
    pairs = []
    for pair in read_task(archive, arities, files, keys, set(), 2):
        assert gc.get_threshold() == mine
        pairs.append(pair)
    assert repr(pairs) == repr(list(route(read_files(archive, arities, files), keys, set(), 2)))
    assert len(pairs) > 1


def _ending_early(
    spark: SparkSession,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    rules: str,
    seed: int,
    cut: Callable[[list[int]], int],
) -> tuple[list[Path], int, str]:
    """Four stations over a day, the files of the keyed task of ``KOGD`` cut at the row
    ``cut(their rows' indexes)`` gives, run through ``rules`` by ``spark replay``, its
    detections checked equal to ``reasoner run --workers 2``'s. Returns the files, the early
    task and what ``spark replay`` logged."""
    from reasoner.runtime.batches import key_owner

    stations = ["KSLC", "KOGD", "KPVU", "KJAC"]
    files = generate(tmp_path / "csv", stations, 1, seed)
    early = key_owner("KOGD", spark.sparkContext.defaultParallelism)
    for path, station in zip(files, stations, strict=True):
        if key_owner(station, spark.sparkContext.defaultParallelism) == early:
            lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
            rows = [i for i, line in enumerate(lines) if line.startswith(station)]
            path.write_text("".join(lines[: cut(rows)]), encoding="utf-8")
    assert {key_owner(s, 2) for s in stations} == {0, 1}
    (tmp_path / "r.event").write_text(rules, encoding="utf-8")
    expected = tmp_path / "run.jsonl"
    events = [a for path in files for a in ("--events", str(path))]
    rule_file = str(tmp_path / "r.event")
    status, _ = _reasoner_run(
        rule_file, "--format", "mesowest", *events, "--workers", "2", "--output", str(expected)
    )
    assert status == 0
    out = tmp_path / "out"
    argv = ["spark", "replay", rule_file, "--format", "mesowest", "--events", str(tmp_path / "csv")]
    capsys.readouterr()
    assert main([*argv, "--out", str(out)]) == 0
    assert (out / "detections.jsonl").read_bytes() == expected.read_bytes()
    return files, early, capsys.readouterr().err


def test_keyed_engines_whose_files_end_early_move_to_the_streams_end(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A keyed task reading its own files stops at its last reading; an alarm it holds that
    rings before the stream's end (another task's files go on) rings in a second step."""
    from reasoner.runtime.batches import key_owner

    rules = "exceptionAlarm(stale(S, T), 3600) <- sensor_reading(S, T, _, _, _, _, _, _, _).\n"
    files, early, log = _ending_early(
        spark,
        tmp_path,
        capsys,
        rules,
        3,
        lambda rows: rows[len(rows) // 2],  # half a day
    )
    assert "moving 1 keyed engines to the stream's end" in log
    found = (tmp_path / "out" / "detections.jsonl").read_text(encoding="utf-8")
    # every alarm of the early stations rang: the last ones after their tasks' last readings
    rang = [json.loads(line)["args"][0] for line in found.splitlines()]
    for path in files:
        if key_owner(path.stem, spark.sparkContext.defaultParallelism) == early:
            readings = path.read_text(encoding="utf-8").count(f"\n{path.stem},")
            assert rang.count(path.stem) == readings > 0


def _insert_row(path: Path, station: str, at: int, row: str) -> None:
    """Put ``row`` before the station's reading ``at`` (after the last one when past it)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    rows = [i for i, line in enumerate(lines) if line.startswith(f"{station},")]
    lines.insert(rows[at] if at < len(rows) else len(lines), row)
    path.write_text("".join(lines), encoding="utf-8")


# Keyed by the weather condition, not the station: the files are read through the shuffle.
BY_CONDITION = r"""
turn(C, T1, T2) <- (sensor_reading(_, T1, _, _, _, _, _, C, _)
    SEQ sensor_reading(_, T2, _, _, _, _, _, C, _)).1800.
"""


@pytest.mark.parametrize(
    "case",
    [
        "keyed by station",
        "readings of another arity",
        "keyed by condition",
        "a file out of time order",
    ],
)
def test_rejects_are_written_in_input_order_as_reasoner_run_skips_them(
    spark: SparkSession, tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Input order is the files' merge by time (docs/scale-out.md): a malformed row comes
    # after the reading its file gave before it (before any reading: in the files' order),
    # a refused reading at its place; not the files' order. One station is split over two
    # files, one file holds a header only.
    stations = ["KSLC", "KOGD", "KPVU", "KEVW"]
    files = generate(tmp_path / "csv", stations, 1, 11)
    _split_station(tmp_path / "csv", "KSLC")
    header = files[0].read_text(encoding="utf-8").split("\nKSLC,")[0] + "\n"
    (tmp_path / "csv" / "KZZZ.csv").write_text(header.replace("KSLC", "KZZZ"), encoding="utf-8")
    _insert_row(files[3], "KEVW", 70, "KEVW,not a time,1,2,3\n")  # (late in the day)
    _insert_row(files[2], "KPVU", 2, "KPVU,2021-01-10T00:50:00Z,1,2\n")
    _insert_row(files[2], "KPVU", 0, "KPVU,bad\n")  # (before its file's first reading)
    _insert_row(files[1], "KOGD", 0, "KOGD,1969-12-31T23:00:00Z,1,2,3,,10,clear,0\n")
    _insert_row(files[1], "KOGD", 40, "KOGD,2021-01-10T13:10:00Z,1,2,3\n")
    _insert_row(files[0], "KSLC", 20, "KSLC,2021-01-10T06:50:00Z,1\n")  # (the first half)
    if case == "a file out of time order":
        lines = files[1].read_text(encoding="utf-8").splitlines(keepends=True)
        lines[30], lines[20] = lines[20], lines[30]
        files[1].write_text("".join(lines), encoding="utf-8")
    rules = tmp_path / "r.event"
    program = {
        "keyed by condition": BY_CONDITION,
        "readings of another arity": "odd(S) <- sensor_reading(S, T, V).\n",  # (all refused)
    }.get(case, COLD)
    rules.write_text(program, encoding="utf-8")
    expected = tmp_path / "run.jsonl"
    paths = sorted((tmp_path / "csv").iterdir())
    events = [a for path in paths for a in ("--events", str(path))]
    # (one process for the refused readings: --workers 2's workers reading their files name
    # the refusal's reason without the event, unlike one process)
    workers = [] if case == "readings of another arity" else ["--workers", "2"]
    status, stderr = _reasoner_run(
        str(rules), "--format", "mesowest", *events, *workers, "--output", str(expected)
    )
    assert status == 3
    out = tmp_path / "out"
    argv = ["spark", "replay", str(rules), "--format", "mesowest", "--events"]
    capsys.readouterr()
    assert main([*argv, str(tmp_path / "csv"), "--out", str(out)]) == 3
    assert (out / "detections.jsonl").read_bytes() == expected.read_bytes()
    assert _rejects(out) == _skipped(stderr)
    stations = [Path(line.split(":")[0]).stem for line in _skipped(stderr) if "cells" in line]
    assert stations == ["KPVU", "KPVU", "KSLC", "KOGD", "KEVW"]  # (-inf, 00:50, 06:50 ...)
    steps = capsys.readouterr().err
    assert ("each keyed task reads" in steps) == (case != "keyed by condition")
    assert ("through a shuffle" in steps) == (case == "a file out of time order")
    if case == "readings of another arity":
        assert len(_skipped(stderr)) == 6 + 4 * 72 and expected.read_text() == ""
    else:
        assert expected.read_text() != ""


# Timers of several kinds, per station: an alarm 20 minutes after each reading, a count over
# the last hour (a reading leaves it an hour after it), a time point at 23:40 (the last
# reading of the day), and a negation with a window.
TIMERS = r"""
exceptionAlarm(stale(S, T), 1200) <- sensor_reading(S, T, _, _, _, _, _, _, _).
recent(S, N) <- aggregate(count, sensor_reading(S, _T, _, _, _, _, _, _, _), N, time(1h)).
warm(S, A) <- aggregate(avg(X), (sensor_reading(S, _T, X, _, _, _, _, _, _) WHERE number(X)),
    A, time(3h)).
last(S, T) <- sensor_reading(S, T, _, _, _, _, _, _, _) SEQ 1610322000.
cold(S, T) <- sensor_reading(S, T, Temp, _, _, _, _, _, _) WHERE Temp < 30.
mild(S, T) <- (sensor_reading(S, T, _, _, _, _, _, _, _) FNOT cold(S, _)).2h.
"""


def test_timers_of_every_kind_due_at_the_streams_end_ring_as_in_reasoner_run(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The stations of one keyed task end a reading before the others (23:20): its engine's
    next timers (an alarm, a reading leaving the count's window, the time point) are due at
    the stream's end exactly, and ring there in the second step."""
    _, _, log = _ending_early(spark, tmp_path, capsys, TIMERS, 11, lambda rows: rows[-1])
    assert "moving 1 keyed engines to the stream's end" in log
    at_end = {
        (d["name"], d["args"][0])
        for d in map(json.loads, (tmp_path / "run.jsonl").read_text().splitlines())
        if d["end"] == "2021-01-10T23:40:00Z"
    }
    for name in ("stale", "recent", "last"):  # (the early stations' too)
        assert {(name, "KOGD"), (name, "KPVU")} <= at_end


@pytest.mark.parametrize("case", ["headers broken", "and an empty file"])
def test_a_file_that_cannot_be_read_is_reported_as_reasoner_run_reports_it(
    spark: SparkSession, tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two headers broken past their station's line (each file read by its key's task: the
    # first in input order is reported, not the first task's); an empty file has no key
    # (the files are read through the shuffle). One line, exit status 1, no traceback.
    files = generate(tmp_path / "csv", ["KSLC", "KOGD", "KPVU", "KEVW"], 0.5, 11)
    lines = files[0].read_text(encoding="utf-8").splitlines(keepends=True)
    files[0].write_text("".join(lines[:7]), encoding="utf-8")  # (KSLC: no units row)
    text = files[1].read_text(encoding="utf-8")
    files[1].write_text(text.replace("# LATITUDE", "# LAT"), encoding="utf-8")  # (KOGD)
    if case == "and an empty file":
        (tmp_path / "csv" / "KAAA.csv").write_text("", encoding="utf-8")
    rules = tmp_path / "r.event"
    rules.write_text(COLD, encoding="utf-8")
    paths = sorted((tmp_path / "csv").iterdir())
    events = [a for path in paths for a in ("--events", str(path))]
    status, stderr = _reasoner_run(
        str(rules), "--format", "mesowest", *events, "--workers", "2", "--output", "-"
    )
    assert status == 1
    argv = ["spark", "replay", str(rules), "--format", "mesowest", "--events"]
    capsys.readouterr()
    assert main([*argv, str(tmp_path / "csv"), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == stderr.splitlines()[-1]
    first = "KAAA.csv:0: no column header row" if case == "and an empty file" else "KOGD.csv:1"
    assert f"csv/{first}" in err[-1]
    assert ("each keyed task reads the files of its keys" in err) == (case == "headers broken")
    assert not (tmp_path / "out" / "_runs").exists()


def test_a_keyed_task_attempted_twice_leaves_the_files_of_one_attempt(tmp_path: Path) -> None:
    # Spark runs a failed or slow task again: its state, runs and end runs are written aside
    # and renamed, so a second attempt replaces the first's files whole, and what the driver
    # reads is one attempt's. (No Spark: the tasks called as Spark calls them.)
    from connectors.spark.detect import Stage
    from connectors.spark.replay_keyed import EndTask, FilesTask, check_runs, chunks
    from connectors.spark.replay_read import TIMER
    from reasoner.compiler.partition import analyse

    files = generate(tmp_path / "csv", ["KSLC", "KJAC"], 0.5, 11)
    program = parse(TIMERS)
    keyed = analyse(program, "unrestricted")
    stage = Stage(program, keep=keyed.keyed)
    archive = Archive(tuple(map(str, files)), "mesowest", program)
    shares = [[(0, str(files[0]))], [(1, str(files[1]))]]
    found = []
    for attempts in (1, 2):
        runs = tmp_path / f"runs{attempts}"
        runs.mkdir()
        task = FilesTask(
            archive, event_arities(program), stage, keyed.key_positions(), set(), set(), str(runs)
        )
        for _ in range(attempts):
            meta = list(task(0, shares))
        [(_, _, timer)] = [r for r in meta if r[0] == TIMER]
        assert timer is not None  # (an alarm after the last reading)
        for _ in range(attempts):
            assert list(EndTask(stage, timer + 3600, set(), str(runs))([0])) == []
        check_runs(runs, ["00000", "00000-end"], [])
        assert sorted(p.name for p in runs.iterdir()) == [
            "derived-00000", "derived-00000-end", "run-00000", "run-00000-end", "state-00000"
        ]  # fmt: skip
        found.append([list(chunks(runs / name)) for name in ("run-00000", "run-00000-end")])
    assert found[0] == found[1]
    assert len(found[0][0]) > 0 and len(found[0][1]) > 0
