"""Build and refresh a knowledge STORE_DIR: jobs 1-4 on Spark, then job 5, the bulk load.

STORE_DIR holds an Oxigraph store (``pyoxigraph.Store(STORE_DIR)`` opens it) plus
``parts/<stage>/*.nt`` (each stage's output, reused by refreshes) and ``reasoner-build.json``
(the build's settings, input checksums, stage fingerprints and version). Asserted triples go
to the default graph, RDFS-inferred ones to ``reasoner.knowledge.store.INFERRED_GRAPH``.

A build always happens in a sibling folder and replaces STORE_DIR only when complete, so a
failed job leaves the served knowledge untouched. A refresh re-reads the settings, recomputes
only stages whose inputs changed (by SHA-256 of the files), and starts no Spark session when
nothing changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from connectors.spark.geo import MAX_RADIUS_KM
from connectors.spark.output import count_lines, swap_into_place, write_ntriples
from reasoner.errors import KnowledgeError
from reasoner.modes import Regime

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

MANIFEST = "reasoner-build.json"


#: The default "located near" radius, km: GeoNames places this close to a station.
DEFAULT_RADIUS_KM = 20.0
#: The default neighbourhood distance, km (seed 004's blizzard area).
DEFAULT_NEIGHBOUR_KM = 300.0
#: The entailment regimes the build materialises (OWL 2 RL needs the in-process reasoner).
ENTAILMENTS: tuple[Regime, ...] = ("none", "rdfs")


@dataclass(frozen=True, slots=True)
class BuildConfig:
    """What to build knowledge from.

    ``entailment`` is ``"rdfs"`` (materialise the RDFS closure) or ``"none"``.
    ``master``, ``memory``, ``packages`` and ``jars`` configure Spark (see ``session``).
    """

    ontologies: tuple[str, ...] = ()
    stations: tuple[str, ...] = ()
    geonames: tuple[str, ...] = ()
    radius_km: float = DEFAULT_RADIUS_KM
    neighbour_km: float = DEFAULT_NEIGHBOUR_KM
    entailment: Regime = "rdfs"
    master: str | None = None
    memory: str | None = None
    packages: tuple[str, ...] = ()
    jars: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StageReport:
    """How one stage went: triples written, seconds spent, whether reused from before."""

    name: str
    triples: int
    seconds: float
    reused: bool


@dataclass(slots=True)
class BuildReport:
    """The outcome of a build or refresh."""

    store_dir: Path
    version: int
    changed: bool
    stages: list[StageReport] = field(default_factory=list)
    load_seconds: float = 0.0


def _log(message: str) -> None:
    print(f"[knowledge] {message}", file=sys.stderr, flush=True)


def file_checksum(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes.

    Args:
        path: the file.
    Returns:
        the hex digest.
    Raises:
        KnowledgeError: when the file cannot be read.

    >>> len(file_checksum("pyproject.toml"))  # doctest: +SKIP
    64
    """
    digest = hashlib.sha256()
    try:
        with Path(path).open("rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
    except OSError as e:
        raise KnowledgeError(f"{path}: cannot read input: {e}") from e
    return digest.hexdigest()


def fingerprints(config: BuildConfig) -> dict[str, str]:
    """A digest per stage of everything the stage depends on.

    Args:
        config: the build settings (input files are read and hashed).
    Returns:
        stage name -> hex digest; equal digests mean the stage's output can be reused.

    >>> sorted(fingerprints(BuildConfig()))[0]
    'features'
    """
    values: dict[str, object] = {
        "ontologies": [file_checksum(p) for p in config.ontologies],
        "stations": [(Path(p).suffix, file_checksum(p)) for p in config.stations],
        "geonames": [(Path(p).suffix, file_checksum(p)) for p in config.geonames],
        "radius_km": config.radius_km,
        "neighbour_km": config.neighbour_km,
        "entailment": config.entailment,
    }
    return {
        stage.name: hashlib.sha256(
            json.dumps([values[k] for k in stage.depends], sort_keys=True).encode()
        ).hexdigest()
        for stage in STAGES
    }


def read_manifest(store_dir: str | os.PathLike[str]) -> dict[str, object]:
    """The manifest of a built STORE_DIR.

    Args:
        store_dir: the folder.
    Returns:
        the parsed ``reasoner-build.json``.
    Raises:
        KnowledgeError: when the folder was not built by ``knowledge build``.

    >>> read_manifest("kb")["version"]  # doctest: +SKIP
    1
    """
    file = Path(store_dir) / MANIFEST
    try:
        data = json.loads(file.read_text())
    except (OSError, ValueError) as e:
        raise KnowledgeError(f"{store_dir}: not a knowledge store built here ({e})") from e
    if not isinstance(data, dict):
        raise KnowledgeError(f"{file}: malformed manifest")
    return data


class _Jobs:
    """The stages' Spark jobs, writing into a staging folder; Spark starts on first use."""

    def __init__(self, config: BuildConfig, staging: Path, log: Callable[[str], None]) -> None:
        self.config = config
        self.staging = staging
        self.log = log
        self._spark: SparkSession | None = None
        self._stations: DataFrame | None = None
        self._features: DataFrame | None = None

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            from connectors.spark.session import get_session

            self.log("starting Spark")
            started = time.perf_counter()
            config = self.config
            packages, jars = list(config.packages) or None, list(config.jars) or None
            self._spark = get_session(config.master, config.memory, packages, jars)
            # A first job pays the JVM's warm-up, which would otherwise count as the first
            # stage's time.
            self._spark.range(1).count()
            self.log(
                f"Spark {self._spark.version} on {self._spark.sparkContext.master} started in "
                f"{time.perf_counter() - started:.1f} s"
            )
        return self._spark

    def stations(self) -> DataFrame:
        from connectors.spark.readers import load_stations, stations_frame

        if self._stations is None:
            rows = load_stations(self.config.stations)
            self._stations = stations_frame(self.spark, rows).cache()
        return self._stations

    def features(self) -> DataFrame:
        from connectors.spark.readers import read_geonames

        if self._features is None:
            work = self.staging / "work"
            self._features = read_geonames(self.spark, self.config.geonames, work).cache()
        return self._features

    def ontologies(self) -> DataFrame:
        from connectors.spark.readers import rdf_triples, triples_frame

        found = [t for p in self.config.ontologies for t in rdf_triples(p)]
        return triples_frame(self.spark, found)

    def station_triples(self) -> DataFrame:
        from connectors.spark import describe
        from connectors.spark.readers import RDF_SUFFIXES, rdf_triples, triples_frame

        raw = [
            t
            for p in self.config.stations
            if Path(p).suffix.lower() in RDF_SUFFIXES
            for t in rdf_triples(p)
        ]
        described = describe.station_triples(self.stations())
        return described.unionByName(triples_frame(self.spark, raw)) if raw else described

    def feature_triples(self) -> DataFrame:
        from connectors.spark import describe

        return describe.feature_triples(self.features())

    def near(self) -> DataFrame:
        from connectors.spark import near

        links = near.located_near(self.stations(), self.features(), self.config.radius_km)
        return near.near_triples(links)

    def neighbourhoods(self) -> DataFrame:
        from connectors.spark import neighbourhoods

        pairs = neighbourhoods.station_pairs(self.stations(), self.config.neighbour_km)
        pairs = pairs.localCheckpoint()
        if neighbourhoods.uses_graphframes(self.spark):
            self.log("  connected components: GraphFrames")
        else:
            self.log("  connected components: DataFrames (no GraphFrames jar on the classpath)")
        hoods = neighbourhoods.connected_components(self.stations().select("id"), pairs)
        return neighbourhoods.neighbourhood_triples(pairs, hoods)

    def inferred(self) -> DataFrame:
        from connectors.spark import rdfs
        from connectors.spark.readers import read_ntriples

        asserted = [str(self.staging / "parts" / s.name) for s in STAGES if not s.inferred]
        return rdfs.materialise_rdfs(read_ntriples(self.spark, asserted))


@dataclass(frozen=True, slots=True)
class BuildStage:
    """One build stage: adding a stage is adding one record to :data:`STAGES`.

    Attributes:
        name: its folder under ``parts/`` and its name in the manifest.
        what: what it computes, for the progress line (formatted with the settings).
        depends: the settings and inputs (:class:`BuildConfig` fields) whose change reruns it.
        job: computes its triples (Spark starts on first use).
        inferred: its triples are the entailment of all the others': it runs last, is
            skipped with ``entailment none`` and is loaded into the inferred graph.
    """

    name: str
    what: str
    depends: tuple[str, ...]
    job: Callable[[_Jobs], DataFrame]
    inferred: bool = False


#: The stages in run order.
STAGES: tuple[BuildStage, ...] = (
    BuildStage("ontologies", "ontology files", ("ontologies",), _Jobs.ontologies),
    BuildStage("stations", "station descriptions", ("stations",), _Jobs.station_triples),
    BuildStage("features", "GeoNames features", ("geonames",), _Jobs.feature_triples),
    BuildStage(
        "near",
        "stations within {radius_km:g} km of GeoNames features",
        ("stations", "geonames", "radius_km"),
        _Jobs.near,
    ),
    BuildStage(
        "neighbourhoods",
        "stations within {neighbour_km:g} km of each other, connected components",
        ("stations", "neighbour_km"),
        _Jobs.neighbourhoods,
    ),
    BuildStage(
        "inferred",
        "RDFS closure",
        ("ontologies", "stations", "geonames", "radius_km", "neighbour_km", "entailment"),
        _Jobs.inferred,
        inferred=True,
    ),
)


def build_knowledge(
    store_dir: str | os.PathLike[str],
    config: BuildConfig,
    *,
    log: Callable[[str], None] = _log,
    previous: dict[str, object] | None = None,
) -> BuildReport:
    """Build knowledge into STORE_DIR (replacing it only once the build succeeded).

    Args:
        store_dir: the target folder.
        config: inputs and settings.
        log: receives one progress line per stage.
        previous: the manifest of the store being refreshed; stages whose fingerprint is
            unchanged reuse its parts.
    Returns:
        the :class:`BuildReport`.
    Raises:
        KnowledgeError: for bad inputs or a failed job; STORE_DIR is then unchanged.

    >>> build_knowledge("kb", BuildConfig(stations=("data/stations/us-mountain-stations.csv",)))
    ... # doctest: +SKIP
    """
    _check_settings(config)
    target = Path(store_dir).absolute()
    prints = fingerprints(config)
    recorded = previous.get("fingerprints", {}) if previous else {}
    old_prints = recorded if isinstance(recorded, dict) else {}
    staging = target.with_name(f".{target.name}.building-{os.getpid()}")
    if staging.exists():
        shutil.rmtree(staging)
    (staging / "parts").mkdir(parents=True)
    version = int(str(previous.get("version", 0))) + 1 if previous else 1
    report = BuildReport(target, version, changed=True)
    jobs = _Jobs(config, staging, log)
    try:
        if any(old_prints.get(stage.name) != prints[stage.name] for stage in STAGES):
            jobs.spark  # noqa: B018 - start Spark before timing the first stage
        for number, stage in enumerate(STAGES, 1):
            step = f"[{number}/{len(STAGES)}] {stage.name}"
            if stage.inferred and config.entailment == "none":
                log(f"{step}: skipped (entailment none)")
                continue
            reuse = old_prints.get(stage.name) == prints[stage.name]
            report.stages.append(_run(stage, jobs, target if reuse else None, step))
        report.load_seconds = _load(staging, sum(s.triples for s in report.stages), log)
        shutil.rmtree(staging / "work", ignore_errors=True)
        manifest = {
            "version": version,
            "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "config": asdict(config),
            "fingerprints": prints,
            "stages": [asdict(s) for s in report.stages],
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        swap_into_place(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return report


def _check_settings(config: BuildConfig) -> None:
    if config.entailment not in ENTAILMENTS:
        expected = " or ".join(ENTAILMENTS)
        raise KnowledgeError(f"unknown entailment {config.entailment!r} (expected {expected})")
    for option, km in (("radius-km", config.radius_km), ("neighbour-km", config.neighbour_km)):
        if not 0 < km <= MAX_RADIUS_KM:
            raise KnowledgeError(f"--{option} {km:g} is not in (0, {MAX_RADIUS_KM:g}]")


def _run(stage: BuildStage, jobs: _Jobs, previous: Path | None, step: str) -> StageReport:
    """Run one stage into the staging folder, or copy its part from the ``previous`` store
    (when its inputs are unchanged and the part is there)."""
    folder = jobs.staging / "parts" / stage.name
    started = time.perf_counter()
    old_folder = None if previous is None else previous / "parts" / stage.name
    if old_folder is not None and old_folder.is_dir():
        shutil.copytree(old_folder, folder)
        count = count_lines(folder)
        jobs.log(f"{step}: {count:,} triples reused (inputs unchanged)")
        return StageReport(stage.name, count, time.perf_counter() - started, True)
    jobs.log(f"{step}: {stage.what.format(**asdict(jobs.config))} ...")
    count = _write(stage.job(jobs), folder)
    seconds = time.perf_counter() - started
    jobs.log(f"{step}: {count:,} triples in {seconds:.1f} s{_rate(count, seconds)}")
    return StageReport(stage.name, count, seconds, False)


def _load(staging: Path, total: int, log: Callable[[str], None]) -> float:
    """Bulk-load every stage's part into the Oxigraph store in ``staging``; the seconds taken."""
    from reasoner.knowledge.store import INFERRED_GRAPH, Store

    log(f"load: {total:,} triples into Oxigraph ...")
    started = time.perf_counter()
    store = Store(staging, create=True)
    for stage in STAGES:
        folder = staging / "parts" / stage.name
        if folder.is_dir() and any(folder.glob("*.nt")):
            graph = INFERRED_GRAPH if stage.inferred else None
            store.bulk_load(folder, "ntriples", graph=graph)
    store.flush()
    del store
    seconds = time.perf_counter() - started
    log(f"load: {total:,} triples in {seconds:.1f} s{_rate(total, seconds)}")
    return seconds


def _rate(count: int, seconds: float) -> str:
    return f" ({count / seconds:,.0f} triples/s)" if count and seconds > 0 else ""


def _write(triples: DataFrame, folder: Path) -> int:
    try:
        return write_ntriples(triples, folder)
    except KnowledgeError:
        raise
    except Exception as e:  # Spark surfaces job failures as py4j / pyspark errors
        raise KnowledgeError(f"Spark job writing {folder.name} failed: {e}") from e


def refresh_knowledge(
    store_dir: str | os.PathLike[str], *, log: Callable[[str], None] = _log
) -> BuildReport:
    """Rebuild what changed since STORE_DIR was built, with the same settings.

    Args:
        store_dir: a folder made by :func:`build_knowledge`.
        log: receives progress lines.
    Returns:
        the report; ``changed`` is False (and no Spark started) when no input changed.
    Raises:
        KnowledgeError: for a folder not built here or a failed job (the store is unchanged).

    >>> refresh_knowledge("kb").changed  # doctest: +SKIP
    False
    """
    manifest = read_manifest(store_dir)
    raw = manifest.get("config")
    if not isinstance(raw, dict):
        raise KnowledgeError(f"{store_dir}/{MANIFEST}: no build settings")
    settings: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
    try:
        config = BuildConfig(**settings)
    except TypeError as e:
        raise KnowledgeError(f"{store_dir}/{MANIFEST}: unknown build settings: {e}") from e
    if fingerprints(config) == manifest.get("fingerprints"):
        log("up to date: no input changed")
        version = int(str(manifest.get("version", 1)))
        return BuildReport(Path(store_dir).absolute(), version, changed=False)
    return build_knowledge(store_dir, config, log=log, previous=manifest)
