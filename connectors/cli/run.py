"""``reasoner run``: replay event files through rules and write the detections.

The contract outside tools rely on (keep it stable):
``reasoner run [RULES...] [--query FILE.rq] [--events FILE|-]...
[--format jsonl|mesowest|rdf|nquads|trig] [--rdf-time PROPERTY] [--policy P] [--lateness T]
[--only NAME]... [--output FILE|-]
[--output-format jsonl|trig|nquads] [--provenance] [--explain] [--refresh-every SECONDS]
[--serve PORT [--host HOST] [--keep-serving]] [--speed X] [--workers N]
[--checkpoint DIR [--checkpoint-every N|Ts]] [--strict]``.
Several ``--events`` files merge into one time-ordered stream; malformed lines and rejected events
(late ones too) are reported on stderr as ``skipped FILE:LINE: reason``, counted and skipped, and
the run exits 3; with ``--strict`` the first one stops the run (exit status 4). ``--provenance``
writes with each detection the input events it was built from (``"sources"`` in JSON lines,
``prov:wasDerivedFrom`` in RDF and on the endpoint); ``--explain`` also its derivation
(``"why"``, a tree; PROV-O activities in RDF; docs/explain.md). ``--serve`` publishes every
detection to a SPARQL endpoint with a query page and a live view
(``connectors/events/serving.py``); ``--speed`` replays a recorded stream at that many stream
seconds per second, to watch it (``connectors/events/pace.py``). ``--query`` runs an EP-SPARQL
query beside the rules (which are then optional) and writes its results instead of the
detections: SPARQL results JSON lines (``connectors/events/bindings.py``), or RDF as for
detections (docs/ep-sparql.md).
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from contextlib import ExitStack, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from connectors.cli.options import (
    add_engine_options,
    add_events_option,
    add_knowledge_options,
    add_rdf_time,
    add_refresh_option,
    at_least_one,
    check_refresh,
    knowledge_base,
    whole,
)
from connectors.events.inputs import FORMATS
from connectors.events.run_session import SKIPPED, STOPPED, RunInput, RunOutput
from connectors.rdf.writer import RDF_SYNTAXES
from reasoner.errors import ReasonerError
from reasoner.server.config import LOOPBACK

if TYPE_CHECKING:
    from connectors.events.checkpoints import Checkpoints, Resume
    from connectors.events.watch import RuleWatcher
    from reasoner.language.ast import Program
    from reasoner.language.epsparql import CompiledQuery
    from reasoner.runtime.engine import Engine
    from reasoner.runtime.parallel import ParallelEngine
    from reasoner.values import Time

__all__ = ["SKIPPED", "STOPPED", "register", "run"]


def register(subparsers: Any) -> None:
    """Add the ``run`` sub-command (its ``handler`` returns the exit status).

    Args:
        subparsers: what ``ArgumentParser.add_subparsers()`` returned.

    >>> parser = argparse.ArgumentParser()
    >>> register(parser.add_subparsers())
    >>> parser.parse_args(["run", "a.event", "--policy", "recent"]).policy
    'recent'
    """
    p = subparsers.add_parser(
        "run",
        help="replay events through rules and print the complex events detected",
        description="Replay one or more event streams through the rules and write every "
        "complex event a rule head derives, as JSON lines, in detection order.",
        epilog=f"Exit status: 0 every input line was used; {SKIPPED} done, but some input lines "
        "were skipped (malformed, or events the engine rejected, e.g. late ones; each is "
        f"reported as 'skipped FILE:LINE: reason'); {STOPPED} --strict stopped at the first "
        "such line; 1 error; 2 usage error; 130 stopped by SIGINT (Ctrl-C), 143 by SIGTERM; "
        "141 standard output closed early. With 3, 4, 130 and 143 what was derived is written "
        "(and with --checkpoint a checkpoint taken there), then the summary.",
    )
    p.add_argument("rules", nargs="*", metavar="RULES", help="rule files (.event)")
    p.add_argument(
        "--query",
        metavar="FILE.rq",
        help="an EP-SPARQL query over the triple view of the input; its results are written "
        "(SPARQL results JSON lines, or RDF with --output-format) instead of the detections",
    )
    _add_input(p.add_argument_group("input"))
    _add_engine(p.add_argument_group("engine"))
    _add_rules(p.add_argument_group("rules"))
    _add_knowledge(p.add_argument_group("knowledge"))
    _add_output(p.add_argument_group("output"))
    _add_checkpoints(p.add_argument_group("checkpoints"))
    p.set_defaults(handler=run)


def _add_input(group: Any) -> None:
    add_events_option(group)
    group.add_argument(
        "--format",
        choices=FORMATS,
        default="jsonl",
        help="input format: JSON lines (default), MesoWest CSV exports, or a stream of "
        "timestamped RDF graphs (rdf: N-Quads or TriG by file extension)",
    )
    add_rdf_time(group)
    group.add_argument(
        "--speed",
        type=float,
        metavar="X",
        help="replay X stream seconds per second (e.g. 3600: an hour a second), to watch the "
        "--serve live view; default: as fast as the engine goes",
    )
    group.add_argument(
        "--until",
        type=float,
        metavar="T",
        help="at the end of the stream, move the clock on to time T (if the stream ended "
        "before it): time points, aggregate windows and alarms due by then fire",
    )
    group.add_argument(
        "--strict",
        action="store_true",
        help=f"stop at the first malformed line or rejected event (exit status {STOPPED}), "
        "after writing what was derived before it; default: report it, skip it, go on",
    )


def _add_engine(group: Any) -> None:
    add_engine_options(group)
    group.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="run the keyed rules in N worker processes and the rest after them "
        "(docs/scale-out.md); detections are then written in the defined order: by end "
        "time, start time, name, arguments (the same for any N)",
    )


def _add_rules(group: Any) -> None:
    group.add_argument(
        "--watch-rules",
        action="store_true",
        help="reload the rule files when they change, between two events: rules gone from a "
        "file are removed, new ones added, the others keep their partial matches; a file that "
        "no longer parses or compiles keeps the previous rules (with --workers, so does a "
        "change that would move a running rule between the workers and the global stage); "
        "each reload is reported on stderr",
    )
    group.add_argument(
        "--watch-interval",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="with --watch-rules: look at the files' modification times every SECONDS of wall "
        "time (default: %(default)s)",
    )


def _add_knowledge(group: Any) -> None:
    add_knowledge_options(group)
    add_refresh_option(
        group,
        "the engine, with --workers every worker, switches between two events: the events "
        "read after it use the new version",
    )


def _add_output(group: Any) -> None:
    group.add_argument(
        "--only", action="append", metavar="NAME", help="print only these events (repeatable)"
    )
    group.add_argument("--output", default="-", metavar="FILE", help="where to write ('-': stdout)")
    group.add_argument(
        "--output-format",
        choices=("jsonl", *RDF_SYNTAXES),
        default="jsonl",
        help="detections as JSON lines (default) or as one RDF named graph each",
    )
    group.add_argument(
        "--provenance",
        action="store_true",
        help="write with each detection the input events it was built from: a 'sources' "
        "list in JSON lines, prov:wasDerivedFrom links to r:InputEvent resources in RDF "
        "and on the --serve endpoint (uses more memory: partial matches keep their inputs)",
    )
    group.add_argument(
        "--explain",
        action="store_true",
        help="write with each detection its derivation (implies --provenance): the rules and "
        "events it was built from and the knowledge facts each WHERE / EVENT_MULTIPLY goal "
        "used, justified down to asserted facts; a 'why' tree in JSON lines, PROV-O in RDF "
        "and on the --serve endpoint ('reasoner explain FILE' prints it readably)",
    )
    group.add_argument(
        "--serve",
        type=int,
        metavar="PORT",
        help="serve the knowledge and every detection (with --query: its results) over SPARQL "
        "at HOST:PORT/sparql while replaying, with a query page at / and the detections live "
        "at /live (0: any free port; the addresses are printed on stderr)",
    )
    group.add_argument(
        "--host",
        help=f"with --serve: the interface to listen on (default {LOOPBACK}, loopback only; "
        "another address exposes the endpoint and its pages to that network)",
    )
    group.add_argument(
        "--keep-serving",
        action="store_true",
        help="with --serve: after the replay, keep serving until SIGINT (Ctrl-C) or SIGTERM",
    )


def _add_checkpoints(group: Any) -> None:
    group.add_argument(
        "--checkpoint",
        metavar="DIR",
        help="keep a checkpoint in DIR (the engine, the input position, the output length); "
        "after a crash the same command resumes from it (needs --output FILE)",
    )
    group.add_argument(
        "--checkpoint-every",
        default="100000",
        metavar="N|SECONDS",
        help="with --checkpoint: every N input events (default %(default)s) or every SECONDSs, "
        "e.g. 30s",
    )


def run(args: argparse.Namespace) -> int:
    """Replay the events through the rules and write the detections (a
    :class:`~connectors.events.run_session.RunSession`; SIGINT and SIGTERM stop it
    gracefully, :mod:`connectors.events.stopping`).

    Args:
        args: the parsed ``run`` options.
    Returns:
        0; 3 (:data:`SKIPPED`) when input lines were skipped; 4 (:data:`STOPPED`) when
        ``--strict`` stopped at one; 130 (SIGINT, Ctrl-C) or 143 (SIGTERM) when stopped by a
        signal; in each case after writing what was derived and the summary. An error raises
        :class:`ReasonerError` (status 1).

    >>> parser = argparse.ArgumentParser()
    >>> register(parser.add_subparsers())
    >>> run(parser.parse_args(["run", "rules/stock_ticker.event"]))  # doctest: +SKIP
    0
    """
    from connectors.events.run_session import RunSession
    from connectors.events.stopping import graceful_stop

    lateness = whole(args.lateness)
    _check(args)
    with graceful_stop() as stop, ExitStack() as stack:
        checkpoints, resume = _checkpoints(args, lateness)
        # (first: it notes the files' times before it reads them)
        watcher = _watcher(args, None if resume is None else resume.rules)
        program, query = _program(args, watcher)
        kb = knowledge_base(args, program, progress=True)
        with stop.deferred():  # the --workers start whole (and are stopped by the stack)
            engine = _engine(args, program, None if kb is None else kb.current(), lateness)
            if args.workers is not None:
                stack.enter_context(engine)  # type: ignore[arg-type]
        session = RunSession(
            engine,
            program,
            _input(args),
            _output(args, query),
            query=query,
            knowledge=kb,
            refresh_every=args.refresh_every,
            watcher=watcher,
            checkpoints=checkpoints,
            resume=resume,
            stop=stop,
        )
        return session.run()


def _check(args: argparse.Namespace) -> None:
    """The usage errors no parser catches (before anything is read)."""
    if args.host is not None and args.serve is None:
        raise ReasonerError("--host needs --serve: nothing to serve")
    if args.speed is not None and not args.speed > 0:
        raise ReasonerError(f"--speed must be positive, not {args.speed}")
    check_refresh(args)
    if not args.watch_interval > 0:
        raise ReasonerError(f"--watch-interval must be positive, not {args.watch_interval}")
    if not args.rules and args.query is None:
        raise ReasonerError("give rule files, or a query with --query")
    if args.only and args.query is not None:
        raise ReasonerError("--only does not go with --query: the query's results are written")


def _program(
    args: argparse.Namespace, watcher: RuleWatcher | None
) -> tuple[Program, CompiledQuery | None]:
    """The rules (the watcher's, with --watch-rules) and the --query, compiled into them."""
    from reasoner.language.loader import load_rules

    if watcher is not None:
        program = watcher.program()
    else:
        program = load_rules([Path(path) for path in args.rules])  # files, never rule text
    if args.query is None:
        return program, None
    from reasoner.language.epsparql import load_query

    query = load_query(args.query, program)
    return program + query.program, query


def _input(args: argparse.Namespace) -> RunInput:
    until = args.until
    if until is not None and until.is_integer():
        until = int(until)
    return RunInput(
        paths=args.events or ["-"],
        fmt=args.format,
        rdf_time=args.rdf_time,
        speed=args.speed,
        until=until,
        strict=args.strict,
    )


def _output(args: argparse.Namespace, query: CompiledQuery | None) -> RunOutput:
    """Where and what to write: with --query, the query's results only."""
    only = frozenset(args.only or ()) if query is None else frozenset(h for h, _ in query.heads)
    return RunOutput(
        path=args.output,
        fmt=args.output_format,
        only=only,
        serve=args.serve,
        host=args.host or LOOPBACK,
        keep_serving=args.keep_serving,
    )


def _watcher(args: argparse.Namespace, history: dict[str, Any] | None) -> RuleWatcher | None:
    """With --watch-rules, what reloads the rule files (reading the clock at every event when
    events may come slowly: standard input, a pipe, a paced replay; else every 1024);
    ``history``: a resumed checkpoint's (the rule files' texts and reloads)."""
    if not args.watch_rules:
        return None
    from connectors.events.watch import RuleWatcher

    paths = args.events or ["-"]
    slow = "-" in paths or args.speed is not None or _slow(paths)
    every = 1 if slow else 1024
    return RuleWatcher(args.rules, interval=args.watch_interval, every=every, history=history)


def _slow(paths: list[str]) -> bool:
    """Whether an events file is a pipe or a device (events may come slowly)."""
    for path in paths:
        with suppress(OSError):
            if not stat.S_ISREG(os.stat(path).st_mode):
                return True
    return False


def _engine(
    args: argparse.Namespace, program: Program, knowledge: Any, lateness: Time
) -> Engine | ParallelEngine:
    """The engine, or with --workers the parallel one (the knowledge is built once, here;
    each worker process inherits its own copy, and is sent each refreshed version:
    ``ParallelEngine.use_knowledge``)."""
    from reasoner.runtime.engine import Engine

    options = {
        "policy": args.policy,
        "tie_break": args.tie_break,
        "lateness": lateness,
        "max_span": args.max_span,
        "provenance": args.provenance,
    }
    if args.workers is None:
        # Printing actions (`p do write(X)`) go to standard error: standard output carries
        # the detections.
        return Engine(
            program,
            knowledge=knowledge,
            action_output=sys.stderr,
            explain=args.explain,
            **options,
        )
    at_least_one("--workers", args.workers)
    from connectors.events.inputs import load_reader
    from reasoner.runtime.parallel import ParallelEngine

    load_reader(args.format)  # (before the fork: the workers reading their files inherit it)
    return ParallelEngine(
        program,
        workers=args.workers,
        knowledge=None if knowledge is None else lambda: knowledge,
        explain=args.explain,
        **options,
    )


def _checkpoints(
    args: argparse.Namespace, lateness: Time
) -> tuple[Checkpoints | None, Resume | None]:
    """With --checkpoint: the run's checkpoints and the one to resume from (checked before
    the stream starts; a bad one is left untouched)."""
    if args.checkpoint is None:
        return None, None
    if args.output == "-":
        raise ReasonerError("--checkpoint needs --output FILE: written output cannot be taken back")
    options = {
        name: getattr(args, name)
        for name in (
            "format",
            "rdf_time",
            "policy",
            "tie_break",
            "knowledge",
            "store",
            "entailment",
            "max_span",
            "only",
            "output_format",
            "provenance",
            "explain",
            "workers",
            "query",
        )
    }
    options["lateness"] = lateness
    from connectors.events.checkpoints import Checkpoints, Every, run_fingerprint

    # The query is hashed like a rule file: a changed query does not resume an old run.
    # Watched rule files may change while the run goes on: they count by name, and each
    # checkpoint holds their history (the resumed engine is rebuilt from it).
    sources = [
        *([] if args.watch_rules else args.rules),
        *([] if args.query is None else [args.query]),
    ]
    if args.watch_rules:
        options["watch_rules"] = list(args.rules)
    fingerprint = run_fingerprint(sources, args.events or ["-"], options)
    checkpoints = Checkpoints(args.checkpoint, fingerprint, Every.parse(args.checkpoint_every))
    return checkpoints, checkpoints.load()
