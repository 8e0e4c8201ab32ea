"""Archive replay on Spark: ``reasoner run``'s detections, computed by a Spark job.

The job (docs/scale-out.md, "Spark"):

1. **Read.** When the format's files each hold one key and are read at once in time order
   (MesoWest: one export per station) and the program keys their events by that key, every
   file goes to the keyed partition of its key (:func:`connectors.events.shares.file_sources`,
   as ``reasoner run --workers`` divides them) and the keyed task reads its own files
   (:class:`~connectors.spark.replay_keyed.FilesTask`): no event crosses a shuffle. Otherwise
   (or when a task finds a file out of time order) the list of files is distributed, a few
   files per task; each task reads its files with the readers of ``reasoner run``
   (:mod:`connectors.events.inputs`): a format read at once when in time order reads the
   task's files together, merged by time, else (or when a file is out of time order) a file at
   a time; the keyed events cross the shuffle as columns, a chunk per partition
   (:func:`~connectors.spark.replay_read.keyed_record`), not a record each. Either way every
   malformed line is rejected with the same file, line and reason, keyed where it falls in the
   files' merge (the rejects are written in that order, as ``reasoner run`` skips them), a file
   that cannot be read is reported as ``reasoner run`` reports it, and each event gets a
   sequence number (its file's index, then its place in the file, or its line when the task
   reads its own files) and is checked as an engine would check it.
2. **Admit.** ``reasoner run`` merges its files by end time and rejects an event that ends
   before one already processed (late). When every file is in time order the merged stream is
   too, nothing is late, and the stream's order is (end time, file, place): nothing to do.
   Otherwise the driver replays the merge on the events' times alone (no arguments), as
   ``reasoner run`` would, to find the late ones and the order the lateness buffer releases.
3. **Keyed stage.** Each task runs its partition's events, in stream order, through one engine
   of the keyed rules (:func:`connectors.spark.detect.detect`), as a worker of ``reasoner run
   --workers`` runs its keys. It sorts the detections in the defined order of ``reasoner run
   --workers`` (end, start, name, arguments), formats them with ``reasoner run``'s writer and
   writes them as one sorted run file, with what the global stage reads beside it
   (:mod:`connectors.spark.replay_keyed`). A task reading its own files stops at its last
   event; the engines with a timer pending before the stream's end move there in a second job
   (:class:`~connectors.spark.replay_keyed.EndTask`). The static knowledge (the program's
   facts and Horn rules, else ``--knowledge``) is built once, in the driver, and broadcast; the
   executors get the program without its facts (:func:`executor_program`).
4. **Global stage.** The rules that do not partition run in the driver, after the keyed stage,
   on the input events they read and on what the keyed stage derived, in one engine's order
   (:func:`reasoner.runtime.order.run_global`).
5. **Write.** The driver merges the sorted runs and the global stage's detections: the output
   compares equal to ``reasoner run``'s.

Keyed tasks reading their own files are one job (a second for the engines with a timer pending
before the stream's end). Otherwise the read is one Spark stage whose output is shuffled by key
once; two jobs use it: one takes the partition holding the files' counts, the rejects and the
global stage's input events, the other runs the keyed stage on the rest (a third, in the
driver's admission, only when the files are not each in time order).
"""

from __future__ import annotations

import heapq
import math
import shutil
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from connectors.events.inputs import open_events, rdf_options
from connectors.events.rejects import Position, Rejected
from connectors.events.shares import file_sources
from connectors.events.times import TimeStyle
from connectors.spark.detect import Stage
from connectors.spark.replay_keyed import EndTask, FilesTask, ShuffledTask, check_runs, chunks
from connectors.spark.replay_read import (
    EVENT,
    FAILED,
    FILE,
    FILE_STRIDE,
    GLOBAL,
    KEYED,
    OUT_OF_ORDER,
    REJECT,
    TIMER,
    keyed_events,
    read_task,
    unread,
)
from connectors.spark.runs import formatted_run, merge_runs
from reasoner.compiler.partition import EventType, Partitioning, analyse
from reasoner.errors import EventError, ReasonerError
from reasoner.knowledge.base import Knowledge
from reasoner.knowledge.program import program_knowledge
from reasoner.language.ast import Facts, Program, Statement, StaticRule, event_arities
from reasoner.runtime.checkpoint import Derivations
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.runtime.intake import Intake
from reasoner.runtime.options import EngineOptions
from reasoner.runtime.order import run_global
from reasoner.runtime.stages import GlobalStage, stage_engine
from reasoner.runtime.worker import Derived, revive

