"""``reasoner run`` with input it cannot use: every skipped line named by file and line, an
exit status that says input was skipped, and ``--strict`` stopping at the first such line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from connectors.cli import main

ROOT = Path(__file__).resolve().parents[3]
RULES = str(ROOT / "rules" / "stock_ticker.event")
LATE = "late: ends at 2, before the current time 9: Event(name='stock', args=('GO', 100, 10), start=2, end=2)"  # noqa: E501


def _stock(price: int, time: int) -> str:
    return json.dumps({"name": "stock", "args": ["GO", price, 10], "time": time}) + "\n"


@pytest.fixture
def events(tmp_path: Path) -> tuple[str, str]:
    """Two streams; the second has a late event on line 3 and a bad line 4."""
    first = tmp_path / "first.jsonl"
    first.write_text(_stock(100, 1) + _stock(100, 3))
    second = tmp_path / "second.jsonl"
    second.write_text(_stock(100, 5) + _stock(130, 9) + _stock(100, 2) + "bad\n" + _stock(140, 12))
    return str(first), str(second)


def test_a_late_event_of_a_merged_stream_names_its_file_and_line(
    events: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = events
    assert main(["run", RULES, "--events", first, "--events", second, "--only", "ce1"]) == 3
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"skipped {second}:3: {LATE}",
        f"skipped {second}:4: bad JSON: Expecting value: line 1 column 1 (char 0)",
        "5 events, 10 detections written, 1 malformed lines and 1 rejected events skipped",
    ]
    # ce1: any two GO prices Pr1 then Pr2 with Pr1 < 1.2 * Pr2; the prices kept are 100 at 1,
    # 3 and 5, 130 at 9 and 140 at 12: every pair qualifies.
    times = [1, 3, 5, 9, 12]
    pairs = sorted((a, b) for i, a in enumerate(times) for b in times[i + 1 :])
    assert sorted((d["start"], d["end"]) for d in map(json.loads, captured.out.splitlines())) == (
        pairs
    )


def test_clean_input_exits_0(events: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", RULES, "--events", events[0], "--only", "ce1"]) == 0
    assert capsys.readouterr().err == (
        "2 events, 1 detections written, 0 malformed lines and 0 rejected events skipped\n"
    )


def test_strict_stops_at_the_first_bad_line_after_writing_what_was_derived(
    events: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = events
    status = main(
        ["run", RULES, "--events", first, "--events", second, "--strict", "--only", "ce1"]
    )
    assert status == 4
    captured = capsys.readouterr()
    # Every pair of the events before the late one (at 1, 3, 5 and 9), nothing after it.
    assert sorted((d["start"], d["end"]) for d in map(json.loads, captured.out.splitlines())) == [
        (1, 3),
        (1, 5),
        (1, 9),
        (3, 5),
        (3, 9),
        (5, 9),
    ]
    assert captured.err.splitlines() == [
        f"skipped {second}:3: {LATE}",
        "4 events, 6 detections written, 0 malformed lines and 1 rejected events skipped, "
        "stopped at the first (--strict)",
    ]


def test_strict_stops_at_a_malformed_line_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text(_stock(100, 1) + "{}\n" + _stock(130, 2))
    assert main(["run", RULES, "--events", str(path), "--strict"]) == 4
    captured = capsys.readouterr()
    assert captured.out == ""  # the rise at 2 is after the bad line
    assert captured.err.splitlines() == [
        f"skipped {path}:2: missing or empty 'name'",
        "1 events, 0 detections written, 1 malformed lines and 0 rejected events skipped, "
        "stopped at the first (--strict)",
    ]


STAMP = "<http://www.w3.org/ns/prov#generatedAtTime>"
#: Five graphs of two lines each, at times 5, 9, 2 (two triples), 12 and 3: the graphs at 2 and
#: 3 are late, the first starts on line 1 of this text.
GRAPHS = "".join(
    f"<urn:g{time}> {{ <urn:s{time}> <urn:p> {time} {extra}}}\n<urn:g{time}> {STAMP} {time} .\n"
    for time, extra in [(5, ""), (9, ""), (2, ". <urn:t2> <urn:p> 2 "), (12, ""), (3, "")]
)


@pytest.mark.parametrize("broken", [False, True], ids=["streamed", "statement-wise"])
def test_a_late_graph_names_its_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], broken: bool
) -> None:
    """A late graph is reported at the line it starts on, whether the file was parsed in one
    pass (no lines) or, after a malformed line, a statement at a time."""
    rules = tmp_path / "seen.event"
    rules.write_text("seen(S) <- triple(S, P, O).\n")
    path = tmp_path / "in.trig"
    prefix = "<urn:a> <urn:b> .\n" if broken else ""
    path.write_text(prefix + "# readings\n\n" + GRAPHS)
    first = 4 if broken else 3  # the line of the first graph

    def late(line: int, subject: str, time: int) -> str:
        return (
            f"skipped {path}:{line}: late: ends at {time}, before the current time "
            f"{9 if time == 2 else 12}: Event(name='triple', args=(IRI(value='urn:{subject}'), "
            f"IRI(value='urn:p'), {time}), start={time}, end={time})"
        )

    assert main(["run", str(rules), "--format", "trig", "--events", str(path)]) == 3
    expected = [
        late(first + 4, "s2", 2),
        late(first + 4, "t2", 2),
        late(first + 8, "s3", 3),
        f"3 events, 3 detections written, {int(broken)} malformed lines and 3 rejected events "
        "skipped, 0 graphs matched no mapping",
    ]
    if broken:
        expected.insert(0, f"skipped {path}:1: malformed RDF: . is not a valid RDF object")
    assert capsys.readouterr().err.splitlines() == expected


@pytest.mark.parametrize("workers", [[], ["--workers", "2"]])
def test_an_event_whose_where_raises_stops_the_run_with_its_error(
    workers: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """atom_length of a list raises: one engine's run stops with the error (status 1), and
    with workers the same, though the error is found in a worker's batch."""
    rules = tmp_path / "r.event"
    rules.write_text("h(K, L) <- a(K, X) WHERE atom_length(X, L).\n")
    stream = tmp_path / "a.jsonl"
    values = [["k1", "a"], ["k2", "bb"], ["k3", [1, 2]], ["k4", "ccc"]]
    stream.write_text(
        "".join(
            json.dumps({"name": "a", "args": v, "time": t}) + "\n" for t, v in enumerate(values)
        )
    )
    assert main(["run", str(rules), "--events", str(stream), *workers]) == 1
    assert capsys.readouterr().err == "reasoner: expected an atom, got (1, 2)\n"
