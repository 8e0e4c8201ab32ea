"""The one error convention: ``reasoner: message`` and exit 1 for errors, 2 for usage."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from connectors.cli import main

ROOT = Path(__file__).resolve().parents[3]


def test_an_error_is_reported_with_the_prefix_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.event"
    assert main(["run", str(missing)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"reasoner: cannot read rule file '{missing}'")


def test_an_unwritable_output_is_an_error_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text("", encoding="utf-8")
    output = tmp_path / "no-such-folder" / "out.jsonl"
    rules = str(ROOT / "rules" / "stock_ticker.event")
    assert main(["run", rules, "--events", str(events), "--output", str(output)]) == 1
    err = capsys.readouterr().err
    assert err == f"reasoner: {output}: cannot write detections: No such file or directory\n"


def test_a_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["run", "x.event", "--policy", "oldest"])
    assert info.value.code == 2
    assert "argument --policy: invalid choice: 'oldest'" in capsys.readouterr().err


def test_policy_tie_break_and_entailment_choices_are_the_library_modes() -> None:
    from connectors.cli import build_parser

    args = build_parser().parse_args(
        [
            "run",
            "a.event",
            "--policy",
            "chronological",
            "--tie-break",
            "shorter",
            "--entailment",
            "owl-rl",
        ]
    )
    assert (args.policy, args.tie_break, args.entailment) == ("chronological", "shorter", "owl-rl")


def test_python_dash_m_runs_the_same_commands(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), *sys.path]))
    common = {"capture_output": True, "text": True, "env": env, "cwd": ROOT}
    done = subprocess.run([sys.executable, "-m", "connectors.cli", "--help"], **common)
    assert (done.returncode, done.stdout.startswith("usage: reasoner")) == (0, True)
    argv = ["generate", "--out", str(tmp_path), "--stations", "KZZZ"]
    done = subprocess.run([sys.executable, "-m", "connectors.mesowest", *argv], **common)
    assert done.returncode == 1
    assert done.stderr.startswith("reasoner: unknown station(s) KZZZ")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "--workers", "0"], "--workers must be at least 1, not 0"),
        (["spark", "stream", "--files-per-batch", "0"],
         "--files-per-batch must be at least 1, not 0"),
        (["spark", "stream", "--state-partitions", "-2"],
         "--state-partitions must be at least 1, not -2"),
        (["spark", "stream", "--lateness", "-1"], "--lateness must not be negative, not -1.0"),
    ],
)  # fmt: skip
def test_counts_below_one_are_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text("", encoding="utf-8")
    rules = str(ROOT / "rules" / "stock_ticker.event")
    command, rest = argv[:-2], argv[-2:]
    if command == ["run"]:
        rest += ["--events", str(events)]
    else:  # (refused before Spark starts or the folders are read)
        rest += ["--source", str(tmp_path), "--out", str(tmp_path / "out")]
        rest += ["--checkpoint", str(tmp_path / "checkpoint")]
    assert main([*command, rules, *rest]) == 1
    assert capsys.readouterr().err == f"reasoner: {message}\n"
