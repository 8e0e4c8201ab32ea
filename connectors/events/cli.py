"""``reasoner run``: replay event files through rules and write the detections.

The contract outside tools rely on (keep it stable):
``reasoner run RULES... [--events FILE|-]... [--format jsonl|mesowest|rdf|nquads|trig]
[--rdf-time PROPERTY] [--policy P] [--lateness T] [--only NAME]... [--output FILE|-]
[--output-format jsonl|trig|nquads] [--provenance] [--refresh-every SECONDS]
[--serve PORT [--keep-serving]]``. Several
``--events`` files merge into one time-ordered stream; malformed lines and rejected events are
reported on stderr, counted and skipped. ``--provenance`` writes with each detection the input
events it was built from (``"sources"`` in JSON lines, ``prov:wasDerivedFrom`` in RDF and on
the endpoint). ``--serve`` publishes every detection to a SPARQL endpoint
(``connectors/events/serving.py``).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, TextIO

from connectors.events.jsonl import JsonLinesWriter, read_jsonl
from connectors.events.merge import merge_streams
from connectors.events.refresh import Refresher
from connectors.events.rejects import Rejected
from connectors.events.serving import detections_endpoint
from connectors.events.times import TimeStyle
from reasoner.errors import EventError, ReasonerError
from reasoner.language.ast import Program
from reasoner.runtime.engine import Engine, load_rules
from reasoner.runtime.events import Event

if TYPE_CHECKING:
    from connectors.rdf.writer import RdfWriter

_log = logging.getLogger("reasoner.run")
_RDF_FORMATS = ("rdf", "nquads", "trig")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``run`` command."""
    p = subparsers.add_parser(
        "run",
        help="replay events through rules and print the complex events detected",
        description="Replay one or more event streams through the rules and write every "
        "complex event a rule head derives, as JSON lines, in detection order.",
    )
    p.add_argument("rules", nargs="+", metavar="RULES", help="rule files (.event)")
    p.add_argument(
        "--events",
        action="append",
        metavar="FILE",
        help="an events file ('-' for standard input, the default); repeat to merge streams",
    )
    p.add_argument(
        "--format",
        choices=("jsonl", "mesowest", *_RDF_FORMATS),
        default="jsonl",
        help="input format: JSON lines (default), MesoWest CSV exports, or a stream of "
        "timestamped RDF graphs (rdf: N-Quads or TriG by file extension)",
    )
    p.add_argument(
        "--rdf-time",
        metavar="PROPERTY",
        help="RDF input: the property giving each graph its time (IRI or prefix:name of the "
        "rules; default prov:generatedAtTime)",
    )
    p.add_argument(
        "--policy",
        choices=("unrestricted", "recent", "chronological"),
        default="unrestricted",
        help="consumption policy for rules without their own (default: unrestricted)",
    )
    p.add_argument(
        "--tie-break",
        choices=("longer", "shorter"),
        default="longer",
        help="recent policy: which of two occurrences ending together is the latest",
    )
    p.add_argument(
        "--knowledge",
        action="append",
        metavar="PATH",
        help="RDF files or folders of background knowledge for WHERE (repeatable)",
    )
    p.add_argument("--store", metavar="DIR", help="an on-disk knowledge store (knowledge build)")
    p.add_argument(
        "--refresh-every",
        type=float,
        metavar="SECONDS",
        help="with --knowledge or --store: rebuild the knowledge every SECONDS while replaying "
        "(in the background; the engine switches between two events; a failed refresh keeps "
        "the previous version). SIGHUP asks for a refresh at any time",
    )
    p.add_argument(
        "--entailment",
        choices=("none", "rdfs", "owl-rl"),
        default="rdfs",
        help="entailment applied to the knowledge (default: rdfs)",
    )
    p.add_argument(
        "--lateness",
        type=float,
        default=0,
        metavar="T",
        help="accept events up to T time units out of order (buffered and reordered)",
    )
    p.add_argument(
        "--max-span",
        type=float,
        metavar="T",
        help="the longest input event interval (0: instantaneous events); lets the engine "
        "free goals no future input can complete, e.g. chronological PAR/NOT without a window",
    )
    p.add_argument(
        "--only", action="append", metavar="NAME", help="print only these events (repeatable)"
    )
    p.add_argument("--output", default="-", metavar="FILE", help="where to write ('-': stdout)")
    p.add_argument(
        "--output-format",
        choices=("jsonl", "trig", "nquads"),
        default="jsonl",
        help="detections as JSON lines (default) or as one RDF named graph each",
    )
    p.add_argument(
        "--provenance",
        action="store_true",
        help="write with each detection the input events it was built from: a 'sources' "
        "list in JSON lines, prov:wasDerivedFrom links to r:InputEvent resources in RDF "
        "and on the --serve endpoint (uses more memory: partial matches keep their inputs)",
    )
    p.add_argument(
        "--serve",
        type=int,
        metavar="PORT",
        help="serve the knowledge and every detection over SPARQL at 127.0.0.1:PORT/sparql "
        "while replaying (0: any free port, printed on stderr)",
    )
    p.add_argument(
        "--keep-serving",
        action="store_true",
        help="with --serve: after the replay, keep serving until interrupted (Ctrl-C)",
    )
    p.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace) -> int:
    """Run the ``run`` command; returns the exit status."""
    lateness = int(args.lateness) if float(args.lateness).is_integer() else args.lateness
    if args.refresh_every is not None and not (args.knowledge or args.store):
        raise ReasonerError("--refresh-every needs --knowledge or --store: nothing to refresh")
    if args.refresh_every is not None and args.refresh_every <= 0:
        raise ReasonerError(f"--refresh-every must be positive, not {args.refresh_every}")
    program = load_rules(args.rules)
    kb = None
    if args.knowledge or args.store:
        from reasoner.knowledge.snapshot import KnowledgeBase

        kb = KnowledgeBase(
            args.knowledge or (),
            store_path=args.store,
            entailment=args.entailment,
            program=program,
            progress=True,
        )
    engine = Engine(
        program,
        knowledge=None if kb is None else kb.snapshot(),
        policy=args.policy,
        tie_break=args.tie_break,
        lateness=lateness,
        max_span=args.max_span,
        provenance=args.provenance,
    )
    style = TimeStyle()
    rejected: list[Rejected] = []

    def on_reject(item: Rejected) -> None:
        rejected.append(item)
        print(f"skipped {item}", file=sys.stderr)

    only = set(args.only or ())
    with ExitStack() as stack:
        # Entered first, so closed last: the output is complete while --keep-serving waits.
        publish = stack.enter_context(
            detections_endpoint(args.serve, kb, keep_serving=args.keep_serving, style=style)
        )
        out: TextIO = (
            sys.stdout
            if args.output == "-"
            else stack.enter_context(open(args.output, "w", encoding="utf-8"))
        )
        writer = _writer(args.output_format, out, style)
        refresher = None if kb is None else stack.enter_context(Refresher(kb, args.refresh_every))
        rdf = _rdf_options(args, program)
        paths = args.events or ["-"]
        streams = [_read(path, args.format, style, on_reject, rdf) for path in paths]
        written = refused = 0
        # Detections are written a batch at a time, unless someone may be waiting for them.
        live = out.isatty() or "-" in paths
        batch, pending = (1 if live else 1024), []
        push = engine.push
        for event in merge_streams(*streams):
            if refresher is not None:
                refresher.poll(engine)
            try:
                detections = push(event)
            except EventError as error:
                refused += 1
                print(f"skipped event: {error}", file=sys.stderr)
                continue
            if detections:
                publish(detections)
                pending += detections
                if len(pending) >= batch:
                    written += _write(writer, pending, only)
                    pending = []
        final = engine.flush()
        publish(final)
        written += _write(writer, pending + final, only)
    stats = engine.stats()
    extra = f", {rdf['counts'].unmatched} graphs matched no mapping" if rdf else ""
    if refresher is not None and (refresher.refreshed or refresher.failed):
        extra += f", knowledge refreshed {refresher.refreshed} times"
        extra += f" ({refresher.failed} refreshes failed)" if refresher.failed else ""
    print(
        f"{stats.events_in} events, {written} detections written, "
        f"{len(rejected)} malformed lines and {refused} rejected events skipped{extra}",
        file=sys.stderr,
    )
    return 0


