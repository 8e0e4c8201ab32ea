"""``reasoner why-not RULES... --events FILE --expect EVENT``: why a detection did not occur.

Replays the events as ``reasoner run`` does (same input formats, policy, lateness, knowledge)
and, when no detection fits ``--expect`` (in ``--between T1 T2`` if given), prints the partial
matches of the rules for that head that came closest and what stopped each (a window exceeded,
a WHERE goal false, a negation blocked, a partner consumed by the policy, an input event
rejected, no event of a needed kind): :func:`reasoner.semantics.whynot.why_not`.
Exit status 0 when the expected detection does occur (each is printed with its interval);
5 when it does not (the answer is printed); 1 error; 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from connectors.cli.options import (
    add_engine_options,
    add_events_option,
    add_knowledge_options,
    add_rdf_time,
    knowledge_base,
    whole,
)
from connectors.events.inputs import FORMATS
from reasoner.errors import ReasonerError

#: The exit status when the expected detection did not occur (and the answer was printed).
NOT_DETECTED = 5


def register(subparsers: Any) -> None:
    """Add the ``why-not`` sub-command (its ``handler`` returns the exit status).

    Args:
        subparsers: what ``ArgumentParser.add_subparsers()`` returned.

    >>> parser = argparse.ArgumentParser()
    >>> register(parser.add_subparsers())
    >>> parser.parse_args(["why-not", "a.event", "--expect", "c(1)"]).expect
    'c(1)'
    """
    p = subparsers.add_parser(
        "why-not",
        help="say why an expected detection did not occur",
        description="Replay events through the rules (as 'reasoner run' does) and, if no "
        "detection fits --expect, show the partial matches that came closest and what "
        "stopped each: a window exceeded, a WHERE goal false, a negation blocked, a partner "
        "consumed by the policy, an input event rejected, no event of a needed kind.",
        epilog=f"Exit status: 0 the expected detection occurred (each is printed); "
        f"{NOT_DETECTED} it did not (the answer is printed); 1 error; 2 usage error.",
    )
    p.add_argument("rules", nargs="+", metavar="RULES", help="rule files (.event)")
    p.add_argument(
        "--expect",
        required=True,
        metavar="EVENT",
        help="the expected detection as in a rule head, e.g. 'blizzardWarning(\"KSLC\")': "
        "given arguments must match, variables and _ match anything, missing trailing "
        "arguments are open",
    )
    p.add_argument(
        "--between",
        nargs=2,
        metavar=("T1", "T2"),
        help="only a detection ending between these times counts (numbers or ISO-8601)",
    )
    add_events_option(p)
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="jsonl",
        help="input format, as for 'reasoner run' (default: %(default)s)",
    )
    add_rdf_time(p)
    add_engine_options(p)
    add_knowledge_options(p)
    p.add_argument(
        "--output-format",
        choices=("text", "json"),
        default="text",
        help="a readable report (default) or one JSON document",
    )
    p.add_argument(
        "--limit", type=int, default=5, metavar="N", help="show at most N partial matches"
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Replay and answer; print the answer on standard output.

    Args:
        args: the parsed ``why-not`` options.
    Returns:
        0 when the expected detection occurred, :data:`NOT_DETECTED` when it did not.
    """
    from connectors.events.inputs import open_events, rdf_options
    from connectors.events.merge import merge_streams
    from connectors.events.rejects import Position, Rejected
    from connectors.events.times import TimeStyle, epoch_to_iso, parse_time
    from reasoner.language.ast import event_arities
    from reasoner.language.loader import load_rules
    from reasoner.runtime.events import Event
    from reasoner.semantics.whynot import Rejection, parse_expected, why_not

    expected = parse_expected(args.expect)  # before the replay: a typo fails fast
    between = None
    if args.between is not None:
        try:
            between = (parse_time(_number(args.between[0])), parse_time(_number(args.between[1])))
        except ValueError as exc:
            raise ReasonerError(f"--between: {exc}") from None
    program = load_rules([Path(path) for path in args.rules])
    base = knowledge_base(args, program)
    kb = None if base is None else base.current()
    style = TimeStyle()
    skipped: list[Rejection] = []

    def on_reject(item: Rejected) -> None:
        skipped.append(Rejection(f"{item.file}:{item.line}", item.reason))

    positions: list[Position] = []
    arities = event_arities(program)
    rdf = rdf_options(args.format, args.rdf_time, program)
    streams = [
        open_events(path, args.format, style, on_reject, rdf, arities, positions)
        for path in args.events or ["-"]
    ]

    def locate(event: Event) -> str | None:
        return next((f"{p.file}:{p.line}" for p in positions if p.holds(event)), None)

    lateness = whole(args.lateness)
    answer = why_not(
        program,
        merge_streams(*streams),
        expected,
        between=between,
        knowledge=kb,
        policy=args.policy,
        tie_break=args.tie_break,
        lateness=lateness,
        max_span=args.max_span,
        rejected=skipped,
        locate=locate,
        limit=args.limit,
        time=lambda t: epoch_to_iso(t) if style.iso else str(t),
    )
    time = epoch_to_iso if style.iso else str
    if args.output_format == "json":
        print(json.dumps(answer.to_json(epoch_to_iso if style.iso else _same), default=float))
    else:
        sys.stdout.write(answer.render(time))
    return 0 if answer.fired else NOT_DETECTED


def _number(text: str) -> Any:
    """A command-line time: a number if it reads as one, else the text (ISO-8601)."""
    try:
        value = float(text)
    except ValueError:
        return text
    return whole(value)


def _same(value: Any) -> Any:
    return value
