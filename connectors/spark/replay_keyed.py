"""The keyed stage of archive replay (:mod:`connectors.spark.replay`) on the executors.

A task runs one keyed partition's events, in stream order, through one engine of the keyed
rules (:func:`connectors.spark.detect.detect`), as a worker of ``reasoner run --workers`` runs
its keys: a time point every key shares is one tick, not one per key, and no state is restored
per key. It sorts the detections in the defined order, formats them with ``reasoner run``'s
writer and writes them as one sorted run (``run-P``), and what the global stage reads beside it
(``derived-P``, :data:`~reasoner.runtime.worker.Derived`). Its events come one of two ways:

- :class:`FilesTask` reads the files of its partition's keys itself, when the format's files
  each hold one key and are read at once in time order (MesoWest), so no event crosses a
  shuffle. It cannot know the stream's last time (another task's files may end later): it runs
  its events to their own end and, when its engine still has a timer pending, keeps the
  engine's state (``state-P``) for :class:`EndTask`, which moves the clock to the stream's end
  once the driver knows it (``run-P-end``, ``derived-P-end``).
- :class:`ShuffledTask` takes the events the read's shuffle brought it (any other format, or
  files not each in time order: the driver admitted them first).
"""

from __future__ import annotations

import math
import pickle
import socket
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from connectors.events.times import TimeStyle
from connectors.spark.detect import Stage, derivations, detect, next_timer, snapshot
from connectors.spark.replay_read import (
    EVENT,
    FAILED,
    GLOBAL,
    OUT_OF_ORDER,
    TAKEN,
    TIMER,
    FileError,
    keyed_events,
    read_labelled,
)
from connectors.spark.runs import formatted_run
from reasoner.aside import write_aside
from reasoner.compiler.partition import EventType
from reasoner.errors import ReasonerError
from reasoner.runtime.events import Event
from reasoner.runtime.worker import Derived, revive, young_collections

if TYPE_CHECKING:
    from pyspark import Broadcast

    from connectors.spark.replay import Archive

#: Items per pickled chunk of a run file.
_CHUNK = 8192

_second, _third = itemgetter(1), itemgetter(2)


@dataclass(frozen=True)
class FilesTask:
    """The keyed stage of one partition reading the files of its keys, ``(index, path)`` in
    input order (a list per task): merged by time and numbered by file and line
    (:func:`~connectors.spark.replay_read.read_labelled`), its keyed events run, its runs
    written. Gives what the driver needs: the files' counts, the rejects, the input events the
    global stage reads (``raw_types``), and ``(TIMER, P, time or None)``, when its engine next
    has something to do; or ``(OUT_OF_ORDER,)`` (a file out of time order: nothing run, the
    driver reads the files through the shuffle), ``(FAILED, error)`` (writing the runs), or
    ``(UNREAD, index, message)`` (a file it could not read)."""

    archive: Archive
    arities: dict[str, set[int]]
    stage: Stage
    keys: dict[EventType, int]
    raw_types: set[EventType]
    reads: set[EventType]
    runs: str

    def __call__(
        self, index: int, shares: Iterable[list[tuple[int, str]]]
    ) -> Iterator[tuple[Any, ...]]:
        files = [file for share in shares for file in share]
        with young_collections():
            return iter(self._run(index, files))

    def _run(self, index: int, files: list[tuple[int, str]]) -> list[tuple[Any, ...]]:
        try:
            return self._read_and_run(index, files)
        except FileError as error:  # (the driver reports it)
            return [error.record()]

    def _read_and_run(self, index: int, files: list[tuple[int, str]]) -> list[tuple[Any, ...]]:
        records = read_labelled(self.archive, self.arities, files) if files else iter(())
        if records is None:
            return [(OUT_OF_ORDER,)]
        meta: list[tuple[Any, ...]] = []
        # (in stream order already: the files merged by time, in input order, each event
        # numbered by its file and line; read and checked as an engine checks it)
        events = self._events(records, meta)
        derived, _ = detect(self.stage, events, -math.inf, accepted=True)
        timer = next_timer(self.stage)
        folder = Path(self.runs)
        try:
            if timer is not None:
                state = snapshot(self.stage)
                write_aside(folder / f"state-{index:05d}", lambda f: f.write(state))
            # (a format whose files each hold one key has ISO times: file_sources)
            write_runs(self.stage, derived, self.reads, True, folder, f"{index:05d}")
        except OSError as error:
            return [(FAILED, _on_host(error))]
        meta.append((TIMER, index, timer))
        return meta

    def _events(
        self, records: Iterable[tuple[Any, ...]], meta: list[tuple[Any, ...]]
    ) -> Iterator[tuple[int, Event]]:
        """The keyed events of ``records``, ``(seq, event)``; the rest added to ``meta``."""
        keys, raw = self.keys, self.raw_types
        for record in records:
            if record[0] == TAKEN:
                seqs, events, found = record[1], record[2], record[3]
                if len(found) == 1 and not found & raw and next(iter(found)) in keys:
                    yield from zip(seqs, events, strict=True)  # (a MesoWest file's readings)
                    continue
                pairs: Iterable[tuple[int, Event]] = zip(seqs, events, strict=True)
            elif record[0] == EVENT and record[3] is None:
                pairs = ((record[1], record[2]),)
            else:  # (the files' counts, the rejects, the events rejected on reading)
                meta.append(record)
                continue
            for seq, event in pairs:
                kind = event[0], len(event[1])
                if kind in raw:
                    meta.append((GLOBAL, seq, event, None))
                if kind in keys:
                    yield seq, event


