"""The input formats: one registry entry each, and opening a file (or a share of one) in any.

``reasoner run`` and ``why-not`` read their files here in one process; ``reasoner spark
replay`` and ``spark stream`` read each file here on a Spark executor: the same readers, the
same checks, the same messages. Each command's ``--format`` choices come from
:data:`REGISTRY` (:func:`format_names`), so a new format is one :class:`InputFormat` entry
(a reader, its time style, whether Spark can stream it, how it splits between workers).

A share (:class:`Share`) is a file, or the lines of a file that start in a byte range: what one
worker reads when the input is divided (:func:`split_input`) by what the format allows
(``InputFormat.split``). Reading a share gives the events and rejections of those lines of the
whole file, numbered as in the whole file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any, Literal

from connectors.events.jsonl import read_jsonl
from connectors.events.rejects import Position, RejectHandler
from connectors.events.times import TimeStyle
from connectors.rdf.writer import RDF_SYNTAXES
from reasoner.runtime.events import Event

if TYPE_CHECKING:
    from connectors.mesowest.archive import Labelled
    from reasoner.language.ast import Program

#: How a format's input may be divided between workers: ``files`` (each file holds whole keys:
#: a worker reads whole files), ``lines`` (a byte range of a file: a worker reads the lines
#: starting in it and keeps the keys it owns), ``none`` (one reader reads it all).
Split = Literal["files", "lines", "none"]


@dataclass(frozen=True, slots=True)
class Share:
    """A file (``-``: standard input), or the lines of it whose first byte lies in
    ``[start, stop)`` (``stop`` None: to the end).

    Example:
        >>> Share("a.jsonl", 0, 100)
        Share(path='a.jsonl', start=0, stop=100)
    """

    path: str
    start: int = 0
    stop: int | None = None

    @property
    def whole(self) -> bool:
        """Whether this is the whole file."""
        return self.start == 0 and self.stop is None


@dataclass(frozen=True, slots=True)
class ReadContext:
    """What every file of one run is read with.

    Args:
        on_reject: called with each malformed line (the reader goes on).
        arities: the argument counts of the event names the rules read.
        rdf: :func:`rdf_options` (RDF formats; empty for the others).
        style: the run's time style: a reader marks it ISO once a time it reads is ISO text.
    """

    on_reject: RejectHandler
    arities: dict[str, set[int]]
    rdf: dict[str, Any]
    style: TimeStyle


@dataclass(frozen=True, slots=True)
class Reading:
    """What a reader returns: its events (file order, lazy), where it is, its time style.

    ``positions``: the reader's :class:`Position` (each names the line of the event the reader
    yielded last, to name a rejected event's line); ``style``: the style the reader marks.
    """

    events: Iterable[Event]
    positions: tuple[Position, ...]
    style: TimeStyle


@dataclass(frozen=True, slots=True)
class InputFormat:
    """One input format.

    Args:
        name: the ``--format`` value.
        read: opens a share (header errors raise :class:`InputFormatError` at once).
        times: ``iso``: times are always ISO-8601 text (detections are written back so);
            ``given``: numbers or ISO text, the reader marks the style when it meets ISO.
        streams: whether ``reasoner spark stream`` can read it (a file at a time, as
            files arrive).
        split: how the input may be divided between workers (:data:`Split`).
        rdf: whether it is read with :func:`rdf_options` (a stream of RDF graphs).
        key_of: for ``files``: the key a file holds (files of one key go to one worker),
            read from as little of it as tells (a file it names a key for may still be
            refused when read); None: each file its own.
        holds: for ``files``: the events a file holds, ``(name, arity, position)``: every
            one has the file's key at that argument position.
        in_order: for ``files``: the events of the files' readings merged by time, read at
            once, when every file is in time order and readable to its end (None otherwise):
            (Spark replay's tasks read so).
        labelled: for ``files``: ``in_order`` with each event's file and line, a block at a
            time (``blocks()``: the files' indexes, the lines and the events, three lists),
            with ``last``, the row a rejection being handed over follows: see
            ``connectors.mesowest.archive.Labelled``): what a worker reading its share of the
            files runs (``reasoner run --workers``).
        modules: the modules its reading imports when it starts (numpy, pyarrow), imported
            at once by :func:`load_reader`.
    """

    name: str
    read: Callable[[Share, ReadContext], Reading]
    times: Literal["iso", "given"]
    streams: bool
    split: Split
    rdf: bool = False
    key_of: Callable[[str], str] | None = None
    holds: tuple[str, int, int] | None = None
    in_order: Callable[[Sequence[Any]], Iterator[Event] | None] | None = None
    labelled: Callable[[Sequence[Any]], Labelled | None] | None = None
    modules: tuple[str, ...] = ()


def _read_jsonl(share: Share, context: ReadContext) -> Reading:
    positions: list[Position] = []
    span = None if share.whole else (share.start, share.stop)
    events = read_jsonl(
        share.path,
        style=context.style,
        on_reject=context.on_reject,
        arities=context.arities,
        positions=positions,
        span=span,
    )
    return Reading(events, tuple(positions), context.style)


def _read_mesowest(share: Share, context: ReadContext) -> Reading:
    from connectors.mesowest.reader import MesoWestFile

    _whole(share)
    file = MesoWestFile(share.path, on_reject=context.on_reject)
    # A MesoWestFile, not an iterator: merge_streams merges many of them a column at a time.
    return Reading(file, (file.where,), context.style)


def _mesowest_in_order(files: Sequence[Any]) -> Iterator[Event] | None:
    from connectors.mesowest.archive import merge_in_order

    return merge_in_order(files)


def _mesowest_labelled(files: Sequence[Any]) -> Labelled | None:
    from connectors.mesowest.archive import merge_in_order_labelled

    return merge_in_order_labelled(files)


def _station_of(path: str) -> str:
    from connectors.mesowest.reader import station_of

    return station_of(path)


def _read_rdf(share: Share, context: ReadContext) -> Reading:
    from connectors.rdf.reader import read_rdf

    _whole(share)
    positions: list[Position] = []
    events = read_rdf(
        share.path,
        style=context.style,
        on_reject=context.on_reject,
        positions=positions,
        **context.rdf,
    )
    return Reading(events, tuple(positions), context.style)


def _whole(share: Share) -> None:
    if not share.whole:
        raise ValueError(f"{share.path}: this format is read by whole files only")


#: Every input format, by name (the order of ``--format``'s choices).
REGISTRY: dict[str, InputFormat] = {
    entry.name: entry
    for entry in (
        InputFormat("jsonl", _read_jsonl, times="given", streams=True, split="lines"),
        InputFormat(
            "mesowest",
            _read_mesowest,
            times="iso",
            streams=True,
            split="files",
            key_of=_station_of,
            holds=("sensor_reading", 9, 0),
            in_order=_mesowest_in_order,
            labelled=_mesowest_labelled,
            modules=("connectors.mesowest.archive", "pyarrow.csv", "pyarrow.compute"),
        ),
        *(
            InputFormat(name, _read_rdf, times="given", streams=False, split="none", rdf=True)
            for name in ("rdf", *RDF_SYNTAXES)
        ),
    )
}


def format_names(*, streams: bool = False) -> tuple[str, ...]:
    """The registered format names (``streams``: only those Spark can stream).

    Example:
        >>> format_names(streams=True)
        ('jsonl', 'mesowest')
    """
    return tuple(name for name, entry in REGISTRY.items() if entry.streams or not streams)


#: The RDF input formats: ``rdf`` picks the syntax by file extension.
RDF_FORMATS = tuple(name for name, entry in REGISTRY.items() if entry.rdf)

#: Every input format.
FORMATS = format_names()


def rdf_options(fmt: str, rdf_time: str | None, program: Program) -> dict[str, Any]:
    """What every RDF stream is read with: the mapping (compiled once), time, counters;
    empty for the other formats."""
    if not REGISTRY[fmt].rdf:
        return {}
    from connectors.rdf.reader import GENERATED_AT_TIME, GraphCounts, property_iri
    from reasoner.knowledge.goals import DEFAULT_PREFIXES
    from reasoner.rdf.mapping import GraphMapping

    time = GENERATED_AT_TIME
    if rdf_time:
        time = property_iri(rdf_time, {**DEFAULT_PREFIXES, **program.prefixes})
    return {
        "mapping": GraphMapping(program),
        "time_property": time,
        "counts": GraphCounts(),
        "syntax": None if fmt == "rdf" else fmt,
    }


def load_reader(fmt: str) -> None:
    """Import the modules reading ``fmt`` needs (``InputFormat.modules``): a router imports
    them before forking its workers, which inherit them instead of each importing its own
    (0.2-0.3 CPU s each for MesoWest's numpy and pyarrow; the router reading imports them
    too). A module that is not installed is left to the reading, to report as ever."""
    for name in REGISTRY[fmt].modules:
        with suppress(ImportError):
            import_module(name)


def read_share(fmt: str, share: Share, context: ReadContext) -> Reading:
    """Open one share in format ``fmt``: its reading, the style marked ISO at once when the
    format's times always are.

    Example:
        >>> import tempfile
        >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        ...     _ = f.write('{"name": "a", "time": 5}\\n')
        >>> context = ReadContext(print, {}, {}, TimeStyle())
        >>> list(read_share("jsonl", Share(f.name), context).events)
        [Event(name='a', args=(), start=5, end=5)]
    """
    mark_style(fmt, context.style)
    return REGISTRY[fmt].read(share, context)


def mark_style(fmt: str, style: TimeStyle) -> None:
    """Mark ``style`` ISO when format ``fmt``'s times always are (detections are written back
    the way the input gives times); a ``given`` format's reader marks it when it meets ISO.

    Example:
        >>> style = TimeStyle()
        >>> mark_style("mesowest", style)
        >>> style.iso
        True
    """
    if REGISTRY[fmt].times == "iso":
        style.iso = True


def open_events(
    path: str,
    fmt: str,
    style: TimeStyle,
    on_reject: RejectHandler,
    rdf: dict[str, Any],
    arities: dict[str, set[int]],
    positions: list[Position],
) -> Iterable[Event]:
    """The events of one file (``-``: standard input) in file order.

    Args:
        path: the file.
        fmt: one of :data:`FORMATS`.
        style: set to ISO output when the input's times are ISO-8601.
        on_reject: called with each malformed line (the reader goes on).
        rdf: :func:`rdf_options` (RDF formats).
        arities: the argument counts of the event names the rules read.
        positions: the reader's :class:`Position` is added (to name a rejected event's line).
    """
    reading = read_share(fmt, Share(path), ReadContext(on_reject, arities, rdf, style))
    positions.extend(reading.positions)
    return reading.events


def split_input(
    fmt: str, paths: Sequence[str], workers: int, owner: Callable[[str], int] | None = None
) -> list[list[Share]]:
    """Divide the input files between ``workers`` as the format allows.

    ``files``: whole files, grouped by key (``InputFormat.key_of``: a MesoWest station's files go to
    one worker), the groups dealt largest first to the worker with the fewest bytes (with
    ``owner``: each group to worker ``owner(key)``), each worker's files in input order.
    ``lines``: each file cut into ``workers`` byte ranges (a line belongs to the range its
    first byte lies in). ``none``: everything to the first.

    Args:
        fmt: a registered format.
        paths: the input files (not ``-``: standard input cannot be divided).
        workers: how many shares.
        owner: for ``files``: the worker of a key (e.g. the one the router would send the key's
            events to); None: the groups are dealt by size.

    Returns:
        One list of shares per worker (some may be empty); reading every share, in order,
        gives every event and rejection of the files, each numbered as in its file.

    Example:
        >>> split_input("rdf", ["a.trig"], 2)
        [[Share(path='a.trig', start=0, stop=None)], []]
    """
    shares: list[list[Share]] = [[] for _ in range(workers)]
    split = REGISTRY[fmt].split
    if split == "none" or workers == 1:
        shares[0] = [Share(path) for path in paths]
    elif split == "lines":
        for path in paths:
            size = os.path.getsize(path)
            cuts = [size * n // workers for n in range(workers)] + [size]
            for n in range(workers):
                shares[n].append(Share(path, cuts[n], None if n == workers - 1 else cuts[n + 1]))
    else:
        key_of = REGISTRY[fmt].key_of or str
        groups: dict[str, list[int]] = {}
        for index, path in enumerate(paths):
            groups.setdefault(key_of(path), []).append(index)
        load = [0] * workers
        given: list[list[int]] = [[] for _ in range(workers)]
        sizes = {
            key: sum(os.path.getsize(paths[i]) for i in group) for key, group in groups.items()
        }
        for key in sorted(groups, key=lambda k: -sizes[k]):
            least = load.index(min(load)) if owner is None else owner(key)
            load[least] += sizes[key]
            given[least] += groups[key]
        shares = [[Share(paths[i]) for i in sorted(indices)] for indices in given]
    return shares
