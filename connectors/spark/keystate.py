"""Key groups' detection across micro-batches: one live engine per key group, its state in
Spark's state store.

Keys are hashed into a fixed number of *key groups*, and Spark calls the stateful function
once per group and micro-batch (a call costs milliseconds whatever it does). Each group runs
its keys in one :class:`GroupState`: an engine holding every key of the group (the rules are
keyed, so keys never meet, as in the one engine of ``reasoner run``), the events waiting for
the watermark, the next arrival number and the keys whose input wrote ISO-8601 times.

:meth:`GroupDetector.step` takes the group's new events (those ending before the watermark
are *late*: reported with their reason, never processed), runs every waiting event the
watermark has passed in the order one engine would (by end, then arrival) and moves the
clock to the watermark (time points, windows closing). The watermark is the latest end of
the earlier micro-batches less the allowed lateness, the same for every group, so each key
sees its events exactly as the single engine of ``reasoner run --lateness`` does
(docs/scale-out.md).

Spark's state of a group is one row (:data:`GROUP_STATE`): a *stamp* naming this write, a
*base* (the engine's snapshot, :mod:`reasoner.runtime.checkpoint`, and the events waiting
then, with the bookkeeping, the state format and the program's fingerprint, as JSON) and a
*log* of the micro-batches stepped since the base (each one's watermark and the events it
took, as they came). A step writes the base as it was (not encoded again) and its log with
one entry more; restoring the group restores the base and runs the log's batches again
(their outputs dropped: the engine is deterministic, so the state is the same). A *full
write* makes a new base and empties the log once the log is longer than the base, which
bounds both what a restore runs again and the bytes of a row; a query with knowledge
versions writes every batch in full (the version of a batch in the log is not kept once a
later batch chose another). :mod:`connectors.spark.live` keeps the group's live state in the
Python worker that wrote it; a worker that finds another stamp (another worker wrote it, a
restart, a batch run again) restores the group from the row: :meth:`GroupDetector.load`.
"""

from __future__ import annotations

import contextlib
import heapq
import io
import json
import math
import pickle
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from operator import itemgetter
from typing import Any

from connectors.events.times import TimeStyle
from connectors.spark.detect import Stage, new_engine
from connectors.spark.runs import formatted_run
from connectors.spark.sources import Keys
from reasoner.errors import ReasonerError, SnapshotError
from reasoner.runtime.checkpoint import decode, encode
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.runtime.intake import Intake
from reasoner.values import Time

#: The kinds of rows a step outputs: detections (a sorted run of them), a late event or a
#: rejected line (``{"file", "line", "reason"}``), the number of events taken, and whether
#: the group's live state was reused ("1") or restored from the state store ("0").
DETECTION, LATE, REJECT, EVENTS, REUSED = "detection", "late", "reject", "events", "reused"

#: A row of input: file, line, key, the event as snapshot JSON, whether its file wrote ISO
#: times.
Row = tuple[str, int, str, str, bool]
#: A row of output: kind, text, and for detections their run: ``(order key, JSON line)`` pairs
#: in the defined order, pickled.
Output = tuple[str, str, bytes | None]

#: Spark's state of a key group: ``stamp`` (this write's name), ``meta`` (JSON: ``format``,
#: ``program`` (the stage's fingerprint), and at the base ``arrivals``, ``iso`` (keys),
#: ``pending`` (``[end, arrival, event]`` per waiting event); then ``log``: ``[watermark,
#: [keys], [event, ...]]`` per micro-batch stepped since the base, the keys its input wrote
#: ISO times for and the events it took, in arrival order) and ``engine`` (the base's
#: engine snapshot).
GROUP_STATE = "stamp string, meta string, engine binary"

#: The format of the state rows this version writes: 4 added the log (the versions that
#: wrote format 3 refuse a row of format 4, whose log they would ignore). Rows of format 3
#: are read as a base without a log.
FORMAT = 4
_READ = (3, FORMAT)

