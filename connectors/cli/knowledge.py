"""``reasoner knowledge build`` and ``reasoner knowledge refresh``: the knowledge store, with Spark.

The work is in :mod:`connectors.spark.build`, which imports pyspark only when a job runs.
"""

from __future__ import annotations

import argparse
from typing import Any

from connectors.cli.options import add_master_option
from connectors.spark.build import (
    DEFAULT_NEIGHBOUR_KM,
    DEFAULT_RADIUS_KM,
    ENTAILMENTS,
    BuildConfig,
    build_knowledge,
    refresh_knowledge,
)

_BUILD_DESCRIPTION = """\
Build a knowledge store with Spark: station and GeoNames place descriptions, stations
located near places, station neighbourhoods and the RDFS closure, bulk-loaded into an
Oxigraph store (docs/pipeline.md lists the triples). STORE_DIR is replaced only when every
stage succeeded. Progress goes to stderr, one line as each stage starts and ends.

example:
  reasoner knowledge build --out kb --stations data/stations/us-mountain-stations.csv \\
      --geonames data/geonames/US-mountain-cities15000.txt
"""


def register(subparsers: Any) -> None:
    """Add ``knowledge build`` and ``knowledge refresh`` to the CLI's subcommands.

    Args:
        subparsers: the object ``ArgumentParser.add_subparsers()`` returned; each command
            sets ``handler`` to a function taking the parsed namespace and returning an exit code.

    >>> parser = argparse.ArgumentParser()
    >>> register(parser.add_subparsers())
    >>> parser.parse_args(["knowledge", "refresh", "kb"]).store_dir
    'kb'
    """
    knowledge = subparsers.add_parser(
        "knowledge",
        help="build background knowledge with Spark",
        description="Build or refresh an Oxigraph knowledge store with Spark jobs "
        "(docs/pipeline.md).",
    )
    commands = knowledge.add_subparsers(dest="knowledge_command", required=True)
    _add_build(commands)
    _add_refresh(commands)


def _add_build(commands: Any) -> None:
    build = commands.add_parser(
        "build",
        help="build a knowledge store from files",
        description=_BUILD_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    build.add_argument(
        "--out", required=True, metavar="STORE_DIR", help="the store folder to create or replace"
    )
    inputs = build.add_argument_group("inputs (each repeatable)")
    inputs.add_argument(
        "--ontology", action="append", default=[], metavar="PATH", help="an RDF file (any syntax)"
    )
    inputs.add_argument(
        "--stations",
        action="append",
        default=[],
        metavar="FILE",
        help="a station table (CSV id,name,lat,lon,elevation,state) or Linked Sensor Data RDF",
    )
    inputs.add_argument(
        "--geonames",
        action="append",
        default=[],
        metavar="FILE",
        help="a GeoNames dump (19-column TSV; plain, .gz or .zip)",
    )
    settings = build.add_argument_group("knowledge")
    settings.add_argument(
        "--radius-km",
        type=float,
        default=DEFAULT_RADIUS_KM,
        metavar="KM",
        help="link stations to the GeoNames places within KM (er:locatedNear; "
        f"default {DEFAULT_RADIUS_KM:g})",
    )
    settings.add_argument(
        "--neighbour-km",
        type=float,
        default=DEFAULT_NEIGHBOUR_KM,
        metavar="KM",
        help="stations within KM are neighbours (er:nearStation, er:neighbourhood; "
        f"default {DEFAULT_NEIGHBOUR_KM:g})",
    )
    settings.add_argument(
        "--entailment",
        choices=ENTAILMENTS,
        default="rdfs",
        help="materialise the RDFS closure into the inferred graph (default), or not",
    )
    spark = build.add_argument_group("Spark")
    add_master_option(spark)
    spark.add_argument(
        "--memory",
        metavar="SIZE",
        help="driver memory, e.g. 4g (default: $REASONER_SPARK_MEMORY or 2g)",
    )
    spark.add_argument(
        "--packages",
        action="append",
        default=[],
        metavar="COORDS",
        help="a Maven package for Spark to fetch, e.g. GraphFrames' (repeatable)",
    )
    spark.add_argument(
        "--jars",
        action="append",
        default=[],
        metavar="JAR",
        help="a local jar for Spark's classpath, e.g. GraphFrames' (repeatable)",
    )
    build.set_defaults(handler=_build)


def _add_refresh(commands: Any) -> None:
    refresh = commands.add_parser(
        "refresh",
        help="rebuild what changed, then swap atomically",
        description="Re-hash the inputs STORE_DIR was built from; recompute only the stages "
        "they feed (with the same settings) and swap the new store in. Starts no Spark when "
        "nothing changed.",
    )
    refresh.add_argument("store_dir", metavar="STORE_DIR", help="a folder made by knowledge build")
    refresh.set_defaults(handler=_refresh)


def _build(args: argparse.Namespace) -> int:
    config = BuildConfig(
        ontologies=tuple(args.ontology),
        stations=tuple(args.stations),
        geonames=tuple(args.geonames),
        radius_km=args.radius_km,
        neighbour_km=args.neighbour_km,
        entailment=args.entailment,
        master=args.master,
        memory=args.memory,
        packages=tuple(args.packages),
        jars=tuple(args.jars),
    )
    report = build_knowledge(args.out, config)
    total = sum(s.triples for s in report.stages)
    print(f"built {report.store_dir} (version {report.version}, {total:,} triples)")
    return 0


def _refresh(args: argparse.Namespace) -> int:
    report = refresh_knowledge(args.store_dir)
    state = "rebuilt" if report.changed else "unchanged"
    print(f"{state} {report.store_dir} (version {report.version})")
    return 0