@dataclass(frozen=True)
class EndTask:
    """The end of :class:`FilesTask`'s partitions whose engines had a timer pending before the
    stream's end (``until``): each engine's state resumed, its clock moved to ``until``, what
    that derived written as a run (``run-P-end``, ``derived-P-end``). Gives the errors of
    writing them."""

    stage: Stage
    until: Any
    reads: set[EventType]
    runs: str

    def __call__(self, partitions: Iterable[int]) -> Iterator[str]:
        folder = Path(self.runs)
        failed: list[str] = []
        for index in partitions:
            try:
                state = (folder / f"state-{index:05d}").read_bytes()
                derived, _ = detect(self.stage, (), self.until, state)
                write_runs(self.stage, derived, self.reads, True, folder, f"{index:05d}-end")
            except OSError as error:
                failed.append(_on_host(error))
        return iter(failed)


@dataclass(frozen=True)
class ShuffledTask:
    """The keyed stage of one partition of the read's shuffle: its events (keyed records)
    sorted in stream order (by end, then sequence number, or by the places the driver's
    admission gave them), run up to ``until``, its runs written. Gives nothing, or the error
    of writing them (:func:`check_runs` reports it)."""

    stage: Stage
    until: Any
    reads: set[EventType]
    iso: bool
    runs: str
    places: Broadcast[dict[int, int]] | None  # admitted events' places (None: all, by seq)

    def __call__(self, index: int, records: Iterable[tuple[Any, ...]]) -> Iterator[str]:
        with young_collections():
            return self._run(index, records)

    def _run(self, index: int, records: Iterable[tuple[Any, ...]]) -> Iterator[str]:
        items: list[tuple[Any, int, Event]] = []
        for record in records:
            items += keyed_events(record)
        if self.places is not None:
            places = self.places.value
            items = [(end, places[seq], e) for end, seq, e in items if seq in places]
        # (by end, then number: numbers are unique, so no two events are ever compared; a
        # sort of the tuples themselves, without a key tuple made per event, a third faster)
        items.sort()
        derived, _ = detect(
            self.stage, zip(map(_second, items), map(_third, items), strict=True), self.until
        )
        del items
        try:
            write_runs(self.stage, derived, self.reads, self.iso, Path(self.runs), f"{index:05d}")
        except OSError as error:  # (the driver says what it means: check_runs)
            return iter((_on_host(error),))
        return iter(())


def write_runs(
    stage: Stage,
    derived: list[Derived],
    reads: set[EventType],
    iso: bool,
    folder: Path,
    part: str,
) -> None:
    """Write what a keyed task derived: its detections sorted in the defined order and
    formatted (``run-{part}``), and those the global stage reads (``derived-{part}``)."""
    found: list[tuple[Any, ...]] = []
    fed: list[Derived] = []
    for seq, plain, paths in derived:
        found += plain
        if reads and any((d[0], len(d[1])) in reads for d in plain):
            fed.append((seq, plain, paths))
    # (an empty partition compiles nothing: a small archive leaves some keyless)
    rules = derivations(stage) if found else None
    detections = [revive(d, rules) for d in found]
    _dump(folder / f"run-{part}", formatted_run(detections, TimeStyle(iso)))
    _dump(folder / f"derived-{part}", fed)


def check_runs(runs: Path, parts: Iterable[str], failed: list[str]) -> None:
    """Check that keyed tasks wrote their runs (``run-{part}`` and ``derived-{part}`` for each
    of ``parts``) where the driver reads them (``failed``: the tasks' errors on writing).

    Raises:
        ReasonerError: naming the folder, what is missing and the need for a shared folder.
    """
    names = [f"{kind}-{part}" for part in parts for kind in ("run", "derived")]
    missing = [name for name in names if not (runs / name).is_file()]
    if not failed and not missing:
        return
    what = (
        f"an executor could not write there ({failed[0]})"
        if failed
        else f"{len(missing)} of the {len(names)} files the executors wrote are not there "
        f"({', '.join(missing[:4])}{', ...' if len(missing) > 4 else ''})"
    )
    raise ReasonerError(
        f"{runs}: {what}: on a cluster, --out must be a folder the driver and every executor "
        "see (a shared file system), as the executors write their sorted runs under it"
    )


def chunks(path: Path) -> Iterator[Any]:
    """The items a run file holds, a chunk at a time."""
    with open(path, "rb") as f:
        while True:
            try:
                chunk = pickle.load(f)
            except EOFError:
                return
            yield from chunk


def _dump(path: Path, items: list[Any]) -> None:
    """Write a list as pickled chunks (read back by :func:`chunks`), aside and renamed: two
    attempts of one task never leave a file cut at a chunk boundary."""

    def write(f: IO[bytes]) -> None:
        for start in range(0, len(items), _CHUNK):
            pickle.dump(items[start : start + _CHUNK], f, pickle.HIGHEST_PROTOCOL)

    write_aside(path, write)


def _on_host(error: OSError) -> str:
    return f"on {socket.gethostname()}: {error}"
