"""``reasoner run`` when the input or output is not what it should be: one clear line on
standard error and a documented exit status, never a traceback (stopped by a signal:
``test_stopping.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from connectors.cli import main

ROOT = Path(__file__).resolve().parents[3]
RULES = str(ROOT / "rules" / "stock_ticker.event")
EVENTS = str(ROOT / "examples" / "data" / "stock_ticker.jsonl")


def _command(*argv: str) -> list[str]:
    return [sys.executable, "-m", "connectors.cli", *argv]


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), *sys.path]))


def _first_line_only(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """``argv`` piped into ``head -1``, with its own exit status."""
    command = " ".join(argv)
    return subprocess.run(
        ["bash", "-c", f"{command} | head -1; exit ${{PIPESTATUS[0]}}"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
    )


def test_an_events_folder_is_named_as_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", RULES, "--events", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"reasoner: {tmp_path}: is a folder, not an events file\n"


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("{tmp}/missing/out.jsonl", "No such file or directory"),
        ("{tmp}", "Is a directory"),
        ("/dev/full", "No space left on device"),
    ],
)
def test_an_output_that_cannot_be_written_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], output: str, reason: str
) -> None:
    target = output.format(tmp=tmp_path)
    assert main(["run", RULES, "--events", EVENTS, "--output", target]) == 1
    captured = capsys.readouterr()
    assert captured.err == f"reasoner: {target}: cannot write detections: {reason}\n"


def test_a_closed_pipe_ends_the_run_with_one_line_and_141(tmp_path: Path) -> None:
    # Enough detections that the pipe buffer fills after `head` has gone.
    events = tmp_path / "many.jsonl"
    events.write_text(
        "".join(
            json.dumps({"name": "stock", "args": ["GO", 100 + i % 7, 10], "time": i}) + "\n"
            for i in range(3000)
        )
    )
    done = _first_line_only(_command("run", RULES, "--events", str(events)))
    assert done.returncode == 141
    assert done.stdout.count("\n") == 1
    assert done.stderr == "reasoner: standard output closed early (broken pipe)\n"


def test_a_closed_pipe_with_the_workers_reading_is_one_line_and_141(tmp_path: Path) -> None:
    # (the workers read their shares: the halt of their shares came after the pool's close, a
    # traceback "Exception ignored in: <generator object ParallelEngine._merged ...>")
    rules, events = tmp_path / "rise.event", tmp_path / "many.jsonl"
    rules.write_text("rise(C, P2) <- (stock(C, P1) SEQ stock(C, P2)).10 WHERE P1 < P2.\n")
    events.write_text(
        "".join(
            json.dumps({"name": "stock", "args": [f"C{i % 5}", i % 7], "time": i}) + "\n"
            for i in range(20_000)
        )
    )
    done = _first_line_only(_command("run", str(rules), "--events", str(events), "--workers", "2"))
    assert done.stdout.count("\n") == 1
    assert done.stderr == "reasoner: standard output closed early (broken pipe)\n"
    assert done.returncode == 141


def test_the_summary_names_the_events_no_rule_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = tmp_path / "e.jsonl"
    lines = [("stock", 1), ("Stock", 2), ("Stock", 3), ("trade", 4)]
    events.write_text(
        "".join(json.dumps({"name": n, "args": ["GO", 1, 2], "time": t}) + "\n" for n, t in lines)
    )
    assert main(["run", RULES, "--events", str(events)]) == 0
    assert capsys.readouterr().err.splitlines()[-1] == (
        "4 events, 0 detections written, 0 malformed lines and 0 rejected events skipped, "
        "events no rule reads: Stock (2), trade (1)"
    )


def test_mesowest_to_rdf_into_a_closed_pipe_is_one_line_and_141() -> None:
    csv = sorted(str(path) for path in (ROOT / "data" / "mesowest" / "sample").glob("*.csv"))
    done = _first_line_only(_command("mesowest", "to-rdf", *csv))
    assert done.returncode == 141
    first = "<https://w3id.org/etalis-reasoner/mesowest/KEVW/2021-01-10T00:00:00Z> {\n"
    assert done.stdout == first
    assert done.stderr == "reasoner: standard output closed early (broken pipe)\n"
