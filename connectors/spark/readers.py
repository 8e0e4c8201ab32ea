"""Spark readers: GeoNames dumps, station tables and RDF files as DataFrames.

GeoNames dumps can be millions of rows and are read by Spark itself (plain and ``.gz``
natively; a ``.zip`` is first unpacked into a work folder, as Spark has no zip codec).
Station tables and RDF files (ontologies, Linked-Sensor-Data stations) are small: they are
parsed in the driver by the Spark-free readers, which own validation, and handed to Spark.
"""

from __future__ import annotations

import os
import shutil
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rdflib import Graph
from rdflib.util import guess_format

from connectors.geonames.dump import COLUMNS, open_dump
from connectors.spark.terms import TRIPLE_COLUMNS, term
from connectors.stations.lsd import read_station_rdf
from connectors.stations.table import Station, check_unique, read_station_csv
from reasoner.errors import KnowledgeError

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

#: Station files ending in one of these are RDF (Linked Sensor Data style); others are CSV.
RDF_SUFFIXES = frozenset({".nt", ".ttl", ".rdf", ".xml", ".owl", ".n3", ".jsonld", ".trig", ".nq"})

STATION_SCHEMA = "id string, name string, lat double, lon double, elevation double, state string"
TRIPLE_SCHEMA = "s string, p string, o string"


def _plain_dump(path: Path, workdir: Path) -> Path:
    """A path Spark can read: ``.zip`` members are unpacked into ``workdir``."""
    if path.suffix.lower() != ".zip":
        if not path.is_file():
            raise KnowledgeError(f"{path}: no such GeoNames file")
        return path
    target = workdir / (path.stem + ".txt")
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        with open_dump(path) as text, target.open("w", encoding="utf-8", newline="\n") as out:
            shutil.copyfileobj(text, out)
    except (OSError, zipfile.BadZipFile) as e:
        raise KnowledgeError(f"{path}: cannot unpack GeoNames archive: {e}") from e
    return target


def read_geonames(
    spark: SparkSession, paths: Sequence[str | os.PathLike[str]], workdir: str | os.PathLike[str]
) -> DataFrame:
    """Read GeoNames dumps into one DataFrame, checking every row.

    Args:
        spark: the session.
        paths: dump files (plain, ``.gz`` or ``.zip``).
        workdir: a folder for unpacked zip members.
    Returns:
        columns ``geonameid`` (long), ``name``, ``latitude``/``longitude`` (double),
        ``feature_class``, ``feature_code``, ``country_code``, ``admin1_code``,
        ``population`` (long), ``elevation`` (int, null when empty), ``modification_date``.
    Raises:
        KnowledgeError: naming the file and the content of the first malformed row.

    >>> read_geonames(spark, ["data/geonames/US-mountain-cities15000.txt"], "/tmp/w").count()
    ... # doctest: +SKIP
    123
    """
    from pyspark.sql import functions as F

    if not paths:
        return spark.createDataFrame([], _GEONAMES_SCHEMA)
    files = [str(_plain_dump(Path(p), Path(workdir))) for p in paths]
    raw = spark.read.text(files).select(
        F.split("value", "\t", -1).alias("c"), F.input_file_name().alias("file"), "value"
    )
    raw = raw.filter(F.length(F.trim("value")) > 0)

    def col(name: str) -> Column:
        # get() gives null past the end of a short row (indexing fails under ANSI mode).
        return F.get(F.col("c"), COLUMNS.index(name))

    typed = raw.select(
        F.size("c").alias("ncols"),
        "file",
        "value",
        col("geonameid").try_cast("long").alias("geonameid"),
        col("name").alias("name"),
        col("latitude").try_cast("double").alias("latitude"),
        col("longitude").try_cast("double").alias("longitude"),
        col("feature_class").alias("feature_class"),
        col("feature_code").alias("feature_code"),
        col("country_code").alias("country_code"),
        col("admin1_code").alias("admin1_code"),
        F.coalesce(F.nullif(col("population"), F.lit("")).try_cast("long"), F.lit(0)).alias(
            "population"
        ),
        F.nullif(col("elevation"), F.lit("")).try_cast("int").alias("elevation"),
        col("modification_date").alias("modification_date"),
    )
    bad = typed.filter(
        (F.col("ncols") != len(COLUMNS))
        | F.col("geonameid").isNull()
        | F.col("latitude").isNull()
        | F.col("longitude").isNull()
        | ~F.col("latitude").between(-90.0, 90.0)
        | ~F.col("longitude").between(-180.0, 180.0)
    ).limit(1)
    for row in bad.collect():
        raise KnowledgeError(
            f"{row['file']}: malformed GeoNames row ({row['ncols']} columns, expected "
            f"{len(COLUMNS)}, or bad id/coordinates): {row['value'][:120]!r}"
        )
    rows = typed.drop("ncols", "file", "value")
    if any(f.lower().endswith(".gz") for f in files):
        # Spark reads a gzip file as one partition: spread its rows so that the joins
        # downstream (which keep a broadcast join's probe partitioning) use every core.
        rows = rows.repartition(spark.sparkContext.defaultParallelism)
    return rows


