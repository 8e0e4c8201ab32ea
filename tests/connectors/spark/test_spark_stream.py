"""``reasoner spark stream``: a Structured Streaming query on local Spark gives the
detections of one ``reasoner run`` over all its files (generated quotes, the MesoWest
sample), writes late events and rejected lines aside with their file and line, and loses or
doubles nothing when restarted after a crash."""

from __future__ import annotations

import io
import json
import os
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from connectors.cli import main
from connectors.events.jsonl import JsonLinesWriter
from connectors.events.times import TimeStyle
from connectors.spark import detect
from connectors.spark.stream import (
    LAYOUT_FILE,
    Job,
    Sink,
    build_query,
    check_layout,
    checkpoint_partitions,
    make_job,
    run_stream,
)
from reasoner.errors import KnowledgeError
from reasoner.knowledge.versions import KnowledgeBase
from reasoner.language.loader import load_rules
from reasoner.language.parser import parse
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.runtime.options import EngineOptions
from reasoner.values import IRI

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

ROOT = Path(__file__).resolve().parents[3]
RULES = (
    "rise(S, P1, P2) <- (stock(S, P1, _V1) SEQ stock(S, P2, _V2)).10 WHERE P2 > P1.\n"
    "avg(S, A) <- aggregate(avg(P), stock(S, P, _V), A, time(5)).\n"
    "after(S, P) <- stock(S, P, _V) SEQ 25.\n"
    # an alarm pending at the end of a micro-batch rings in a later one (from the key's state)
    "exceptionAlarm(late(S, P), 2.5) <- stock(S, P, _V) WHERE P > 7.\n"
)
PRICES = [3, 5, 2, 8, 4, 7, 1, 9, 6]


def _lines(start: int, stop: int) -> list[str]:
    """Quotes of A, B and C at times start..stop-1 (a fixed, irregular pattern)."""
    out = []
    for t in range(start, stop):
        for i, company in enumerate("ABC"):
            if (t + i) % 3 != 1:
                price = PRICES[(t * 7 + i * 5) % len(PRICES)]
                out.append(json.dumps({"name": "stock", "args": [company, price, 1], "time": t}))
    return out


def _put(folder: Path, name: str, lines: list[str]) -> Path:
    """A file arriving in the source folder (written aside, then renamed in)."""
    aside = folder.parent / f".{name}"
    aside.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    target = folder / name
    os.replace(aside, target)
    return target


def _reasoner_run(tmp_path: Path, rules: Path, files: list[Path], lateness: int) -> list[str]:
    out = tmp_path / "run.jsonl"
    argv = ["run", str(rules), "--lateness", str(lateness), "--output", str(out)]
    for f in files:
        argv += ["--events", str(f)]
    assert main(argv) == 0
    return sorted(out.read_text(encoding="utf-8").splitlines())


