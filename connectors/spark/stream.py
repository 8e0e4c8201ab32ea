"""``reasoner spark stream``: detection as a Structured Streaming query over a folder of files.

The query (docs/scale-out.md, "Spark"):

1. a file source (``binaryFile``, its paths only) takes every new file of the folder; a Python
   worker reads it with the reader of ``reasoner run`` (:mod:`connectors.spark.sources`) and
   packs its rows by key group: Spark moves a few rows per file and group, not one per event;
2. the event time is an event-time watermark with the allowed lateness as its delay (a pack's
   time: its latest end);
3. the events are grouped by partition key value, the keys hashed into :data:`KEY_GROUPS`
   key groups (Spark's ``pmod(hash(key), n)``, :mod:`connectors.spark.keyhash`), and each
   group runs its keys in one engine with ``applyInPandasWithState``:
   the engine's snapshot and the events waiting for the watermark are the group's state in
   Spark's state store, the Python worker that wrote it keeps it live for the next
   micro-batch (:mod:`connectors.spark.live`), and an event-time timeout calls a group again
   when the watermark reaches its next waiting event or timer
   (:mod:`connectors.spark.keystate`);
4. ``foreachBatch`` writes each micro-batch's detections, late events and rejected lines
   (``{"file", "line", "reason"}``, as ``reasoner spark replay`` writes its rejects) to files
   named by the batch id, atomically, and publishes the detections to the SPARQL
   endpoint. A batch run again after a crash rewrites the same files with the same contents
   (Spark replays it from its checkpoint: the same files, the same state, the same
   watermark), so no detection is lost or doubled.

Spark drops rows older than the watermark before a stateful operator sees them. To see (and
report) late events instead, the watermark column is the event time shifted by
:data:`SHIFT` seconds and the delay is ``SHIFT`` plus the lateness: the watermark is the same,
and no row is older than it by ``SHIFT`` while times stay below
:data:`~connectors.spark.sources.LAST_TIME`.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from connectors.events.jsonl import read_jsonl
from connectors.events.refresh import Refresher
from connectors.spark import live
from connectors.spark.detect import Stage
from connectors.spark.keyhash import key_group
from connectors.spark.keystate import (
    DETECTION,
    EVENTS,
    GROUP_STATE,
    LATE,
    REJECT,
    REUSED,
    GroupDetector,
    Row,
    StateError,
    from_millis,
    record,
    timeout_millis,
)
from connectors.spark.runs import merge_runs
from connectors.spark.sources import Keys, ParsedRow, SourceError, listed_rows
from connectors.spark.versions import PROPERTY, Versions, current
from reasoner.aside import write_aside
from reasoner.compiler.partition import analyse
from reasoner.errors import ReasonerError
from reasoner.language.ast import Program, event_arities
from reasoner.runtime.events import Event
from reasoner.runtime.options import EngineOptions
from reasoner.values import Time

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.state import GroupState

    from reasoner.knowledge.versions import KnowledgeBase

#: The shift of the watermark column (seconds); see the module doc.
SHIFT = 4_500_000_000

_FILES = "path string, modificationTime timestamp, length long, content binary"
_OUTPUT = "kind string, text string, run binary"

#: How many key groups the keys are hashed into (Spark calls a stateful function once per
#: group and micro-batch, at a few milliseconds each; a key's group must never change, so
#: this number is part of every checkpoint's state layout).
KEY_GROUPS = 64
#: The group of the rejected lines.
_REJECTS_GROUP = -1

#: The file of a checkpoint recording its state's layout, and this version's layout (keys named
#: by :func:`reasoner.runtime.batches.key_text`, hashed into :data:`KEY_GROUPS` groups, each
#: group's keys in one engine): a checkpoint of another layout, or an older one without the
#: file, would orphan or misread its keys' state.
LAYOUT_FILE = "reasoner-layout"
LAYOUT = f"spark stream state 3: keys by key_text, {KEY_GROUPS} key groups of one engine\n"

#: Where each kind of output goes under ``--out`` (folder, file suffix).
FOLDERS = {DETECTION: "detections", LATE: "late", REJECT: "rejects"}


@dataclass(frozen=True)
class Job:
    """What every Python worker needs: the stage to run per key group, how to read and
    group, the folder of the knowledge versions (:mod:`connectors.spark.versions`; None:
    the program's own facts and Horn rules) and the checkpoint folder (for messages)."""

    stage: Stage
    fmt: str
    lateness: Time
    keys: Keys
    arities: tuple[tuple[str, tuple[int, ...]], ...]
    knowledge: str | None = None
    checkpoint: str = ""

    def detector(self) -> GroupDetector:
        """The job's key group detector."""
        return GroupDetector(self.stage, self.lateness, self.keys, self.checkpoint)


def make_job(program: Program, *, fmt: str, lateness: Time, options: EngineOptions) -> Job:
    """The job of a program (its partitioning found here, on the driver). ``options``: the
    engine's (policy, tie-break, explain; the lateness is the job's)."""
    partitioning = analyse(program, options.policy)
    keys = Keys(partitioning.keys, whole=bool(partitioning.remainder) or not partitioning.keyed)
    return Job(
        stage=Stage(program, options),
        fmt=fmt,
        lateness=lateness,
        keys=keys,
        arities=tuple(
            (name, tuple(sorted(a))) for name, a in sorted(event_arities(program).items())
        ),
    )


def with_knowledge(job: Job, folder: Path) -> Job:
    """``job`` with the knowledge versions written to ``folder`` (each worker's engine is
    built with its first micro-batch's version)."""
    path = str(folder.absolute())
    return replace(job, stage=replace(job.stage, knowledge=partial(current, path)), knowledge=path)


# ---------------------------------------------------------------- on the workers


def _parse(job: Job) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    def parse(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        arities = {name: set(a) for name, a in job.arities}
        for batch in batches:
            files = zip(*(batch.column(c).to_pylist() for c in _LISTED), strict=True)
            rows = (
                row
                for uri, size, listed in files
                for row in listed_rows(uri, size, listed, job.fmt, job.keys, arities)
            )
            yield _packed(rows)

    return parse


#: The columns of the file source a worker reads: the path, and the size and time listed.
_LISTED = ("path", "length", "modificationTime")

#: The file reader's rows, packed: a key group, the latest end among the rows (microseconds)
#: and the rows (:data:`~connectors.spark.keystate.Row` of its events, or ``(file, line,
#: reason)`` of rejected lines in :data:`_REJECTS_GROUP`), pickled, at most :data:`PACK` a
#: row. (Spark handling each event as a row of its own, through the shuffle, the sort, the
#: stateful operator and a pandas frame per group, cost more than the events' steps.)
_PACKED = "group int, end_us long, rows binary"
PACK = 4096


def _packed(rows: Iterable[ParsedRow]) -> pa.RecordBatch:
    """The rows packed by key group (:data:`_PACKED`), in the order they were read."""
    import pyarrow as pa

    groups: dict[int, list[tuple[Any, ...]]] = {}
    ends: dict[int, int] = {}
    for key, file, line, event, reason, iso, end_us in rows:
        row: tuple[Any, ...]
        if event is None:
            group, row = _REJECTS_GROUP, (file, line, reason)
        else:
            group, row = key_group(key, KEY_GROUPS), (file, line, key, event, iso)
        groups.setdefault(group, []).append(row)
        ends[group] = max(ends.get(group, end_us), end_us)
    packs = [
        (group, ends[group], pickle.dumps(part[start : start + PACK], pickle.HIGHEST_PROTOCOL))
        for group, part in groups.items()
        for start in range(0, len(part), PACK)
    ]
    columns = zip(*packs, strict=True) if packs else ([], [], [])
    types = (pa.int32(), pa.int64(), pa.binary())
    arrays = [pa.array(c, t) for c, t in zip(columns, types, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, names=["group", "end_us", "rows"])


def _unpacked(frames: Iterator[pd.DataFrame]) -> list[Any]:
    """The rows of a key group's packs."""
    rows: list[Any] = []
    for frame in frames:
        for pack in frame["rows"].tolist():
            rows += pickle.loads(pack)
    return rows


def _detect(
    job: Job,
) -> Callable[[tuple[Any, ...], Iterator[pd.DataFrame], GroupState], Iterator[pd.DataFrame]]:
    def detect(
        key: tuple[Any, ...], frames: Iterator[pd.DataFrame], state: GroupState
    ) -> Iterator[pd.DataFrame]:
        import pandas as pd

        columns = ["kind", "text", "run"]
        group = int(key[0])
        if group == _REJECTS_GROUP:
            text = [record(*row) for row in sorted(_unpacked(frames))]
            yield pd.DataFrame({"kind": REJECT, "text": text, "run": None}, columns=columns)
            return
        rows: list[Row] = _unpacked(frames)
        watermark = from_millis(state.getCurrentWatermarkMs())
        detector = job.detector()
        live_state, reused = live.take(detector, group, tuple(state.get) if state.exists else None)
        if job.knowledge is not None:  # the micro-batch's version, before any of its events
            live_state.engine.use_knowledge(current(job.knowledge))
        out, due = detector.step(live_state, rows, watermark)
        stamp = live.stamp()
        state.update(detector.dump(live_state, stamp))
        if due is not None:
            state.setTimeoutTimestamp(timeout_millis(due))
        live.keep(detector, group, stamp, live_state)
        out.append((REUSED, "1" if reused else "0", None))
        yield pd.DataFrame(out, columns=columns)

    return detect


# ---------------------------------------------------------------- on the driver


@dataclass
class Sink:
    """``foreachBatch``: each micro-batch's outputs written to files named by its id, its
    detections published (None: not published; once per process: :meth:`republish` first
    publishes what earlier runs wrote, and a batch run again after a crash is not published
    twice)."""

    out: Path
    publish: Callable[[Sequence[Event]], None] | None
    versions: Versions | None = None  # picks each micro-batch's knowledge version
    counts: dict[str, int] = field(
        default_factory=lambda: {
            EVENTS: 0,
            DETECTION: 0,
            LATE: 0,
            REJECT: 0,
            "batches": 0,
            "group_steps": 0,
            REUSED: 0,
        }
    )
    published: set[int] = field(default_factory=set)

    def republish(self) -> None:
        """Publish the detections earlier runs wrote under ``out``."""
        for path in sorted((self.out / FOLDERS[DETECTION]).glob("batch-*.jsonl")):
            self._publish(int(path.stem.removeprefix("batch-")), path)

    def __call__(self, frame: DataFrame, batch: int) -> None:
        if self.versions is not None:  # (the batch's tasks run in collect, below)
            context = frame.sparkSession.sparkContext
            context.setLocalProperty(PROPERTY, self.versions.choose(batch))
        kinds: dict[str, list[Any]] = {DETECTION: [], LATE: [], REJECT: []}
        for kind, text, run in frame.collect():
            if kind == EVENTS:
                self.counts[EVENTS] += int(text)
            elif kind == REUSED:  # (one per key group stepped)
                self.counts["group_steps"] += 1
                self.counts[REUSED] += int(text)
            elif kind == DETECTION:
                kinds[kind].append(iter(pickle.loads(run)))
            else:
                kinds[kind].append(text)
        lines = list(merge_runs(kinds[DETECTION]))
        written = self._write(DETECTION, batch, lines)
        for kind in (LATE, REJECT):
            self._write(kind, batch, [t + "\n" for t in sorted(kinds[kind], key=_place)])
        self._publish(batch, written)
        self.counts[DETECTION] += len(lines)
        self.counts[LATE] += len(kinds[LATE])
        self.counts[REJECT] += len(kinds[REJECT])
        self.counts["batches"] += 1

    def _publish(self, batch: int, path: Path | None) -> None:
        """Publish the batch's detections, read back from ``path`` (None: none)."""
        if self.publish is not None and batch not in self.published:
            self.publish([] if path is None else list(read_jsonl(path)))
            self.published.add(batch)

    def _write(self, kind: str, batch: int, lines: list[str]) -> Path | None:
        """The batch's file of ``kind`` (None: no lines), written aside and renamed (a batch
        run again after a crash writes the same file again)."""
        if not lines:
            return None
        target = self.out / FOLDERS[kind] / f"batch-{batch:08d}.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        data = "".join(lines).encode("utf-8")
        write_aside(target, lambda f: f.write(data))
        return target


def _place(text: str) -> tuple[str, int]:
    """A late or rejected line's file and line."""
    item = json.loads(text)
    return item["file"], item["line"]


def build_query(
    spark: SparkSession, job: Job, source: str, *, files_per_batch: int | None = None
) -> DataFrame:
    """The streaming DataFrame of outputs (kind, text, run) of ``job`` over folder ``source``
    (``files_per_batch``: at most that many new files per micro-batch)."""
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout

    reader = spark.readStream.format("binaryFile").schema(_FILES)
    if files_per_batch is not None:
        reader = reader.option("maxFilesPerTrigger", files_per_batch)
    files = reader.load(source).select(*_LISTED)  # (the contents are not read)
    packed = files.mapInArrow(_parse(job), _PACKED)
    delay_ms = SHIFT * 1000 + round(job.lateness * 1000)
    time = F.timestamp_micros(F.col("end_us") + F.lit(SHIFT * 1_000_000))
    return (
        packed.select("group", "rows", time.alias("time"))
        .withWatermark("time", f"{delay_ms} milliseconds")
        .groupBy("group")
        .applyInPandasWithState(
            _detect(job), _OUTPUT, GROUP_STATE, "append", GroupStateTimeout.EventTimeTimeout
        )
    )


def run_stream(
    spark: SparkSession,
    job: Job,
    *,
    source: str,
    checkpoint: str,
    out: str,
    trigger: dict[str, Any],
    publish: Callable[[Sequence[Event]], None] | None,
    files_per_batch: int | None = None,
    partitions: int | None = None,
    knowledge: KnowledgeBase | None = None,
    refresh_every: float | None = None,
) -> dict[str, int]:
    """Run the query until it ends (``availableNow``) or is interrupted; return the counts of
    this run (events, detections, late, rejects, batches). ``publish``: called with each
    micro-batch's detections (None: they are only written). ``partitions``: how many parts
    the keys' state is spread over (:func:`state_partitions`). ``knowledge``: refreshed every
    ``refresh_every`` seconds and on SIGHUP, as ``reasoner run`` refreshes it, each
    micro-batch using one version (:mod:`connectors.spark.versions`)."""
    partitions = state_partitions(spark, Path(checkpoint), partitions)
    check_layout(Path(checkpoint))
    job = replace(job, checkpoint=str(Path(checkpoint).absolute()))
    with ExitStack() as stack:
        versions = None
        if knowledge is not None:
            folder = Path(checkpoint) / "knowledge"
            versions = Versions(knowledge, folder)
            job = with_knowledge(job, folder)
            stack.enter_context(Refresher(knowledge, refresh_every))
        sink = Sink(Path(out), publish, versions)
        sink.republish()
        _run(spark, job, sink, source, checkpoint, trigger, files_per_batch, partitions)
    return sink.counts


#: Spark's setting of the state's partitions, recorded in each batch of a checkpoint's
#: offsets log (its second line: the batch's metadata as JSON, with a ``conf`` object).
_PARTITIONS = "spark.sql.shuffle.partitions"


def state_partitions(spark: SparkSession, checkpoint: Path, asked: int | None) -> int:
    """How many partitions the keys' state is spread over: ``asked``, else the checkpoint's,
    else one on a local master (Spark hands a partition to whichever Python worker is free:
    with more, a key group's steps move between workers, which restore its state from the
    store instead of going on with the live one) and the session's shuffle partitions on a
    cluster (one task per partition: more run at once).

    Raises:
        ReasonerError: ``asked`` differs from the checkpoint's number (Spark would keep the
            checkpoint's silently: its state store cannot change its partitions).
    """
    found = checkpoint_partitions(checkpoint)
    if asked is None:
        if found is not None:
            return found
        if (spark.sparkContext.master or "").startswith("local"):
            return 1
        return int(spark.conf.get(_PARTITIONS) or 200)
    if found is not None and found != asked:
        raise ReasonerError(
            f"{checkpoint}: a checkpoint of {found} state partitions, not {asked} "
            "(--state-partitions): Spark's state store cannot change its number of "
            f"partitions; give {found} or leave the option out, or start a new checkpoint "
            "folder (--checkpoint)"
        )
    return asked


def checkpoint_partitions(checkpoint: Path) -> int | None:
    """The state partitions of the checkpoint's last batch (None: no batch yet, or a log this
    version cannot read)."""
    batches = [p for p in (checkpoint / "offsets").glob("[0-9]*") if p.name.isdigit()]
    if not batches:
        return None
    last = max(batches, key=lambda p: int(p.name))
    try:
        lines = last.read_text(encoding="utf-8").splitlines()
        return int(json.loads(lines[1])["conf"][_PARTITIONS])
    except (OSError, ValueError, TypeError, KeyError, IndexError):
        return None


def check_layout(checkpoint: Path) -> None:
    """Record this version's state layout in a new (absent or empty) checkpoint folder, or
    check that an existing checkpoint has it.

    Raises:
        ReasonerError: for a checkpoint of another layout or of an older version (without
            the file): its keys' state is named otherwise, so resuming it would lose it.
    """
    marker = checkpoint / LAYOUT_FILE
    if marker.is_file():
        found = marker.read_text(encoding="utf-8", errors="replace")
        if found == LAYOUT:
            return
        reason = f"of another state layout ({found.strip()!r}; this version: {LAYOUT.strip()!r})"
    elif checkpoint.is_dir() and any(checkpoint.iterdir()):
        reason = f"of an older version (it has no {LAYOUT_FILE} file)"
    else:
        checkpoint.mkdir(parents=True, exist_ok=True)
        write_aside(marker, lambda f: f.write(LAYOUT.encode("utf-8")))
        return
    raise ReasonerError(
        f"{checkpoint}: a checkpoint {reason}: its keys' state is named otherwise and would "
        "be lost; start a new checkpoint folder (--checkpoint)"
    )


def _run(
    spark: SparkSession,
    job: Job,
    sink: Sink,
    source: str,
    checkpoint: str,
    trigger: dict[str, Any],
    files_per_batch: int | None,
    partitions: int,
) -> None:
    writer = (
        build_query(spark, job, source, files_per_batch=files_per_batch)
        .writeStream.foreachBatch(sink)
        .option("checkpointLocation", checkpoint)
        .trigger(**trigger)
    )
    # The query stays in the caller's session, where ``spark.streams.active`` lists it (a
    # stop signal's handler stops it from there); the partitions are set only while it
    # starts: a query clones its session's settings when it starts.
    with (
        _setting(spark, _PARTITIONS, str(partitions)),
        _setting(spark, _FILE_MANAGER, file_manager(spark.version)),
    ):
        query = writer.start()
    from pyspark.errors import StreamingQueryException

    try:
        query.awaitTermination()
    except StreamingQueryException as error:
        raise ReasonerError(_failure(str(error))) from error
    finally:
        if query.isActive:  # interrupted (Ctrl-C)
            query.stop()


#: Spark's setting of the class that writes a checkpoint's files (its logs and the state
#: store's deltas and snapshots).
_FILE_MANAGER = "spark.sql.streaming.checkpointFileManagerClass"


def file_manager(version: str) -> str:
    """The checkpoint file manager of Spark ``version`` that uses Hadoop's ``FileSystem``.

    Spark's default uses Hadoop's ``FileContext``, whose rename of a written file runs a
    ``readlink`` subprocess per file (and checksum file) without Hadoop's native library: 38
    per micro-batch of ``spark stream``, most of its logs' and state commit's time
    (docs/scale-out.md). The ``FileSystem`` one
    renames with ``rename(2)``, atomic on the local folder a checkpoint is here (the layout
    file is written by this process); Spark 4.1 moved the class to a subpackage.

    >>> file_manager("3.5.1").rsplit(".", 2)[-2:]
    ['streaming', 'FileSystemBasedCheckpointFileManager']
    >>> file_manager("4.3.0").rsplit(".", 2)[-2:]
    ['checkpointing', 'FileSystemBasedCheckpointFileManager']
    """
    major, minor = (int(part) for part in version.split(".")[:2])
    package = "streaming.checkpointing" if (major, minor) >= (4, 1) else "streaming"
    return f"org.apache.spark.sql.execution.{package}.FileSystemBasedCheckpointFileManager"


@contextmanager
def _setting(spark: SparkSession, name: str, value: str) -> Iterator[None]:
    """For the block: the session's SQL setting ``name`` is ``value``; then as it was."""
    before = spark.conf.get(name, None)
    spark.conf.set(name, value)
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(name)
        else:
            spark.conf.set(name, before)


def _failure(message: str) -> str:
    """The message of a failed query: a worker's :class:`~connectors.spark.keystate.StateError`
    or :class:`~connectors.spark.sources.SourceError` as it was raised, else Spark's."""
    for line in message.splitlines():
        for error in (StateError, SourceError):
            name = f"{error.__module__}.{error.__name__}: "
            if name in line:
                return line[line.index(name) + len(name) :]
    return f"the streaming query failed: {message}"
