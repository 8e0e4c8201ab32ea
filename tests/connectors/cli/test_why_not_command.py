"""``reasoner why-not``: the answer on standard output, its exit status, the input's file and
line for a rejected event, JSON output, ISO times."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from connectors.cli import main
from connectors.cli.why_not import NOT_DETECTED


def _line(name: str, args: list[object], time: object) -> str:
    return json.dumps({"name": name, "args": args, "time": time}) + "\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    """A rule with a window of 5; a and b of X = 1 eight apart, a late b on line 4 and a bad
    line 3."""
    rules = tmp_path / "c.event"
    rules.write_text("c(X) <- (a(X) SEQ b(X)).5.\n", encoding="utf-8")
    events = tmp_path / "in.jsonl"
    events.write_text(
        _line("a", [1], 1)
        + _line("b", [1], 9)
        + "bad\n"
        + _line("b", [1], 3)
        + _line("a", [2], 10)
        + _line("b", [2], 12),
        encoding="utf-8",
    )
    return str(rules), str(events)


def test_not_detected_names_what_stopped_it(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    rules, events = files
    assert main(["why-not", rules, "--events", events, "--expect", "c(1)"]) == NOT_DETECTED == 5
    assert capsys.readouterr().out == (
        "c(1) did not occur.\n"
        "The closest partial matches, and what stopped each:\n"
        f"1. c(X) <- ... ({rules}:1:1): 2 of 2 events matched\n"
        "   a(1)@1, b(1)@3\n"
        f"   stopped: the input event b(1)@3 ({events}:4) was rejected: late: ends at 3, before "
        "the current time 9\n"
        f"2. c(X) <- ... ({rules}:1:1): 2 of 2 events matched\n"
        "   a(1)@1, b(1)@9\n"
        "   stopped: the window of 5 was exceeded: it lasted 8, 3 too long\n"
        "note: 'c' occurred with other arguments: c(2)@[10, 12]\n"
        f"note: input line skipped, its event unknown: {events}:3: bad JSON: Expecting value: "
        "line 1 column 1 (char 0)\n"
    )


def test_detected_exits_0_with_its_interval(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    rules, events = files
    assert main(["why-not", rules, "--events", events, "--expect", "c(2)"]) == 0
    assert capsys.readouterr().out == "c(2) occurred:\n  c(2)@[10, 12]\n"
    assert (
        main(["why-not", rules, "--events", events, "--expect", "c", "--between", "0", "11"]) == 5
    )
    assert capsys.readouterr().out.splitlines()[-2] == (
        "note: it occurred outside the time range: c(2)@[10, 12]"
    )


def test_json_output(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    rules, events = files
    argv = ["why-not", rules, "--events", events, "--expect", "c(1)", "--output-format", "json"]
    assert main([*argv, "--limit", "1"]) == 5
    found = json.loads(capsys.readouterr().out)
    assert [[r["kind"] for r in m["reasons"]] for m in found["near_misses"]] == [["rejected"]]
    assert found["near_misses"][0]["reasons"][0]["where"] == f"{events}:4"
    assert [n["kind"] for n in found["notes"]] == ["other", "rejected"]
    assert found["notes"][1]["where"] == f"{events}:3"


def test_iso_times_in_and_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "c.event"
    rules.write_text("c <- (a SEQ b).1h.\n", encoding="utf-8")
    events = tmp_path / "in.jsonl"
    events.write_text(
        _line("a", [], "2021-01-10T06:00:00Z") + _line("b", [], "2021-01-10T08:00:00Z"),
        encoding="utf-8",
    )
    argv = ["why-not", str(rules), "--events", str(events), "--expect", "c"]
    window = ["--between", "2021-01-10T07:00:00Z", "2021-01-10T09:00:00Z"]
    assert main([*argv, *window]) == 5
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "c did not occur between 2021-01-10T07:00:00Z and 2021-01-10T09:00:00Z."
    assert out[3:5] == [
        "   a@2021-01-10T06:00:00Z, b@2021-01-10T08:00:00Z",
        "   stopped: the window of 3600 was exceeded: it lasted 7200, 3600 too long",
    ]


def test_a_bad_expectation_is_an_error(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    rules, events = files
    assert main(["why-not", rules, "--events", events, "--expect", "c(1"]) == 1
    assert capsys.readouterr().err.startswith("reasoner: expected detection 'c(1' is not an event")


def test_knowledge_is_read_as_run_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "s.event"
    rules.write_text(
        ":- prefix(ex, 'http://ex.org/').\n"
        "alert(S) <- reading(S) WHERE rdf(S, ex:kind, ex:Station).\n",
        encoding="utf-8",
    )
    events = tmp_path / "in.jsonl"
    events.write_text(_line("reading", [{"iri": "http://ex.org/a"}], 1), encoding="utf-8")
    command = ["why-not", str(rules), "--events", str(events), "--expect", "alert(_)"]
    for kind, status in (("Station", 0), ("Buoy", NOT_DETECTED)):
        knowledge = tmp_path / f"{kind}.ttl"
        knowledge.write_text(
            f"@prefix ex: <http://ex.org/> .\nex:a ex:kind ex:{kind} .\n", encoding="utf-8"
        )
        assert main([*command, "--knowledge", str(knowledge)]) == status
    capsys.readouterr()
