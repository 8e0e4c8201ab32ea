"""What exists now left out of the garbage collector's scans for a while (``gc.freeze``),
undone after: a run's program, facts and engine live to its end, and a collection that
scanned them again and again cost most of a large fact base's time.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def frozen() -> Iterator[None]:
    """Freeze every object alive now (``gc.freeze``) and unfreeze them on leaving, so that a
    caller running twice in one process (a library user, a test) collects as before. Inside
    a freeze of the caller's, what is alive now joins it and stays frozen: ``gc.unfreeze``
    would thaw the caller's objects too.

    >>> import gc
    >>> before = gc.get_freeze_count()
    >>> with frozen():
    ...     gc.get_freeze_count() > before
    True
    >>> gc.get_freeze_count() == before or before > 0
    True
    """
    thaw = not gc.get_freeze_count()  # (else the caller's freeze: theirs to undo)
    gc.freeze()
    try:
        yield
    finally:
        if thaw:
            gc.unfreeze()
