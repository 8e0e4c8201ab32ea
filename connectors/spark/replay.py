"""Archive replay on Spark: ``reasoner run``'s detections, computed by a Spark job.

The job (docs/scale-out.md, "Spark"):

1. **Read.** The list of files is distributed, one task per file; each task reads its file with
   the readers of ``reasoner run`` (:mod:`connectors.events.inputs`), so every malformed line
   is rejected with the same file, line and reason. Each event gets a sequence number (its
   file's index, then its place in the file) and is checked as an engine would check it.
2. **Admit.** ``reasoner run`` merges its files by end time and rejects an event that ends
   before one already processed (late). When every file is in time order the merged stream is
   too, nothing is late, and the stream's order is (end time, file, place): nothing to do.
   Otherwise the driver replays the merge on the events' times alone (no arguments), as
   ``reasoner run`` would, to find the late ones and the order the lateness buffer releases.
3. **Keyed stage.** Events are grouped by their partition key value; each group, in stream
   order, runs through the keyed rules (:func:`connectors.spark.detect.detect`).
4. **Global stage.** The rules that do not partition run in the driver, after the keyed stage,
   on the input events they read and on what the keyed stage derived, in one engine's order
   (:func:`reasoner.runtime.parallel.remainder_input`).
5. **Write.** Detections are sorted in the defined order of ``reasoner run --workers`` (end,
   start, name, arguments) and written by the driver with ``reasoner run``'s writer: the files
   compare equal.
"""

from __future__ import annotations

import heapq
import math
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from connectors.events.inputs import open_events, rdf_options
from connectors.events.rejects import Position, Rejected
from connectors.events.times import TimeStyle
from connectors.spark.detect import Derived, Stage, detect
from reasoner.compiler.partition import EventType, Partitioning, analyse
from reasoner.errors import EventError, ReasonerError
from reasoner.knowledge.base import Knowledge
from reasoner.language.ast import Program, event_arities
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event, rejection
from reasoner.runtime.parallel import order_key, remainder_input, revive, unique

if TYPE_CHECKING:
    from pyspark import RDD, SparkContext

#: A sequence number is the file's index times this, plus the event's place in its file.
FILE_STRIDE = 1 << 40

# The kinds of record the read step gives.
_EVENT, _REJECT, _FILE = 0, 1, 2


@dataclass(frozen=True)
class Archive:
    """The files and how to read them (sent to the executors)."""

    files: tuple[str, ...]
    format: str
    program: Program
    rdf_time: str | None = None
    max_span: Any = None


@dataclass
class Replay:
    """The outcome of :func:`replay`: the detections in the defined order and the counts.
    Call :meth:`close` after reading the detections (it frees the job's cached data)."""

    detections: Iterator[Event]
    rejected: list[Rejected]
    events: int
    iso: bool
    unmatched: int
    cached: list[RDD[Any]]

    def close(self) -> None:
        for rdd in self.cached:
            rdd.unpersist()


@dataclass(frozen=True)
class _FileInfo:
    ordered: bool  # every event ends no earlier than the one before it
    taken: int  # events the engine takes
    last: Any  # the latest end of an event the engine takes (-inf: none)
    iso: bool
    unmatched: int  # RDF graphs that gave no event