if TYPE_CHECKING:
    from pyspark import RDD, SparkContext


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
    """The outcome of :func:`replay`: the detections as JSON lines in the defined order, and
    the counts. Call :meth:`close` after reading the lines (it removes the sorted runs)."""

    lines: Iterator[str]
    rejected: list[Rejected]
    events: int
    iso: bool
    unmatched: int
    runs: Path

    def close(self) -> None:
        shutil.rmtree(self.runs, ignore_errors=True)


@dataclass(frozen=True)
class _Plan:
    """What the driver decided from the program's partition analysis."""

    partitioning: Partitioning
    reads: set[EventType] | None  # the types the global stage reads (None: one engine)
    feeds: bool  # the global stage reads what the keyed stage derives (it marks positions)
    raw_types: set[EventType] | None  # the input types the global stage reads (None: all)
    keys: dict[EventType, int]  # each keyed type's key position
    n: int  # keyed partitions (0: nothing keyed)


@dataclass
class _Stream:
    """The archive as the read job and the admission give it to the stages."""

    count: int  # events the engine takes
    until: Any  # the stream's time after its last event
    places: dict[int, int] | None  # admitted events' places (None: every event, by seq)
    raw: list[tuple[int, Event]]  # the global stage's input events, in stream order
    rejected: list[Rejected]
    style: TimeStyle
    unmatched: int


def replay(
    sc: SparkContext,
    archive: Archive,
    *,
    runs: Path,
    options: EngineOptions,
    knowledge: Knowledge | None = None,
    log: Callable[[str], None] = lambda _: None,
) -> Replay:
    """Replay an archive through its rules on Spark.

    Args:
        sc: the Spark context.
        archive: the files, their format and the rules.
        runs: a folder (created, and removed by :meth:`Replay.close`) where the keyed stage
            writes its sorted runs of detections; on a cluster, a path every executor and the
            driver see.
        options: the engine options (``lateness`` as ``reasoner run --lateness``).
        knowledge: the static knowledge (None: the program's facts and Horn rules). Built
            once, in the driver: the global stage uses it there, and it is shipped once to
            every executor (a broadcast) and unpacked once per Python worker.
        log: receives one line per step.

    Returns:
        The :class:`Replay`; its ``lines`` are produced lazily from the runs.
    """
    program = archive.program
    plan = _plan(program, options.policy, sc.defaultParallelism)
    stage_options = replace(options, lateness=0)  # (admitted: in the order they run)
    shipped = replace(archive, program=executor_program(program, options))
    stage = None
    if plan.n:
        knowledge = keyed_knowledge(program, options, knowledge)
        stage = make_stage(sc, shipped.program, stage_options, knowledge, plan)
    log(f"reading {len(archive.files)} files")
    stream = None if stage is None else _read_keyed(sc, shipped, stage, plan, runs, log)
    if stream is None:
        stream = _read_shuffled(sc, shipped, stage, plan, runs, options.lateness, log)
    found: list[tuple[Any, str]] = []
    if plan.partitioning.remainder:
        log("running the global rules in the driver")
        detections = _run_global(program, stage_options, knowledge, plan, stream, runs)
        found = formatted_run(detections, stream.style)
    sources = [chunks(path) for path in sorted(runs.glob("run-*"))]
    return Replay(
        lines=merge_runs([*sources, iter(found)]),
        rejected=stream.rejected,
        events=stream.count,
        iso=stream.style.iso,
        unmatched=stream.unmatched,
        runs=runs,
    )


def keyed_knowledge(
    program: Program, options: EngineOptions, knowledge: Knowledge | None
) -> Knowledge | None:
    """The knowledge :func:`replay` gives the keyed stage: ``knowledge``, else, when the
    program partitions, its facts and Horn rules evaluated. The keyed engines would each
    evaluate them; :func:`replay` does it once, in the driver (or takes what this gave
    earlier, e.g. built while Spark starts), and the executors get the program without its
    facts (:func:`executor_program`).

    >>> from reasoner.language.parser import parse
    >>> program = parse("near(a, b). c(X, Y) <- e(X) WHERE near(X, Y).")
    >>> list(keyed_knowledge(program, EngineOptions(), None).solve("near", ("a", None)))
    [('a', 'b')]
    >>> keyed_knowledge(parse("p. c <- e WHERE p."), EngineOptions(), None) is None
    True
    """
    if knowledge is not None or not analyse(program, options.policy).partitioned:
        return knowledge
    return program_knowledge(program)


