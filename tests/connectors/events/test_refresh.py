"""Refreshing knowledge during a replay: in the background, swapped in between events, on a
timer, on request and on SIGHUP; a failed refresh keeps the previous version."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from connectors.cli import main
from connectors.events.refresh import Refresher
from reasoner.knowledge.versions import KnowledgeBase
from reasoner.language.parser import parse
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.values import IRI

ROOT = Path(__file__).resolve().parents[3]
S1 = "http://example.org/s1"
RULES = """
:- prefix(ex, 'http://example.org/').
hot(S, T) <- reading(S, T) WHERE rdf(S, ex:limit, _L), T > _L.
"""


def _limits(path: Path, limit: int) -> None:
    path.write_text(f"<http://example.org/s1> <http://example.org/limit> {limit} .\n")


def _until(condition: object, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _setup(tmp_path: Path) -> tuple[Path, KnowledgeBase, Engine]:
    knowledge = tmp_path / "limits.ttl"
    _limits(knowledge, 30)
    program = parse(RULES)
    kb = KnowledgeBase([knowledge], program=program, entailment="none")
    return knowledge, kb, Engine(program, knowledge=kb.current())


def _reading(value: int, at: int) -> Event:
    return Event.at("reading", (IRI("http://example.org/s1"), value), at)


def test_a_requested_refresh_reaches_the_engine_between_events(tmp_path: Path) -> None:
    knowledge, kb, engine = _setup(tmp_path)
    reports: list[str] = []
    with Refresher(kb, None, reports.append) as refresher:
        assert engine.push(_reading(35, 1)) != []  # limit 30
        _limits(knowledge, 40)
        refresher.request()
        _until(lambda: reports)
        refresher.poll(engine)
        assert engine.push(_reading(35, 2)) == []  # limit 40 now
        assert refresher.refreshed == 1
    assert reports == ["knowledge: version 2 ready"]


def test_a_timer_refreshes_on_its_own(tmp_path: Path) -> None:
    knowledge, kb, engine = _setup(tmp_path)
    _limits(knowledge, 40)
    with Refresher(kb, 0.05, lambda message: None) as refresher:
        _until(lambda: kb.version >= 2)
        _until(lambda: (refresher.poll(engine), refresher.refreshed)[1] >= 1)
    assert engine.push(_reading(35, 1)) == []


def test_a_failed_refresh_keeps_the_previous_knowledge(tmp_path: Path) -> None:
    knowledge, kb, engine = _setup(tmp_path)
    reports: list[str] = []
    with Refresher(kb, None, reports.append) as refresher:
        knowledge.write_text("<http://example.org/s1> <http://example.org/limit> .\n")
        refresher.request()
        _until(lambda: reports)
        refresher.poll(engine)
        assert refresher.failed == 1 and refresher.refreshed == 0
        assert engine.push(_reading(35, 1)) != []  # still limit 30
    assert "refresh failed, version 1 stays in use" in reports[0]
    assert "limits.ttl" in reports[0]  # names the broken file


def test_refresh_every_needs_knowledge(capsys: pytest.CaptureFixture[str]) -> None:
    rules = str(ROOT / "rules" / "stock_ticker.event")
    assert main(["run", rules, "--events", "-", "--refresh-every", "5"]) == 1
    assert "--refresh-every needs --knowledge or --store" in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="SIGHUP is POSIX")
def test_sighup_refreshes_a_running_replay(tmp_path: Path) -> None:
    knowledge = tmp_path / "limits.ttl"
    _limits(knowledge, 30)
    rules = tmp_path / "hot.event"
    rules.write_text(RULES)
    command = [sys.executable, "-m", "connectors.cli", "run", str(rules), "--events", "-"]
    command += ["--knowledge", str(knowledge), "--entailment", "none"]
    with subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        guard = threading.Timer(120, proc.kill)
        guard.start()
        try:

            def send(value: int, at: int) -> None:
                line = {"name": "reading", "args": [{"iri": S1}, value], "time": at}
                proc.stdin.write(json.dumps(line) + "\n")  # type: ignore[union-attr]
                proc.stdin.flush()  # type: ignore[union-attr]

            send(35, 1)
            assert json.loads(proc.stdout.readline())["args"] == [{"iri": S1}, 35]
            _limits(knowledge, 40)
            proc.send_signal(signal.SIGHUP)
            for line in proc.stderr:
                if "version 2 ready" in line:
                    break
            send(35, 2)  # not hot any more
            send(45, 3)
            assert json.loads(proc.stdout.readline())["args"] == [{"iri": S1}, 45]
            proc.stdin.close()
            assert proc.wait() == 0
            assert "knowledge refreshed 1 times" in proc.stderr.read()
        finally:
            guard.cancel()
            proc.kill()


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="SIGHUP is POSIX")
def test_sighup_refreshes_every_worker_at_the_same_event(tmp_path: Path) -> None:
    """With --workers 2: the events read after a refresh use the new version in every worker
    (the detections come at the end, in the defined order); a broken refresh keeps the last."""
    knowledge = tmp_path / "limits.ttl"
    _limits(knowledge, 30)
    rules = tmp_path / "hot.event"
    rules.write_text(RULES)
    command = [sys.executable, "-m", "connectors.cli", "run", str(rules), "--events", "-"]
    command += ["--knowledge", str(knowledge), "--entailment", "none", "--workers", "2"]
    with subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        guard = threading.Timer(120, proc.kill)
        guard.start()
        try:

            def send(*readings: tuple[int, int]) -> None:
                for value, at in readings:
                    line = {"name": "reading", "args": [{"iri": S1}, value], "time": at}
                    proc.stdin.write(json.dumps(line) + "\n")  # type: ignore[union-attr]
                # A bad line: reported once every reading before it was pushed.
                proc.stdin.write("{\n")  # type: ignore[union-attr]
                proc.stdin.flush()  # type: ignore[union-attr]
                wait("skipped")

            def wait(text: str) -> None:
                for line in proc.stderr:  # type: ignore[union-attr]
                    if text in line:
                        return
                raise AssertionError(f"no {text!r} on stderr")

            send((35, 1), (32, 2))  # limit 30: both hot
            _limits(knowledge, 40)
            proc.send_signal(signal.SIGHUP)
            wait("version 2 ready")
            send((35, 3), (45, 4))  # limit 40: 45 only
            knowledge.write_text("<http://example.org/s1> <http://example.org/limit> .\n")
            proc.send_signal(signal.SIGHUP)
            wait("refresh failed, version 2 stays in use")
            send((35, 5), (41, 6))  # still 40
            proc.stdin.close()
            assert proc.wait() == 3  # (the bad lines)
            found = [(line["args"][1], line["end"]) for line in map(json.loads, proc.stdout)]
            assert found == [(35, 1), (32, 2), (45, 4), (41, 6)]
            assert "knowledge refreshed 1 times (1 refreshes failed)" in proc.stderr.read()
        finally:
            guard.cancel()
            proc.kill()
