"""Background knowledge for the blizzard rules: the stations of MesoWest files, built once.

:func:`prepare_knowledge` writes the stations named in the files' headers as a station table
(elevation in metres, as the pipeline reads it) next to STORE_DIR, then builds the Oxigraph
store with the Spark pipeline (:mod:`connectors.spark.build`: stations, GeoNames places within
``radius_km`` of each station, stations within ``neighbour_km`` of each other). When STORE_DIR
was already built from identical inputs and settings (the fingerprints in its build manifest),
it is reused without starting Spark; when some input changed, stages that did not change are
copied from the old store. Importing this module starts nothing.

:func:`open_knowledge` reads a built store's asserted triples (its ``parts/`` N-Triples, the
pipeline's documented output) into an in-memory :class:`KnowledgeBase` with RDFS entailment
and the blizzard rules' static predicates. It leaves the store folder untouched and unlocked,
so any number of readers (a job, a notebook, a test) can use it at once.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from connectors.mesowest.rules import blizzard_program
from connectors.shipped import shipped
from connectors.spark.build import (
    DEFAULT_NEIGHBOUR_KM,
    DEFAULT_RADIUS_KM,
    STAGES,
    BuildConfig,
    build_knowledge,
    fingerprints,
    read_manifest,
)
from connectors.stations.table import Station, write_station_csv
from reasoner.errors import KnowledgeError
from reasoner.knowledge.versions import KnowledgeBase

#: The GeoNames sample shipped with the repository (cities of UT, CO, WY, ID, MT).
SHIPPED_GEONAMES = shipped("data", "geonames", "US-mountain-cities15000.txt")
#: The weather ontology the station descriptions use (stations, sensors, observations).
SHIPPED_ONTOLOGY = shipped("ontologies", "weather.ttl")


@dataclass(frozen=True, slots=True)
class PreparedKnowledge:
    """A knowledge store ready to open: where it is and whether this call built it."""

    store_dir: Path
    built: bool


def write_station_table(stations: Iterable[Station], path: str | Path) -> Path:
    """Write stations as a pipeline station table (``id,name,lat,lon,elevation,state``).

    Args:
        stations: the stations.
        path: the CSV file to write.
    Returns:
        the path; the stations are sorted by id, elevations rounded to 0.1 m.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "s.csv")
    >>> _ = write_station_table([Station("KXYZ", "X", 40.0, -111.0, 304.8012, "UT")], path)
    >>> with open(path) as table:
    ...     table.read().splitlines()[1]
    'KXYZ,X,40.0,-111.0,304.8,UT'
    """
    rows = [
        replace(s, elevation=None if s.elevation is None else round(s.elevation, 1))
        for s in sorted(stations, key=lambda s: s.id)
    ]
    write_station_csv(rows, path)
    return Path(path)


def prepare_knowledge(
    store_dir: str | Path,
    stations: Sequence[Station],
    *,
    geonames: Sequence[str | Path] = (SHIPPED_GEONAMES,),
    ontologies: Sequence[str | Path] = (SHIPPED_ONTOLOGY,),
    radius_km: float = DEFAULT_RADIUS_KM,
    neighbour_km: float = DEFAULT_NEIGHBOUR_KM,
    log: Callable[[str], None] | None = None,
) -> PreparedKnowledge:
    """Build the blizzard knowledge for ``stations`` into STORE_DIR, or reuse it if current.

    Args:
        store_dir: the store folder; the station table is written beside it as
            ``<name>-stations.csv`` (the build manifest refers to it).
        stations: the stations of the replayed files.
        geonames: GeoNames dumps for the places near stations.
        ontologies: ontology files loaded with the stations (their RDFS closure is built too).
        radius_km: the located-near radius of places around stations.
        neighbour_km: the distance within which stations are neighbours (``er:nearStation``).
        log: receives progress lines (default: standard error).
    Returns:
        the store folder and whether it was (re)built; a reuse starts no Spark.
    Raises:
        KnowledgeError: no stations, or a failed build (the previous store stays).

    >>> prepare_knowledge("out/kb", [kslc, kogd]).built  # doctest: +SKIP
    True
    """
    if not stations:
        raise KnowledgeError("no stations to build knowledge for")
    target = Path(store_dir).absolute()
    target.parent.mkdir(parents=True, exist_ok=True)
    table = write_station_table(stations, target.with_name(f"{target.name}-stations.csv"))
    config = BuildConfig(
        ontologies=tuple(str(Path(o).absolute()) for o in ontologies),
        stations=(str(table),),
        geonames=tuple(str(Path(g).absolute()) for g in geonames),
        radius_km=radius_km,
        neighbour_km=neighbour_km,
    )
    say = log or _stderr
    previous = None
    if target.is_dir():
        try:
            previous = read_manifest(target)
        except KnowledgeError:
            raise KnowledgeError(f"{target} exists but is no knowledge store: remove it") from None
        if previous.get("fingerprints") == fingerprints(config):
            say(f"reusing {target} (built from the same inputs)")
            return PreparedKnowledge(target, built=False)
    build_knowledge(target, config, log=say, previous=previous)
    return PreparedKnowledge(target, built=True)


def open_knowledge(store_dir: str | Path, definition: str = "noaa") -> KnowledgeBase:
    """The knowledge the blizzard rules ask, from a store built by :func:`prepare_knowledge`
    (or ``reasoner knowledge build``).

    Args:
        store_dir: the store folder.
        definition: the blizzard definition whose static rules are evaluated with it.
    Returns:
        an in-memory knowledge base; ``kb.current()`` is what the engine reads.
    Raises:
        KnowledgeError: the folder holds no built store.

    >>> kb = open_knowledge("out/blizzard/knowledge")  # doctest: +SKIP
    """
    parts = Path(store_dir) / "parts"
    # The inferred part is left out: RDFS entailment recomputes it into the inferred graph.
    folders = [parts / stage.name for stage in STAGES if not stage.inferred]
    if not any(folder.is_dir() for folder in folders):
        raise KnowledgeError(f"{store_dir}: no built knowledge store (no parts/ folders)")
    return KnowledgeBase(
        [f for f in folders if f.is_dir()], entailment="rdfs", program=blizzard_program(definition)
    )


def _stderr(message: str) -> None:
    print(f"[knowledge] {message}", file=sys.stderr, flush=True)
