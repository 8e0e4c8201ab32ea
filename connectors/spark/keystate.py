"""Partition keys' detection across micro-batches, their state kept as plain values.

Spark's state store holds, per key, a :class:`KeyState`: the engine's snapshot
(:mod:`reasoner.runtime.checkpoint`), the events waiting for the watermark, a counter giving
each event its arrival number, and whether the key's input wrote ISO-8601 times. In each
micro-batch :meth:`KeyDetector.step` restores the engine, takes the key's new events (those
ending before the watermark are *late*: reported with their reason, never processed), runs
every waiting event the watermark has passed in the order one engine would (by end, then
arrival), moves the clock to the watermark (time points, windows closing) and snapshots
the engine again. The watermark is the latest end of the earlier micro-batches less the
allowed lateness, the same for every key, so each key's engine sees its events exactly as
the single engine of ``reasoner run --lateness`` does (docs/scale-out.md).

Spark calls a stateful function once per group and per micro-batch, at a cost of milliseconds
per call whatever the function does; so keys are hashed into a fixed number of *key groups*
and :func:`step_group` steps, within one group, the keys that have new events or are due
(their next waiting event or timer reached by the watermark), leaving the others' state as
it was: a key sees the same calls as it would in a group of its own.
"""

from __future__ import annotations

import json
import math
import pickle
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from operator import itemgetter
from typing import Any

from connectors.events.times import TimeStyle
from connectors.spark.detect import Stage, derivations, detect, next_timer
from connectors.spark.runs import formatted_run
from reasoner.runtime.checkpoint import decode, encode
from reasoner.runtime.events import Event
from reasoner.runtime.worker import revive
from reasoner.values import Time

#: The kinds of rows a step outputs: detections (a sorted run of them), a late event or a
#: rejected line (``{"file", "line", "reason"}``), and the number of events taken.
DETECTION, LATE, REJECT, EVENTS = "detection", "late", "reject", "events"

#: A row of input: file, line, the event as snapshot JSON, whether its file wrote ISO times.
Row = tuple[str, int, str, bool]
#: A row of output: kind, text, and for detections their run: ``(order key, JSON line)`` pairs
#: in the defined order, pickled.
Output = tuple[str, str, bytes | None]

#: Spark's state of a key group: ``keys``, JSON of ``[key, size, pending, arrivals, iso, due]``
#: per key in key order (``size``: of its engine snapshot, -1 for none; ``due``: the time,
#: as snapshot JSON, by which it must be stepped without new events, or null), and
#: ``engines``, the keys' snapshots one after the other. (Spark 4.3's Python worker cannot
#: read a state schema with arrays.)
GROUP_STATE = "keys string, engines binary"


@dataclass(slots=True)
class KeyState:
    """What Spark keeps for one key between micro-batches (all plain values)."""

    engine: bytes | None  # None: a blank engine
    pending: list[list[Any]] = field(default_factory=list)  # [end, arrival, event]
    arrivals: int = 0
    iso: bool = False


class KeyDetector:
    """Steps keys through micro-batches with the engine a Python worker keeps for ``stage``
    (:func:`connectors.spark.detect.detect`: compiled once, restored per key).

    Args:
        stage: the rules (the whole program: a key runs every rule), options and knowledge.
        lateness: the allowed lateness (for the messages of late events).
    """

    def __init__(self, stage: Stage, lateness: Time) -> None:
        self.stage = stage
        self.lateness = lateness

    def step(
        self, state: KeyState | None, rows: Iterable[Row], watermark: Time
    ) -> tuple[list[Output], list[Event], KeyState, Time | None]:
        """One micro-batch of a key: its new ``rows``, at ``watermark``.

        Returns:
            the output rows (late events, the number of events taken), the detections, the
            new state, and the time by which the key must be called again without input
            (the next waiting event or timer; None: none).
        """
        out: list[Output] = []
        pending = [] if state is None else state.pending
        arrivals = 0 if state is None else state.arrivals
        iso = state is not None and state.iso
        taken = 0
        for file, line, text, row_iso in sorted(rows):
            data = json.loads(text)
            event = decode(data)
            taken += 1
            iso = iso or row_iso
            if event.end < watermark:
                reason = (
                    f"late: ends at {show(event.end)}, before the watermark {show(watermark)} "
                    f"(the latest end of earlier micro-batches less the lateness "
                    f"{show(self.lateness)})"
                )
                out.append((LATE, record(file, line, reason), None))
                continue
            pending.append([encode(event.end), arrivals, data])
            arrivals += 1
        if taken:
            out.append((EVENTS, str(taken), None))
        ready: list[tuple[Any, int, Event]] = []
        waiting: list[list[Any]] = []
        for item in pending:
            end = decode(item[0])
            if end <= watermark:
                ready.append((end, item[1], decode(item[2])))
            else:
                waiting.append(item)
        ready.sort(key=lambda r: r[:2])
        derived, snapshot = detect(
            self.stage,
            [(arrival, event) for _, arrival, event in ready],
            watermark,
            None if state is None else state.engine,
            keep_state=True,
        )
        assert snapshot is not None
        rules = derivations(self.stage)  # (with explain: the derivations' rules)
        detections = [revive(d, rules) for _, plain, _ in derived for d in plain]
        due = [decode(item[0]) for item in waiting]
        timer = next_timer(self.stage)
        if timer is not None:
            due.append(timer)
        return out, detections, KeyState(snapshot, waiting, arrivals, iso), min(due, default=None)


