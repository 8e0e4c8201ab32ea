"""``reasoner spark``: detection on Spark (docs/scale-out.md, "Spark").

``reasoner spark replay RULES... --events PATH... [--format F] --out DIR
[--out-format jsonl|parquet] [--master URL] [--knowledge PATH | --store DIR] [--policy P]
[--tie-break B] [--lateness T] [--max-span T] [--provenance] [--explain]``: replays an archive
(files or folders) through the rules on Spark and writes ``DIR/detections.jsonl`` (or
``DIR/detections.parquet``), equal to ``reasoner run --workers N``'s output, and
``DIR/rejects.jsonl``: every skipped line with its file, line and reason.

``reasoner spark stream RULES... --source DIR --checkpoint DIR --out DIR [--format F]
[--trigger available-now|processing-time=SECONDS] [--lateness T] [--files-per-batch N]
[--knowledge PATH | --store DIR] [--policy P] [--explain] [--master URL]
[--serve PORT [--host H]]``: a
Structured Streaming query over the files arriving in a folder (:mod:`connectors.spark.stream`);
each micro-batch writes ``DIR/detections/batch-N.jsonl``, ``DIR/late/batch-N.jsonl`` and
``DIR/rejects/batch-N.jsonl``. Each action of the ``spark`` group is one ``_add_<action>``
function here.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from itertools import islice
from pathlib import Path
from typing import IO, Any

from connectors.cli.options import (
    add_engine_options,
    add_knowledge_options,
    add_master_option,
    add_rdf_time,
    add_refresh_option,
    at_least_one,
    check_refresh,
    knowledge_base,
    whole,
)
from connectors.cli.run import SKIPPED
from connectors.events.inputs import FORMATS, REGISTRY, format_names
from connectors.events.stopping import GracefulStop, Interrupted
from reasoner.aside import write_aside
from reasoner.errors import ReasonerError
from reasoner.modes import POLICIES, TIE_BREAKS
from reasoner.server.config import LOOPBACK


def register(subparsers: Any) -> None:
    """Add the ``spark`` command group (its actions set ``handler``).

    >>> parser = argparse.ArgumentParser()
    >>> register(parser.add_subparsers())
    >>> parser.parse_args(["spark", "replay", "a.event", "--events", "x", "--out", "o"]).out
    'o'
    """
    p = subparsers.add_parser(
        "spark",
        help="detection on Spark: replay an archive or stream a folder, on a cluster (or "
        "local Spark)",
        description="Run the detection itself on Spark (docs/scale-out.md).",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    _add_replay(actions)
    _add_stream(actions)


def _add_replay(actions: Any) -> None:
    p = actions.add_parser(
        "replay",
        help="replay event files through rules on Spark, as reasoner run does",
        description="Replay an archive of event files through the rules on Spark: events are "
        "grouped by the rules' partition key, each group runs through the keyed rules, the "
        "rules that do not partition run after them in the driver (files that each hold one "
        "key, such as MesoWest exports, are read by the task of their key's group: no "
        "shuffle). The detections equal 'reasoner run --workers N' on the same files.",
        epilog=f"Exit status: 0 every input line was used; {SKIPPED} done, but some lines were "
        "skipped (written to DIR/rejects.jsonl); 1 error; 2 usage error; 130 stopped by SIGINT "
        "(Ctrl-C), 143 by SIGTERM.",
    )
    p.add_argument("rules", nargs="+", metavar="RULES", help="rule files (.event)")
    group = p.add_argument_group("input")
    group.add_argument(
        "--events",
        action="append",
        required=True,
        metavar="PATH",
        help="an events file or a folder of them (repeatable); files merge by time",
    )
    group.add_argument("--format", choices=FORMATS, default="jsonl", help="input format")
    add_rdf_time(group)
    add_engine_options(p.add_argument_group("engine"))
    add_knowledge_options(p.add_argument_group("knowledge"))
    output = p.add_argument_group("output")
    output.add_argument("--out", required=True, metavar="DIR", help="the output folder")
    output.add_argument(
        "--out-format",
        choices=("jsonl", "parquet"),
        default="jsonl",
        help="DIR/detections.jsonl (default) or DIR/detections.parquet",
    )
    output.add_argument(
        "--provenance",
        action="store_true",
        help="write with each detection the input events it was built from",
    )
    output.add_argument(
        "--explain",
        action="store_true",
        help="write with each detection its derivation, as reasoner run --explain (implies "
        "--provenance)",
    )
    add_master_option(p.add_argument_group("spark"))
    p.set_defaults(handler=replay)


_STREAM_DESCRIPTION = """\
Run the rules as a Spark Structured Streaming query over the files arriving in a folder
(write each file aside and rename it in): events are grouped by partition key, each key
group's engine lives in Spark's state store (and stays live in the Python worker that ran
it), and each micro-batch's detections, late events and rejected lines are written to
OUT/detections, OUT/late and OUT/rejects (one file per batch). Run it again on the same
--checkpoint to go on where it stopped (after a crash too): no detection is lost or written
twice.

