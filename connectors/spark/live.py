"""The key groups' live states a Python worker keeps between micro-batches.

A worker that steps a key group keeps its :class:`~connectors.spark.keystate.GroupState`
here under the stamp it wrote to Spark's state store. In the next micro-batch the state
store's row names the stamp of its last write: the same stamp, and the live state is that
row's state (the worker goes on with it, restoring nothing); another stamp (another worker
stepped the group since, the query restarted, a batch runs again after a failure) and the
group is restored from the row, into the engine kept here when there is one (an engine is
compiled once per worker and group). A state taken for a step leaves the cache until the
step has written its row, so a step that fails leaves nothing stale behind.
"""

from __future__ import annotations

import uuid
from typing import Any

from connectors.spark.keystate import GroupDetector, GroupState
from reasoner.runtime.engine import Engine

#: (stage fingerprint, knowledge given, group) -> (stamp, live state); engines whose states
#: went stale. (An engine given knowledge differs from one of the program's own facts.)
_live: dict[tuple[str, bool, int], tuple[str, GroupState]] = {}
_engines: dict[tuple[str, bool, int], Engine] = {}


def take(
    detector: GroupDetector, group: int, row: tuple[Any, ...] | None
) -> tuple[GroupState, bool]:
    """Key group ``group``'s state for a step, and whether it is the live one (else it
    was restored from ``row``, its state row; None: a new group).

    Raises:
        StateError: ``row`` cannot be resumed (:meth:`GroupDetector.load`).

    >>> from connectors.spark.detect import Stage
    >>> from connectors.spark.sources import Keys
    >>> from reasoner.language.parser import parse
    >>> detector = GroupDetector(Stage(parse("c <- a SEQ b.")), 0, Keys((), True))
    >>> state, live = take(detector, 7, None)
    >>> row = detector.dump(state, stamp())
    >>> keep(detector, 7, row[0], state)
    >>> take(detector, 7, row) == (state, True)
    True
    >>> take(detector, 7, row)[1]  # (taken: until kept again, the row is restored)
    False
    """
    name = _name(detector, group)
    cached = _live.pop(name, None)
    if cached is not None:
        if row is not None and row[0] == cached[0]:
            return cached[1], True
        _engines[name] = cached[1].engine
    if row is None:
        return detector.new(), False
    return detector.load(row, group, _engines.pop(name, None)), False


def keep(detector: GroupDetector, group: int, stamp: str, state: GroupState) -> None:
    """Keep key group ``group``'s ``state``, just written to the state store as ``stamp``."""
    _live[_name(detector, group)] = stamp, state


def _name(detector: GroupDetector, group: int) -> tuple[str, bool, int]:
    return detector.stage.fingerprint, detector.stage.knowledge is not None, group


def stamp() -> str:
    """A new stamp: unique to one write of one group's state."""
    return uuid.uuid4().hex
