"""Options several commands share, spelled and explained once: the input files (``run``,
``why-not``), the engine's (those and ``spark replay``), the knowledge's (those and ``spark
stream``) and the knowledge those name, and Spark's master (``spark``, ``knowledge build``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
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


def whole(value: float) -> float:
    """A number from the command line as the engine and saved state write it: an int when
    whole (``3``, not ``3.0``).

    >>> whole(3.0), whole(2.5)
    (3, 2.5)
    """
    return int(value) if float(value).is_integer() else value


def at_least_one(option: str, value: int | None) -> None:
    """Raise ReasonerError for an ``option`` given below 1 (None: not given)."""
    if value is not None and value < 1:
        raise ReasonerError(f"{option} must be at least 1, not {value}")


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
        action=Repeated,
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


class Repeated(argparse.Action):
    """``action="append"`` (each value added to the list, in order) for an option given
    thousands of times (``--events`` of an archive's files): under a :class:`Parser`, a run of
    consecutive ``--option VALUE`` pairs reaches it as one value standing for the run."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        runs = parser.runs if isinstance(parser, Parser) else {}
        items = list(getattr(namespace, self.dest, None) or ())
        items += runs.get(values, [values])
        setattr(namespace, self.dest, items)


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that parses thousands of repeated options in linear time.

    argparse looks for the next option from the start of the arguments at every option
    (0.2 s for 2,000 ``--events FILE``, seconds for 10,000), so each run of two or more
    consecutive ``--option VALUE`` pairs of a :class:`Repeated` option is parsed as one pair,
    its value a stand-in (it holds a NUL: no argument can) that the action replaces by the
    run. What is parsed, and every message, stay argparse's.

    >>> parser = Parser(prog="p")
    >>> _ = parser.add_argument("--events", action=Repeated)
    >>> parser.parse_args(["--events", "a", "--events", "b", "--events=c"]).events
    ['a', 'b', 'c']
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: the runs of the arguments parsed last, by their stand-in
        self.runs: dict[str, list[str]] = {}

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        tokens = sys.argv[1:] if args is None else list(args)
        repeated = {
            option
            for action in self._actions
            if isinstance(action, Repeated)
            for option in action.option_strings
        }
        if repeated:
            tokens = self._collapsed(tokens, repeated)
        return super().parse_known_args(tokens, namespace)

    def _collapsed(self, tokens: Sequence[str], repeated: set[str]) -> list[str]:
        """``tokens`` with each run of pairs of one option of ``repeated`` as one pair."""
        self.runs = {}
        out: list[str] = []
        i, count = 0, len(tokens)
        while i < count:
            token = tokens[i]
            if token == "--":  # (the rest is positional)
                out += tokens[i:]
                break
            values, j = [], i
            while token in repeated and j + 1 < count and tokens[j] == token:
                if not self._plain(tokens[j + 1]):
                    break
                values.append(tokens[j + 1])
                j += 2
            if len(values) < 2:
                out.append(token)
                i += 1
                continue
            stand_in = f"\0{len(self.runs)}"
            self.runs[stand_in] = values
            out += [token, stand_in]
            i = j
        return out

    def _plain(self, value: str) -> bool:
        """Whether argparse surely reads ``value`` as a value, never as an option."""
        return not value or value[0] not in self.prefix_chars or value == value[0]
