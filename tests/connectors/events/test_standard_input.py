"""Standard input is read so that a stop signal is taken while a read waits for data, even a
signal that does not interrupt the read (one landing just before read() begins)."""

from __future__ import annotations

import io
import os
import signal
import sys
import threading
from types import FrameType

import pytest

from connectors.events.stopping import standard_input

#: Seconds before the pipe is closed, so that a read the signal did not stop ends (and fails).
BOUND = 30


class Stopped(Exception):
    pass


def _stop(signum: int, frame: FrameType | None) -> None:
    raise Stopped


def test_a_signal_that_does_not_interrupt_the_read_still_stops_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The signal is sent to another thread: its C-level handler runs there and the main
    # thread's read is not interrupted (no EINTR), as when a signal lands just before read().
    # A plain blocking read would wait for the writer (here: for the pipe's close, then end).
    reading, writing = os.pipe()
    stdin = io.TextIOWrapper(open(reading, "rb"))  # noqa: SIM115 (closed below)
    monkeypatch.setattr(sys, "stdin", stdin)
    previous = signal.signal(signal.SIGUSR1, _stop)
    sender = threading.Timer(
        0.2, lambda: signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)
    )
    closer = threading.Timer(BOUND, os.close, [writing])
    sender.start()
    closer.start()
    try:
        with pytest.raises(Stopped):
            standard_input().read(1)
        assert closer.is_alive()  # (the signal stopped the read, not the pipe's end)
    finally:
        sender.cancel()
        if closer.is_alive():
            closer.cancel()
            os.close(writing)
        signal.signal(signal.SIGUSR1, previous)
        stdin.close()


def test_standard_input_gives_every_byte_through_its_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reading, writing = os.pipe()
    data = b"".join(b'{"name": "a", "time": %d}\n' % i for i in range(20_000))

    def write() -> None:
        os.write(writing, data)
        os.close(writing)

    writer = threading.Thread(target=write)
    stdin = io.TextIOWrapper(open(reading, "rb"))  # noqa: SIM115 (closed below)
    monkeypatch.setattr(sys, "stdin", stdin)
    writer.start()
    try:
        assert standard_input().read() == data
    finally:
        writer.join(BOUND)
        stdin.close()