def executor_program(program: Program, options: EngineOptions) -> Program:
    """The program the executors get: without its facts (their engines read the knowledge
    built from them in the driver, see :func:`ship_knowledge`), unless ``explain``: a
    derivation names the line where each fact it used is written.

    >>> from reasoner.language.parser import parse
    >>> program = parse("near(a, b). far(X) :- near(X, _). c(X) <- e(X) WHERE far(X).")
    >>> len(executor_program(program, EngineOptions()).static_rules), len(program.static_rules)
    (1, 2)
    """
    if options.explain:
        return program
    return Program(tuple(s for s in program.statements if not _is_fact(s)))


def _is_fact(statement: Statement) -> bool:
    return isinstance(statement, Facts) or (
        isinstance(statement, StaticRule) and not statement.body
    )


def make_stage(
    sc: SparkContext,
    program: Program,
    options: EngineOptions,
    knowledge: Knowledge | None,
    plan: _Plan,
) -> Stage:
    """The keyed stage as the executors run it, its knowledge broadcast."""
    shipped, version = ship_knowledge(sc, knowledge)
    keyed = plan.partitioning.keyed
    return Stage(program, options, shipped, version, keep=keyed, marking=plan.feeds)


def _plan(program: Program, policy: str, parallelism: int) -> _Plan:
    partitioning = analyse(program, policy)
    if not partitioning.partitioned:
        return _Plan(partitioning, None, False, None, {}, 0)
    reads = set(partitioning.reads)
    derived_types = {(r.head.name, len(r.head.args)) for r in program.event_rules}
    # the input events the global stage reads: None, all of them; else these types
    raw_types = set() if not partitioning.remainder else reads
    if not raw_types - derived_types:
        raw_types = set()
    return _Plan(
        partitioning,
        reads,
        bool(reads & partitioning.keyed_types(program)),
        raw_types,
        partitioning.key_positions(),
        max(1, parallelism),
    )


def _read_keyed(
    sc: SparkContext,
    archive: Archive,
    stage: Stage,
    plan: _Plan,
    runs: Path,
    log: Callable[[str], None],
) -> _Stream | None:
    """Each keyed task reads the files of its keys and runs their events (:class:`FilesTask`),
    when the format's files each hold one key and are read at once in time order; then the
    engines with a timer pending before the stream's end move there (:class:`EndTask`).
    None: the files cannot be so read, or one is out of time order (the caller reads them
    through the shuffle)."""
    shares = file_sources(archive.format, archive.files, plan.n, plan.partitioning)
    if shares is None:
        return None
    log("each keyed task reads the files of its keys")
    _fresh(runs)
    reads = plan.reads or set()
    arities = event_arities(archive.program)
    raw_types = plan.raw_types or set()
    task = FilesTask(archive, arities, stage, plan.keys, raw_types, reads, str(runs))
    files = [[(place, path) for place, path, _ in share.files] for share in shares]
    meta = sc.parallelize(files, len(files)).mapPartitionsWithIndex(task).collect()
    _check_read(meta, runs)
    if any(r[0] == OUT_OF_ORDER for r in meta):
        log("a file is out of time order or unreadable from some row on: reading through a shuffle")
        return None
    _check(runs, [f"{i:05d}" for i in range(plan.n)], [r[1] for r in meta if r[0] == FAILED])
    stream = _ordered_stream(meta)
    due = [r[1] for r in meta if r[0] == TIMER and r[2] is not None and r[2] <= stream.until]
    if due:
        log(f"moving {len(due)} keyed engines to the stream's end")
        end = EndTask(stage, stream.until, reads, str(runs))
        failed = sc.parallelize(due, len(due)).mapPartitions(end).collect()
        _check(runs, [f"{i:05d}-end" for i in due], failed)
    return stream


def _read_shuffled(
    sc: SparkContext,
    archive: Archive,
    stage: Stage | None,
    plan: _Plan,
    runs: Path,
    lateness: Any,
    log: Callable[[str], None],
) -> _Stream:
    """The read shuffled by key (:func:`_shuffle`), its events admitted, the keyed stage (when
    ``stage``) run on each keyed partition of the shuffle."""
    shuffled = _shuffle(sc, archive, plan)
    stream = _admit_stream(sc, shuffled, archive, plan, lateness, log)
    _fresh(runs)
    if stage is not None:
        log("running the keyed rules per partition")
        _run_keyed(sc, shuffled, stage, stream, plan, runs)
    return stream


