"""Refreshing the background knowledge of a running replay (``reasoner run --refresh-every``,
and SIGHUP).

A refresh rebuilds the knowledge aside (files re-read, or the on-disk store a ``knowledge
refresh`` job rewrote) in a background thread, so the stream does not stall; the new version
is handed to the engine between two events (:meth:`Refresher.poll`). A refresh that fails is
reported and the previous knowledge stays in use.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING

from reasoner.errors import KnowledgeError
from reasoner.knowledge.base import Knowledge

if TYPE_CHECKING:
    from reasoner.knowledge.versions import KnowledgeBase
    from reasoner.runtime.engine import Engine
    from reasoner.runtime.parallel import ParallelEngine


def _report(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Refresher:
    """Refreshes ``knowledge`` every ``interval`` seconds (None: only when asked) and on
    SIGHUP (when entered in the main thread); a context manager.

    Args:
        knowledge: the knowledge base to refresh.
        interval: seconds between two refreshes, or None.
        report: where progress and failures are written (default: standard error).

    >>> with Refresher(kb, 600) as refresher:  # doctest: +SKIP
    ...     for event in events:
    ...         refresher.poll(engine)
    ...         engine.push(event)
    """

    def __init__(
        self,
        knowledge: KnowledgeBase,
        interval: float | None,
        report: Callable[[str], None] = _report,
    ) -> None:
        self.knowledge = knowledge
        self.interval = interval
        self.report = report
        self.refreshed = 0  # versions handed to the engine
        self.failed = 0
        self._ready: Knowledge | None = None
        self._lock = threading.Lock()
        self._asked = threading.Event()
        self._stopping = False
        self._thread = threading.Thread(target=self._loop, name="knowledge-refresh", daemon=True)
        self._previous_handler: object = None

    def __enter__(self) -> Refresher:
        if threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGHUP"):
            self._previous_handler = signal.signal(signal.SIGHUP, lambda *_: self.request())
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stopping = True
        self._asked.set()
        self._thread.join()
        if self._previous_handler is not None:
            signal.signal(signal.SIGHUP, self._previous_handler)  # type: ignore[arg-type]

    def request(self) -> None:
        """Ask for a refresh now (what SIGHUP does)."""
        self._asked.set()

    def poll(self, engine: Engine | ParallelEngine) -> None:
        """Between two events: give ``engine`` the newest refreshed knowledge, if any (the
        events pushed after this call use it; a ParallelEngine's workers too)."""
        if self._ready is not None:  # the common case, without the lock
            with self._lock:
                ready, self._ready = self._ready, None
            if ready is not None:
                engine.use_knowledge(ready)
                self.refreshed += 1

    def _loop(self) -> None:
        while True:
            self._asked.wait(self.interval)
            if self._stopping:
                return
            self._asked.clear()
            try:
                snapshot = self.knowledge.refresh()
            except KnowledgeError as error:
                self.failed += 1
                self.report(f"knowledge: {error}")
                continue
            with self._lock:
                self._ready = snapshot
            self.report(f"knowledge: version {snapshot.version} ready")
