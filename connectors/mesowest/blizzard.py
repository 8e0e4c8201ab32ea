"""The blizzard application end to end (seed 004, "Evaluation results").

:func:`run_blizzard` builds (or reuses) the knowledge for the stations of some MesoWest files
with the Spark pipeline, replays the files through ``rules/blizzard.event`` with the chosen
blizzard definition, and writes to the output folder:

* ``tables.txt``: detections per station, blizzard areas, places affected (seed 004's
  Tables 2-4);
* ``detections.jsonl``: every warning, area and place detection (``reasoner run``'s format;
  with ``explain``, each with its derivation);
* ``map.png`` and ``timeline.png``: see :mod:`connectors.mesowest.plots`.

Defaults replay the shipped sample (``data/mesowest/sample``: a blizzard over KOGD, KSLC and
KEVW on 2021-01-11) under the NOAA definition into ``out/blizzard`` in the current directory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from connectors.events.jsonl import JsonLinesWriter
from connectors.events.serving import detections_endpoint
from connectors.events.stopping import GracefulStop
from connectors.events.times import TimeStyle
from connectors.mesowest.knowledge import SHIPPED_GEONAMES, open_knowledge, prepare_knowledge
from connectors.mesowest.plots import map_figure, timeline_figure
from connectors.mesowest.reader import MesoWestFile
from connectors.mesowest.replay import Replay, replay
from connectors.mesowest.rules import DEFAULT_DEFINITION, blizzard_program
from connectors.mesowest.tables import PlaceRow, place_rows, report
from connectors.shipped import shipped
from connectors.spark.build import DEFAULT_NEIGHBOUR_KM, DEFAULT_RADIUS_KM
from connectors.stations.table import Station
from reasoner.errors import ReasonerError
from reasoner.server.config import LOOPBACK

#: The shipped sample: six stations, three days, one blizzard on 2021-01-11.
SAMPLE = shipped("data", "mesowest", "sample")
#: Where results go by default: ``out/blizzard`` in the current directory.
DEFAULT_OUT = Path("out", "blizzard")
#: What ``detections.jsonl`` keeps (settlings are only counted, in the tables).
WRITTEN = ("blizzardWarning", "blizzardArea", "blizzardPlace")


@dataclass(frozen=True, slots=True)
class BlizzardJob:
    """What to replay and where to write; every field has a working default.

    ``store_dir`` defaults to ``<out_dir>/knowledge``; a store built from the same stations,
    GeoNames files and radii is reused without Spark. ``serve`` is a port (0: any free one)
    on ``host`` (loopback by default) where the knowledge and every detection, with the input
    events it was built from, are served while replaying (SPARQL endpoint, query page and
    ``/live`` page, as ``reasoner run --serve``); ``keep_serving`` keeps serving after the
    files are written, until Ctrl-C; ``speed`` replays that many stream seconds per second
    (to watch it). ``explain`` writes each detection's derivation into ``detections.jsonl``
    (``"why"``; ``reasoner explain`` prints it) and, with ``serve``, onto the endpoint (PROV-O).
    """

    events: tuple[Path, ...] = field(default_factory=lambda: tuple(sorted(SAMPLE.glob("*.csv"))))
    definition: str = DEFAULT_DEFINITION
    out_dir: Path = DEFAULT_OUT
    store_dir: Path | None = None
    geonames: tuple[Path, ...] = (SHIPPED_GEONAMES,)
    radius_km: float = DEFAULT_RADIUS_KM
    neighbour_km: float = DEFAULT_NEIGHBOUR_KM
    progress: bool = True
    serve: int | None = None
    host: str = LOOPBACK
    keep_serving: bool = False
    speed: float | None = None
    explain: bool = False


@dataclass(frozen=True, slots=True)
class BlizzardResult:
    """A finished job: the replay, the tables as text, the affected places (with positions),
    the files written, and whether the knowledge was built (False: reused)."""

    replay: Replay
    tables: str
    places: list[PlaceRow]
    files: dict[str, Path]
    built_knowledge: bool


def stations_of(paths: tuple[Path, ...]) -> list[Station]:
    """The stations named in the headers of MesoWest files."""
    return [MesoWestFile(path).station for path in paths]


def run_blizzard(
    job: BlizzardJob | None = None, stop: GracefulStop | None = None
) -> BlizzardResult:
    """Run the blizzard application: knowledge, replay, tables, figures.

    Args:
        job: the settings (default: the shipped sample, NOAA definition, ``out/blizzard``).
        stop: the command's :class:`GracefulStop`: a stop signal during the knowledge build
            or the replay raises ``Interrupted`` and writes nothing (the tables and figures
            are of the whole replay); once the files are being written they are finished,
            and ``keep_serving`` is skipped.
    Returns:
        the :class:`BlizzardResult`; the tables are also written to ``tables.txt``.
    Raises:
        ReasonerError: bad input files, a failed knowledge build, an unknown definition.

    >>> print(run_blizzard().tables)  # doctest: +SKIP
    """
    job = job or BlizzardJob()
    if not job.events:
        raise ReasonerError("no MesoWest files to replay")
    blizzard_program(job.definition)  # an unknown definition fails before any build
    store_dir = job.store_dir or job.out_dir / "knowledge"
    prepared = prepare_knowledge(
        store_dir,
        stations_of(job.events),
        geonames=job.geonames,
        radius_km=job.radius_km,
        neighbour_km=job.neighbour_km,
    )
    if stop is not None and prepared.built:
        stop.install()  # (a build starts Spark, whose context sets a SIGINT handler of its own)
    kb = open_knowledge(prepared.store_dir, job.definition)
    knowledge = kb.current()
    style = TimeStyle(iso=True)
    serving = detections_endpoint(
        job.serve, kb, keep_serving=job.keep_serving, style=style, host=job.host, stop=stop
    )
    with serving as publish:
        result = replay(
            kb.program,
            job.events,
            knowledge=knowledge,
            progress=job.progress,
            provenance=job.serve is not None,
            explain=job.explain,
            publish=publish,
            speed=job.speed,
        )
        if stop is not None:
            stop.waiting = False  # the files, once begun, are written whole
        tables = report(result)
        places = place_rows(result, knowledge)
        files = _write(job.out_dir, result, tables, places, style)
    return BlizzardResult(result, tables, places, files, prepared.built)


def _write(
    out: Path, result: Replay, tables: str, places: list[PlaceRow], style: TimeStyle
) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "tables": out / "tables.txt",
        "detections": out / "detections.jsonl",
        "map": out / "map.png",
        "timeline": out / "timeline.png",
    }
    files["tables"].write_text(tables, encoding="utf-8")
    with files["detections"].open("w", encoding="utf-8") as stream:
        JsonLinesWriter(stream, style).write_all(d for d in result.detections if d.name in WRITTEN)
    map_figure(result, places=places).savefig(files["map"], dpi=120)
    timeline_figure(result).savefig(files["timeline"], dpi=110)
    return files