def _fresh(runs: Path) -> None:
    shutil.rmtree(runs, ignore_errors=True)
    runs.mkdir(parents=True)


def _shuffle(sc: SparkContext, archive: Archive, plan: _Plan) -> RDD[tuple[Any, ...]]:
    """The read, shuffled: partitions 0..n-1 hold the keyed events by key; partition n the
    rest (what the driver needs: the files' counts, the rejects and the input events of the
    global stage)."""
    arities = event_arities(archive.program)
    keys, raw_types, n = plan.keys, plan.raw_types, plan.n
    # A few files per task: a task costs tens of milliseconds of scheduling.
    slices = max(1, min(len(archive.files), 4 * sc.defaultParallelism))
    return (
        sc.parallelize(list(enumerate(archive.files)), slices)
        .mapPartitions(lambda files: read_task(archive, arities, files, keys, raw_types, n))
        .partitionBy(n + 1, _identity)
        .values()
    )


def _admit_stream(
    sc: SparkContext,
    shuffled: RDD[tuple[Any, ...]],
    archive: Archive,
    plan: _Plan,
    lateness: Any,
    log: Callable[[str], None],
) -> _Stream:
    """Run the read and fetch the driver's partition; when a file is not in time order,
    admit the events as ``reasoner run`` merges them (:func:`_admit`)."""
    meta = sc.runJob(shuffled, _meta, [plan.n])
    _check_read(meta, None)
    if all(r[2].ordered for r in meta if r[0] == FILE):
        return _ordered_stream(meta)
    log("the files are not each in time order: admitting events as reasoner run merges them")
    admitted = _admit(shuffled, archive, event_arities(archive.program), lateness)
    places, arrived = admitted.places, admitted.arrived
    raw = sorted((places[r[1]], r[2]) for r in meta if r[0] == GLOBAL and r[1] in places)
    # (in the order of the merge: where each event arrived, a malformed line after the
    # event its file gave before it; before any: the files' order)
    rejected = [
        ((arrived[r[2][1]], *r[2][2:]) if r[2][0] > -math.inf else (-1, *r[2][1:]), r[1])
        for r in meta
        if r[0] == REJECT
    ]
    rejected += [((arrived[seq], 0, 0), found) for seq, found in _lines(sc, archive, admitted)]
    return _summed(meta, len(places), admitted.until, places, raw, rejected)


def _ordered_stream(meta: list[tuple[Any, ...]]) -> _Stream:
    """The stream of files each in time order, from the read's records for the driver: the
    merged stream is in order, nothing is late, the order is (end, seq)."""
    infos = {r[1]: r[2] for r in meta if r[0] == FILE}
    until = max((info.last for info in infos.values()), default=-math.inf)
    count = sum(info.taken for info in infos.values())
    # (in the order of the merge: (end, seq), a malformed line after an event)
    rejected = [(r[2], r[1]) for r in meta if r[0] == REJECT]
    rejected += [((r[2][3], r[1], 0, 0), Rejected(*r[3])) for r in meta if r[0] == EVENT]
    raw = sorted(((r[1], r[2]) for r in meta if r[0] == GLOBAL), key=_stream_order)
    return _summed(meta, count, until, None, raw, rejected)


def _summed(
    meta: list[tuple[Any, ...]],
    count: int,
    until: Any,
    places: dict[int, int] | None,
    raw: list[tuple[int, Event]],
    rejected: list[tuple[tuple[Any, ...], Rejected]],
) -> _Stream:
    """The :class:`_Stream` of the events admitted (``count``, the last time, their places,
    the global stage's input events, the rejections with their places in the merge: put in
    that order here, the order ``reasoner run`` skips them in)."""
    infos = {r[1]: r[2] for r in meta if r[0] == FILE}
    rejected.sort(key=_first)
    style = TimeStyle(iso=any(info.iso for info in infos.values()))
    unmatched = sum(info.unmatched for info in infos.values())
    return _Stream(count, until, places, raw, [r for _, r in rejected], style, unmatched)


