"""``reasoner spark stream`` and ``spark replay`` started with SIGINT ignored stop on SIGTERM:
the stream after its micro-batch in hand (summary, 143; the checkpoint goes on from there,
nothing lost or doubled), the replay writing nothing or everything (143). Slow (each starts
a JVM): two tests, small inputs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from test_stopping import background, finished, until

from connectors.cli import main

# Two JVM starts each (the command's, then pytest's for the resumed run or the reference):
# minutes on a loaded machine, over the default per-test limit.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

RULES = "rise(S, P1, P2) <- (stock(S, P1, _V1) SEQ stock(S, P2, _V2)).10 WHERE P2 > P1.\n"
PRICES = [3, 5, 2, 8, 4, 7, 1, 9, 6]


def _quotes(start: int, stop: int) -> str:
    """Quotes of A, B and C at times start..stop-1 (a fixed, irregular pattern)."""
    return "".join(
        json.dumps({"name": "stock", "args": [c, PRICES[(t * 7 + i * 5) % 9], 1], "time": t}) + "\n"
        for t in range(start, stop)
        for i, c in enumerate("ABC")
    )


def _put(folder: Path, name: str, text: str) -> Path:
    """A file arriving in the source folder (written aside, then renamed in)."""
    aside = folder.parent / f".{name}"
    aside.write_text(text, encoding="utf-8")
    os.replace(aside, folder / name)
    return folder / name


def test_spark_stream_stops_after_its_batch_and_resumes_without_loss(tmp_path: Path) -> None:
    rules = tmp_path / "r.event"
    rules.write_text(RULES, encoding="utf-8")
    source, checkpoint, out = tmp_path / "in", tmp_path / "ck", tmp_path / "out"
    source.mkdir()
    first = _put(source, "a.jsonl", _quotes(0, 40))
    argv = ["spark", "stream", str(rules), "--source", str(source)]
    argv += ["--checkpoint", str(checkpoint), "--out", str(out)]
    stream = background([*argv, "--trigger", "processing-time=1"], stderr=subprocess.PIPE)
    # (a JVM starting on a loaded machine: minutes)
    until(lambda: any(out.glob("detections/batch-*")), "first micro-batch", stream, bound=480)
    stream.send_signal(signal.SIGTERM)
    status, stderr = finished(stream)
    assert status == 143, stderr
    assert "Traceback" not in stderr
    summary = stderr.splitlines()[-1]
    assert summary.startswith("120 events, ") and summary.endswith(", terminated"), stderr
    # Resumed: only the new file is read, and the two runs' detections are one run's.
    second = _put(source, "b.jsonl", _quotes(40, 80))
    assert main(argv) == 0
    streamed = sorted(
        line
        for path in (out / "detections").glob("batch-*")
        for line in path.read_text(encoding="utf-8").splitlines()
    )
    reference = tmp_path / "run.jsonl"
    run = ["run", str(rules), "--events", str(first), "--events", str(second)]
    assert main([*run, "--output", str(reference)]) == 0
    assert streamed == sorted(reference.read_text(encoding="utf-8").splitlines())


def test_spark_replay_stopped_writes_nothing_or_everything(tmp_path: Path) -> None:
    rules = tmp_path / "r.event"
    rules.write_text(RULES, encoding="utf-8")
    events = tmp_path / "e.jsonl"
    events.write_text(_quotes(0, 3000), encoding="utf-8")
    out = tmp_path / "out"
    replay = background(
        ["spark", "replay", str(rules), "--events", str(events), "--out", str(out)],
        stderr=subprocess.PIPE,
    )
    assert replay.stderr is not None
    lines = []
    for line in replay.stderr:  # (ends with the process; pytest-timeout bounds the rest)
        lines.append(line)
        if line.startswith("running the keyed rules"):
            break
    replay.send_signal(signal.SIGTERM)
    status, rest = finished(replay)
    stderr = "".join(lines) + rest
    assert status == 143, stderr
    assert "Traceback" not in stderr
    assert not (out / "_runs").exists()
    if (out / "detections.jsonl").exists():  # the signal came once the writing began
        assert stderr.splitlines()[-1].endswith(", terminated")
    else:
        assert stderr.splitlines()[-1] == "reasoner: terminated"
        assert [p.name for p in out.iterdir()] == []  # nothing half-written, nothing aside