#: The most micro-batches a row logs (a group called often with little input has a short
#: log, but a restore runs every logged batch again).
LOG_BATCHES = 32


class StateError(ReasonerError):
    """A key group's state in the state store that this program cannot resume: corrupt, of
    another format version or of another program."""


@dataclass(slots=True)
class GroupState:
    """A key group's live state (see the module doc)."""

    engine: Engine
    #: the events waiting for the watermark: an engine's lateness buffer, their arrival
    #: numbers counted in as its ``events_in``
    waiting: Intake = field(default_factory=lambda: _waiting(0))
    #: each waiting event's snapshot JSON as it came, by arrival number (written back as is)
    texts: dict[int, str] = field(default_factory=dict)
    iso: set[str] = field(default_factory=set)
    #: the last full write's engine snapshot (empty: none yet) and its JSON part, up to the
    #: log (``{"format":...,"pending":[...]``)
    base: bytes = b""
    head: str = ""
    #: the micro-batches stepped since the base, as JSON texts (:data:`GROUP_STATE`)
    log: list[str] = field(default_factory=list)
    logged: int = 0  # (their characters)

    @property
    def arrivals(self) -> int:
        """The events taken so far (the last arrival number)."""
        return self.waiting.counts["events_in"]


class GroupDetector:
    """Steps key groups through micro-batches.

    Args:
        stage: the rules (the whole program: every key runs every rule), options, knowledge.
        lateness: the allowed lateness (for the messages of late events).
        keys: how events are keyed (to write each detection in its key's time style).
        where: the checkpoint folder, named in errors.

    >>> from reasoner.language.parser import parse
    >>> detector = GroupDetector(Stage(parse("c(K) <- a(K) SEQ b(K).")), 0, Keys((), True))
    >>> group = detector.new()
    >>> a, b = '["e","a",["t",1],1,1]', '["e","b",["t",1],2,2]'  # (events as snapshot JSON)
    >>> rows = [("f", 1, "", a, False), ("f", 2, "", b, False)]
    >>> detector.step(group, rows, 0)  # (both wait for the watermark: due at 1)
    ([('events', '2', None)], 1)
    >>> out, due = detector.step(group, [], 2)
    >>> pickle.loads(out[0][2])[0][1]
    '{"name":"c","args":[1],"start":1,"end":2}\\n'
    """

    def __init__(self, stage: Stage, lateness: Time, keys: Keys, where: str = "") -> None:
        self.stage = stage
        self.lateness = lateness
        self.keys = keys
        self.where = where
        #: whether rows log the batches since their base (not with knowledge versions: a
        #: restore could not take a logged batch's version again)
        self.logging = stage.knowledge is None

    def new(self) -> GroupState:
        """A new group's state (a blank engine)."""
        return GroupState(new_engine(self.stage))

    def step(
        self, group: GroupState, rows: Iterable[Row], watermark: Time
    ) -> tuple[list[Output], Time | None]:
        """One micro-batch of a group (changed in place): its new ``rows``, at ``watermark``.

        Returns:
            the output rows (late events, the number of events taken, the detections as one
            sorted run), and the time by which the group must be called again without input
            (its next waiting event or timer; None: none).
        """
        out, taken, keys = self._take(group, rows, watermark)
        if self.logging:
            entry = f"[{_write(encode(watermark))},{_write(keys)},[{','.join(taken)}]]"
            group.log.append(entry)
            group.logged += len(entry)
        detections = _release(group, watermark)
        if detections:
            run = self._formatted(group, detections)
            out.append((DETECTION, str(len(run)), pickle.dumps(run, pickle.HIGHEST_PROTOCOL)))
        due = [t for t in (group.waiting.earliest, group.engine.next_timer) if t is not None]
        return out, min(due, default=None)

    def _take(
        self, group: GroupState, rows: Iterable[Row], watermark: Time
    ) -> tuple[list[Output], list[str], list[str]]:
        """The new rows: late ones reported, the others waiting (numbered as they arrive, in
        file and line order). Returns the outputs, the texts of the events taken and the keys
        first seen with ISO times."""
        out: list[Output] = []
        ordered = sorted(rows, key=_place)
        if not ordered:
            return out, [], []
        # (one JSON document for the batch: a parser call per event costs more than its text)
        items = json.loads("[" + ",".join([row[3] for row in ordered]) + "]")
        taken: list[str] = []
        keys: list[str] = []
        iso_keys, texts, waiting = group.iso, group.texts, group.waiting
        for (file, line, key, text, iso), item in zip(ordered, items, strict=True):
            event = decode(item)
            if iso and key not in iso_keys:
                iso_keys.add(key)
                keys.append(key)
            if event.end < watermark:
                reason = (
                    f"late: ends at {show(event.end)}, before the watermark {show(watermark)} "
                    f"(the latest end of earlier micro-batches less the lateness "
                    f"{show(self.lateness)})"
                )
                out.append((LATE, record(file, line, reason), None))
                continue
            texts[waiting.take(event)] = text
            taken.append(text)
        out.append((EVENTS, str(len(ordered)), None))
        return out, taken, keys

    def _formatted(self, group: GroupState, detections: list[Event]) -> list[tuple[Any, str]]:
        """The detections as ``reasoner run`` writes them (ISO times for the keys whose input
        had them), with their order keys, in the defined order."""
        if not group.iso:
            return formatted_run(detections, TimeStyle())
        key = self.keys.key
        iso = [d for d in detections if key(d) in group.iso]
        plain = [d for d in detections if key(d) not in group.iso]
        run = formatted_run(iso, TimeStyle(iso=True)) + formatted_run(plain, TimeStyle())
        run.sort(key=itemgetter(0))  # (stable: each key's detections keep their order)
        return run

    def dump(self, group: GroupState, stamp: str) -> tuple[str, str, bytes]:
        """The group's state row (:data:`GROUP_STATE`), named ``stamp``: its base and log, or
        a full write (a new base, the log emptied) when the log is longer than the base."""
        if (
            not self.logging
            or not group.base
            or group.logged > len(group.base) + len(group.head)
            or len(group.log) > LOG_BATCHES
        ):
            self._full(group)
        return stamp, f'{group.head},"log":[{",".join(group.log)}]}}', group.base

    def _full(self, group: GroupState) -> None:
        """Make the group's state now its base (the engine's snapshot, the waiting events),
        its log empty."""
        # (in order: one state writes one row, and the list read back is a heap as it is)
        texts, held = group.texts, sorted(group.waiting.buffer)
        pending = ",".join(f"[{_write(encode(e))},{n},{texts[n]}]" for e, n, _ in held)
        group.head = _write(self._head(group))[:-1] + f',"pending":[{pending}]'
        group.base = group.engine.snapshot()
        group.log.clear()
        group.logged = 0

    def _head(self, group: GroupState) -> dict[str, Any]:
        """The base's bookkeeping (JSON data), but its waiting events."""
        return {
            "format": FORMAT,
            "program": self.stage.fingerprint,
            "arrivals": group.arrivals,
            "iso": sorted(group.iso),
        }

    def load(self, row: tuple[Any, ...], group: int, engine: Engine | None) -> GroupState:
        """The state of key group ``group`` from its state row, restored into ``engine`` (a
        reused engine of this stage; None: a new one): its base, then its log's batches run
        again.

        Raises:
            StateError: the row is corrupt, of another format or of another program.
        """
        try:
            meta = json.loads(row[1])
            found = meta.get("format") if isinstance(meta, dict) else None
            if found not in _READ:
                raise StateError(f"is of another state format ({found!r}; this version: {FORMAT})")
            if meta.get("program") != self.stage.fingerprint:
                raise StateError("was written by another program (or other engine options)")
            waiting = _waiting(int(meta["arrivals"]))
            texts: dict[int, str] = {}
            for e, n, d in meta["pending"]:
                waiting.buffer.append((decode(e), int(n), decode(d)))
                texts[int(n)] = _write(d)
            heapq.heapify(waiting.buffer)  # (format 3 rows list them in arrival order)
            base = bytes(row[2])
            engine = self._restored(base, engine)
            state = GroupState(engine, waiting, texts, {str(k) for k in meta["iso"]}, base)
            state.head = _write({**self._head(state), "pending": meta["pending"]})[:-1]
            self._replay(state, meta.get("log", []))
        except StateError as error:
            raise self._error(group, str(error)) from None
        except (ReasonerError, ValueError, TypeError, KeyError, IndexError) as error:
            raise self._error(group, f"is corrupt ({error})") from None
        return state

    def _replay(self, group: GroupState, log: list[Any]) -> None:
        """Run the logged batches again on the group's base (their outputs dropped), and log
        them again."""
        if not isinstance(log, list):
            raise ValueError("its log is not a list")
        # (their printing actions printed when the batches ran)
        with contextlib.redirect_stdout(io.StringIO()):
            for watermark, keys, events in log:
                at = decode(watermark)
                if isinstance(at, bool) or not isinstance(at, int | Fraction):
                    raise ValueError(f"a logged watermark is not a time: {watermark!r}")
                if not isinstance(keys, list) or not isinstance(events, list):
                    raise ValueError("a logged batch is not [watermark, [keys], [events]]")
                group.iso.update(str(k) for k in keys)
                for item in events:
                    event = decode(item)
                    if not isinstance(event, Event) or event.end < at:
                        raise ValueError(f"a logged event is not one taken: {item!r}")
                    group.texts[group.waiting.take(event)] = _write(item)
                _release(group, at)
                entry = _write([watermark, keys, events])
                group.log.append(entry)
                group.logged += len(entry)

    def _restored(self, snapshot: bytes, engine: Engine | None) -> Engine:
        """``engine`` (or a new one) holding ``snapshot``; an engine whose rules its actions
        changed otherwise than the snapshot's is replaced by a new one."""
        if engine is not None:
            try:
                engine.restore(snapshot)
                return engine
            except SnapshotError:
                pass
        engine = new_engine(self.stage)
        engine.restore(snapshot)
        return engine

    def _error(self, group: int, reason: str) -> StateError:
        return StateError(
            f"{self.where}: the state of key group {group} {reason}: this checkpoint cannot be "
            "resumed by these rules; resume it with the rules and version that wrote it, or "
            "start a new checkpoint folder (--checkpoint)"
        )


