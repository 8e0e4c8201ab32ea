"""Options several commands share, spelled and explained once: the input files (``run``,
``why-not``), the engine's (those and ``spark replay``), the knowledge's (those and ``spark
stream``) and the knowledge those name, and Spark's master (``spark``, ``knowledge build``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from reasoner.errors import ReasonerError
from reasoner.modes import POLICIES, REGIMES, TIE_BREAKS

if TYPE_CHECKING:
    from reasoner.knowledge.versions import KnowledgeBase
    from reasoner.language.ast import Program


def add_engine_options(group: Any) -> None:
    """--policy, --tie-break, --lateness and --max-span (an ``argparse`` group or parser)."""
    group.add_argument(
        "--policy",
        choices=POLICIES,
        default="unrestricted",
        help="consumption policy for rules without their own (default: %(default)s)",
    )
    group.add_argument(
        "--tie-break",
        choices=TIE_BREAKS,
        default="longer",
        help="recent policy: which of two occurrences ending together is the latest",
    )
    group.add_argument(
        "--lateness",
        type=float,
        default=0,
        metavar="T",
        help="accept events up to T time units out of order (buffered and reordered)",
    )
    group.add_argument(
        "--max-span",
        type=float,
        metavar="T",
        help="the longest input event interval (0: instantaneous events); lets the engine "
        "free goals no future input can complete, e.g. chronological PAR/NOT without a window",
    )


def add_knowledge_options(group: Any) -> None:
    """--knowledge, --store and --entailment (an ``argparse`` group or parser)."""
    group.add_argument(
        "--knowledge",
        action="append",
        metavar="PATH",
        help="RDF files or folders of background knowledge for WHERE (repeatable)",
    )
    group.add_argument(
        "--store", metavar="DIR", help="an on-disk knowledge store (knowledge build)"
    )
    group.add_argument(
        "--entailment",
        choices=REGIMES,
        default="rdfs",
        help="entailment applied to the knowledge (default: %(default)s)",
    )


def add_master_option(group: Any) -> None:
    """--master, the Spark master of the commands that run Spark (an ``argparse`` group)."""
    group.add_argument(
        "--master",
        metavar="URL",
        help="Spark master URL (default: REASONER_SPARK_MASTER, else local[*]: embedded Spark)",
    )


def add_refresh_option(group: Any, switch: str) -> None:
    """--refresh-every (an ``argparse`` group or parser); ``switch`` says when the new
    version takes over."""
    group.add_argument(
        "--refresh-every",
        type=float,
        metavar="SECONDS",
        help="with --knowledge or --store: rebuild the knowledge every SECONDS while running "
        f"(in the background; {switch}; a failed refresh keeps the previous version). SIGHUP "
        "asks for a refresh at any time",
    )


def check_refresh(args: argparse.Namespace) -> None:
    """Raise ReasonerError for a --refresh-every without knowledge or not positive."""
    if args.refresh_every is not None and not (args.knowledge or args.store):
        raise ReasonerError("--refresh-every needs --knowledge or --store: nothing to refresh")
    if args.refresh_every is not None and args.refresh_every <= 0:
        raise ReasonerError(f"--refresh-every must be positive, not {args.refresh_every}")


def knowledge_base(
    args: argparse.Namespace, program: Program, *, progress: bool = False
) -> KnowledgeBase | None:
    """The knowledge of --knowledge, --store and --entailment, with ``program``'s facts and
    Horn rules (``progress``: show loading progress); None without --knowledge and --store."""
    if not (args.knowledge or args.store):
        return None
    from reasoner.knowledge.versions import KnowledgeBase

    return KnowledgeBase(
        args.knowledge or (),
        store_path=args.store,
        entailment=args.entailment,
        program=program,
        progress=progress,
    )


def add_events_option(group: Any) -> None:
    """--events, the input files of ``run`` and ``why-not`` (an ``argparse`` group or parser)."""
    group.add_argument(
        "--events",
        action="append",
        metavar="FILE",
        help="an events file ('-' for standard input, the default); repeat to merge streams",
    )


def add_rdf_time(group: Any) -> None:
    """--rdf-time (an ``argparse`` group or parser)."""
    group.add_argument(
        "--rdf-time",
        metavar="PROPERTY",
        help="RDF input: the property giving each graph its time (IRI or prefix:name of the "
        "rules; default prov:generatedAtTime)",
    )