def _run_keyed(
    sc: SparkContext,
    shuffled: RDD[tuple[Any, ...]],
    stage: Stage,
    stream: _Stream,
    plan: _Plan,
    runs: Path,
) -> None:
    """The keyed stage: one task per keyed partition writes its sorted runs under ``runs``.

    Raises:
        ReasonerError: a task could not write its runs where the driver reads them.
    """
    admitted = None if stream.places is None else sc.broadcast(stream.places)
    reads = plan.reads or set()
    task = ShuffledTask(stage, stream.until, reads, stream.style.iso, str(runs), admitted)
    failed = sc.runJob(shuffled.mapPartitionsWithIndex(task), list, list(range(plan.n)))
    if admitted is not None:
        admitted.unpersist()
    _check(runs, [f"{i:05d}" for i in range(plan.n)], failed)


def _check_read(meta: list[tuple[Any, ...]], runs: Path | None) -> None:
    """Raise the error of the first file, in input order, that the read could not read, as
    ``reasoner run`` does (``runs``: what the tasks wrote there is removed)."""
    message = unread(meta)
    if message is not None:
        if runs is not None:
            shutil.rmtree(runs, ignore_errors=True)
        raise ReasonerError(message)


def _check(runs: Path, parts: list[str], failed: list[str]) -> None:
    """:func:`check_runs`, the runs folder removed when they are not all there."""
    try:
        check_runs(runs, parts, failed)
    except ReasonerError:
        shutil.rmtree(runs, ignore_errors=True)
        raise


def _run_global(
    program: Program,
    options: EngineOptions,
    knowledge: Knowledge | None,
    plan: _Plan,
    stream: _Stream,
    runs: Path,
) -> list[Event]:
    """The rules that do not partition, in the driver: on the input events they read and on
    what the keyed stage wrote for them, in one engine's order. Returns their detections."""
    reads, raw = plan.reads, stream.raw
    detections: list[Event] = []
    keep = None if reads is None else plan.partitioning.remainder  # (None: nothing keyed)
    engine = stage_engine(
        program, keep, options, knowledge=knowledge, remainder=True, reads_keyed=plan.feeds
    )
    if isinstance(engine, GlobalStage):  # it reads what the keyed stage derived
        rules = _derivations(program, plan.partitioning.keyed, engine, knowledge, options)
        derived: list[Derived] = []
        for path in sorted(runs.glob("derived-*")):
            derived += [(seq, [revive(d, rules) for d in ds], p) for seq, ds, p in chunks(path)]
        detections += run_global(engine, raw, derived, reads or set())
    else:  # the keyed stage sends nothing: the input events only
        push = engine.push
        for _, event in raw:
            detections += push(event)
    if stream.until > engine.now:
        detections += engine.advance(stream.until)
    return detections


def _derivations(
    program: Program,
    keyed: tuple[int, ...],
    engine: Engine,
    knowledge: Knowledge | None,
    options: EngineOptions,
) -> Derivations | None:
    """With ``explain``: the rules that read the keyed stage's derivations (its rules first,
    at the places the executors name them) and the global stage's, as
    :class:`~reasoner.runtime.parallel.ParallelEngine` reads its workers'."""
    if not options.explain:
        return None
    copy = stage_engine(program, keyed, options, knowledge=knowledge)
    return Derivations.of(copy, engine)


def ship_knowledge(
    sc: SparkContext, knowledge: Knowledge | None
) -> tuple[Callable[[], Knowledge] | None, str]:
    """The knowledge for the executors (its derived part, broadcast) and its identity."""
    if knowledge is None:
        return None, ""
    from reasoner.knowledge.versions import KnowledgeVersion

    derived = knowledge.knowledge if isinstance(knowledge, KnowledgeVersion) else knowledge
    shared = sc.broadcast(derived)
    return (lambda: shared.value), uuid.uuid4().hex


