"""``reasoner check [RULES...] [--query FILE.rq] [--emit ast|network|partitioning|rules]``:
parse and check rule files, and an EP-SPARQL query (its translation into rules is checked too).

Every file is parsed and checked; every diagnostic goes to standard error as
``file:line:col: message`` with the source line and a caret. Exit status 0 when every file is
valid (warnings allowed unless ``--warnings-as-errors``), 1 otherwise; ``--unread-heads`` also
warns about each head no rule of the files reads. The files are checked together for names: an
event derived in one file and read in another is known; a misspelt one is reported with the
closest known name. ``--emit ast`` prints each valid file's AST dump,
``--emit partitioning`` the partition analysis of all the files together.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from reasoner.errors import Diagnostic, DiagnosticsError, ReasonerError, RuleCompileError
from reasoner.language.ast import Multiply, Program, Where, dump, walk


def _network(program: Program) -> str:
    from reasoner.compiler.compile import compile_program

    return compile_program(program).dump()


def _partitioning(program: Program) -> str:
    from reasoner.compiler.partition import analyse

    return analyse(program).dump(program)


def _rules(program: Program) -> str:
    from reasoner.language.printer import to_source

    return to_source(program)


#: What ``--emit`` can print, name -> function of the checked program.
EMITTERS: dict[str, Callable[[Program], str]] = {
    "ast": dump,
    "rules": _rules,
    "network": _network,
    "partitioning": _partitioning,
}
#: The forms printed once for all the files together (one program), when all are valid.
WHOLE_PROGRAM = ("partitioning",)


def register(subparsers: Any) -> None:
    """Add the ``check`` sub-command (its ``handler`` returns the exit status).

    Args:
        subparsers: what ``ArgumentParser.add_subparsers()`` returned.

    >>> parser = argparse.ArgumentParser()
    >>> register(parser.add_subparsers())
    >>> parser.parse_args(["check", "a.event", "--emit", "ast"]).emit
    'ast'
    """
    p = subparsers.add_parser(
        "check",
        help="parse and check rule files",
        description="Parse and check rule files; report every problem on standard error. "
        "Exit status 0 when all files are valid, 1 otherwise.",
    )
    p.add_argument("rules", nargs="*", metavar="RULES", help="rule files (.event)")
    p.add_argument(
        "--query",
        metavar="FILE.rq",
        help="also check an EP-SPARQL query and the rules it translates into",
    )
    p.add_argument(
        "--emit",
        choices=sorted(EMITTERS),
        help="print this form of each valid file on stdout (rules: as rule text, e.g. a "
        "query's translation; partitioning: of all the files together, the partition key "
        "and the rules it keys; docs/scale-out.md)",
    )
    p.add_argument(
        "--warnings-as-errors",
        action="store_true",
        help="exit with status 1 when there is any warning",
    )
    p.add_argument(
        "--unread-heads",
        action="store_true",
        help="also warn about each rule head no rule of the files reads (normally an output)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Check the files named in ``args.rules``.

    Args:
        args: parsed arguments (``rules``, ``emit``, ``warnings_as_errors``,
            ``unread_heads``).
        out: where emitted forms go (default standard output).
        err: where diagnostics go (default standard error).

    Returns:
        0 if every file is valid (and, with ``warnings_as_errors``, has no warning), else 1.

    >>> run(argparse.Namespace(rules=["rules/stock.event"], emit=None, warnings_as_errors=False,
    ...                        unread_heads=False))  # doctest: +SKIP
    0
    """
    from reasoner.language.check import check
    from reasoner.language.loader import parse_file

    out = out or sys.stdout
    err = err or sys.stderr
    query = getattr(args, "query", None)
    if not args.rules and query is None:
        raise ReasonerError("give rule files, or a query with --query")
    status = 0
    parsed: list[Program] = []
    for path in [*args.rules, *([] if query is None else [query])]:
        try:
            parsed.append(_query(query, args.rules) if path is query else parse_file(path))
        except DiagnosticsError as exc:
            for d in exc.diagnostics:
                print(d.render(), file=err)
            status = 1
        except ReasonerError as exc:  # reported here, so that the other files are checked
            print(f"reasoner: {exc}", file=err)
            status = 1
    whole = Program()
    for index, program in enumerate(parsed):
        others = Program(
            tuple(s for p in parsed[:index] + parsed[index + 1 :] for s in p.statements)
        )
        diagnostics = check(program, args.unread_heads, others) + _compile_errors(program)
        for d in diagnostics:
            print(d.render(), file=err)
        failing = {"error", "warning"} if args.warnings_as_errors else {"error"}
        if any(d.severity in failing for d in diagnostics):
            status = 1
        elif args.emit in WHOLE_PROGRAM:
            whole = whole + program
        elif args.emit:
            out.write(EMITTERS[args.emit](program))
    if args.emit in WHOLE_PROGRAM and status == 0:
        out.write(EMITTERS[args.emit](whole))
    return status


def _compile_errors(program: Program) -> list[Diagnostic]:
    """What ``reasoner run`` refuses when it compiles the rules: in the static rules, a
    recursive predicate that is not range-restricted or a cycle through negation; in the
    conditions of event rules, an unknown prefix, arithmetic function or action (``do``)."""
    from reasoner.knowledge.datalog import prepare
    from reasoner.knowledge.goals import DEFAULT_PREFIXES, compile_goal

    prefixes = {**DEFAULT_PREFIXES, **program.prefixes}
    errors: list[Diagnostic] = []
    goals = [
        p.condition if isinstance(p, Where) else p.goal
        for rule in program.event_rules
        for p in walk(rule.body)
        if isinstance(p, Where | Multiply)
    ]
    try:
        prepare(program.static_rules, prefixes, program.event_rules)
    except RuleCompileError as exc:
        errors.extend(exc.diagnostics)
    for goal in goals:
        try:
            compile_goal(goal, prefixes)
        except RuleCompileError as exc:
            errors.extend(exc.diagnostics)
    return errors


def _query(path: str, rule_files: list[str]) -> Program:
    """A query's translation, checked against the rule files it will run with."""
    from reasoner.language.epsparql import load_query
    from reasoner.language.loader import load_rules

    try:
        rules = load_rules([Path(p) for p in rule_files])
    except ReasonerError:  # reported with its own file
        rules = None
    return load_query(path, rules).program