def _release(group: GroupState, watermark: Time) -> list[Event]:
    """Run every waiting event the watermark has passed (by end, then arrival) and move the
    clock to it; the detections, in the order they were derived."""
    texts = group.texts
    ready: list[Event] = []
    for arrival, event in group.waiting.due_arrivals(watermark):
        ready.append(event)
        del texts[arrival]
    return _run(group.engine, ready, watermark)


def _run(engine: Engine, events: list[Event], watermark: Time) -> list[Event]:
    """Push ``events`` (in order) and move the clock to ``watermark``; the detections, in
    the order they were derived."""
    detections: list[Event] = []
    for event in events:
        if event.end > engine.now:  # (timers due before the event fire first)
            detections += engine.advance(event.end)
        detections += engine.push(event)
    if watermark > engine.now:
        detections += engine.advance(watermark)
    return detections


def _waiting(arrivals: int) -> Intake:
    """A group's buffer of events waiting for the watermark, ``arrivals`` taken so far (an
    intake whose own checks are none: the watermark, Spark's, tells the late events)."""
    return Intake({}, None, 0, {"events_in": arrivals, "rejected": 0})


def _place(row: Row) -> tuple[str, int]:
    return row[0], row[1]


#: ``json.dumps`` with the snapshots' settings (compact).
_write = json.JSONEncoder(separators=(",", ":")).encode


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
    """The event-time timeout (milliseconds) that calls a group once the watermark reaches
    ``time`` (Spark calls it when the watermark passes the timeout)."""
    return math.ceil(time * 1000) - 1
