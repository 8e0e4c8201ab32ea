"""The worker processes of :class:`~reasoner.runtime.parallel.ParallelEngine` and the pipes
to them: starting them (forked, each running :func:`~reasoner.runtime.worker.work`), sending
each its messages in order without ever blocking the router, reading their answers, and
stopping them.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import pickle
import queue
import signal
import threading
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any

from reasoner.errors import EngineError
from reasoner.knowledge.base import Knowledge
from reasoner.language.ast import Program
from reasoner.runtime.frozen import frozen
from reasoner.runtime.options import EngineOptions
from reasoner.runtime.worker import work


class WorkerPool:
    """The worker processes of one router, and a pipe to each (none until :meth:`start`).

    Every message to a worker goes through an outbox that one thread per worker writes to
    its pipe, in order: the router never blocks on a full pipe, so it always reads what the
    workers answer (both sides writing a large message at once would wait forever).
    """

    def __init__(self) -> None:
        #: the router's end of each worker's pipe, by worker number
        self.connections: list[Connection] = []
        self._processes: list[Any] = []
        self._outboxes: list[queue.SimpleQueue[bytes | None]] = []
        self._senders: list[threading.Thread] = []

    def start(
        self,
        workers: int,
        stage: tuple[Program, tuple[int, ...], bool],
        options: EngineOptions,
        knowledge: Callable[[], Knowledge],
        reads: set[tuple[str, int]],
    ) -> None:
        """Fork ``workers`` processes running the keyed stage (``stage``: the program, the
        keyed rules' indexes, whether to mark positions; see :func:`work`)."""
        context = multiprocessing.get_context("fork")
        # What exists now (the program, the knowledge) is left out of the workers' garbage
        # collections: a collection would write to every object a worker inherited, copying
        # its pages and scanning them again and again (seconds on a large fact base).
        with frozen():  # (thawed after: the router's own collections as before)
            for _ in range(workers):
                here, there = context.Pipe()
                # The child closes every router end it inherits (its own peer's included), so
                # that its pipe reports end-of-file when the router dies, even by SIGKILL.
                inherited = [here, *self.connections]
                process = context.Process(
                    target=work,
                    args=(
                        there,
                        len(self.connections),
                        inherited,
                        stage,
                        options,
                        knowledge,
                        reads,
                    ),
                    daemon=True,
                )
                process.start()
                there.close()
                self.connections.append(here)
                self._processes.append(process)
        # The sending threads start after the forks: a child gets no threads.
        for connection in self.connections:
            outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
            sender = threading.Thread(target=_send_all, args=(connection, outbox), daemon=True)
            sender.start()
            self._outboxes.append(outbox)
            self._senders.append(sender)

    @property
    def pids(self) -> list[int]:
        """The worker processes' ids, by worker number."""
        return [process.pid for process in self._processes]

    def post(self, message: tuple[Any, ...], *to: int) -> None:
        """Send ``message`` to the workers ``to`` (default: all), pickled once."""
        data = pickled(message)
        for i in to or range(len(self._outboxes)):  # (none once closed)
            self._outboxes[i].put(data)

    def send_each(self, messages: Sequence[bytes]) -> None:
        """Send each worker its own message (pickled), in worker order."""
        for outbox, message in zip(self._outboxes, messages, strict=True):
            outbox.put(message)

    def receive(self, i: int) -> Any:
        """Worker ``i``'s next answer. Raises EngineError when the worker is gone (its pipe
        ended: killed, e.g. by the out-of-memory killer, or crashed), saying how it ended."""
        try:
            return self.connections[i].recv()
        except (EOFError, OSError):
            process = self._processes[i]
            process.join(timeout=5)
            code = process.exitcode
            if code is None:
                how = "its pipe closed"
            elif code < 0:
                how = f"killed by {signal.Signals(-code).name}"
            else:
                how = f"exit status {code}"
            raise EngineError(
                f"worker {i} (process {process.pid}) ended during the run ({how})"
            ) from None

    def answers(self) -> list[Any]:
        """Every worker's next answer; the first error raised once all are read (so that
        the answers stay in step with the messages)."""
        answers = [self.receive(i) for i in range(len(self.connections))]
        for kind, value in answers:
            if kind == "error":
                raise value
        return [value for _, value in answers]

    def close(self) -> None:
        """Stop the workers (what they still run is dropped)."""
        if self.connections:
            self.post(("stop",))
        for outbox in self._outboxes:
            outbox.put(None)
        for connection in self.connections:  # read what they answer, until they close
            with contextlib.suppress(EOFError, OSError):
                while connection.poll(5):
                    connection.recv_bytes()
        for sender in self._senders:
            sender.join(timeout=5)
        for connection in self.connections:
            connection.close()
        for process in self._processes:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
        self.connections.clear()
        self._processes.clear()
        self._outboxes.clear()
        self._senders.clear()


def pickled(value: Any) -> bytes:
    """``value`` pickled as messages to workers are."""
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def _send_all(connection: Connection, outbox: queue.SimpleQueue[bytes | None]) -> None:
    """Write the messages of ``outbox`` to a worker, in order, until None (a thread)."""
    while (message := outbox.get()) is not None:
        try:
            connection.send_bytes(message)
        except OSError:  # the worker is gone: the router reads its end of file
            return
