"""One ``reasoner run``: the loop that reads the events, pushes them through the engine,
publishes and writes the detections, keeps the checkpoints and stops when asked.

The command (:mod:`connectors.cli.run`) checks its arguments and builds the engine, the rule
watcher and the checkpoints; a :class:`RunSession` does the rest and returns the exit status.

Stopping (:mod:`connectors.events.stopping`): while the loop waits for the next event a stop
signal ends the stream at once; while an event is pushed it is recorded and the loop ends
after that event. Either way what was derived is written (and published), a ``--checkpoint``
is saved at that point (a resume repeats nothing and loses nothing), the ``--workers`` are
stopped by the caller, the summary is printed, and the status is 130 (SIGINT) or 143
(SIGTERM). A stream cut short has no end: nothing is derived from its end (no flush).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO, cast

from connectors.events.bindings import BindingsWriter
from connectors.events.inputs import mark_style, open_events, rdf_options
from connectors.events.jsonl import JsonLinesWriter
from connectors.events.merge import merge_streams
from connectors.events.rejects import Position, Rejected
from connectors.events.stopping import GracefulStop, Interrupted
from connectors.events.times import TimeStyle
from connectors.rdf.writer import RdfWriter
from reasoner.errors import EventError, ReasonerError
from reasoner.runtime.events import Event
from reasoner.runtime.frozen import frozen
from reasoner.server.config import LOOPBACK
from reasoner.values import Time

if TYPE_CHECKING:
    from collections.abc import Generator, Iterator

    from connectors.events.checkpoints import Checkpoints, Resume
    from connectors.events.refresh import Refresher
    from connectors.events.serving import Publish
    from connectors.events.watch import RuleWatcher
    from reasoner.knowledge.versions import KnowledgeBase
    from reasoner.language.ast import Program
    from reasoner.language.epsparql import CompiledQuery
    from reasoner.runtime.engine import Engine
    from reasoner.runtime.parallel import ParallelEngine
    from reasoner.runtime.shares import Source

_Writer = JsonLinesWriter | RdfWriter | BindingsWriter

#: The exit statuses of a run that ended (the others are the command's, see ``reasoner -h``).
SKIPPED, STOPPED = 3, 4


@dataclass(frozen=True, slots=True)
class RunInput:
    """What a run reads: ``paths`` (``-``: standard input) in ``fmt``; ``rdf_time`` for RDF
    streams; ``speed`` stream seconds per second (None: as fast as it goes); ``until`` the
    time the clock moves on to at the end; ``strict``: the first bad line stops the run."""

    paths: Sequence[str] = ("-",)
    fmt: str = "jsonl"
    rdf_time: str | None = None
    speed: float | None = None
    until: Time | None = None
    strict: bool = False


@dataclass(frozen=True, slots=True)
class RunOutput:
    """Where a run writes: ``path`` (``-``: standard output) in ``fmt`` (``jsonl`` or an RDF
    syntax), only the events named in ``only`` (empty: all); ``serve`` a port to publish the
    detections on (None: none), on ``host``, ``keep_serving`` after the replay."""

    path: str = "-"
    fmt: str = "jsonl"
    only: frozenset[str] = field(default_factory=frozenset)
    serve: int | None = None
    host: str = LOOPBACK
    keep_serving: bool = False


class _Stop(Exception):
    """--strict: a bad line or a rejected event ends the stream."""


class RunSession:
    """Replays ``source`` through ``engine`` into ``output`` (see the module's doc).

    Args:
        engine: the engine, or a :class:`ParallelEngine` the caller closes after :meth:`run`.
        program: the rules (with a query's), for RDF mappings and the events' arities.
        source: what to read.
        output: where to write.
        query: an EP-SPARQL query whose results are written instead of the detections.
        knowledge: the knowledge base, refreshed every ``refresh_every`` seconds and on SIGHUP.
        watcher: reloads the rule files between two events.
        checkpoints: kept while the run goes on; ``resume``: the one to go on from.
        stop: the command's :class:`GracefulStop` (default: one never requested).

    >>> from reasoner import Engine, load_rules  # doctest: +SKIP
    >>> program = load_rules(["rules/stock_ticker.event"])  # doctest: +SKIP
    >>> source = RunInput(["examples/data/stock_ticker.jsonl"])  # doctest: +SKIP
    >>> RunSession(Engine(program), program, source, RunOutput()).run()  # doctest: +SKIP
    0
    """

    def __init__(
        self,
        engine: Engine | ParallelEngine,
        program: Program,
        source: RunInput,
        output: RunOutput,
        *,
        query: CompiledQuery | None = None,
        knowledge: KnowledgeBase | None = None,
        refresh_every: float | None = None,
        watcher: RuleWatcher | None = None,
        checkpoints: Checkpoints | None = None,
        resume: Resume | None = None,
        stop: GracefulStop | None = None,
    ) -> None:
        self.engine, self.program, self.source, self.output = engine, program, source, output
        self.query, self.knowledge, self.refresh_every = query, knowledge, refresh_every
        self.watcher, self.checkpoints, self.resume = watcher, checkpoints, resume
        self.stop = stop or GracefulStop()
        #: detections written, malformed lines and rejected events (a resumed run's included)
        self.counts = {"written": 0, "refused": 0, "malformed": 0}
        if resume is not None:
            self.counts.update(resume.counts)
        self.position = 0  # input events read (a resumed run's skipped ones included)
        self.interrupted = self.stopped = False
        self._skip = 0 if resume is None else resume.position
        self._style = TimeStyle()
        self._pending: list[Event] = []
        self._only = output.only
        self._rdf: dict[str, Any] = {}
        self._positions: list[Position] = []  # where each reader is, to name a rejected line
        self._refresher: Refresher | None = None
        self._out: TextIO = sys.stdout
        self._writer: _Writer | None = None

    def run(self) -> int:
        """Replay, write, print the summary on stderr.

        Returns:
            0; :data:`SKIPPED` when input lines were skipped; :data:`STOPPED` when
            ``strict`` stopped at one; the stop's status (130, 143) when a signal stopped it.
        Raises:
            ReasonerError: the output cannot be written, an event's rules raise.
            Interrupted: a stop signal before the first event was read.
        """
        if self.resume is not None:
            self._resume(self.resume)
        try:
            with ExitStack() as stack:
                # The program, its facts and the engine are built and live to the end: the
                # run's collections need not scan them again (a large fact base was most of
                # their time). Thawed on leaving: a caller may run again in this process.
                stack.enter_context(frozen())
                publish = self._open(stack)
                # (the workers' reading first: the router opens no file when they read them)
                shared = self._read_by_workers()
                if shared is None:
                    self._replay(self._events(), publish)
                else:
                    self._replay_shared(shared, publish)
                final = self._final()
                publish(final)
                self._pending += final
                self._write_pending()
                if self.interrupted and self.checkpoints is not None:
                    self._save()  # where it stopped: a resume repeats nothing
        except BrokenPipeError:
            raise  # the reader went away: main reports it
        except OSError as exc:  # the output cannot be opened or written (a folder, a full disk)
            if exc.filename not in (None, self.output.path):
                raise
            raise ReasonerError(
                f"{self.output.path}: cannot write detections: {exc.strerror}"
            ) from exc
        if self.checkpoints is not None and not (self.interrupted or self.stopped):
            self.checkpoints.remove()  # done: nothing to resume
        print(self.summary(), file=sys.stderr)
        if self.interrupted:
            return self.stop.status
        if self.stopped:
            return STOPPED
        return SKIPPED if self.counts["malformed"] or self.counts["refused"] else 0

    def _resume(self, resume: Resume) -> None:
        """Put the engine (and its rules) where the checkpoint was, and the output too."""
        from connectors.events.checkpoints import cut_output

        if self.watcher is not None:  # the engine's rules as the checkpoint's were
            self.watcher.replay(self.engine)  # type: ignore[arg-type]
        self.engine.restore(resume.engine)
        cut_output(self.output.path, resume.output_bytes)

    def _open(self, stack: ExitStack) -> Publish:
        """Open the endpoint (with ``serve``; its ``publish`` is returned), the output and
        its writer, the refresher."""
        output = self.output
        publish: Publish = _unpublished
        if output.serve is not None:
            from connectors.events.serving import detections_endpoint

            # Entered first, so closed last: the output is complete while --keep-serving waits.
            publish = stack.enter_context(
                detections_endpoint(
                    output.serve,
                    self.knowledge,
                    keep_serving=output.keep_serving,
                    style=self._style,
                    host=output.host,
                    stop=self.stop,
                )
            )
            if self.query is not None:  # the query's results only, as they are written
                publish = _selected(publish, self._only)
        if output.path != "-":
            mode = "a" if self.resume is not None else "w"  # (resumed: after the cut)
            opened = open(output.path, mode, encoding="utf-8")  # noqa: SIM115
            self._out = stack.enter_context(cast(TextIO, opened))
        self._writer = _writer(output.fmt, self._out, self._style, self.query)
        if self.knowledge is not None:
            from connectors.events.refresh import Refresher

            self._refresher = stack.enter_context(Refresher(self.knowledge, self.refresh_every))
        return publish

    def _events(self) -> Iterator[Event]:
        """The input streams merged by time (paced with ``speed``)."""
        from reasoner.language.ast import event_arities

        source = self.source
        self._rdf = rdf_options(source.fmt, source.rdf_time, self.program)
        arities = event_arities(self.program)
        style, rdf, positions = self._style, self._rdf, self._positions
        streams = [
            open_events(path, source.fmt, style, self._rejected_line, rdf, arities, positions)
            for path in source.paths
        ]
        events = merge_streams(*streams)
        if source.speed is not None:
            from connectors.events.pace import paced

            events = paced(events, source.speed)
        return events

    def _replay(self, events: Iterator[Event], publish: Publish) -> None:
        """Push every event (after the resumed position) until the input ends, ``strict``
        stops at a bad line, or a stop signal comes."""
        engine, stop, checkpoints, skip = self.engine, self.stop, self.checkpoints, self._skip
        refresher, watcher = self._refresher, self.watcher
        # Detections are written a batch at a time, unless someone may be waiting for them.
        live = self._out.isatty() or "-" in self.source.paths
        batch = 1 if live else 1024
        push = engine.push
        try:
            stop.waiting = True  # (a signal while the next event is read ends the stream)
            for event in events:
                stop.waiting = False  # (one in hand: it is finished first)
                self.position += 1
                if self.position > skip:
                    if refresher is not None:
                        refresher.poll(engine)
                    if watcher is not None:
                        watcher.poll(engine)  # type: ignore[arg-type]
                    try:  # (inline: the hot path)
                        detections = push(event)
                    except EventError as error:
                        detections = self._refused(event, error)
                    if detections:
                        publish(detections)
                        self._pending += detections
                        if len(self._pending) >= batch:
                            self._write_pending()
                    if checkpoints is not None and checkpoints.due():
                        self._save()
                    if stop.signum is not None:  # came while the event was pushed
                        raise Interrupted(stop.signum)
                stop.waiting = True
        except Interrupted:  # what was derived is written, then the summary
            self.interrupted = True
        except _Stop:  # --strict, at a bad line: the same
            self.stopped = True
        finally:
            stop.waiting = False  # (the rest is finished, whatever comes)

    def _read_by_workers(self) -> Generator[list[Event]] | None:
        """With workers, when they can read the input themselves (docs/scale-out.md, "Input
        read by the workers"): the detections as they become final; else None (the router
        reads). The options that act between two events of the merged stream (``strict``,
        checkpoints, a lateness bound, ``speed``, reloaded rules, refreshed knowledge) keep
        the router's reading."""
        from reasoner.runtime.engine import Engine

        engine, source = self.engine, self.source
        if isinstance(engine, Engine):  # (one process: the parallel engine is never imported)
            return None
        if (
            not engine.workers
            or source.strict
            or source.speed is not None
            or self.checkpoints is not None
            or self.resume is not None
            or self.watcher is not None
            or self.knowledge is not None
            or engine.options()["lateness"]
        ):
            return None
        from connectors.events.line_shares import line_sources
        from connectors.events.shares import file_sources
        from reasoner.language.ast import event_arities

        sources: Sequence[Callable[[], Source]] | None
        sources = file_sources(source.fmt, source.paths, engine.workers, engine.partitioning)
        if sources is None:
            keys, arities = engine.partitioning.key_positions(), event_arities(self.program)
            max_span = engine.options()["max_span"]
            sources = line_sources(
                source.fmt, source.paths, engine.workers, keys, arities, max_span
            )
        if sources is None:
            return None
        mark_style(source.fmt, self._style)  # (the router writes times as the input gives them)
        return engine.read_shares(sources, self._note)

    def _replay_shared(self, shared: Generator[list[Event]], publish: Publish) -> None:
        """Write the detections the workers' run makes final, until it ends or a stop
        signal comes (the stream is then cut, as :meth:`_replay`'s)."""
        batch = 1 if self._out.isatty() else 1024
        stop = self.stop
        # A signal is taken between two lists: never inside a message from the workers, nor
        # between writing detections and counting them.
        stop.waiting = False
        try:
            for detections in shared:
                if detections:
                    publish(detections)
                    self._pending += detections
                    if len(self._pending) >= batch:
                        self._write_pending()
                if stop.signum is not None:
                    raise Interrupted(stop.signum)
        except Interrupted:
            self.interrupted = True
        finally:
            # The workers end their shares where they are, on a stop or an error (a closed
            # pipe), while their pool is open: left to the garbage collector, the halt came
            # after the pool's close (a traceback, or a worker waiting on the router).
            shared.close()

    def _note(self, note: tuple[str, Rejected]) -> None:
        """What a worker reading its share met: a malformed line, an event refused, or (``iso``)
        times given as ISO-8601 text from the first lines on."""
        kind, rejected = note
        if kind == "iso":  # (the input's first lines give times as text: so are they written)
            self._style.iso = True
            return
        if kind != "refused":
            self._rejected_line(rejected)
            return
        self.counts["refused"] += 1
        print(f"skipped {rejected}", file=sys.stderr)

    def _refused(self, event: Event, error: EventError) -> list[Event]:
        """An event the engine refused: reported, counted, skipped (or, ``strict``, stops)."""
        self.counts["refused"] += 1
        print(f"skipped {_rejected(self._positions, event, error)}", file=sys.stderr)
        if self.source.strict:
            raise _Stop from None
        return []

    def _rejected_line(self, item: Rejected) -> None:
        """A reader's malformed line: reported, counted, skipped (or stops, ``strict``)."""
        if self.position >= self._skip:  # (lines before the resumed position were reported)
            self.counts["malformed"] += 1
            print(f"skipped {item}", file=sys.stderr)
            if self.source.strict:
                raise _Stop

    def _final(self) -> list[Event]:
        """What the end of the stream derives (``until``: the clock moved on to it)."""
        if self.interrupted or self.stopped:
            return []  # a stream cut short has no end: nothing is derived from its end
        engine, until = self.engine, self.source.until
        final = engine.flush()
        if until is not None and until > engine.now:  # (--workers: what ends at T is final
            final += engine.advance(until) + engine.flush()  # at flush)
        return final

    def _save(self) -> None:
        """A checkpoint now (the detections derived so far written first)."""
        assert self.checkpoints is not None
        self._write_pending()
        rules = None if self.watcher is None else self.watcher.history()
        snapshot = self.engine.snapshot()
        self.checkpoints.save(snapshot, self.position, self._out, self.counts, rules)

    def _write_pending(self) -> None:
        """Write the detections derived and not written yet (those ``only`` names)."""
        assert self._writer is not None
        only, pending = self._only, self._pending
        selected = [d for d in pending if d.name in only] if only else pending
        self.counts["written"] += self._writer.write_all(selected)
        self._pending = []

    def summary(self) -> str:
        """The summary line: events read, detections written, lines skipped, and more."""
        stats, counts, extra = self.engine.stats(), self.counts, ""
        if self._rdf:
            extra += f", {self._rdf['counts'].unmatched} graphs matched no mapping"
        unread: dict[str, int] = getattr(self.engine, "unread", dict)()  # (not with --workers)
        if unread:
            names = ", ".join(f"{name} ({count})" for name, count in sorted(unread.items()))
            extra += f", events no rule reads: {names}"
        watcher, refresher = self.watcher, self._refresher
        if watcher is not None and (watcher.reloaded or watcher.failed):
            extra += f", rules reloaded {watcher.reloaded} times"
            extra += f" ({watcher.failed} reloads refused)" if watcher.failed else ""
        if refresher is not None and (refresher.refreshed or refresher.failed):
            extra += f", knowledge refreshed {refresher.refreshed} times"
            extra += f" ({refresher.failed} refreshes failed)" if refresher.failed else ""
        if self.interrupted:
            extra += f", {self.stop.reason or 'interrupted'}"
        if self.stopped:
            extra += ", stopped at the first (--strict)"
        return (
            f"{stats.events_in} events, {counts['written']} detections written, "
            f"{counts['malformed']} malformed lines and {counts['refused']} rejected events "
            f"skipped{extra}"
        )


def _selected(publish: Publish, names: frozenset[str]) -> Publish:
    """``publish`` for the detections named ``names`` only."""
    return lambda detections: publish([d for d in detections if d.name in names])


def _unpublished(detections: Sequence[Event]) -> None:
    """Without ``serve``, detections are only written."""


def _rejected(positions: list[Position], event: Event, error: EventError) -> str:
    """An event the engine refused, with the file and line it came from (found only now: a
    merged stream's event is its reader's last)."""
    for where in positions:
        if where.holds(event):
            return str(where.rejected(str(error)))
    return f"event: {error}"  # (no reader yielded it last)


def _writer(fmt: str, out: TextIO, style: TimeStyle, query: CompiledQuery | None) -> _Writer:
    if fmt != "jsonl":
        return RdfWriter(out, fmt, style)
    if query is not None:
        return BindingsWriter(out, query.variables, query.heads, style)
    return JsonLinesWriter(out, style)