def _query(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """A source folder holding ``a.jsonl`` (times 0-11), the rules file (:data:`RULES`) and the
    ``spark stream`` arguments over them (checkpoint ``ck``, output ``out`` in ``tmp_path``)."""
    source = tmp_path / "source"
    source.mkdir()
    rules = tmp_path / "rules.event"
    rules.write_text(RULES, encoding="utf-8")
    _put(source, "a.jsonl", _lines(0, 12))
    argv = ["spark", "stream", str(rules), "--source", str(source)]
    argv += ["--checkpoint", str(tmp_path / "ck"), "--out", str(tmp_path / "out")]
    return source, rules, argv


def _outputs(out: Path, folder: str) -> list[str]:
    return [
        line
        for path in sorted((out / folder).glob("batch-*"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def _job(lateness: int) -> Job:
    return make_job(parse(RULES), fmt="jsonl", lateness=lateness, options=EngineOptions())


def _stream(
    spark: SparkSession, source: Path, base: Path, lateness: int, **options: Any
) -> dict[str, int]:
    """One run of the query (available-now) on ``base``'s checkpoint, writing to base/out."""
    return run_stream(
        spark,
        _job(lateness),
        source=str(source),
        checkpoint=str(base / "checkpoint"),
        out=str(base / "out"),
        trigger={"availableNow": True},
        publish=lambda detections: None,
        partitions=2,
        **options,
    )


def test_files_added_in_batches_give_one_runs_detections_and_late_and_bad_lines_aside(
    spark: SparkSession, tmp_path: Path
) -> None:
    source = tmp_path / "source"
    source.mkdir()
    rules = tmp_path / "rules.event"
    rules.write_text(RULES, encoding="utf-8")
    first = _put(source, "a.jsonl", _lines(0, 12))
    counts = _stream(spark, source, tmp_path, 2)
    assert counts["events"] == 24
    # the second run: a file going on in time, and one with a late event and bad lines
    second = _put(source, "b.jsonl", _lines(12, 20))
    bad = [
        json.dumps({"name": "stock", "args": ["A", 9, 1], "time": 8}),  # before 11 - 2
        "{not json",
        json.dumps({"name": "stock", "args": ["A"], "time": 30}),
    ]
    _put(source, "c.jsonl", bad)
    counts = _stream(spark, source, tmp_path, 2)
    assert (counts["late"], counts["reject"]) == (1, 2)
    # the third: more, and a tick far ahead, so that the watermark passes every event
    tick = json.dumps({"name": "tick", "args": [], "time": 100})
    third = _put(source, "d.jsonl", [*_lines(20, 30), tick])
    _stream(spark, source, tmp_path, 2)

    out = tmp_path / "out"
    expected = _reasoner_run(tmp_path, rules, [first, second, third], 2)
    assert sorted(_outputs(out, "detections")) == expected
    # (guards against both sides being empty; 13 of them late/2: quotes above 7, 8 or 9)
    assert len(expected) == 307 + 13
    assert sum('"name":"late"' in line for line in expected) == 13
    c = source / "c.jsonl"
    assert [json.loads(line) for line in _outputs(out, "late")] == [
        {
            "file": str(c),
            "line": 1,
            "reason": "late: ends at 8, before the watermark 9 (the latest end of earlier "
            "micro-batches less the lateness 2)",
        }
    ]
    assert [json.loads(line) for line in _outputs(out, "rejects")] == [
        {
            "file": str(c),
            "line": 2,
            "reason": "bad JSON: Expecting property name enclosed in double quotes: line 1 "
            "column 2 (char 1)",
        },
        {"file": str(c), "line": 3, "reason": "stock takes 3 argument(s), not 1"},
    ]


class _Crash(Exception):
    pass


@pytest.mark.parametrize("crash", [1, 2])  # (after 2: the state rows resumed have logs)
def test_a_query_crashing_after_writing_a_batch_and_restarted_writes_the_same(
    spark: SparkSession, tmp_path: Path, crash: int
) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for i, (start, stop) in enumerate([(0, 10), (10, 18), (18, 30)]):
        path = _put(source, f"{i}.jsonl", _lines(start, stop))
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))  # the order Spark takes them
    whole, crashed = tmp_path / "whole", tmp_path / "crashed"
    _stream(spark, source, whole, 1, files_per_batch=1)  # uninterrupted

    sink = Sink(crashed / "out", lambda detections: None)

    def crash_after_writing(frame: DataFrame, batch: int) -> None:
        sink(frame, batch)
        if batch == crash:  # written, but Spark has not recorded the batch as done
            raise _Crash

    session = spark.newSession()
    session.conf.set("spark.sql.shuffle.partitions", "2")
    check_layout(crashed / "checkpoint")  # (as run_stream starts a checkpoint)
    query = (
        build_query(session, _job(1), str(source), files_per_batch=1)
        .writeStream.foreachBatch(crash_after_writing)
        .option("checkpointLocation", str(crashed / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    with pytest.raises(Exception, match="_Crash"):
        query.awaitTermination()
    assert sorted(p.name for p in (crashed / "out" / "detections").iterdir()) == [
        f"batch-{n:08d}.jsonl" for n in range(crash + 1)
    ]
    _stream(spark, source, crashed, 1, files_per_batch=1)  # restarted from the checkpoint

    for folder in ("detections",):
        names = sorted(p.name for p in (whole / "out" / folder).iterdir())
        assert names == sorted(p.name for p in (crashed / "out" / folder).iterdir())
        for name in names:
            assert (crashed / "out" / folder / name).read_bytes() == (
                whole / "out" / folder / name
            ).read_bytes()
    assert len(_outputs(whole / "out", "detections")) > 100


def test_rule_and_option_errors_are_reported_before_spark_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "bad.event"
    rules.write_text("a(X) <- b(X) SEQ.\n", encoding="utf-8")
    (tmp_path / "in").mkdir()
    argv = ["spark", "stream", str(rules), "--source", str(tmp_path / "in")]
    argv += ["--checkpoint", str(tmp_path / "ck"), "--out", str(tmp_path / "out")]
    assert main(argv) == 1
    assert f"{rules}:1:" in capsys.readouterr().err
    assert not (tmp_path / "ck").exists()
    rules.write_text(RULES, encoding="utf-8")
    assert main([*argv, "--refresh-every", "5"]) == 1
    assert "--refresh-every needs --knowledge or --store" in capsys.readouterr().err


def test_the_mesowest_sample_streamed_gives_reasoner_runs_detections(
    spark: SparkSession, tmp_path: Path
) -> None:
    # Real exports through the blizzard rules (recent policy: one group, in one engine's order).
    samples = sorted((ROOT / "data" / "mesowest" / "sample").glob("*.csv"))
    source = tmp_path / "source"
    source.mkdir()
    for number, sample in enumerate(samples):
        path = _put(source, sample.name, sample.read_text(encoding="utf-8").splitlines())
        os.utime(path, (1_700_000_000 + number, 1_700_000_000 + number))
    rules = [ROOT / "rules" / "blizzard.event", ROOT / "rules" / "blizzard_noaa.event"]
    program = load_rules(rules)
    job = make_job(program, fmt="mesowest", lateness=0, options=EngineOptions())
    counts = run_stream(
        spark,
        job,
        source=str(source),
        checkpoint=str(tmp_path / "checkpoint"),
        out=str(tmp_path / "out"),
        trigger={"availableNow": True},
        publish=lambda detections: None,
        partitions=2,
    )
    out = tmp_path / "run.jsonl"
    argv = ["run", *map(str, rules), "--format", "mesowest", "--output", str(out)]
    for f in samples:
        argv += ["--events", str(f)]
    assert main(argv) == 0
    expected = sorted(out.read_text(encoding="utf-8").splitlines())
    assert sorted(_outputs(tmp_path / "out", "detections")) == expected
    assert (counts["events"], len(expected)) == (1296, 138)


LIMITS = """
:- prefix(ex, 'http://example.org/').
hot(S, T) <- reading(S, T) WHERE rdf(S, ex:limit, _L), T > _L.
rise(S, T1, T2) <- (reading(S, T1) SEQ reading(S, T2)).4 WHERE rdf(S, ex:limit, _L), T2 > _L.
"""


def _limits(path: Path, s1: int, s2: int) -> None:
    ex = "http://example.org/"
    path.write_text(f"<{ex}s1> <{ex}limit> {s1} .\n<{ex}s2> <{ex}limit> {s2} .\n")


def _readings(start: int, stop: int) -> list[Event]:
    return [
        Event.at("reading", (IRI(f"http://example.org/s{i}"), 20 + (t * 7 + i * 3) % 25), t)
        for t in range(start, stop)
        for i in (1, 2)
    ]


def _jsonl(events: list[Event]) -> list[str]:
    """Events as JSON lines (as reasoner run writes detections, which it also reads)."""
    buffer = io.StringIO()
    JsonLinesWriter(buffer, TimeStyle()).write_all(events)
    return buffer.getvalue().splitlines()


def test_a_refreshed_knowledge_is_taken_at_a_micro_batch_start_on_every_executor(
    spark: SparkSession, tmp_path: Path
) -> None:
    source, knowledge = tmp_path / "source", tmp_path / "limits.ttl"
    source.mkdir()
    parts = [_readings(0, 10), _readings(10, 20), [*_readings(20, 30), Event.at("tick", (), 100)]]
    for number, events in enumerate(parts):
        path = _put(source, f"{number}.jsonl", _jsonl(events))
        os.utime(path, (1_700_000_000 + number, 1_700_000_000 + number))
    _limits(knowledge, 30, 35)
    program = parse(LIMITS)
    kb = KnowledgeBase([knowledge], program=program, entailment="none")
    first = kb.current()
    calls: list[int] = []

    def publish(detections: Sequence[Event]) -> None:
        calls.append(len(calls))
        if len(calls) == 2:  # after micro-batch 1: the events up to 9 have run
            _limits(knowledge, 40, 25)
            kb.refresh()
        elif len(calls) == 3:  # a failed refresh keeps the version in use
            knowledge.write_text("<http://example.org/s1> <http://example.org/limit> .\n")
            with pytest.raises(KnowledgeError):
                kb.refresh()

    run_stream(
        spark,
        make_job(program, fmt="jsonl", lateness=0, options=EngineOptions()),
        source=str(source),
        checkpoint=str(tmp_path / "checkpoint"),
        out=str(tmp_path / "out"),
        trigger={"availableNow": True},
        publish=publish,
        files_per_batch=1,
        partitions=2,
        knowledge=kb,
    )
    # One engine, its knowledge changed between the events ending at 9 and at 10 (as
    # reasoner run --refresh-every changes it between two events).
    engine = Engine(program, knowledge=first)
    events = [e for part in parts for e in part]
    expected = [d for e in events if e.end < 10 for d in engine.push(e)]
    engine.use_knowledge(kb.current())
    expected += [d for e in events if e.end >= 10 for d in engine.push(e)] + engine.flush()
    assert sorted(_outputs(tmp_path / "out", "detections")) == sorted(_jsonl(expected))
    for version in (first, kb.current()):  # (either version throughout derives otherwise)
        assert sorted(_jsonl(list(Engine(program, knowledge=version).run(events)))) != sorted(
            _jsonl(expected)
        )
    assert (len(expected), len(calls)) == (135, 4)
    folder = tmp_path / "checkpoint" / "knowledge"
    chosen = json.loads((folder / "chosen.json").read_text())
    # only the version in use is kept: the refreshed one
    assert sorted(p.name for p in folder.iterdir()) == sorted(["chosen.json", chosen["version"]])
    with open(folder / chosen["version"], "rb") as f:
        kept = pickle.load(f)
    everything = (None, None, None)
    assert sorted(kept.solve("rdf", everything), key=str) == sorted(
        kb.current().solve("rdf", everything), key=str
    )


# Rule-changing actions: the program runs whole, in one group (one engine's state).
CHANGING = """noop <- a do ins_static_rule(s1 :- s2).
noop <- c do ins_event_rule(r 'rule:' got(Y) <- x(Y)).
noop <- k do del_event_rule(r).
s2.
seen(E) <- x(E) WHERE s1.
"""


def test_rule_changing_actions_change_the_rules_of_later_micro_batches(
    spark: SparkSession, tmp_path: Path
) -> None:
    source = tmp_path / "source"
    source.mkdir()
    rules = tmp_path / "rules.event"
    rules.write_text(CHANGING, encoding="utf-8")

    def event(name: str, time: int, *args: int) -> str:
        return json.dumps({"name": name, "args": list(args), "time": time})

    files = []
    for name, lines in (
        ("a.jsonl", [event("x", 1, 1), event("a", 2), event("c", 3)]),
        ("b.jsonl", [event("x", 4, 4), event("k", 5), event("x", 6, 6)]),
        ("c.jsonl", [event("x", 7, 7), event("tick", 100)]),
    ):
        files.append(_put(source, name, lines))
        detect._engines.clear()  # (each micro-batch in a new Python worker, as after a restart)
        run_stream(
            spark,
            make_job(load_rules([rules]), fmt="jsonl", lateness=0, options=EngineOptions()),
            source=str(source),
            checkpoint=str(tmp_path / "checkpoint"),
            out=str(tmp_path / "out"),
            trigger={"availableNow": True},
            publish=None,
            partitions=2,
        )
    expected = _reasoner_run(tmp_path, rules, files, 0)
    assert sorted(_outputs(tmp_path / "out", "detections")) == expected
    # s1 holds from 2 on, got(Y) from 3 to 5
    assert sorted((d["name"], d["args"], d["end"]) for d in map(json.loads, expected)) == [
        ("got", [4], 4), ("noop", [], 2), ("noop", [], 3), ("noop", [], 5), ("seen", [4], 4),
        ("seen", [6], 6), ("seen", [7], 7),
    ]  # fmt: skip


def test_a_key_state_after_rule_changes_restores_in_a_new_worker() -> None:
    stage = detect.Stage(parse(CHANGING))
    first = [(0, Event.at("x", (1,), 1)), (1, Event.at("a", (), 2)), (2, Event.at("c", (), 3))]
    found, state = detect.detect(stage, first, 3, keep_state=True)
    assert [d for _, ds, _ in found for d in ds] == [("noop", (), 2, 2), ("noop", (), 3, 3)]
    for fresh in (True, False):  # a new Python worker; this one, which made the changes
        if fresh:
            detect._engines.clear()
        found, _ = detect.detect(stage, [(3, Event.at("x", (4,), 4))], 4, state)
        assert [d for _, ds, _ in found for d in ds] == [("seen", (4,), 4, 4), ("got", (4,), 4, 4)]
    # and a blank state (another key, a batch run again) in the worker that made them
    found, _ = detect.detect(stage, [(3, Event.at("x", (4,), 4))], 4)
    assert found == []


def test_explain_writes_the_derivations_reasoner_run_explain_writes(
    spark: SparkSession, tmp_path: Path
) -> None:
    # keyed by S: each key's engine, in Spark's state store, explains its detections
    rules = tmp_path / "rules.event"
    rules.write_text(
        "limit(s1, 30).\nlimit(s2, 20).\n"
        "hot(S, T) <- reading(S, T, V) WHERE limit(S, L), V > L.\n"
        "pair(S, T1, T2) <- hot(S, T1) SEQ hot(S, T2).\n"
    )
    source = tmp_path / "source"
    source.mkdir()
    lines = [
        json.dumps({"name": "reading", "args": [s, t, v], "time": t})
        for t in range(6)
        for s, v in (("s1", 25 + 2 * t), ("s2", 15 + 2 * t))
    ]
    files = [_put(source, "a.jsonl", [*lines, json.dumps({"name": "tick", "time": 50})])]
    argv = ["spark", "stream", str(rules), "--source", str(source), "--explain"]
    argv += ["--checkpoint", str(tmp_path / "ck"), "--out", str(tmp_path / "out")]
    assert main(argv) == 0
    out = tmp_path / "run.jsonl"
    assert (
        main(["run", str(rules), "--events", str(files[0]), "--explain", "--output", str(out)]) == 0
    )
    expected = sorted(out.read_text(encoding="utf-8").splitlines())
    assert sorted(_outputs(tmp_path / "out", "detections")) == expected
    # hot at 3, 4, 5 at each station, pairs (3, 4), (3, 5), (4, 5): 12, each with its tree
    found = [json.loads(line) for line in expected]
    assert len(found) == 12
    pair = next(d for d in found if d["name"] == "pair")
    assert [s["rule"]["at"] for s in pair["why"]["from"]] == [f"{rules}:3:1"] * 2


def test_equal_keys_of_other_number_types_share_one_keys_state(
    spark: SparkSession, tmp_path: Path
) -> None:
    # 2.0 and 2 are one key for the engine's joins (their JSON, "2.0" and "2", named two keys).
    rules = tmp_path / "rules.event"
    rules.write_text("c(X) <- a(X) SEQ b(X).\n", encoding="utf-8")
    source = tmp_path / "source"
    source.mkdir()
    events = [
        {"name": "a", "args": [2.0], "time": 1},
        {"name": "b", "args": [2], "time": 2},
        {"name": "b", "args": [2.5], "time": 3},
        {"name": "tick", "args": [], "time": 100},
    ]
    first = _put(source, "a.jsonl", [json.dumps(e) for e in events])
    counts = run_stream(
        spark,
        make_job(load_rules([rules]), fmt="jsonl", lateness=0, options=EngineOptions()),
        source=str(source),
        checkpoint=str(tmp_path / "checkpoint"),
        out=str(tmp_path / "out"),
        trigger={"availableNow": True},
        publish=lambda detections: None,
        partitions=2,
    )
    expected = _reasoner_run(tmp_path, rules, [first], 0)
    assert [json.loads(line)["args"] for line in expected] == [[2.0]]
    assert (counts["events"], _outputs(tmp_path / "out", "detections")) == (4, expected)


def test_a_checkpoint_of_an_older_or_another_layout_is_refused_untouched(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # An older checkpoint named its keys' state by their JSON ("2.0"): resumed, that state
    # would never be found again; so one without the layout file, or with another, is refused.
    rules = tmp_path / "rules.event"
    rules.write_text(RULES, encoding="utf-8")
    (tmp_path / "source").mkdir()
    checkpoint = tmp_path / "ck"
    (checkpoint / "offsets").mkdir(parents=True)
    (checkpoint / "metadata").write_text('{"id":"x"}\n', encoding="utf-8")
    argv = ["spark", "stream", str(rules), "--source", str(tmp_path / "source")]
    argv += ["--checkpoint", str(checkpoint), "--out", str(tmp_path / "out")]
    assert main(argv) == 1
    advice = "its keys' state is named otherwise and would be lost; start a new checkpoint folder"
    assert capsys.readouterr().err == (
        f"reasoner: {checkpoint}: a checkpoint of an older version (it has no reasoner-layout "
        f"file): {advice} (--checkpoint)\n"
    )
    (checkpoint / LAYOUT_FILE).write_text("spark stream state 1\n", encoding="utf-8")
    assert main(argv) == 1
    assert capsys.readouterr().err == (
        f"reasoner: {checkpoint}: a checkpoint of another state layout ('spark stream state 1'; "
        "this version: 'spark stream state 3: keys by key_text, 64 key groups of one engine'): "
        f"{advice} (--checkpoint)\n"
    )
    assert sorted(p.name for p in checkpoint.iterdir()) == ["metadata", "offsets", LAYOUT_FILE]
    assert not (tmp_path / "out").exists()


def test_a_state_of_another_program_stops_the_query_naming_the_checkpoint_writing_nothing(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, rules, argv = _query(tmp_path)
    # a half-written file (not renamed in yet) is not read
    (source / ".b.jsonl").write_text('{"name": "stock", "args": ["A", 1', encoding="utf-8")
    assert main(argv) == 0
    assert _outputs(tmp_path / "out", "rejects") == []
    written = sorted(p.name for p in (tmp_path / "out").rglob("batch-*"))
    _put(source, "c.jsonl", _lines(12, 20))
    rules.write_text(RULES.replace("P2 > P1", "P2 < P1"), encoding="utf-8")
    assert main(argv) == 1
    err = capsys.readouterr().err
    checkpoint = (tmp_path / "ck").absolute()
    assert f"reasoner: {checkpoint}: the state of key group " in err
    assert "was written by another program (or other engine options)" in err
    assert sorted(p.name for p in (tmp_path / "out").rglob("batch-*")) == written


def test_the_state_partitions_are_one_on_a_local_master_and_a_change_is_refused(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # (Spark itself would keep the checkpoint's number and ignore the one asked, silently)
    source, _, argv = _query(tmp_path)
    checkpoint = tmp_path / "ck"
    assert main(argv) == 0
    assert checkpoint_partitions(checkpoint) == 1
    written = sorted(p.name for p in (tmp_path / "out").rglob("batch-*"))
    _put(source, "b.jsonl", _lines(12, 20))
    capsys.readouterr()
    assert main([*argv, "--state-partitions", "2"]) == 1
    assert capsys.readouterr().err == (
        f"reasoner: {checkpoint}: a checkpoint of 1 state partitions, not 2 "
        "(--state-partitions): Spark's state store cannot change its number of partitions; "
        "give 1 or leave the option out, or start a new checkpoint folder (--checkpoint)\n"
    )
    assert sorted(p.name for p in (tmp_path / "out").rglob("batch-*")) == written
    assert main(argv) == 0  # (the checkpoint's number)
    assert len(sorted((tmp_path / "out" / "detections").iterdir())) == len(written) + 1


def test_the_query_runs_in_the_callers_session_which_a_stop_signal_stops_it_from(
    spark: SparkSession, tmp_path: Path
) -> None:
    # (``spark stream``'s stop thread stops what ``spark.streams.active`` lists: a query in
    # another session was never stopped, and a SIGTERM'd stream ran on)
    import threading
    import time

    source = tmp_path / "source"
    source.mkdir()
    _put(source, "a.jsonl", _lines(0, 12))
    before = spark.conf.get("spark.sql.shuffle.partitions")
    counts: dict[str, int] = {}

    def stream() -> None:
        counts.update(
            run_stream(
                spark,
                _job(0),
                source=str(source),
                checkpoint=str(tmp_path / "checkpoint"),
                out=str(tmp_path / "out"),
                trigger={"processingTime": "1 second"},
                publish=lambda detections: None,
                partitions=3,
            )
        )

    runner = threading.Thread(target=stream, daemon=True)
    runner.start()
    deadline = time.monotonic() + 300
    while not any((tmp_path / "out").glob("detections/batch-*")):
        assert runner.is_alive() and time.monotonic() < deadline, "no first micro-batch"
        time.sleep(0.1)
    [query] = spark.streams.active
    query.stop()
    runner.join(300)
    assert not runner.is_alive() and counts["events"] == 24
    assert checkpoint_partitions(tmp_path / "checkpoint") == 3
    assert spark.conf.get("spark.sql.shuffle.partitions") == before