def step_group(
    detector: KeyDetector,
    state: tuple[Any, ...] | None,
    rows: dict[str, list[Row]],
    watermark: Time,
) -> tuple[list[Output], tuple[str, bytes], Time | None]:
    """One micro-batch of a key group: each key with new ``rows`` or due at ``watermark`` is
    stepped (:meth:`KeyDetector.step`), the others are kept as they are. The group's
    detections are one output row: their JSON lines as ``reasoner run`` writes them (ISO
    times when the key's input had them) with their order keys, sorted, pickled.

    Args:
        detector: steps one key.
        state: the group's state row (:data:`GROUP_STATE`), None for a new group.
        rows: the new rows per key.
        watermark: the micro-batch's watermark.

    Returns:
        the output rows, the new state row, and when the group must be called again without
        input (its keys' earliest due time; None: never).
    """
    keys: dict[str, tuple[KeyState, Any]] = {}  # key -> its state, when due (JSON)
    if state is not None:
        listed, engines = json.loads(state[0]), bytes(state[1])
        at = 0
        for key, size, pending, arrivals, iso, due in listed:
            engine = None if size < 0 else engines[at : at + size]
            at += max(size, 0)
            keys[key] = (KeyState(engine, pending, arrivals, iso), due)
    out: list[Output] = []
    run: list[tuple[Any, str]] = []  # (order key, JSON line) per detection
    for key in sorted(rows.keys() | keys.keys()):
        kept = keys.get(key)
        new = rows.get(key, [])
        if not new and kept is not None:
            due = decode(kept[1])
            if due is None or due > watermark:
                continue
        produced, detections, after, due = detector.step(
            None if kept is None else kept[0], new, watermark
        )
        out += produced
        run += formatted_run(detections, TimeStyle(iso=after.iso))
        keys[key] = (after, encode(due))
    listed, chunks, dues = [], [], []
    for key in sorted(keys):
        key_state, due = keys[key]
        engine = key_state.engine
        size = -1 if engine is None else len(engine)
        listed.append([key, size, key_state.pending, key_state.arrivals, key_state.iso, due])
        chunks.append(engine or b"")
        dues.append(decode(due))
    row = (json.dumps(listed, separators=(",", ":")), b"".join(chunks))
    if run:
        run.sort(key=itemgetter(0))  # (stable: each key's detections keep their order)
        out.append((DETECTION, str(len(run)), pickle.dumps(run, pickle.HIGHEST_PROTOCOL)))
    return out, row, min((d for d in dues if d is not None), default=None)


def record(file: str, line: int, reason: str) -> str:
    """A late or rejected line as ``reasoner spark replay`` writes its rejects (line 0: the
    whole file)."""
    return json.dumps({"file": file, "line": line, "reason": reason})


def show(time: Time) -> str:
    """A time as it is written in messages (a fraction as a decimal)."""
    return str(float(time)) if isinstance(time, Fraction) else str(time)


def from_millis(ms: int) -> Time:
    """Spark's watermark (milliseconds) as a time in seconds."""
    return ms // 1000 if ms % 1000 == 0 else Fraction(ms, 1000)


def timeout_millis(time: Time) -> int:
    """The event-time timeout (milliseconds) that calls a key once the watermark reaches
    ``time`` (Spark calls it when the watermark passes the timeout)."""
    return math.ceil(time * 1000) - 1
