"""The defined order of detections, and the global stage run in one engine's order.

A run with workers (:mod:`reasoner.runtime.parallel`, :mod:`reasoner.runtime.shares`) and a
Spark replay (:mod:`connectors.spark.replay`) report detections in one defined order,
whatever the number of workers: by end time, then start time, then event name, then the
arguments' text (:func:`order_key`), repeats dropped (:func:`unique`). The global remainder
reads what the keyed stage derived in the single engine's order (:func:`run_global`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from reasoner.runtime.events import Event
from reasoner.runtime.stages import GlobalStage, Path

if TYPE_CHECKING:
    from reasoner.runtime.worker import Derived


def order_key(event: tuple[Any, ...]) -> tuple[Any, ...]:
    """The defined order of detections: end, start, name, then the arguments' text."""
    return (event[3], event[2], event[0], repr(event[1]))


def event_order(events: Iterable[Event]) -> list[Event]:
    """Detections in the defined order, repeats dropped.

    >>> event_order([Event.at("b", (), 2), Event.at("a", (), 2), Event.at("b", (), 2)])
    [Event(name='a', args=(), start=2, end=2), Event(name='b', args=(), start=2, end=2)]
    """
    return list(unique(sorted(events, key=order_key)))


def unique(ordered: Iterable[Event]) -> Iterator[Event]:
    """Sorted detections without repeats (two rules, in two stages, may derive one event)."""
    last: Event | None = None
    for d in ordered:
        if d != last:
            yield d
            last = d


def run_global(
    engine: GlobalStage,
    raw: Iterable[tuple[int, Event]],
    derived: Iterable[Derived],
    reads: set[tuple[str, int]],
) -> list[Event]:
    """Run the global stage on the input events it reads, ``(seq, event)``, and on what the
    keyed stage derived (as :func:`~reasoner.runtime.worker.run_batch` gives it, the events
    revived), in the single engine's order: by time, then input event, each input event's
    derivation tree in its FIFO order (:meth:`~reasoner.runtime.stages.GlobalStage.push_tree`);
    what timers derived comes before the input events of its time, in the defined order.
    Returns the global stage's detections."""
    roots = {seq: event for seq, event in raw}
    trees: dict[int, list[tuple[Path, Event]]] = {}
    steps: list[tuple[Any, ...]] = []  # (end, seq, order key, event) of timers' events
    for seq, detections, paths in derived:
        if seq < 0 or paths is None:
            steps += [(d[3], -1, order_key(d), d) for d in detections if _type(d) in reads]
        else:
            tree = [(p, d) for p, d in zip(paths, detections, strict=True) if _type(d) in reads]
            if tree:
                trees[seq] = tree
    for seq in roots.keys() | trees.keys():
        root = roots.get(seq)
        steps.append(((trees[seq][0][1] if root is None else root)[3], seq, ()))
    steps.sort(key=_step_order)
    found: list[Event] = []
    for step in steps:
        if step[1] < 0:
            found += engine.push_tree(step[3], step[0], ())
        else:
            found += engine.push_tree(roots.get(step[1]), step[0], trees.get(step[1], ()))
    return found


def _step_order(step: tuple[Any, ...]) -> tuple[Any, ...]:
    return step[:3]


def _type(event: tuple[Any, ...]) -> tuple[str, int]:
    return event[0], len(event[1])
