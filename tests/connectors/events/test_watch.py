"""Rule files reloaded while a replay runs: RuleWatcher, and ``reasoner run --watch-rules``
with a rule file rewritten between the events of a live input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from connectors.cli import main
from connectors.events.watch import RuleWatcher
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event

ROOT = Path(__file__).resolve().parents[3]


def _rewrite(path: Path, text: str) -> None:
    """Write ``text`` with a modification time surely different from the last one."""
    before = path.stat().st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))


class _Clock:
    def __init__(self) -> None:
        self.now, self.reads = 0.0, 0

    def __call__(self) -> float:
        self.reads += 1
        return self.now


def _names(events: list[Event]) -> list[tuple[object, ...]]:
    return [(e.name, e.args, e.start, e.end) for e in events]


def test_changed_rules_are_swapped_and_the_others_keep_their_state(tmp_path: Path) -> None:
    rules = tmp_path / "r.event"
    rules.write_text("c(X) <- a(X) SEQ b(X).\nd(X) <- a(X) SEQ e(X).\n")
    clock, reports = _Clock(), []
    watcher = RuleWatcher([rules], interval=5, every=2, report=reports.append, clock=clock)
    engine = Engine(watcher.program())
    engine.push(Event.at("a", (1,), 1))
    _rewrite(rules, "% d replaced by f\nc(X) <- a(X) SEQ b(X).\nf(X) <- a(X) SEQ e(X).\n")
    clock.now = 4.9
    for _ in range(4):
        watcher.poll(engine)  # the clock is read at every second poll only
    assert (clock.reads, reports) == (3, [])  # (one read when created) not yet time
    clock.now = 5.0
    watcher.poll(engine)
    watcher.poll(engine)
    assert reports == [f"rules: {rules} reloaded: 1 added (f/1), 1 removed (d/1)"]
    assert _names(engine.push(Event.at("b", (1,), 2))) == [("c", (1,), 1, 2)]
    assert _names(engine.push(Event.at("e", (1,), 3))) == []  # f sees only later events
    engine.push(Event.at("a", (2,), 4))
    assert _names(engine.push(Event.at("e", (2,), 5))) == [("f", (2,), 4, 5)]
    assert (watcher.reloaded, watcher.failed) == (1, 0)


def test_a_file_that_no_longer_compiles_keeps_the_previous_rules(tmp_path: Path) -> None:
    rules = tmp_path / "r.event"
    rules.write_text("c(X) <- a(X) SEQ b(X).\n")
    clock, reports = _Clock(), []
    watcher = RuleWatcher([rules], interval=1, every=1, report=reports.append, clock=clock)
    engine = Engine(watcher.program())
    engine.push(Event.at("a", (1,), 1))
    for text, reason in [
        ("c(X) <- a(X) SEQ b(X).\nd <- a SEQ .\n", f"{rules}:2:12: expected an event"),
        ("c(X) <- a(X) SEQ b(X).\nd(Y) <- a(X).\n", f"{rules}:2:3: unbound variable 'Y'"),
        ("c <- NOT(d).[a, b].\nd <- c SEQ a.\n", "recursion"),
    ]:
        _rewrite(rules, text)
        clock.now += 1
        watcher.poll(engine)
        assert reason in reports[-1].splitlines()[0]
        assert reports.pop().endswith(f"rules: {rules} not reloaded: the previous rules stay")
        watcher.poll(engine)
        clock.now += 1
        watcher.poll(engine)
        assert reports == []  # reported once
    assert watcher.failed == 3
    assert _names(engine.push(Event.at("b", (1,), 2))) == [("c", (1,), 1, 2)]
    rules.unlink()
    clock.now += 1
    watcher.poll(engine)
    assert f"{rules}" in reports.pop() and watcher.failed == 4


def _line(name: str, args: list[object], time: int) -> str:
    return json.dumps({"name": name, "args": args, "time": time}) + "\n"


def test_run_watch_rules_reloads_a_file_rewritten_between_events(tmp_path: Path) -> None:
    rules = tmp_path / "r.event"
    rules.write_text("c(X) <- a(X) SEQ b(X).\nd(X) <- a(X) SEQ e(X).\n")
    command = [sys.executable, "-m", "connectors.cli", "run", str(rules), "--events", "-"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), *sys.path]))
    with subprocess.Popen(
        [*command, "--watch-rules", "--watch-interval", "0.05"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as run:
        assert run.stdin is not None and run.stdout is not None and run.stderr is not None

        def send(*lines: str) -> None:
            assert run.stdin is not None
            run.stdin.write("".join(lines))
            run.stdin.flush()

        send(_line("a", [1], 1), _line("a", [5], 2), _line("b", [1], 3))
        first = run.stdout.readline()  # standard input is live: written per detection
        _rewrite(rules, "c(X) <- a(X) SEQ b(X).\nf(X) <- a(X) SEQ g(X).\n")
        time.sleep(0.5)  # ten intervals: the next event finds the change
        send(_line("e", [1], 4), _line("b", [5], 5))  # no d any more; c keeps a(5)
        second = run.stdout.readline()
        send(_line("g", [1], 6), _line("a", [7], 7), _line("g", [7], 8))
        third = run.stdout.readline()  # f from a(7), not from a(1): it came before f
        _rewrite(rules, "c(X) <- a(X) SEQ b(X).\nf(X) <- a(X) SEQ\n")
        time.sleep(0.5)
        send(_line("b", [7], 9))
        run.stdin.close()
        rest = run.stdout.read()
        stderr = run.stderr.read()
        assert run.wait(timeout=60) == 0
    found = [json.loads(line) for line in (first, second, third, *rest.splitlines())]
    assert [(d["name"], d["args"], d["start"], d["end"]) for d in found] == [
        ("c", [1], 1, 3),
        ("c", [5], 2, 5),
        ("f", [7], 7, 8),
        ("c", [7], 7, 9),
    ]
    lines = stderr.splitlines()
    assert lines[0] == f"rules: {rules} reloaded: 1 added (f/1), 1 removed (d/1)"
    assert lines[1].startswith(f"rules: {rules}:2:17: expected an event")
    assert f"rules: {rules} not reloaded: the previous rules stay" in lines
    assert lines[-1] == (
        "9 events, 4 detections written, 0 malformed lines and 0 rejected events skipped, "
        "events no rule reads: e (1), rules reloaded 1 times (1 reloads refused)"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--watch-interval", "0"], "--watch-interval must be positive, not 0.0"),
    ],
)
def test_run_watch_rules_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], message: str
) -> None:
    rules = tmp_path / "r.event"
    rules.write_text("c <- a.\n")
    assert main(["run", str(rules), "--watch-rules", *options]) == 1
    assert capsys.readouterr().err == f"reasoner: {message}\n"


def _jsonl(path: Path, lines: list[str]) -> None:
    path.write_text("".join(lines))


@pytest.mark.parametrize("workers", [[], ["--workers", "2"]])
def test_a_checkpoint_resumes_with_its_rules_then_reloads_the_edited_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], workers: list[str]
) -> None:
    rules, events, out = tmp_path / "r.event", tmp_path / "e.jsonl", tmp_path / "out.jsonl"
    rules.write_text("c(X) <- a(X) SEQ b(X).\nd(X) <- a(X) SEQ e(X).\n")
    start = [_line("a", [1], 1), _line("a", [2], 2)]
    middle = [_line("b", [1], 4), _line("e", [2], 5), _line("a", [3], 6)]
    _jsonl(events, [*start, "{\n", *middle, "{\n", _line("e", [3], 7)])
    command = ["run", str(rules), "--events", str(events), "--output", str(out)]
    command += ["--watch-rules", "--checkpoint", str(tmp_path / "cp"), "--checkpoint-every", "1"]
    command += workers
    assert main([*command, "--strict"]) == 4  # stopped at line 3: a checkpoint after a(2)
    # While the run is down: d replaced by f, the bad line replaced by an event nothing reads.
    _rewrite(rules, "c(X) <- a(X) SEQ b(X).\nf(X) <- a(X) SEQ e(X).\n")
    _jsonl(events, [*start, _line("g", [9], 3), *middle, "{\n", _line("e", [3], 7)])
    capsys.readouterr()
    # The resumed engine has the checkpoint's rules (c and d holding a(1), a(2)); the edit
    # applies before the first event read after the checkpoint: d(2) never comes, f sees a(3).
    assert main([*command, "--strict"]) == 4  # stopped at line 7: a checkpoint after a(3)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"rules: {rules} reloaded: 1 added (f/1), 1 removed (d/1)"
    # This checkpoint's engine has the reloaded rules: resumed from the first text and the
    # reload applied again (a fresh engine of the new text has another network).
    _jsonl(events, [*start, _line("g", [9], 3), *middle, _line("g", [0], 6), _line("e", [3], 7)])
    assert main(command) == 0
    found = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(d["name"], d["args"], d["start"], d["end"]) for d in found] == [
        ("c", [1], 1, 4),
        ("f", [3], 6, 7),
    ]
    assert "reloaded" not in capsys.readouterr().err


def test_a_resumed_run_keeps_its_rules_when_the_edited_file_is_broken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules, events, out = tmp_path / "r.event", tmp_path / "e.jsonl", tmp_path / "out.jsonl"
    rules.write_text("c(X) <- a(X) SEQ b(X).\n")
    _jsonl(events, [_line("a", [1], 1), "{\n", _line("b", [1], 3)])
    command = ["run", str(rules), "--events", str(events), "--output", str(out)]
    command += ["--watch-rules", "--checkpoint", str(tmp_path / "cp"), "--checkpoint-every", "1"]
    assert main([*command, "--strict"]) == 4
    _rewrite(rules, "c(X) <- a(X) SEQ\n")
    capsys.readouterr()
    assert main(command) == 3  # (the bad line, reported again: it comes after the checkpoint)
    assert [json.loads(line)["name"] for line in out.read_text().splitlines()] == ["c"]
    err = capsys.readouterr().err
    assert f"rules: {rules} not reloaded: the previous rules stay" in err


def test_a_change_the_workers_cannot_follow_is_refused_and_the_rules_stay(
    tmp_path: Path,
) -> None:
    from reasoner.runtime.parallel import ParallelEngine

    rules = tmp_path / "r.event"
    keyed = "c(X, Y) <- a(X, Y) SEQ b(X, Y).\n"
    rules.write_text(keyed)
    clock, reports = _Clock(), []
    watcher = RuleWatcher([rules], interval=1, every=1, report=reports.append, clock=clock)
    with ParallelEngine(watcher.program(), workers=2, batch=1) as engine:
        engine.push(Event.at("a", (1, 2), 1))
        # Three rules keyed by the second argument: the analysis keys a/2 by it.
        by_y = "".join(f"{n}(Y) <- a(_X{n}, Y) SEQ b(_Z{n}, Y).\n" for n in ("d", "e", "f"))
        _rewrite(rules, keyed + by_y)
        clock.now = 2.0
        watcher.poll(engine)
        found = engine.push(Event.at("b", (1, 2), 3)) + engine.flush()
    assert reports == [
        "rules: this change keys a/2 by another argument (the partition analysis of the new "
        "rules): the workers' state cannot follow; restart with the new rules\n"
        f"rules: {rules} not reloaded: the previous rules stay"
    ]
    assert _names(found) == [("c", (1, 2), 1, 3)]
    assert (watcher.reloaded, watcher.failed) == (0, 1)
