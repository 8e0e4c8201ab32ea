"""The ``mesowest`` command group: ``reasoner mesowest generate ...``.

``register(subparsers)`` adds the group to the ``reasoner`` command; every parsed command
carries ``handler(args) -> int`` (the exit code). ``python -m connectors.mesowest generate ...``
runs the same commands without the main CLI.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from connectors.events.times import iso_to_epoch
from connectors.mesowest.generator import DEFAULT_START, GeneratorError, Storm, generate
from connectors.mesowest.station import SHIPPED_STATIONS, load_stations
from reasoner.errors import ReasonerError


def register(subparsers: Any) -> None:
    """Add the ``mesowest`` command group to an argparse sub-parser collection.

    Args:
        subparsers: the result of ``parser.add_subparsers()`` of the main CLI.

    Example:
        >>> root = argparse.ArgumentParser(prog="reasoner")
        >>> register(root.add_subparsers())
        >>> root.parse_args(["mesowest", "generate", "--out", "x", "--days", "2"]).days
        2.0
    """
    group = subparsers.add_parser("mesowest", help="MesoWest sensor data: generate sample data")
    _add_commands(group.add_subparsers(dest="mesowest_command", required=True))


def main(argv: Sequence[str] | None = None) -> int:
    """Run a ``mesowest`` command on its own (``python -m connectors.mesowest``).

    Args:
        argv: the arguments after the program name (default: ``sys.argv[1:]``).

    Returns:
        The exit code: 0 on success, 2 on a user error (reported on standard error).
    """
    parser = argparse.ArgumentParser(prog="python -m connectors.mesowest")
    _add_commands(parser.add_subparsers(dest="mesowest_command", required=True))
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except ReasonerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _add_commands(commands: Any) -> None:
    generate_parser = commands.add_parser(
        "generate",
        help="write seeded, realistic winter weather as MesoWest CSV files",
        description="Generate winter weather (diurnal cycle, snow showers, placed storms) "
        "for stations of a station table, one <ID>.csv MesoWest export per station.",
    )
    generate_parser.add_argument("--out", type=Path, required=True, help="output directory")
    generate_parser.add_argument(
        "--stations", help="comma-separated station ids (default: every station of the table)"
    )
    generate_parser.add_argument(
        "--station-table",
        type=Path,
        default=SHIPPED_STATIONS,
        help="CSV with id,name,lat,lon,elevation,state (default: the shipped table)",
    )
    generate_parser.add_argument("--days", type=float, default=3.0, help="days to cover")
    generate_parser.add_argument("--seed", type=int, default=0, help="random seed")
    generate_parser.add_argument(
        "--interval", type=float, default=20.0, help="minutes between readings"
    )
    generate_parser.add_argument(
        "--start", type=_utc, default=DEFAULT_START, help="first reading, ISO-8601 (UTC)"
    )
    generate_parser.add_argument(
        "--storm",
        type=_storm,
        action="append",
        default=[],
        metavar="ID,START,HOURS[,INTENSITY]",
        help="place a storm (repeatable); intensity 1 (default) is a blizzard at its peak",
    )
    generate_parser.set_defaults(handler=_run_generate)


def _run_generate(args: argparse.Namespace) -> int:
    table = {station.id: station for station in load_stations(args.station_table)}
    ids = args.stations.split(",") if args.stations else list(table)
    missing = [ident for ident in ids if ident not in table]
    if missing:
        raise GeneratorError(f"unknown station(s) {', '.join(missing)} in {args.station_table}")
    stations = [table[ident] for ident in ids]
    paths = generate(
        args.out,
        stations,
        args.days,
        args.seed,
        args.storm,
        start=args.start,
        interval_minutes=args.interval,
    )
    for path in paths:
        print(path)
    return 0


def _utc(text: str) -> datetime:
    try:
        return datetime.fromtimestamp(float(iso_to_epoch(text)), DEFAULT_START.tzinfo)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _storm(text: str) -> Storm:
    parts = text.split(",")
    if len(parts) not in (3, 4):
        raise argparse.ArgumentTypeError(f"{text!r}: expected ID,START,HOURS[,INTENSITY]")
    try:
        hours = float(parts[2])
        intensity = float(parts[3]) if len(parts) == 4 else 1.0
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: HOURS and INTENSITY must be numbers") from None
    return Storm(parts[0], _utc(parts[1]), hours, intensity)