def replay(
    sc: SparkContext,
    archive: Archive,
    *,
    options: dict[str, Any],
    lateness: Any = 0,
    knowledge: Knowledge | None = None,
    log: Callable[[str], None] = lambda _: None,
) -> Replay:
    """Replay an archive through its rules on Spark.

    Args:
        sc: the Spark context.
        archive: the files, their format and the rules.
        options: the engine options (policy, tie_break, max_span, provenance).
        lateness: as ``reasoner run --lateness``.
        knowledge: the static knowledge (None: the program's facts and Horn rules). The
            global stage uses it in the driver; its derived facts and rules are shipped once to
            every executor (a broadcast) and unpacked once per Python worker.
        log: receives one line per step.

    Returns:
        The :class:`Replay`; its ``detections`` are produced lazily (keep the context running
        while reading them).
    """
    program = archive.program
    partitioning = analyse(program, options["policy"])
    keyed, remainder = partitioning.stages(program)
    if not partitioning.partitioned:
        remainder = program
    arities = event_arities(program)
    # A few files per task: a task costs tens of milliseconds of scheduling.
    slices = max(1, min(len(archive.files), 4 * sc.defaultParallelism))
    log(f"reading {len(archive.files)} files")
    records = (
        sc.parallelize(list(enumerate(archive.files)), slices)
        .mapPartitions(lambda files: _read(archive, arities, files))
        .cache()
    )
    cached: list[RDD[Any]] = [records]
    meta = records.filter(lambda r: r[0] != _EVENT or r[3] is not None).collect()
    infos = {r[1]: r[2] for r in meta if r[0] == _FILE}
    rejected = [r[1] for r in meta if r[0] == _REJECT]
    events = records.filter(lambda r: r[0] == _EVENT)
    if all(info.ordered for info in infos.values()):
        # The merged stream is in order: nothing is late, the order is (end, seq).
        admitted = events.filter(lambda r: r[3] is None).map(lambda r: (r[1], r[2]))
        until = max((info.last for info in infos.values()), default=-math.inf)
        count = sum(info.taken for info in infos.values())
        rejected += [Rejected(*r[3]) for r in meta if r[0] == _EVENT]
    else:
        log("the files are not each in time order: admitting events as reasoner run merges them")
        admitted, until, count, late = _admit(sc, events, archive, arities, lateness)
        rejected += late
    order = {file: index for index, file in enumerate(archive.files)}
    rejected.sort(key=lambda r: (order.get(r.file, -1), r.line))
    stage_options = {**options, "lateness": 0}
    derived: list[tuple[int, list[Event]]] = []
    keyed_out: Iterator[Event] = iter(())
    reads = set(partitioning.reads) if partitioning.partitioned else None
    if partitioning.partitioned:
        log("running the keyed rules per key")
        shipped, version = ship_knowledge(sc, knowledge)
        stage = Stage(keyed, tuple(sorted(stage_options.items())), shipped, version)
        found = _keyed(admitted, stage, partitioning, until, reads or set()).cache()
        cached.append(found)
        derived = [
            (seq, [revive(d) for d in ds])
            for seq, ds in found.filter(lambda r: r[0] == 1).map(lambda r: r[1]).collect()
        ]
        keyed_out = (
            revive(d)
            for d in found.filter(lambda r: r[0] == 0)
            .map(lambda r: r[1])
            .sortByKey(numPartitions=max(1, sc.defaultParallelism))
            .values()
            .toLocalIterator(prefetchPartitions=True)
        )
    global_out: list[Event] = []
    if remainder.event_rules:
        log("running the global rules in the driver")
        engine = Engine(
            remainder,
            knowledge=knowledge,
            **{
                **stage_options,
                "max_span": None if partitioning.partitioned else options["max_span"],
            },
        )
        raw = admitted if reads is None else admitted.filter(lambda r: _type(r[1]) in reads)
        derived_types = {(r.head.name, len(r.head.args)) for r in program.event_rules}
        inputs = _in_order(raw) if reads is None or reads - derived_types else iter(())
        push = engine.push
        for event in remainder_input(inputs, derived, reads or set()):
            global_out += push(event)
        if until > engine.now:
            global_out += engine.advance(until)
        global_out.sort(key=order_key)
    merged = heapq.merge(keyed_out, global_out, key=order_key)
    return Replay(
        detections=unique(merged),
        rejected=rejected,
        events=count,
        iso=any(info.iso for info in infos.values()),
        unmatched=sum(info.unmatched for info in infos.values()),
        cached=cached,
    )


def ship_knowledge(
    sc: SparkContext, knowledge: Knowledge | None
) -> tuple[Callable[[], Knowledge] | None, str]:
    """The knowledge for the executors (its derived part, broadcast) and its identity."""
    if knowledge is None:
        return None, ""
    from reasoner.knowledge.snapshot import Snapshot

    derived = knowledge.knowledge if isinstance(knowledge, Snapshot) else knowledge
    shared = sc.broadcast(derived)
    return (lambda: shared.value), uuid.uuid4().hex