def _write(writer: JsonLinesWriter | RdfWriter, detections: list[Event], only: set[str]) -> int:
    selected = [d for d in detections if d.name in only] if only else detections
    return writer.write_all(selected)


def _writer(fmt: str, out: TextIO, style: TimeStyle) -> JsonLinesWriter | RdfWriter:
    if fmt == "jsonl":
        return JsonLinesWriter(out, style)
    from connectors.rdf.writer import RdfWriter

    return RdfWriter(out, fmt, style)


def _rdf_options(args: argparse.Namespace, program: Program) -> dict[str, Any]:
    """What every RDF stream is read with: the mapping (compiled once), time, counters."""
    if args.format not in _RDF_FORMATS:
        return {}
    from connectors.rdf.reader import GENERATED_AT_TIME, GraphCounts, property_iri
    from reasoner.knowledge.goals import DEFAULT_PREFIXES
    from reasoner.rdf.mapping import GraphMapping

    time = GENERATED_AT_TIME
    if args.rdf_time:
        time = property_iri(args.rdf_time, {**DEFAULT_PREFIXES, **program.prefixes})
    return {
        "mapping": GraphMapping(program),
        "time_property": time,
        "counts": GraphCounts(),
        "syntax": None if args.format == "rdf" else args.format,
    }


def _read(
    path: str, fmt: str, style: TimeStyle, on_reject: object, rdf: dict[str, Any]
) -> Iterator[Event]:
    if rdf:
        from connectors.rdf.reader import read_rdf

        return read_rdf(path, style=style, on_reject=on_reject, **rdf)  # type: ignore[arg-type]
    if fmt == "mesowest":
        from connectors.mesowest.reader import read_mesowest

        style.iso = True  # MesoWest times are ISO-8601: write detections back the same way
        return read_mesowest(path, on_reject=on_reject)  # type: ignore[arg-type]
    return read_jsonl(path, style=style, on_reject=on_reject)  # type: ignore[arg-type]