_GEONAMES_SCHEMA = (
    "geonameid long, name string, latitude double, longitude double, feature_class string, "
    "feature_code string, country_code string, admin1_code string, population long, "
    "elevation int, modification_date string"
)


def load_stations(paths: Iterable[str | os.PathLike[str]]) -> list[Station]:
    """Read station files in the driver: CSV tables, or RDF by extension.

    Args:
        paths: station files.
    Returns:
        every station, ids unique across all files.
    Raises:
        KnowledgeError: for malformed files or an id defined twice.

    >>> load_stations(["data/stations/us-mountain-stations.csv"])[0].id  # doctest: +SKIP
    'KAFF'
    """
    stations: list[Station] = []
    for path in paths:
        if Path(path).suffix.lower() in RDF_SUFFIXES:
            stations.extend(read_station_rdf(path).stations)
        else:
            stations.extend(read_station_csv(path))
    check_unique(stations, "station files")
    return stations


def stations_frame(spark: SparkSession, stations: Sequence[Station]) -> DataFrame:
    """A DataFrame of stations (columns as in :data:`STATION_SCHEMA`).

    Args:
        spark: the session.
        stations: the stations.
    Returns:
        the DataFrame.

    >>> stations_frame(spark, load_stations(["st.csv"])).count()  # doctest: +SKIP
    122
    """
    rows = [(s.id, s.name, s.lat, s.lon, s.elevation, s.state) for s in stations]
    return spark.createDataFrame(rows, STATION_SCHEMA)


def rdf_triples(path: str | os.PathLike[str]) -> list[tuple[str, str, str]]:
    """Parse an RDF file into N-Triples-encoded ``(s, p, o)`` strings.

    Args:
        path: Turtle, N-Triples, RDF/XML ... (by extension).
    Returns:
        the triples.
    Raises:
        KnowledgeError: when the file cannot be parsed.

    >>> rdf_triples("ontologies/weather.ttl")[:1]  # doctest: +SKIP
    """
    graph = Graph()
    try:
        graph.parse(str(path), format=guess_format(str(path)) or "xml")
    except Exception as e:  # rdflib raises parser-specific classes with no common base
        raise KnowledgeError(f"{path}: cannot read RDF: {e}") from e
    return [(term(s), term(p), term(o)) for s, p, o in graph]


def triples_frame(spark: SparkSession, triples: Sequence[tuple[str, str, str]]) -> DataFrame:
    """A triple table from encoded triples.

    Args:
        spark: the session.
        triples: ``(s, p, o)`` N-Triples strings.
    Returns:
        a DataFrame with columns ``s``, ``p``, ``o``.

    >>> triples_frame(spark, [("<a:x>", "<a:p>", '"1"')]).count()  # doctest: +SKIP
    1
    """
    return spark.createDataFrame(list(triples), TRIPLE_SCHEMA).toDF(*TRIPLE_COLUMNS)


def read_ntriples(spark: SparkSession, paths: Sequence[str]) -> DataFrame:
    """Read N-Triples files written by this pipeline back into a triple table.

    Args:
        spark: the session.
        paths: files or folders of ``.nt`` files, one triple per line.
    Returns:
        a DataFrame with columns ``s``, ``p``, ``o``.

    >>> read_ntriples(spark, ["out/parts/stations"]).count()  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    # Subjects and predicates never contain spaces in N-Triples; the object is the rest.
    pattern = r"^(\S+)\s+(\S+)\s+(.*\S)\s*\.\s*$"
    lines = spark.read.text(list(paths)).filter(F.length(F.trim("value")) > 0)
    return lines.select(
        *(F.regexp_extract("value", pattern, i + 1).alias(c) for i, c in enumerate(TRIPLE_COLUMNS))
    )