def write_parquet(detections: Iterable[Event], path: Path, style: TimeStyle) -> int:
    """Write detections as one Parquet file, in their order: columns ``name``, ``args``
    (the JSON array of ``reasoner run``'s output), ``start``, ``end`` (numbers, or ISO-8601
    text when the input's times were) and ``sources`` (JSON, with provenance; else null).
    Returns how many were written."""
    import io
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from connectors.events.jsonl import JsonLinesWriter

    time = pa.string() if style.iso else pa.float64()
    schema = pa.schema(
        [
            ("name", pa.string()),
            ("args", pa.string()),
            ("start", time),
            ("end", time),
            ("sources", pa.string()),
        ]
    )
    count = 0
    items = iter(detections)
    with pq.ParquetWriter(path, schema) as out:
        while chunk := list(islice(items, 65536)):
            buffer = io.StringIO()
            JsonLinesWriter(buffer, style).write_all(chunk)
            records = [json.loads(line) for line in buffer.getvalue().splitlines()]
            columns = {
                "name": [r["name"] for r in records],
                "args": [json.dumps(r["args"], separators=(",", ":")) for r in records],
                "start": [r["start"] for r in records],
                "end": [r["end"] for r in records],
                "sources": [
                    json.dumps(r["sources"], separators=(",", ":")) if "sources" in r else None
                    for r in records
                ],
            }
            out.write_table(pa.table(columns, schema=schema))
            count += len(records)
    return count


def _in_order(events: RDD[tuple[int, Event]]) -> Iterator[tuple[int, Event]]:
    """The events in the stream's order (end, then sequence number), fetched to the driver
    a partition at a time."""
    ordered: RDD[tuple[tuple[Any, int], Event]] = events.map(
        lambda r: ((r[1][3], r[0]), r[1])
    ).sortByKey(numPartitions=max(1, events.context.defaultParallelism))
    for (_, seq), event in ordered.toLocalIterator(prefetchPartitions=True):
        yield seq, event


def _type(event: Event) -> EventType:
    return event[0], len(event[1])


# ---------------------------------------------------------------------- read (executors)


def _read(
    archive: Archive, arities: dict[str, set[int]], files: Iterable[tuple[int, str]]
) -> Iterator[tuple[Any, ...]]:
    """Read files on an executor: ``(_EVENT, seq, event, rejection or None)`` per event,
    ``(_REJECT, Rejected)`` per malformed line, then ``(_FILE, index, _FileInfo)``."""
    for index, path in files:
        style = TimeStyle()
        rejects: list[Rejected] = []
        positions: list[Position] = []
        rdf = rdf_options(archive.format, archive.rdf_time, archive.program)
        stream = open_events(path, archive.format, style, rejects.append, rdf, arities, positions)
        base = index * FILE_STRIDE
        previous, last, ordered, taken = -math.inf, -math.inf, True, 0
        max_span = archive.max_span
        for place, event in enumerate(stream):
            end = event[3]
            if end < previous:
                ordered = False
            previous = end
            reason = rejection(event, -math.inf, arities, max_span, 0)
            if reason is None:
                last = max(last, end)
                taken += 1
                yield _EVENT, base + place, event, None
            else:
                where = next(p for p in positions if p.holds(event))
                found = where.rejected(str(EventError(reason, event)))  # as reasoner run says
                yield _EVENT, base + place, event, (found.file, found.line, found.reason)
            for item in rejects:
                yield _REJECT, item
            rejects.clear()
        for item in rejects:
            yield _REJECT, item
        counts = rdf.get("counts")
        unmatched = 0 if counts is None else counts.unmatched
        yield _FILE, index, _FileInfo(ordered, taken, last, style.iso, unmatched)


# ---------------------------------------------------------------------- admit (driver)


