"""Thousands of ``--events``: connectors.cli.options.Parser parses what argparse parses, with
the same messages, in linear time."""

from __future__ import annotations

import argparse
import contextlib
import io
from typing import Any

import pytest

from connectors.cli import build_parser
from connectors.cli.options import Parser, Repeated


def _parsers() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The same command line, with argparse's append and with Parser's Repeated."""
    made = []
    for kind, action in ((argparse.ArgumentParser, "append"), (Parser, Repeated)):
        root = kind(prog="p")
        sub = root.add_subparsers(dest="command").add_parser("run")
        sub.add_argument("rules", nargs="*")
        sub.add_argument("--events", action=action, metavar="FILE")
        sub.add_argument("--output")
        sub.add_argument("--ev-x")
        made.append(root)
    return made[0], made[1]


def _outcome(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[Any, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            parsed: Any = vars(parser.parse_args(argv))
        except SystemExit as stopped:
            parsed = ("exit", stopped.code)
    return parsed, err.getvalue()


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "r", "--events", "a", "--events", "b", "--events", "c"],
        ["run", "--events", "a", "--events", "-", "--events", "", "--output", "o", "r"],
        ["run", "--events", "a", "--events=b", "--events", "c", "--events", "d"],
        ["run", "--events", "a", "--events", "b", "--even", "c", "--events", "d", "--events", "e"],
        ["run", "--events", "a", "--events", "b", "--events", "-x", "--events", "c"],
        ["run", "--events", "a", "--events", "b", "--events", "-1", "--events", "c"],
        ["run", "--events", "a", "--events", "b", "--events"],  # (no value: a usage error)
        ["run", "--output", "--events", "a", "--events", "b"],
        ["run", "r", "--events", "a", "--events", "b", "s", "--events", "c", "--events", "d"],
        ["run", "--events", "a", "--events", "b", "--", "--events", "c"],
        ["run", "--ev", "a", "--ev", "b"],  # (ambiguous: --events or --ev-x)
        ["run", "x", "x", "x", "--events", "x", "--events", "x"],
        ["run"],
    ],
)
def test_it_parses_as_argparse_does(argv: list[str]) -> None:
    plain, collapsing = _parsers()
    assert _outcome(collapsing, argv) == _outcome(plain, argv)


def test_help_and_usage_are_argparse_own() -> None:
    plain, collapsing = _parsers()
    assert _outcome(collapsing, ["run", "--help"]) == _outcome(plain, ["run", "--help"])


def test_thousands_of_events_come_in_order() -> None:
    files = [f"archive/S{i:05d}.csv" for i in range(5_000)]
    argv = ["run", "rules.event", *(arg for f in files for arg in ("--events", f))]
    args = build_parser("run").parse_args(argv)
    assert args.events == files
    assert args.rules == ["rules.event"]
