"""Stopping a long-running command on SIGINT or SIGTERM: gracefully first, at once second.

Every command that runs until its input ends or until it is stopped (``reasoner run``,
``serve``, ``spark replay``, ``spark stream``, ``mesowest blizzard --serve``) runs inside
:func:`graceful_stop`. It installs its own handlers for both signals, whatever the process
inherited: a shell starts background jobs with SIGINT ignored, and supervisors (systemd,
Docker, Kubernetes) stop a process with SIGTERM, so neither signal's inherited state can be
trusted to stop anything.

The first signal is recorded. Where the command is *waiting* (start-up, reading the next
event, serving until stopped: :meth:`GracefulStop.interruptible`) it also raises
:class:`Interrupted` at once, since there is nothing in hand to finish; elsewhere (an event
being processed, detections being written, a checkpoint being saved) the command sees
:attr:`GracefulStop.requested` at its next safe point, finishes what it holds, writes it, and
ends with :attr:`GracefulStop.status`: 130 after SIGINT, 143 after SIGTERM (128 + the signal's
number, as a shell reports a process a signal ended). A second signal during that graceful
stop ends the process at once, killed by that signal.

A process forked while the handlers are installed (a ``--workers`` worker, a query's child
on the endpoint) ignores both signals: its parent stops it (a message, the end of its pipe,
SIGKILL), after finishing what it holds, so that Ctrl-C (sent to the whole process group)
or ``kill -TERM 0`` does not cut a worker's share short under a gracefully stopping router.
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import BinaryIO

#: The signals a long-running command stops on.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: Seconds a read of standard input waits for data before it looks for a stop signal again.
POLL = 0.25


class Interrupted(KeyboardInterrupt):
    """A stop signal arrived while the command was waiting: it ends now, with :attr:`status`.

    A ``KeyboardInterrupt``, so that code written for Ctrl-C (a Spark query stopped in a
    ``finally``) does the same for SIGTERM.

    >>> error = Interrupted(signal.SIGTERM)
    >>> error.status, str(error)
    (143, 'terminated')
    """

    def __init__(self, signum: int) -> None:
        super().__init__(describe(signum))
        self.signum = signum
        self.status = 128 + signum


def describe(signum: int) -> str:
    """What a stop signal did, for messages: ``interrupted`` (SIGINT) or ``terminated``.

    >>> describe(signal.SIGINT), describe(signal.SIGTERM)
    ('interrupted', 'terminated')
    """
    return "terminated" if signum == signal.SIGTERM else "interrupted"


class GracefulStop:
    """The stop signals' state for one command (made and installed by :func:`graceful_stop`).

    ``waiting`` is a plain attribute, so that a loop can set it per event at the cost of a
    store: while it is true a first signal raises :class:`Interrupted`.

    >>> stop = GracefulStop()
    >>> stop.requested, stop.status
    (False, 0)
    """

    def __init__(self) -> None:
        #: the first stop signal received, or None
        self.signum: int | None = None
        #: whether a first signal raises :class:`Interrupted` at once (nothing is in hand)
        self.waiting = True
        #: whether the signal ended :meth:`wait` (a server's normal end, not work cut short)
        self.served = False
        self._on_signal: list[Callable[[], object]] = []

    @property
    def requested(self) -> bool:
        """Whether a stop signal arrived."""
        return self.signum is not None

    @property
    def status(self) -> int:
        """The exit status of a stopped command: 128 + the signal's number (0: none came)."""
        return 0 if self.signum is None else 128 + self.signum

    @property
    def reason(self) -> str:
        """``interrupted`` or ``terminated`` (for the summary line); empty when none came."""
        return "" if self.signum is None else describe(self.signum)

    def on_signal(self, action: Callable[[], object]) -> None:
        """Call ``action`` when the first stop signal arrives (e.g. cancel Spark's jobs), in the
        main thread, before anything is raised."""
        self._on_signal.append(action)

    @contextlib.contextmanager
    def interruptible(self) -> Iterator[None]:
        """A block where a stop signal raises :class:`Interrupted` at once (a wait, nothing in
        hand); raised on entry too when a signal came before.

        >>> stop = GracefulStop()
        >>> with stop.interruptible():
        ...     pass
        """
        if self.signum is not None:
            raise Interrupted(self.signum)
        before, self.waiting = self.waiting, True
        try:
            yield
        finally:
            self.waiting = before

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """A block a stop signal does not cut (it is recorded): something that must be whole,
        e.g. worker processes starting. After it, a signal recorded raises
        :class:`Interrupted` where the block began waiting.

        >>> stop = GracefulStop()
        >>> with stop.deferred():
        ...     stop.waiting
        False
        """
        before, self.waiting = self.waiting, False
        try:
            yield
        finally:
            self.waiting = before
        if before and self.signum is not None:
            raise Interrupted(self.signum)

    def wait(self, announce: str | None = None) -> None:
        """Say ``announce`` on stderr, then block until a stop signal arrives (at once if one
        came, during the announcement too): a server's life, whose normal end the signal is
        (:attr:`served`).

        Must run in the main thread, where Python runs signal handlers.
        """
        before, self.waiting = self.waiting, False
        try:
            if announce is not None:  # (after the handlers: whoever reads it may signal)
                print(announce, file=sys.stderr, flush=True)
            with self.interruptible():
                threading.Event().wait()  # a signal's handler raises in the main thread
        except Interrupted:
            self.served = True
        finally:
            self.waiting = before

    def handle(self, signum: int, frame: FrameType | None) -> None:
        """The signal handler (installed by :func:`graceful_stop`)."""
        if self.signum is not None:  # a second signal: the graceful stop is cut short
            _die(signum)
        self.signum = signum
        for action in self._on_signal:
            action()
        if self.waiting:
            raise Interrupted(signum)

    def install(self) -> None:
        """(Re)install the handlers: Spark's context replaces SIGINT's when it starts."""
        for number in STOP_SIGNALS:
            signal.signal(number, self.handle)


