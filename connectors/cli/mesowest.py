"""``reasoner mesowest generate|to-rdf|blizzard``: MesoWest sample data, its RDF form, and the
blizzard application (:mod:`connectors.mesowest.blizzard`).
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from connectors.events.times import iso_to_epoch
from connectors.mesowest.generator import (
    DEFAULT_INTERVAL_MINUTES,
    DEFAULT_START,
    GeneratorError,
    Storm,
    generate,
)
from connectors.mesowest.rules import BLIZZARD_RULES, DEFAULT_DEFINITION, DEFINITIONS
from connectors.mesowest.station import SHIPPED_STATIONS, load_stations
from connectors.rdf.writer import RDF_SYNTAXES
from connectors.spark.build import DEFAULT_NEIGHBOUR_KM, DEFAULT_RADIUS_KM
from reasoner.errors import ReasonerError
from reasoner.server.config import LOOPBACK


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
    group = subparsers.add_parser(
        "mesowest", help="MesoWest sensor data: generate sample data, detect blizzards"
    )
    commands = group.add_subparsers(dest="mesowest_command", required=True)
    _add_generate(commands)
    _add_to_rdf(commands)
    _add_blizzard(commands)


def _add_generate(commands: Any) -> None:
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
        help="CSV with id,name,lat,lon,elevation,state, elevation in feet (default: the shipped "
        "table)",
    )
    generate_parser.add_argument("--days", type=float, default=3.0, help="days to cover")
    generate_parser.add_argument("--seed", type=int, default=0, help="random seed")
    generate_parser.add_argument(
        "--interval",
        type=float,
        default=DEFAULT_INTERVAL_MINUTES,
        help="minutes between readings",
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


def _add_to_rdf(commands: Any) -> None:
    to_rdf = commands.add_parser(
        "to-rdf",
        help="convert MesoWest CSV exports to a SOSA observation stream (one graph a reading)",
        description="Write the readings of MesoWest CSV files, merged by time, as a stream of "
        "timestamped SOSA/SSN observation graphs (docs/rdf-streams.md).",
    )
    to_rdf.add_argument("csv", nargs="+", type=Path, help="MesoWest CSV exports")
    to_rdf.add_argument("--out", type=Path, help="output file (default: standard output)")
    to_rdf.add_argument(
        "--syntax", choices=RDF_SYNTAXES, default="trig", help="RDF syntax (default: %(default)s)"
    )
    to_rdf.set_defaults(handler=_run_to_rdf)


def _add_blizzard(commands: Any) -> None:
    blizzard = commands.add_parser(
        "blizzard",
        help="detect blizzards and blizzard areas in MesoWest files (seed 004)",
        description="Build the station knowledge with Spark (or reuse it), replay MesoWest "
        "files through rules/blizzard.event and write tables, detections, a map and a "
        "timeline. Without arguments: the shipped sample, the NOAA definition, out/blizzard.",
    )
    blizzard.add_argument(
        "--events",
        type=Path,
        action="append",
        metavar="FILE",
        help="a MesoWest CSV export (repeatable; default: the shipped sample)",
    )
    blizzard.add_argument(
        "--definition",
        choices=sorted(DEFINITIONS),
        default=DEFAULT_DEFINITION,
        help="blizzard conditions",
    )
    blizzard.add_argument("--out", type=Path, help="output folder (default: out/blizzard)")
    blizzard.add_argument("--store", type=Path, help="knowledge store (default: OUT/knowledge)")
    blizzard.add_argument(
        "--geonames",
        type=Path,
        action="append",
        metavar="FILE",
        help="GeoNames dump for places near stations (default: the shipped sample)",
    )
    blizzard.add_argument(
        "--radius-km", type=float, default=DEFAULT_RADIUS_KM, help="places within this (km)"
    )
    blizzard.add_argument(
        "--neighbour-km",
        type=float,
        default=DEFAULT_NEIGHBOUR_KM,
        help="stations of one area within this (km)",
    )
    blizzard.add_argument("--quiet", action="store_true", help="no progress bar")
    blizzard.add_argument(
        "--explain",
        action="store_true",
        help="write each detection's derivation into detections.jsonl (the readings, rules and "
        "knowledge facts behind it; 'reasoner explain' prints it) and onto the --serve endpoint",
    )
    serving = blizzard.add_argument_group("in the browser")
    serving.add_argument(
        "--serve",
        type=int,
        metavar="PORT",
        help="serve the knowledge and every detection (with its input events) while replaying: "
        "SPARQL at HOST:PORT/sparql, a query page at /, the detections on a map at /live "
        "(0: any free port; the addresses are printed on stderr)",
    )
    serving.add_argument(
        "--host",
        default=LOOPBACK,
        help=f"with --serve: the interface to listen on (default {LOOPBACK}, loopback only)",
    )
    serving.add_argument(
        "--keep-serving",
        action="store_true",
        help="with --serve: after the files are written, keep serving until SIGINT (Ctrl-C) or "
        "SIGTERM",
    )
    serving.add_argument(
        "--speed",
        type=float,
        metavar="X",
        help="replay X stream seconds per second (e.g. 3600: the sample's three days in 72 s), "
        "to watch the detections arrive on the --serve live view",
    )
    blizzard.set_defaults(handler=_run_blizzard)


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


def _run_blizzard(args: argparse.Namespace) -> int:
    from connectors.events.stopping import graceful_stop
    from connectors.mesowest.blizzard import BlizzardJob, run_blizzard
    from connectors.spark.session import stop_session

    defaults = BlizzardJob()
    job = BlizzardJob(
        events=tuple(args.events or defaults.events),
        definition=args.definition,
        out_dir=args.out or defaults.out_dir,
        store_dir=args.store,
        geonames=tuple(args.geonames or defaults.geonames),
        radius_km=args.radius_km,
        neighbour_km=args.neighbour_km,
        progress=not args.quiet,
        serve=args.serve,
        host=args.host,
        keep_serving=args.keep_serving,
        speed=args.speed,
        explain=args.explain,
    )
    if args.serve is None and (args.keep_serving or args.host != defaults.host):
        raise ReasonerError("--keep-serving and --host need --serve: nothing to serve")
    if args.speed is not None and not args.speed > 0:
        raise ReasonerError(f"--speed must be positive, not {args.speed}")
    # SIGINT/SIGTERM: during the build or the replay, nothing is written (one line, 130 or
    # 143); while the files are written, they are finished (then 130 or 143); while
    # --keep-serving serves, it is the normal end (0).
    with graceful_stop() as stop:
        result = run_blizzard(job, stop)
        if result.built_knowledge:
            stop_session()  # the build started Spark: stop its JVM now, not at interpreter exit
    print(result.tables)
    for kind, path in result.files.items():
        print(f"{kind}: {path}")
    if args.explain:
        rules = f"{BLIZZARD_RULES} {DEFINITIONS[args.definition]}"
        print(f"why: reasoner explain {result.files['detections']} --rules {rules}")
    return stop.status if stop.requested and not stop.served else 0


def _run_to_rdf(args: argparse.Namespace) -> int:
    from connectors.mesowest.reader import read_mesowest
    from connectors.mesowest.sosa import write_sosa

    readings = read_mesowest(*args.csv, on_reject=lambda r: print(f"skipped {r}", file=sys.stderr))
    if args.out is None:
        count = write_sosa(sys.stdout, readings, args.syntax)
    else:
        with open(args.out, "w", encoding="utf-8") as out:
            count = write_sosa(out, readings, args.syntax)
    print(f"{count} readings written as graphs", file=sys.stderr)
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
