"""The ``reasoner`` command: one module per sub-command, on top of the library and connectors.

Each sub-command module (``check``, ``run``, ``explain``, ``why_not``, ``serve``,
``knowledge``, ``mesowest``, ``spark``) has ``register(subparsers)``, which adds its parser and
sets ``handler(args) -> int``. Modules import only light modules at the top (argparse,
:mod:`reasoner.modes`, settings); a handler imports the parser, store, Spark or plotting code
when it runs, so ``reasoner --help`` loads none of them. When the arguments name a sub-command,
only that sub-command's module is imported (``reasoner run`` does not load the MesoWest or Spark
modules its neighbours' defaults come from). A new sub-command is a new module here plus one
entry in :data:`COMMANDS`.

One convention for every command:

* exit status 0: done; 3: ``run`` finished, but some input lines were skipped (malformed, or events
  the engine rejected); 4: ``run --strict`` stopped at the first such line; 5: ``why-not``
  answered that the expected detection did not occur; 1: an error, reported on
  standard error as ``reasoner: message`` (rule diagnostics as ``file:line:col: message`` with the
  source line and a caret); 2: a usage error (argparse's message, or no command given); 130 and
  143: stopped by SIGINT (Ctrl-C) and SIGTERM (a long-running command first finishes what it
  holds and prints its summary: :mod:`connectors.events.stopping`; ``serve`` exits 0); 141: the
  reader of standard output went away (``| head``), as for a process ended by SIGPIPE;
* handlers raise :class:`~reasoner.errors.ReasonerError` (or let an ``OSError`` through) for
  an error; :func:`main` reports it, so no handler prints its own error prefix.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib import import_module

from connectors.cli.options import Parser
from connectors.events.stopping import Interrupted
from reasoner.errors import ReasonerError

#: Every sub-command's name and the module whose ``register(subparsers)`` adds it, in help order.
COMMANDS: dict[str, str] = {
    "check": "connectors.cli.check",
    "run": "connectors.cli.run",
    "explain": "connectors.cli.explain",
    "why-not": "connectors.cli.why_not",
    "serve": "connectors.cli.serve",
    "knowledge": "connectors.cli.knowledge",
    "mesowest": "connectors.cli.mesowest",
    "spark": "connectors.cli.spark",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every registered sub-command, or with one.

    Args:
        command: a sub-command's name: only its module is imported and registered
            (default: every sub-command, for help and usage errors).

    Returns:
        The parser.

    >>> build_parser().parse_args(["check", "x.event"]).rules
    ['x.event']
    """
    parser = Parser(  # (thousands of --events parsed in linear time)
        prog="reasoner",
        description="Knowledge-rich stream reasoning over RDF with the ETALIS Language for Events.",
        epilog="Exit status: 0 done, 1 error (reported as 'reasoner: message'), 2 usage error, "
        "3 run: input lines skipped, 4 run --strict: stopped at a bad line, "
        "5 why-not: the expected detection did not occur, "
        "130 stopped by SIGINT (Ctrl-C), 143 stopped by SIGTERM, "
        "141 standard output closed early (| head).",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in COMMANDS.items():
        if command is None or name == command:
            import_module(module).register(subparsers)
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
    arguments = sys.argv[1:] if argv is None else list(argv)
    named = arguments[0] if arguments and arguments[0] in COMMANDS else None
    parser = build_parser(named)
    args = parser.parse_args(arguments)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(handler(args))
    except BrokenPipeError:
        # Nothing more can reach the reader; keep the interpreter's last flush quiet too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        print("reasoner: standard output closed early (broken pipe)", file=sys.stderr)
        return 141
    except Interrupted as stopped:  # a stop signal while waiting, e.g. during start-up
        print(f"reasoner: {stopped}", file=sys.stderr)
        return stopped.status
    except KeyboardInterrupt:  # Ctrl-C in a command that does not handle the stop signals
        print("reasoner: interrupted", file=sys.stderr)
        return 130
    except (ReasonerError, OSError) as exc:
        print(f"reasoner: {exc}", file=sys.stderr)
        return 1
