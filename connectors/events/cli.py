"""``reasoner run``: replay event files through rules and write the detections.

The contract outside tools rely on (keep it stable):
``reasoner run RULES... [--events FILE|-]... [--format jsonl|mesowest] [--policy P]
[--lateness T] [--only NAME]... [--output FILE|-]``. Several ``--events`` files merge into
one time-ordered stream; malformed lines and rejected events are reported on stderr, counted
and skipped.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from typing import TextIO

from connectors.events.jsonl import JsonLinesWriter, read_jsonl
from connectors.events.merge import merge_streams
from connectors.events.rejects import Rejected
from connectors.events.times import TimeStyle
from reasoner.errors import EventError
from reasoner.runtime.engine import Engine, load_rules
from reasoner.runtime.events import Event

_log = logging.getLogger("reasoner.run")


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
        choices=("jsonl", "mesowest"),
        default="jsonl",
        help="input format: JSON lines (default) or MesoWest CSV exports",
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
    p.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace) -> int:
    """Run the ``run`` command; returns the exit status."""
    lateness = int(args.lateness) if float(args.lateness).is_integer() else args.lateness
    program = load_rules(args.rules)
    knowledge = None
    if args.knowledge or args.store:
        from reasoner.knowledge.snapshot import KnowledgeBase

        knowledge = KnowledgeBase(
            args.knowledge or (),
            store_path=args.store,
            entailment=args.entailment,
            program=program,
            progress=True,
        ).snapshot()
    engine = Engine(
        program,
        knowledge=knowledge,
        policy=args.policy,
        tie_break=args.tie_break,
        lateness=lateness,
        max_span=args.max_span,
    )
    style = TimeStyle()
    rejected: list[Rejected] = []

    def on_reject(item: Rejected) -> None:
        rejected.append(item)
        print(f"skipped {item}", file=sys.stderr)

    only = set(args.only or ())
    with ExitStack() as stack:
        out: TextIO = (
            sys.stdout
            if args.output == "-"
            else stack.enter_context(open(args.output, "w", encoding="utf-8"))
        )
        writer = JsonLinesWriter(out, style)
        streams = [_read(path, args.format, style, on_reject) for path in (args.events or ["-"])]
        written = refused = 0
        for event in merge_streams(*streams):
            try:
                detections = engine.push(event)
            except EventError as error:
                refused += 1
                print(f"skipped event: {error}", file=sys.stderr)
                continue
            written += _write(writer, detections, only)
        written += _write(writer, engine.flush(), only)
    stats = engine.stats()
    print(
        f"{stats.events_in} events, {written} detections written, "
        f"{len(rejected)} malformed lines and {refused} rejected events skipped",
        file=sys.stderr,
    )
    return 0


def _write(writer: JsonLinesWriter, detections: list[Event], only: set[str]) -> int:
    selected = [d for d in detections if not only or d.name in only]
    writer.write_all(selected)
    return len(selected)


def _read(path: str, fmt: str, style: TimeStyle, on_reject: object) -> Iterator[Event]:
    if fmt == "mesowest":
        from connectors.mesowest.reader import read_mesowest

        style.iso = True  # MesoWest times are ISO-8601: write detections back the same way
        return read_mesowest(path, on_reject=on_reject)  # type: ignore[arg-type]
    return read_jsonl(path, style=style, on_reject=on_reject)  # type: ignore[arg-type]