def write_parquet(lines: Iterable[str], path: Path, iso: bool) -> int:
    """Write detections, given as JSON lines, as one Parquet file in their order: columns
    ``name``, ``args`` (the JSON array of ``reasoner run``'s output), ``start``, ``end``
    (numbers, or ISO-8601 text when ``iso``), ``sources`` (JSON, with provenance; else null)
    and ``why`` (JSON, with explain; else null). Returns how many were written."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    time = pa.string() if iso else pa.float64()
    schema = pa.schema(
        [
            ("name", pa.string()),
            ("args", pa.string()),
            ("start", time),
            ("end", time),
            ("sources", pa.string()),
            ("why", pa.string()),
        ]
    )
    count = 0
    items = iter(lines)
    with pq.ParquetWriter(path, schema) as out:
        while chunk := list(islice(items, 65536)):
            records = [json.loads(line) for line in chunk]
            columns = {
                "name": [r["name"] for r in records],
                "args": [json.dumps(r["args"], separators=(",", ":")) for r in records],
                "start": [r["start"] for r in records],
                "end": [r["end"] for r in records],
                "sources": [
                    json.dumps(r["sources"], separators=(",", ":")) if "sources" in r else None
                    for r in records
                ],
                "why": [
                    json.dumps(r["why"], separators=(",", ":")) if "why" in r else None
                    for r in records
                ],
            }
            out.write_table(pa.table(columns, schema=schema))
            count += len(records)
    return count


def _first(item: tuple[Any, ...]) -> Any:
    return item[0]


def _stream_order(item: tuple[int, Event]) -> tuple[Any, int]:
    return item[1][3], item[0]


def _identity(partition: int) -> int:
    return partition


# ---------------------------------------------------------------------- read (executors)


def _meta(records: Iterable[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
    """What the driver takes from partition ``n``: all but the stubs of unread events."""
    return (r for r in records if r[0] != EVENT or r[3] is not None)


# ---------------------------------------------------------------------- admit (driver)


@dataclass
class _Admitted:
    """What :func:`_admit` found: each admitted event's place in the released stream and each
    event's place in the merge (by sequence number), the stream's last time and the late
    events (sequence number, reason)."""

    places: dict[int, int]
    arrived: dict[int, int]
    until: Any
    late: list[tuple[int, str]]


def _admit(
    shuffled: RDD[tuple[Any, ...]],
    archive: Archive,
    arities: dict[str, set[int]],
    lateness: Any,
) -> _Admitted:
    """Admit the events as ``reasoner run`` does when its files are not in time order: the
    merge and the lateness buffer, replayed on the events' times."""
    collected = shuffled.flatMap(_times).collect()
    times = sorted({t[0]: t for t in collected}.values())  # keyed and read globally: once
    per_file: dict[int, list[tuple[int, Event]]] = {}
    for seq, name, arity, start, end in times:
        stub = tuple.__new__(Event, (name, (None,) * arity, start, end))
        per_file.setdefault(seq // FILE_STRIDE, []).append((seq, stub))
    merged = heapq.merge(*(per_file[f] for f in sorted(per_file)), key=lambda item: item[1][3])
    order: dict[int, int] = {}
    arrived: dict[int, int] = {}  # (where the rejections fall)
    late: list[tuple[int, str]] = []
    now: Any = -math.inf
    intake = Intake(arities, archive.max_span, lateness)  # (as reasoner run's engine's)
    seqs: dict[int, int] = {}  # the sequence numbers of the held events, by arrival
    for seq, stub in merged:
        arrived[seq] = len(arrived)
        reason = intake.rejection(stub, now)
        if reason is not None:
            late.append((seq, reason))
            continue
        seqs[intake.take(stub)] = seq
        for arrival, released in intake.due_arrivals(intake.released):
            now = released[3]
            order[seqs.pop(arrival)] = len(order)
    for arrival, released in intake.due_arrivals(math.inf):
        now = released[3]
        order[seqs.pop(arrival)] = len(order)
    return _Admitted(order, arrived, now, late)


def _times(record: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
    if record[0] == KEYED:
        for end, seq, event in keyed_events(record):
            yield seq, event[0], len(event[1]), event[2], end
    elif record[0] in (GLOBAL, EVENT):
        _, seq, event, _ = record
        yield seq, event[0], len(event[1]), event[2], event[3]


def _lines(sc: SparkContext, archive: Archive, admitted: _Admitted) -> list[tuple[int, Rejected]]:
    """The rejections of events found late, with their sequence numbers, files and lines
    (their files read again, on the executors, by the readers that know the lines)."""
    wanted: dict[int, dict[int, str]] = {}
    for seq, reason in admitted.late:
        wanted.setdefault(seq // FILE_STRIDE, {})[seq % FILE_STRIDE] = reason
    if not wanted:
        return []

    def locate(items: Iterable[tuple[int, dict[int, str]]]) -> Iterator[tuple[int, Rejected]]:
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
                    found = where.rejected(str(EventError(reason, event)))
                    yield index * FILE_STRIDE + place, found

    return sc.parallelize(sorted(wanted.items()), len(wanted)).mapPartitions(locate).collect()


def _ignore(_: Rejected) -> None:
    """Malformed lines were reported by the first reading."""


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
