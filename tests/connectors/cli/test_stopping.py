"""Every long-running command stops cleanly on SIGTERM, started as a background job is (SIGINT
ignored): the output written is a whole-line prefix of the uninterrupted output, the summary
is printed, the status is 143 (130 for SIGINT), and a ``--checkpoint`` resumes to the full
output with nothing lost or doubled. Every wait here has a bound that fails the test."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from connectors.cli import main

ROOT = Path(__file__).resolve().parents[3]
RULES = """
rise([property(consumption_policy, recent)]) 'rule:'
rise(C, P1, P2) <- (stock(C, P1, _) SEQ stock(C, P2, _)).60 WHERE P2 > P1 * 1.2.
average(C, A) <- aggregate(avg(P), stock(C, P, _V), A, count(10)).
"""
#: Seconds any one wait here may take before the test fails (a loaded machine is slow).
BOUND = 180


def background(command: list[str], **options: object) -> subprocess.Popen[str]:
    """Start ``reasoner COMMAND`` as a POSIX shell starts a background job: SIGINT ignored
    (the command must install its own handlers)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-m", "connectors.cli", *command],
        env=env,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        **options,
    )


def finished(process: subprocess.Popen[str]) -> tuple[int, str]:
    """The exit status and the rest of standard error (pipes read and closed), within
    :data:`BOUND` seconds, else the process is killed and the test fails."""
    try:
        _, stderr = process.communicate(timeout=BOUND)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate(timeout=BOUND)
        pytest.fail(f"{process.args} did not stop within {BOUND} s")
    return process.returncode, stderr or ""


def until(
    condition: Callable[[], bool],
    what: str,
    process: subprocess.Popen[str] | None = None,
    bound: float = BOUND,
) -> None:
    """Wait (bounded) until ``condition()`` holds; else kill ``process`` and fail."""
    deadline = time.monotonic() + bound
    while not condition():
        if time.monotonic() > deadline or (process is not None and process.poll() is not None):
            if process is not None:
                process.kill()
                status, stderr = finished(process)
                pytest.fail(f"no {what} within {bound} s (status {status}): {stderr}")
            pytest.fail(f"waited {bound} s for {what}")
        time.sleep(0.05)


def terminated(run: subprocess.Popen[str]) -> str:
    """Send ``run`` SIGTERM; its summary line, once it has stopped as a terminated run does
    (status 143, no traceback, the summary saying so)."""
    run.send_signal(signal.SIGTERM)
    status, stderr = finished(run)
    assert status == 143, stderr
    assert "Traceback" not in stderr
    summary = stderr.splitlines()[-1]
    assert summary.endswith(", terminated"), stderr
    return summary


