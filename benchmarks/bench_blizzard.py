"""Blizzard patterns (seed 004, (39)-(42)): events/s per pattern level on generated readings.

Readings come from the MesoWest weather generator (connectors/mesowest/generator.py) for the
stations of data/mesowest/stations.csv, with storm systems placed at random (seeded): each
hits the stations within 300 km of a centre, one after another, so that warnings and
blizzard areas occur. The knowledge (stations, neighbours within 300 km, GeoNames places) is
built once with the Spark pipeline and cached (``--store``). Per blizzard definition, three
levels of rules/blizzard.event run on the same readings:

* ``settling/warning``: patterns (39) and (40);
* ``area``: and (41) and (42);
* ``area+places``: and the places of each area.

Measured in-process: the readings are generated before timing, detections are counted, not
written. Prints a table and writes JSON (``--json``). ``--quick`` is a smoke run.

    python benchmarks/bench_blizzard.py             # 32 stations, 60 days
    python benchmarks/bench_blizzard.py --quick     # 6 stations, 3 days
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
from collections import Counter
from datetime import timedelta
from pathlib import Path

from bench_stock_ticker import replay

from connectors.events.merge import merge_streams
from connectors.mesowest.generator import DEFAULT_START, Storm, simulate
from connectors.mesowest.knowledge import open_knowledge, prepare_knowledge
from connectors.mesowest.rules import DEFINITIONS
from connectors.mesowest.station import load_stations
from connectors.stations.table import Station
from reasoner.knowledge.builtins import geo_distance_km
from reasoner.language.ast import EventRule, Program
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event

ROOT = Path(__file__).resolve().parent.parent
#: Rule heads of each level (static rules and prefixes are always kept).
LEVELS = {
    "settling/warning": {"blizzardReading", "blizzardSettling", "blizzardWarning"},
    "area": {
        "blizzardReading",
        "blizzardSettling",
        "blizzardWarning",
        "warningNear",
        "areaSettling",
        "blizzardArea",
    },
}
LEVELS["area+places"] = LEVELS["area"] | {"blizzardPlace"}
QUICK_STATIONS = ("KSLC", "KOGD", "KPVU", "KEVW", "KJAC", "KGJT")


def storm_systems(stations: list[Station], days: float, seed: int) -> list[Storm]:
    """About one storm system every two days: it reaches the stations within 300 km of a
    random centre, 1 h later per 100 km, for 6-10 h, some strong enough for a blizzard."""
    rng = random.Random(seed)
    storms = []
    for _ in range(max(1, round(days / 2))):
        centre = rng.choice(stations)
        begin = DEFAULT_START + timedelta(hours=rng.uniform(0, max(0.0, days * 24 - 12)))
        intensity = rng.uniform(0.7, 1.4)
        for station in stations:
            km = geo_distance_km(centre.lat, centre.lon, station.lat, station.lon)
            if km <= 300:
                start = begin + timedelta(hours=km / 100)
                storms.append(Storm(station.id, start, rng.uniform(6, 10), intensity))
    return storms


def readings(stations: list[Station], days: float, seed: int) -> list[Event]:
    """Every station's readings at 20-minute steps, merged by time."""
    storms = storm_systems(stations, days, seed)
    return list(merge_streams(*(simulate(s, days, seed, storms) for s in stations)))


def level_program(program: Program, heads: set[str]) -> Program:
    """The program with only the event rules deriving ``heads``."""
    return Program(
        tuple(s for s in program.statements if not isinstance(s, EventRule) or s.head.name in heads)
    )


def run_once(program: Program, knowledge, events: list[Event]) -> tuple[float, Counter[str], int]:
    return replay(Engine(program, knowledge=knowledge), events)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument("--days", type=float, default=60.0, help="days of readings")
    parser.add_argument("--seed", type=int, default=2012)
    parser.add_argument("--runs", type=int, default=5, help="timed runs per setup (median)")
    parser.add_argument(
        "--store",
        type=Path,
        default=ROOT / "out" / "bench-blizzard" / "knowledge",
        help="knowledge store (built with Spark when missing or stale)",
    )
    parser.add_argument("--json", type=Path, default=ROOT / "out" / "bench_blizzard.json")
    args = parser.parse_args(argv)
    table = load_stations()
    stations = [s for s in table if s.id in QUICK_STATIONS] if args.quick else table
    days, runs = (3.0, 1) if args.quick else (args.days, args.runs)

    events = readings(stations, days, args.seed)
    prepare_knowledge(args.store, stations)
    print(f"{len(stations)} stations, {days:g} days, {len(events):,} readings")
    print(f"{'definition':>10} {'level':>16} {'events/s':>9} {'stored':>6}  detections")
    results = []
    for definition in DEFINITIONS:
        kb = open_knowledge(args.store, definition)
        programs = {level: level_program(kb.program, heads) for level, heads in LEVELS.items()}
        measured: dict[str, list[tuple[float, Counter[str], int]]] = {lv: [] for lv in LEVELS}
        for _ in range(runs):  # round robin: a busy moment of the machine hits every level
            for level, program in programs.items():
                measured[level].append(run_once(program, kb.current(), events))
        for level, runs_of_level in measured.items():
            rate = statistics.median(m[0] for m in runs_of_level)
            counts, stored = runs_of_level[0][1], runs_of_level[0][2]
            results.append(
                {
                    "definition": definition,
                    "level": level,
                    "stations": len(stations),
                    "days": days,
                    "readings": len(events),
                    "events_per_s": round(rate),
                    "stored_at_end": stored,
                    "detections": dict(sorted(counts.items())),
                }
            )
            shown = {k: v for k, v in sorted(counts.items()) if k != "blizzardReading"}
            detail = " ".join(f"{k}={v}" for k, v in shown.items())
            print(f"{definition:>10} {level:>16} {rate:>9,.0f} {stored:>6}  {detail}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