@contextlib.contextmanager
def graceful_stop() -> Iterator[GracefulStop]:
    """Handle SIGINT and SIGTERM for the block as described in the module's doc; the
    handlers the process had are restored after it. Outside the main thread (where signals
    cannot be handled) the stop is never requested.

    Returns:
        a context manager giving the :class:`GracefulStop`; it starts ``waiting``
        (start-up has nothing to finish).

    >>> with graceful_stop() as stop:
    ...     stop.requested
    False
    """
    stop = GracefulStop()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    global _installed
    previous = {number: signal.getsignal(number) for number in STOP_SIGNALS}
    _watch_forks()
    stop.install()
    _installed += 1
    try:
        yield stop
    finally:
        _installed -= 1
        for number, handler in previous.items():
            # (None: a handler not set from Python; the default is the nearest)
            signal.signal(number, signal.SIG_DFL if handler is None else handler)


#: How many :func:`graceful_stop` blocks are open (a forked child then ignores the signals).
_installed = 0
_watching = False


def _watch_forks() -> None:
    """Once per process: make children forked inside a :func:`graceful_stop` block ignore the
    stop signals (see the module's doc)."""
    global _watching
    if not _watching:
        os.register_at_fork(after_in_child=_ignore_in_child)
        _watching = True


def _ignore_in_child() -> None:
    global _installed
    if _installed:
        _installed = 0  # (the child has no block open of its own)
        for number in STOP_SIGNALS:
            with contextlib.suppress(ValueError):  # (forked from a thread: not settable)
                signal.signal(number, signal.SIG_IGN)


def _die(signum: int) -> None:
    """End the process now, killed by ``signum`` (its default action), as if unhandled."""
    signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)  # (not reached: the default action ends the process)


def standard_input() -> BinaryIO:
    """Standard input as bytes, read so that a stop signal is taken while a read waits.

    A signal that lands just before a blocking read() does not interrupt it (its Python
    handler runs only once the read returns), so a live input would stop only at its next
    line; here a read first waits with ``select``, looking again every :data:`POLL` seconds.
    """
    stdin = sys.stdin.buffer
    try:
        fd = stdin.fileno()
    except (OSError, ValueError):  # (not a file: replaced in the process)
        return stdin
    return io.BufferedReader(_Polled(fd), buffer_size=1 << 16)


class _Polled(io.RawIOBase):
    """A file descriptor read after ``select`` says it is readable (see :func:`standard_input`);
    closing it leaves the descriptor open."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self.name = "<stdin>"

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while not select.select([self._fd], [], [], POLL)[0]:
            pass  # (a pending signal's handler runs here, between two waits)
        return os.readv(self._fd, [buffer])
