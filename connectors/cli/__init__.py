"""The ``reasoner`` command: one module per sub-command, on top of the library and connectors.

Each sub-command module (``check``, ``run``, ``serve``, ``knowledge``, ``mesowest``) has
``register(subparsers)``, which adds its parser and sets ``handler(args) -> int``. Modules
import only light modules at the top (argparse, :mod:`reasoner.modes`, settings); a handler
imports the parser, store, Spark or plotting code when it runs, so ``reasoner --help`` loads
none of them. A new sub-command is a new module here plus one entry in :data:`COMMANDS`.

One convention for every command:

* exit status 0: done; 1: an error, reported on standard error as ``reasoner: message``
  (rule diagnostics as ``file:line:col: message`` with the source line and a caret);
  2: a usage error (argparse's message, or no command given);
* handlers raise :class:`~reasoner.errors.ReasonerError` (or let an ``OSError`` through) for
  an error; :func:`main` reports it, so no handler prints its own error prefix.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from connectors.cli import check, knowledge, mesowest, run, serve
from reasoner.errors import ReasonerError

#: The ``register(subparsers)`` functions of every sub-command, in help order.
COMMANDS: tuple[Callable[[Any], None], ...] = (
    check.register,
    run.register,
    serve.register,
    knowledge.register,
    mesowest.register,
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
        epilog="Exit status: 0 done, 1 error (reported as 'reasoner: message'), 2 usage error.",
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
        The exit status: 0 done, 1 error, 2 usage error.

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
    except (ReasonerError, OSError) as exc:
        print(f"reasoner: {exc}", file=sys.stderr)
        return 1
