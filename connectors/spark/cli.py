"""The ``reasoner knowledge build`` and ``reasoner knowledge refresh`` commands.

Only argument parsing lives here; the work is in :mod:`connectors.spark.build`, imported when
a command runs (so that building the CLI's parser never imports pyspark).
"""

from __future__ import annotations

import argparse
from typing import Any


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
    knowledge = subparsers.add_parser("knowledge", help="build background knowledge with Spark")
    commands = knowledge.add_subparsers(dest="knowledge_command", required=True)

    build = commands.add_parser("build", help="build a knowledge store from files")
    build.add_argument("--out", required=True, metavar="STORE_DIR", help="the store folder")
    build.add_argument("--ontology", action="append", default=[], metavar="PATH")
    build.add_argument("--stations", action="append", default=[], metavar="FILE")
    build.add_argument("--geonames", action="append", default=[], metavar="FILE")
    build.add_argument("--radius-km", type=float, default=20.0, help="located-near radius")
    build.add_argument(
        "--neighbour-km", type=float, default=300.0, help="station neighbourhood distance"
    )
    build.add_argument("--entailment", choices=("rdfs", "none"), default="rdfs")
    build.add_argument("--master", help="Spark master URL (default local[*])")
    build.add_argument("--memory", help="Spark driver memory, e.g. 4g")
    build.add_argument(
        "--packages", action="append", default=[], help="extra Spark packages (Maven)"
    )
    build.set_defaults(handler=_build)

    refresh = commands.add_parser("refresh", help="rebuild what changed, then swap atomically")
    refresh.add_argument("store_dir", metavar="STORE_DIR")
    refresh.set_defaults(handler=_refresh)


def _build(args: argparse.Namespace) -> int:
    from connectors.spark.build import BuildConfig, build_knowledge

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
    )
    report = build_knowledge(args.out, config)
    total = sum(s.triples for s in report.stages)
    print(f"built {report.store_dir} (version {report.version}, {total:,} triples)")
    return 0


def _refresh(args: argparse.Namespace) -> int:
    from connectors.spark.build import refresh_knowledge

    report = refresh_knowledge(args.store_dir)
    state = "rebuilt" if report.changed else "unchanged"
    print(f"{state} {report.store_dir} (version {report.version})")
    return 0