example:
  reasoner spark stream rules/stock_ticker.event --source in --checkpoint ck --out out
"""


def _add_stream(commands: Any) -> None:
    p = commands.add_parser(
        "stream",
        help="a Structured Streaming query over a folder of event files",
        description=_STREAM_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"Exit status: 0 every input line was used; {SKIPPED} some were written to "
        "OUT/late or OUT/rejects; 1 error; 2 usage error; 130 stopped by SIGINT (Ctrl-C), 143 "
        "by SIGTERM (after the micro-batch in hand).",
    )
    p.add_argument("rules", nargs="+", metavar="RULES", help="rule files (.event)")
    p.add_argument("--source", required=True, metavar="DIR", help="the folder files arrive in")
    p.add_argument(
        "--checkpoint",
        required=True,
        metavar="DIR",
        help="Spark's checkpoint: the files taken, the watermark, every key's state",
    )
    p.add_argument("--out", required=True, metavar="DIR", help="where the outputs go")
    _add_stream_batches(p)
    p.add_argument(
        "--lateness",
        type=float,
        default=0,
        metavar="T",
        help="the watermark's delay: an event ending more than T before the latest end of "
        "the earlier micro-batches is late (written to OUT/late with the reason)",
    )
    p.add_argument(
        "--policy",
        choices=POLICIES,
        default="unrestricted",
        help="consumption policy for rules without their own (default: %(default)s)",
    )
    p.add_argument("--tie-break", choices=TIE_BREAKS, default="longer", help=argparse.SUPPRESS)
    p.add_argument(
        "--explain",
        action="store_true",
        help="write with each detection its derivation and input events, as reasoner run --explain",
    )
    knowledge = p.add_argument_group("knowledge")
    add_knowledge_options(knowledge)
    add_refresh_option(knowledge, "the query switches at a micro-batch's start")
    add_master_option(p.add_argument_group("spark"))
    p.add_argument(
        "--serve",
        type=int,
        metavar="PORT",
        help="also publish every detection to a SPARQL endpoint at HOST:PORT/sparql "
        "(as reasoner run --serve)",
    )
    p.add_argument("--host", help=f"with --serve: the interface to listen on (default {LOOPBACK})")
    p.set_defaults(handler=stream)


def _add_stream_batches(p: argparse.ArgumentParser) -> None:
    """``spark stream``'s input format, its micro-batches and the state's partitions."""
    p.add_argument(
        "--format",
        choices=format_names(streams=True),
        default="jsonl",
        help="input format: JSON lines (default) or MesoWest CSV exports",
    )
    p.add_argument(
        "--trigger",
        default="available-now",
        metavar="available-now|processing-time=SECONDS",
        help="take every file there now and stop (default), or keep going, a micro-batch "
        "every SECONDS, until interrupted",
    )
    p.add_argument(
        "--files-per-batch",
        type=int,
        metavar="N",
        help="at most N new files per micro-batch (default: every new file)",
    )
    p.add_argument(
        "--state-partitions",
        type=int,
        metavar="N",
        help="how many parts the keys' state is spread over, fixed by a checkpoint's first "
        "run: on a cluster, more parts step more key groups at once; on a local master, more "
        "than one moves key groups between Python workers, which then restore their state "
        "from the state store instead of keeping it live (default: 1 on a local master, "
        "else spark.sql.shuffle.partitions)",
    )


def trigger(text: str) -> dict[str, Any]:
    """The ``--trigger`` value as ``DataStreamWriter.trigger`` keywords.

    >>> trigger("available-now"), trigger("processing-time=2.5")
    ({'availableNow': True}, {'processingTime': '2500 milliseconds'})
    """
    if text == "available-now":
        return {"availableNow": True}
    name, _, value = text.partition("=")
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if name != "processing-time" or not seconds > 0:
        raise ReasonerError(
            f"--trigger {text!r}: expected available-now or processing-time=SECONDS (SECONDS > 0)"
        )
    return {"processingTime": f"{round(seconds * 1000)} milliseconds"}


def stream(args: argparse.Namespace) -> int:
    """Run the streaming query; the exit status (see the epilog).

    SIGINT or SIGTERM during start-up ends it at once (``Interrupted``); while the query
    runs, the first one stops the query after its micro-batch in hand (each batch's outputs
    are written whole, and the checkpoint resumes after the last one), then the summary is
    printed and the status is 130 or 143.
    """
    from connectors.events.stopping import graceful_stop

    lateness = whole(args.lateness)
    if lateness < 0:
        raise ReasonerError(f"--lateness must not be negative, not {args.lateness}")
    if args.host is not None and args.serve is None:
        raise ReasonerError("--host needs --serve: nothing to serve")
    when = trigger(args.trigger)
    at_least_one("--files-per-batch", args.files_per_batch)
    at_least_one("--state-partitions", args.state_partitions)
    if not Path(args.source).is_dir():
        raise ReasonerError(f"{args.source}: no such folder (--source)")
    with graceful_stop() as stop:
        counts = _stream(args, lateness, when, stop)
    print(
        f"{counts['events']} events, {counts['detection']} detections written, "
        f"{counts['late']} late events and {counts['reject']} rejected lines written aside, "
        f"in {counts['batches']} micro-batches{', ' + stop.reason if stop.requested else ''}",
        file=sys.stderr,
    )
    if stop.requested:
        return stop.status
    return SKIPPED if counts["late"] or counts["reject"] else 0


def _stream(
    args: argparse.Namespace, lateness: Any, when: dict[str, Any], stop: GracefulStop
) -> dict[str, int]:
    """Start Spark and run the query until it ends or ``stop`` is requested; its counts."""
    from connectors.events.serving import detections_endpoint
    from connectors.events.times import TimeStyle
    from reasoner.language.loader import load_rules

    program = load_rules([Path(path) for path in args.rules])  # errors before Spark starts
    from connectors.spark.session import get_session
    from connectors.spark.stream import make_job, run_stream
    from reasoner.runtime.options import EngineOptions

    check_refresh(args)
    kb = knowledge_base(args, program, progress=True)
    spark = get_session(master=args.master, quick_start=True)  # (the work is in Python)
    stop.install()  # (starting, Spark's context set a SIGINT handler of its own)
    job = make_job(
        program,
        fmt=args.format,
        lateness=lateness,
        options=EngineOptions(policy=args.policy, tie_break=args.tie_break, explain=args.explain),
    )
    style = TimeStyle(iso=REGISTRY[args.format].times == "iso")
    serving = detections_endpoint(
        args.serve, kb, style=style, host=args.host or LOOPBACK, stop=stop
    )
    with serving as publish, _QueryStopper(spark, stop):
        return run_stream(
            spark,
            job,
            source=args.source,
            checkpoint=args.checkpoint,
            out=args.out,
            trigger=when,
            publish=None if args.serve is None else publish,
            files_per_batch=args.files_per_batch,
            partitions=args.state_partitions,
            knowledge=kb,
            refresh_every=args.refresh_every,
        )


class _QueryStopper:
    """For its block: the first stop signal does not interrupt the main thread (waiting for
    the query) but starts a thread that stops every active streaming query once its trigger
    in hand is done, until the block ends (a query started just after the signal too)."""

    def __init__(self, spark: Any, stop: GracefulStop) -> None:
        self._spark, self._stop = spark, stop
        self._done = threading.Event()

    def __enter__(self) -> None:
        if self._stop.requested:  # (during start-up)
            raise Interrupted(self._stop.signum or signal.SIGTERM)
        self._stop.waiting = False
        self._stop.on_signal(self._start)

    def __exit__(self, *exc: object) -> None:
        self._done.set()

    def _start(self) -> None:
        threading.Thread(target=self._stop_queries, name="stop-queries", daemon=True).start()

    def _stop_queries(self) -> None:
        while not self._done.is_set():
            for query in self._spark.streams.active:
                # Its micro-batch in hand is finished (within 10 s; else the query is stopped
                # in it, and the checkpoint runs it again, writing the same files).
                deadline = time.monotonic() + 10
                while query.status["isTriggerActive"] and time.monotonic() < deadline:
                    time.sleep(0.2)
                query.stop()
            self._done.wait(0.5)


def replay(args: argparse.Namespace) -> int:
    """Replay the archive on Spark and write the detections and the rejected lines.

    SIGINT or SIGTERM before the outputs are written cancels Spark's jobs and ends it with
    one line (``Interrupted``, 130 or 143): a replay's output is its whole archive's, so none
    is written (each output file appears whole, by a rename). Once the writing began, it
    finishes, the summary is printed and the status is 130 or 143.

    Returns:
        0, or 3 (:data:`SKIPPED`) when lines were skipped. Errors raise ReasonerError.
    """
    from connectors.events.stopping import graceful_stop
    from connectors.spark.replay import check_files
    from reasoner.language.loader import load_rules

    program = load_rules([Path(path) for path in args.rules])  # rule errors before Spark starts
    files = check_files(args.events)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ReasonerError(f"{out}: not a folder")
    with graceful_stop() as stop, _told_once(stop):
        try:
            return _replay(args, program, files, out, stop)
        except Interrupted:
            shutil.rmtree(out / "_runs", ignore_errors=True)  # (the keyed stage's, if begun)
            raise


def _replay(
    args: argparse.Namespace, program: Any, files: Any, out: Path, stop: GracefulStop
) -> int:
    """Start Spark, replay, write; the exit status."""
    from connectors.spark.replay import Archive, keyed_knowledge, replay
    from connectors.spark.session import get_context
    from reasoner.runtime.options import EngineOptions

    out.mkdir(parents=True, exist_ok=True)
    lateness = whole(args.lateness)
    options = EngineOptions(
        policy=args.policy,
        tie_break=args.tie_break,
        lateness=lateness,
        max_span=args.max_span,
        provenance=args.provenance,
        explain=args.explain,
    )
    knowledge = _knowledge(args, program)
    with ThreadPoolExecutor(1) as pool:  # (the knowledge is built while the JVM starts)
        built = pool.submit(keyed_knowledge, program, options, knowledge)
        sc = get_context(master=args.master, quick_start=True)  # (no Spark SQL: RDDs only)
        knowledge = built.result()
    stop.install()  # (starting, Spark's context set a SIGINT handler of its own)
    stop.on_signal(lambda: _beside(sc.cancelAllJobs))  # (the main thread waits in one)
    archive = Archive(files, args.format, program, args.rdf_time, args.max_span)
    result = replay(
        sc,
        archive,
        runs=out / "_runs",
        options=options,
        knowledge=knowledge,
        log=lambda line: print(line, file=sys.stderr),
    )
    stop.waiting = False  # the outputs, once begun, are written whole: a signal sets the status
    try:
        written = _write(out, args.out_format, result.lines, result.iso)
    finally:
        result.close()
    rejects = "".join(
        json.dumps({"file": item.file, "line": item.line, "reason": item.reason}) + "\n"
        for item in result.rejected
    )
    write_aside(out / "rejects.jsonl", lambda f: f.write(rejects.encode("utf-8")))
    extra = f", {result.unmatched} graphs matched no mapping" if result.unmatched else ""
    extra += f", {stop.reason}" if stop.requested else ""
    print(
        f"{result.events} events, {written} detections written, "
        f"{len(result.rejected)} lines skipped (see {out / 'rejects.jsonl'}){extra}",
        file=sys.stderr,
    )
    if stop.requested:
        return stop.status
    return SKIPPED if result.rejected else 0


def _knowledge(args: argparse.Namespace, program: Any) -> Any:
    """With --knowledge/--store: the knowledge, built once here (as reasoner run builds it)."""
    kb = knowledge_base(args, program, progress=True)
    return None if kb is None else kb.current()


@contextlib.contextmanager
def _told_once(stop: GracefulStop) -> Iterator[None]:
    """Drop, once a stop signal came, the report py4j logs (with a traceback) of the call into
    the JVM that the signal interrupted: the command says it was stopped (``terminated``)."""

    def keep(record: logging.LogRecord) -> bool:
        caught = record.exc_info[0] if record.exc_info else None
        return not (stop.requested and caught is not None and issubclass(caught, Interrupted))

    root = logging.getLogger()
    root.addFilter(keep)
    try:
        yield
    finally:
        root.removeFilter(keep)


def _beside(call: Callable[[], object]) -> None:
    """Run ``call`` (a call into the JVM) in a thread of its own and wait for it: a stop
    signal's handler runs in the main thread, which may be inside a call into the JVM, and
    py4j would send a call made there on that same connection, busy reading its answer."""
    thread = threading.Thread(target=call, name="cancel-jobs", daemon=True)
    thread.start()
    thread.join(timeout=30)


def _write(out: Path, fmt: str, lines: Any, iso: bool) -> int:
    """Write the detections (JSON lines in the defined order) as they are or as Parquet,
    counting them on a progress bar when standard error is a terminal; the file appears
    whole (written aside, renamed)."""
    from tqdm import tqdm

    lines = iter(tqdm(lines, desc="detections written", unit="", disable=None, leave=False))
    if fmt == "parquet":
        from connectors.spark.replay import write_parquet

        target = out / "detections.parquet"
        aside = out / f".{target.name}.{os.getpid()}"
        try:
            count = write_parquet(lines, aside, iso)
            os.replace(aside, target)
        finally:
            aside.unlink(missing_ok=True)
        return count
    counted = [0]

    def write(stream: IO[bytes]) -> None:
        while chunk := list(islice(lines, 4096)):
            stream.write("".join(chunk).encode("utf-8"))
            counted[0] += len(chunk)

    write_aside(out / "detections.jsonl", write)
    return counted[0]
