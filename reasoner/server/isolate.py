"""Run one query evaluation in a forked child process that can be ended at its deadline.

pyoxigraph cannot cancel an evaluation and a thread cannot be killed, so a query whose
answer does not stream (an aggregate over a cross product) would run on for minutes after
its 503, holding a core. A child made by ``os.fork`` sees the current store version for free
(memory is shared copy-on-write, nothing is serialized); the parent waits for the pickled
answer on a pipe until the deadline, and kills the child with SIGKILL when it passes.

The child only evaluates and writes to its pipe, then leaves with ``os._exit``: it runs no
Python cleanup and touches none of the locks other threads of the server may hold.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import time
from collections.abc import Callable
from typing import TypeVar

from reasoner.server.errors import EndpointError

T = TypeVar("T")


def run_isolated(function: Callable[[], T], deadline: float) -> T:
    """Call ``function`` in a child process and return its result, or end it at ``deadline``.

    Args:
        function: what to evaluate; its result must pickle.
        deadline: a :func:`time.monotonic` instant.
    Returns:
        what ``function`` returned.
    Raises:
        EndpointError: what ``function`` raised (other exceptions become a 500).
        TimeoutError: the deadline passed; the child is killed and reaped before this.

    >>> run_isolated(lambda: 6 * 7, time.monotonic() + 10)
    42
    """
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the server's code
        try:
            os.close(read_end)
            with open(write_end, "wb") as out:
                out.write(pickle.dumps(_outcome(function)))
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        data = _read(read_end, deadline)
    finally:
        os.close(read_end)
        if data is None:
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    if data is None:
        raise TimeoutError
    ok, value = pickle.loads(data)
    if ok:
        return value
    raise EndpointError(*value)


def _outcome(function: Callable[[], object]) -> tuple[bool, object]:
    try:
        return True, function()
    except EndpointError as e:
        return False, (e.status, e.message, e.headers)
    except BaseException as e:  # noqa: BLE001 - reported to the parent as a 500
        return False, (500, f"the query failed: {e}", {})


def _read(fd: int, deadline: float) -> bytes | None:
    """Everything the child writes, or None when the deadline passes first."""
    chunks: list[bytes] = []
    while (remaining := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    return None
