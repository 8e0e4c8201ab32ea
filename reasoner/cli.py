"""The ``reasoner`` command: a thin dispatcher over sub-commands defined elsewhere.

Each sub-command lives next to the code it drives and exposes ``register(subparsers)``, which
adds its parser and sets a ``handler(args) -> int`` default. Adding a command means adding its
``register`` to :data:`COMMANDS`; this module holds no logic of its own.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from connectors.events import cli as run_command
from connectors.mesowest import cli as mesowest_command
from connectors.spark import cli as knowledge_command
from reasoner.errors import ReasonerError
from reasoner.language import command as language_command
from reasoner.server import cli as serve_command

#: The ``register(subparsers)`` functions of every sub-command, in help order.
COMMANDS: tuple[Callable[[Any], None], ...] = (
    language_command.register,
    run_command.register,
    serve_command.register,
    knowledge_command.register,
    mesowest_command.register,
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered sub-command.

    Returns:
        The parser.

    >>> build_parser().parse_args(["check", "x.event"]).rules
    ['x.event']
    """
    parser = argparse.ArgumentParser(
        prog="reasoner",
        description="Knowledge-rich stream reasoning over RDF with the ETALIS Language for Events.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in COMMANDS:
        register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``reasoner`` command.

    Args:
        argv: the arguments (default ``sys.argv[1:]``).

    Returns:
        The exit status.

    >>> main(["check", "rules/stock_ticker.event"])  # doctest: +SKIP
    0
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(handler(args))
    except ReasonerError as exc:
        print(f"reasoner: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