def _admit(
    sc: SparkContext,
    events: RDD[tuple[Any, ...]],
    archive: Archive,
    arities: dict[str, set[int]],
    lateness: Any,
) -> tuple[RDD[tuple[int, Event]], Any, int, list[Rejected]]:
    """Admit the events as ``reasoner run`` does when its files are not in time order: the
    merge and the lateness buffer, replayed on the events' times. Returns the admitted
    events with their place in the released stream, the stream's last time, how many were
    admitted and the late events (their lines found by reading those files again)."""
    times = sorted(events.map(lambda r: (r[1], r[2][0], len(r[2][1]), r[2][2], r[2][3])).collect())
    per_file: dict[int, list[tuple[int, Event]]] = {}
    for seq, name, arity, start, end in times:
        stub = tuple.__new__(Event, (name, (None,) * arity, start, end))
        per_file.setdefault(seq // FILE_STRIDE, []).append((seq, stub))
    merged = heapq.merge(*(per_file[f] for f in sorted(per_file)), key=lambda item: item[1][3])
    order: dict[int, int] = {}
    late: list[tuple[int, str]] = []
    now: Any = -math.inf
    latest: Any = -math.inf
    buffer: list[tuple[Any, int, int]] = []
    max_span = archive.max_span
    for arrival, (seq, stub) in enumerate(merged):
        reason = rejection(stub, now, arities, max_span, lateness)
        if reason is not None:
            late.append((seq, reason))
            continue
        heapq.heappush(buffer, (stub[3], arrival, seq))
        latest = max(latest, stub[3])
        while buffer and buffer[0][0] <= latest - lateness:
            now, _, released = heapq.heappop(buffer)
            order[released] = len(order)
    while buffer:
        now, _, released = heapq.heappop(buffer)
        order[released] = len(order)
    places = sc.broadcast(order)
    admitted = events.filter(lambda r: r[1] in places.value).map(
        lambda r: (places.value[r[1]], r[2])
    )
    return admitted, now, len(order), _lines(sc, archive, late)


def _lines(sc: SparkContext, archive: Archive, late: list[tuple[int, str]]) -> list[Rejected]:
    """The rejections of events found late, with their file and line (their files read again,
    on the executors, by the readers that know the lines)."""
    wanted: dict[int, dict[int, str]] = {}
    for seq, reason in late:
        wanted.setdefault(seq // FILE_STRIDE, {})[seq % FILE_STRIDE] = reason
    if not wanted:
        return []

    def locate(items: Iterable[tuple[int, dict[int, str]]]) -> Iterator[Rejected]:
        for index, reasons in items:
            positions: list[Position] = []
            path = archive.files[index]
            rdf = rdf_options(archive.format, archive.rdf_time, archive.program)
            arities = event_arities(archive.program)
            stream = open_events(
                path, archive.format, TimeStyle(), _ignore, rdf, arities, positions
            )
            for place, event in enumerate(stream):
                reason = reasons.get(place)
                if reason is not None:
                    where = next(p for p in positions if p.holds(event))
                    yield where.rejected(str(EventError(reason, event)))

    return sc.parallelize(sorted(wanted.items()), len(wanted)).mapPartitions(locate).collect()


def _ignore(_: Rejected) -> None:
    """Malformed lines were reported by the first reading."""


# ---------------------------------------------------------------------- keyed (executors)


def _keyed(
    admitted: RDD[tuple[int, Event]],
    stage: Stage,
    partitioning: Partitioning,
    until: Any,
    reads: set[EventType],
) -> RDD[tuple[Any, ...]]:
    """Run the keyed stage per key value: ``(0, (order key, detection))`` for every
    detection, ``(1, (seq, detections))`` for those the global stage reads."""
    keys = partitioning.key_positions()

    def by_key(item: tuple[int, Event]) -> Iterator[tuple[Any, tuple[Any, int, Event]]]:
        seq, event = item
        position = keys.get(_type(event))
        if position is not None:
            yield event[1][position], (event[3], seq, event)

    def run(groups: Iterable[tuple[Any, Iterable[tuple[Any, int, Event]]]]) -> Iterator[Any]:
        for _, items in groups:
            ordered = sorted(items, key=lambda item: item[:2])
            derived: Derived
            derived, _ = detect(stage, ((seq, event) for _, seq, event in ordered), until)
            for seq, plain in derived:
                for d in plain:
                    yield 0, (order_key(d), d)
                if reads and any((d[0], len(d[1])) in reads for d in plain):
                    yield 1, (seq, plain)

    n = max(1, admitted.context.defaultParallelism)
    return admitted.flatMap(by_key).groupByKey(n).mapPartitions(run)


def check_files(paths: Iterable[str]) -> tuple[str, ...]:
    """The event files under ``paths`` (a folder: its files, sorted, hidden ones skipped).

    Raises:
        ReasonerError: a path that does not exist.
    """
    files: list[str] = []
    for path in paths:
        p = Path(path)
        if p.is_dir():
            files += [
                str(f)
                for f in sorted(p.rglob("*"))
                if f.is_file() and not f.name.startswith((".", "_"))
            ]
        elif p.is_file():
            files.append(str(p))
        else:
            raise ReasonerError(f"{path}: no such events file or folder")
    return tuple(files)
