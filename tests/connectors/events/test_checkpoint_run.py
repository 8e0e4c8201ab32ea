"""``reasoner run --checkpoint``: a run killed with SIGKILL and started again writes exactly
the output of an uninterrupted run; ``--workers N`` writes the same bytes for any N."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from connectors.cli import main

ROOT = Path(__file__).resolve().parents[3]
RULES = """
rise([property(consumption_policy, recent)]) 'rule:'
rise(C, P1, P2) <- (stock(C, P1, _) SEQ stock(C, P2, _)).60 WHERE P2 > P1 * 1.2.
average(C, A) <- aggregate(avg(P), stock(C, P, _V), A, count(10)).
busy(T) <- rise(C1, _, T) AND rise(C2, _, T) WHERE C1 < C2.
"""


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    rng = random.Random(16)
    events = tmp_path / "events.jsonl"
    with open(events, "w", encoding="utf-8") as f:
        for t in range(12_000):
            args = [rng.randint(1, 200), round(rng.uniform(10, 20), 2), 5]
            f.write(json.dumps({"name": "stock", "args": args, "time": t // 4}) + "\n")
        f.write('{"name": "stock", "args": [1], "time": 4000}\n')  # price and volume missing
    rules = tmp_path / "ticker.event"
    rules.write_text(RULES, encoding="utf-8")
    return rules, events


def _command(rules: Path, events: Path, out: Path, *extra: str) -> list[str]:
    return ["run", str(rules), "--events", str(events), "--output", str(out), *extra]


def test_any_number_of_workers_writes_the_same_bytes(
    inputs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules, events = inputs
    outputs = []
    for workers in ("1", "2", "3"):
        out = tmp_path / f"out{workers}.jsonl"
        assert main(_command(rules, events, out, "--workers", workers)) == 3  # (line 12001)
        outputs.append(out.read_bytes())
    single = tmp_path / "single.jsonl"
    assert main(_command(rules, events, single)) == 3
    assert outputs[0] == outputs[1] == outputs[2]
    assert sorted(outputs[0].splitlines()) == sorted(single.read_bytes().splitlines())
    err = capsys.readouterr().err
    assert err.count(f"skipped {events}:12001: stock takes 3 argument(s), not 1\n") == 4


@pytest.mark.parametrize(
    "workers", [[], ["--workers", "2"], ["--explain"], ["--workers", "2", "--explain"]]
)
def test_kill_and_restart_gives_the_uninterrupted_output(
    inputs: tuple[Path, Path], tmp_path: Path, workers: list[str]
) -> None:
    # (--explain: the derivations of the rises stored at the checkpoint explain later busy/1)
    rules, events = inputs
    reference = tmp_path / "reference.jsonl"
    assert main(_command(rules, events, reference, *workers)) == 3
    out, folder = tmp_path / "out.jsonl", tmp_path / "checkpoints"
    command = [sys.executable, "-m", "connectors.cli"]
    command += _command(rules, events, out, *workers, "--checkpoint", str(folder))
    command += ["--checkpoint-every", "400"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (folder / "checkpoint").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # past the first checkpoint: some output after it, to be taken back
    process.kill()  # SIGKILL
    process.wait(timeout=60)
    assert process.returncode == -9, "the run finished before it could be killed"
    assert (folder / "checkpoint").exists()
    done = subprocess.run(
        command, env=env, capture_output=True, text=True, check=False, timeout=600
    )
    assert done.returncode == 3, done.stderr
    assert out.read_bytes() == reference.read_bytes()
    assert not (folder / "checkpoint").exists()  # a finished run leaves nothing to resume


def test_bad_checkpoint_is_refused_and_left_untouched(
    inputs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules, events = inputs
    folder = tmp_path / "checkpoints"
    folder.mkdir()
    (folder / "checkpoint").write_bytes(b"reasoner-snapshot 1 0000\n{}")
    out = tmp_path / "out.jsonl"
    out.write_text("kept\n", encoding="utf-8")
    command = _command(rules, events, out, "--checkpoint", str(folder))
    assert main(command) == 1
    assert "corrupt or truncated" in capsys.readouterr().err
    assert (folder / "checkpoint").read_bytes() == b"reasoner-snapshot 1 0000\n{}"
    assert out.read_text(encoding="utf-8") == "kept\n"
    assert main(_command(rules, events, out, "--checkpoint", str(folder), "--workers", "2")) == 1
    assert main(["run", str(rules), "--events", str(events), "--checkpoint", str(folder)]) == 1
    assert "--checkpoint needs --output FILE" in capsys.readouterr().err


def test_checkpoint_of_another_command_is_refused(
    inputs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from connectors.events.checkpoints import Checkpoints, Every

    rules, events = inputs
    folder = tmp_path / "checkpoints"
    other = Checkpoints(folder, "another command", Every(events=1))
    with open(tmp_path / "x", "w", encoding="utf-8") as f:
        other.save(b"reasoner-snapshot 1 00\n{}", 0, f, {})
    command = _command(rules, events, tmp_path / "out.jsonl", "--checkpoint", str(folder))
    assert main(command) == 1
    assert "belongs to another command" in capsys.readouterr().err
