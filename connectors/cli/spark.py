"""``reasoner spark``: detection on Spark (docs/scale-out.md, "Spark").

``reasoner spark replay RULES... --events PATH... [--format F] --out DIR
[--out-format jsonl|parquet] [--master URL] [--knowledge PATH | --store DIR] [--policy P]
[--tie-break B] [--lateness T] [--max-span T] [--provenance]``: replays an archive (files or
folders) through the rules on Spark and writes ``DIR/detections.jsonl`` (or
``DIR/detections.parquet``), equal to ``reasoner run --workers N``'s output, and
``DIR/rejects.jsonl``: every skipped line with its file, line and reason. Each action of the
``spark`` group is one ``_add_<action>`` function here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from connectors.cli.run import SKIPPED
from connectors.events.inputs import FORMATS
from reasoner.errors import ReasonerError
from reasoner.modes import POLICIES, REGIMES, TIE_BREAKS


def register(subparsers: Any) -> None:
    """Add the ``spark`` command group (its actions set ``handler``).

    >>> parser = argparse.ArgumentParser()
    >>> register(parser.add_subparsers())
    >>> parser.parse_args(["spark", "replay", "a.event", "--events", "x", "--out", "o"]).out
    'o'
    """
    p = subparsers.add_parser(
        "spark",
        help="detection on Spark: replay an archive on a cluster (or local Spark)",
        description="Run the detection itself on Spark (docs/scale-out.md).",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    _add_replay(actions)


def _add_spark(group: Any) -> None:
    group.add_argument(
        "--master",
        metavar="URL",
        help="Spark master URL (default: REASONER_SPARK_MASTER, else local[*]: embedded Spark)",
    )


def _add_replay(actions: Any) -> None:
    p = actions.add_parser(
        "replay",
        help="replay event files through rules on Spark, as reasoner run does",
        description="Replay an archive of event files through the rules on Spark: events are "
        "grouped by the rules' partition key, each group runs through the keyed rules, the "
        "rules that do not partition run after them in the driver. The detections equal "
        "'reasoner run --workers N' on the same files.",
        epilog=f"Exit status: 0 every input line was used; {SKIPPED} done, but some lines were "
        "skipped (written to DIR/rejects.jsonl); 1 error; 2 usage error.",
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
    group.add_argument(
        "--rdf-time",
        metavar="PROPERTY",
        help="RDF input: the property giving each graph its time (default prov:generatedAtTime)",
    )
    engine = p.add_argument_group("engine (as for reasoner run)")
    engine.add_argument("--policy", choices=POLICIES, default="unrestricted")
    engine.add_argument("--tie-break", choices=TIE_BREAKS, default="longer")
    engine.add_argument("--lateness", type=float, default=0, metavar="T")
    engine.add_argument("--max-span", type=float, metavar="T")
    knowledge = p.add_argument_group("knowledge (as for reasoner run)")
    knowledge.add_argument("--knowledge", action="append", metavar="PATH")
    knowledge.add_argument("--store", metavar="DIR")
    knowledge.add_argument("--entailment", choices=REGIMES, default="rdfs")
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
    _add_spark(p.add_argument_group("spark"))
    p.set_defaults(handler=replay)


def replay(args: argparse.Namespace) -> int:
    """Replay the archive on Spark and write the detections and the rejected lines.

    Returns:
        0, or 3 (:data:`SKIPPED`) when lines were skipped. Errors raise ReasonerError.
    """
    from connectors.events.times import TimeStyle
    from connectors.spark.replay import Archive, check_files, replay
    from connectors.spark.session import get_session
    from reasoner.language.loader import load_rules

    program = load_rules([Path(path) for path in args.rules])  # rule errors before Spark starts
    files = check_files(args.events)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ReasonerError(f"{out}: not a folder")
    out.mkdir(parents=True, exist_ok=True)
    lateness = int(args.lateness) if float(args.lateness).is_integer() else args.lateness
    options = {
        "policy": args.policy,
        "tie_break": args.tie_break,
        "max_span": args.max_span,
        "provenance": args.provenance,
    }
    knowledge = _knowledge(args, program)
    spark = get_session(master=args.master)
    archive = Archive(files, args.format, program, args.rdf_time, args.max_span)
    result = replay(
        spark.sparkContext,
        archive,
        options=options,
        lateness=lateness,
        knowledge=knowledge,
        log=lambda line: print(line, file=sys.stderr),
    )
    try:
        style = TimeStyle(iso=result.iso)
        written = _write(out, args.out_format, result.detections, style)
    finally:
        result.close()
    with open(out / "rejects.jsonl", "w", encoding="utf-8") as rejects:
        for item in result.rejected:
            record = {"file": item.file, "line": item.line, "reason": item.reason}
            rejects.write(json.dumps(record) + "\n")
    extra = f", {result.unmatched} graphs matched no mapping" if result.unmatched else ""
    print(
        f"{result.events} events, {written} detections written, "
        f"{len(result.rejected)} lines skipped (see {out / 'rejects.jsonl'}){extra}",
        file=sys.stderr,
    )
    return SKIPPED if result.rejected else 0


def _knowledge(args: argparse.Namespace, program: Any) -> Any:
    """With --knowledge/--store: the knowledge, built once here (as reasoner run builds it)."""
    if not (args.knowledge or args.store):
        return None
    from reasoner.knowledge.snapshot import KnowledgeBase

    kb = KnowledgeBase(
        args.knowledge or (),
        store_path=args.store,
        entailment=args.entailment,
        program=program,
        progress=True,
    )
    return kb.snapshot()


def _write(out: Path, fmt: str, detections: Any, style: Any) -> int:
    """Write the detections (in the defined order) as JSON lines or Parquet."""
    from connectors.events.jsonl import JsonLinesWriter

    if fmt == "parquet":
        from connectors.spark.replay import write_parquet

        return write_parquet(detections, out / "detections.parquet", style)
    with open(out / "detections.jsonl", "w", encoding="utf-8") as stream:
        return JsonLinesWriter(stream, style).write_all(detections)