@pytest.fixture
def ticker(tmp_path: Path) -> tuple[Path, Path]:
    rng = random.Random(31)
    events = tmp_path / "events.jsonl"
    with open(events, "w", encoding="utf-8") as f:
        for t in range(6_000):
            args = [rng.randint(1, 100), round(rng.uniform(10, 20), 2), 5]
            f.write(json.dumps({"name": "stock", "args": args, "time": t // 4}) + "\n")
    rules = tmp_path / "ticker.event"
    rules.write_text(RULES, encoding="utf-8")
    return rules, events


@pytest.mark.parametrize("workers", [[], ["--workers", "2"]])
def test_sigterm_mid_stream_writes_a_prefix_and_a_checkpoint_resumes_it(
    ticker: tuple[Path, Path], tmp_path: Path, workers: list[str]
) -> None:
    rules, events = ticker
    reference = tmp_path / "reference.jsonl"
    argv = ["run", str(rules), "--events", str(events), *workers]
    assert main([*argv, "--output", str(reference)]) == 0
    out, folder = tmp_path / "out.jsonl", tmp_path / "checkpoints"
    resumable = [*argv, "--output", str(out), "--checkpoint", str(folder)]
    # Paced (1,500 stream seconds, 6,000 events, in 15 s at least): the signal comes mid-stream.
    run = background(
        [*resumable, "--checkpoint-every", "200", "--speed", "100"], stderr=subprocess.PIPE
    )
    until(lambda: (folder / "checkpoint").exists(), "first checkpoint", run)
    summary = terminated(run)
    read = int(summary.split()[0])
    assert 200 <= read < 6_000
    written, full = out.read_text(encoding="utf-8"), reference.read_text(encoding="utf-8")
    # (with --workers, detections come out in the defined order: maybe none yet)
    assert written.endswith("\n") or (workers and not written)
    assert full.startswith(written)  # whole lines, a prefix
    assert f", {written.count(chr(10))} detections written" in summary
    assert (folder / "checkpoint").exists()  # taken where it stopped
    # The same command (unpaced) goes on from there: nothing lost, nothing written twice.
    assert main(resumable) == 0
    assert out.read_text(encoding="utf-8") == full
    assert not (folder / "checkpoint").exists()


def test_sigterm_while_the_workers_read_their_shares_stops_them_at_once(tmp_path: Path) -> None:
    # The workers read the JSON lines themselves: told to stop, each ends after the part in
    # hand (no traceback, no reading to the end of its share first).
    rng = random.Random(32)
    events, rules = tmp_path / "events.jsonl", tmp_path / "ticker.event"
    rules.write_text(RULES, encoding="utf-8")
    total = 400_000
    with open(events, "w", encoding="utf-8") as f:
        for t in range(total):
            args = [rng.randint(1, 100), round(rng.uniform(10, 20), 2), 5]
            f.write(json.dumps({"name": "stock", "args": args, "time": t // 4}) + "\n")
    out = tmp_path / "out.jsonl"
    argv = ["run", str(rules), "--events", str(events), "--workers", "2", "--output", str(out)]
    run = background(argv, stderr=subprocess.PIPE)
    until(lambda: out.exists() and out.stat().st_size > 0, "first detections", run)
    summary = terminated(run)
    assert int(summary.split()[0]) < total  # (cut mid-stream)
    written = out.read_text(encoding="utf-8")
    assert written.endswith("\n")
    assert f", {written.count(chr(10))} detections written" in summary


def test_sigint_ignored_at_start_still_stops_a_live_run_with_130() -> None:
    # The command's own handler, not the inherited state, decides: SIGINT stops it.
    rules = str(ROOT / "rules" / "stock_ticker.event")
    run = background(
        ["run", rules, "--events", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert run.stdin is not None and run.stdout is not None and run.stderr is not None
    for t, price in ((1, 100), (2, 130)):  # ce1: a rise of more than 20 %
        run.stdin.write(json.dumps({"name": "stock", "args": ["GO", price, 10], "time": t}) + "\n")
    run.stdin.flush()
    first = run.stdout.readline()  # standard input is live: written per event
    run.send_signal(signal.SIGINT)
    status, stderr = finished(run)
    assert status == 130, stderr
    assert json.loads(first)["name"] == "ce1"
    assert stderr.splitlines()[-1].startswith("2 events, ")
    assert stderr.splitlines()[-1].endswith(", interrupted")
    assert "Traceback" not in stderr


def test_a_signal_during_start_up_is_one_line_and_writes_nothing(
    ticker: tuple[Path, Path], tmp_path: Path
) -> None:
    # The rules are being read (a named pipe that does not end: start-up does not end).
    _, events = ticker
    rules = tmp_path / "rules.event"
    os.mkfifo(rules)
    out, folder = tmp_path / "out.jsonl", tmp_path / "checkpoints"
    run = background(
        ["run", str(rules), "--events", str(events), "--output", str(out)]
        + ["--checkpoint", str(folder)],
        stderr=subprocess.PIPE,
    )
    writer: list[int] = []

    def reading() -> bool:  # (a writer opens without blocking once the command reads)
        try:
            writer.append(os.open(rules, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # ENXIO: no reader yet
            return False
        return True

    until(reading, "reading of the rules", run)
    try:
        run.send_signal(signal.SIGTERM)
        status, stderr = finished(run)
    finally:
        for fd in writer:
            os.close(fd)
    assert (status, stderr) == (143, "reasoner: terminated\n")
    assert not out.exists()
    assert not folder.exists() or not any(folder.iterdir())


def _serve(tmp_path: Path) -> tuple[subprocess.Popen[str], str]:
    data = tmp_path / "obs.ttl"
    data.write_text("<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> .\n")
    server = background(["serve", "--port", "0", "--knowledge", str(data)], stderr=subprocess.PIPE)
    assert server.stderr is not None
    line = server.stderr.readline()
    while not line.startswith("SPARQL endpoint at "):
        if not line:
            finished(server)
            pytest.fail("the server exited before it listened")
        line = server.stderr.readline()
    return server, line.split()[3]


def test_sigterm_lets_serve_answer_the_request_in_flight_then_exit_0(tmp_path: Path) -> None:
    server, url = _serve(tmp_path)
    try:
        host, port = url.split("/")[2].rsplit(":", 1)
        body = b"query=" + b"ASK%20%7B%20%3Fs%20%3Fp%20%3Fo%20%7D"
        with socket.create_connection((host, int(port)), timeout=BOUND) as client:
            head = (
                "POST /sparql HTTP/1.1\r\nHost: x\r\nAccept: application/sparql-results+json\r\n"
                "Content-Type: application/x-www-form-urlencoded\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            )
            client.sendall(head.encode() + body[:5])  # a request in flight: half its body
            time.sleep(0.5)
            server.send_signal(signal.SIGTERM)
            time.sleep(0.5)
            client.sendall(body[5:])
            answer = b""
            while chunk := client.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 200 ")
        assert json.loads(answer.split(b"\r\n\r\n", 1)[1]) == {"head": {}, "boolean": True}
        assert finished(server) == (0, "")
    finally:
        if server.poll() is None:
            server.kill()
            finished(server)


def test_serve_stops_on_sigint_although_started_with_it_ignored(tmp_path: Path) -> None:
    server, _ = _serve(tmp_path)
    server.send_signal(signal.SIGINT)
    assert finished(server) == (0, "")


def test_a_second_signal_during_the_graceful_stop_ends_the_process_at_once() -> None:
    # A stop that would take forever (a detection being written to a reader that never reads
    # stands for it): the second SIGTERM kills the process with SIGTERM.
    code = (
        "import sys, time\n"
        "from connectors.events.stopping import graceful_stop\n"
        "with graceful_stop() as stop:\n"
        "    stop.waiting = False\n"
        "    print('ready', flush=True)\n"
        "    while True:\n"
        "        if stop.requested:\n"
        "            print('stopping', flush=True)\n"
        "            time.sleep(3600)\n"
        "        time.sleep(0.01)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "ready\n"
        process.send_signal(signal.SIGINT)  # (its own handler, though inherited ignored)
        assert process.stdout.readline() == "stopping\n"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=BOUND) == -signal.SIGTERM
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=BOUND)
