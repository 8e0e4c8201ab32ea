"""The GeoNames dump format: 19 tab-separated columns, one feature per line.

The format of ``allCountries.txt``, ``US.txt`` and ``cities15000.txt`` (see the GeoNames
``readme.txt``): no header, UTF-8, empty strings for missing values. Files may be plain,
gzip-compressed (``.gz``) or a zip archive holding one ``.txt`` member (as GeoNames ships them).
This module reads them without Spark, for small files and tests; the Spark reader in
:mod:`connectors.spark.readers` uses :data:`COLUMNS` for the same schema.
"""

from __future__ import annotations

import gzip
import io
import os
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from reasoner.errors import KnowledgeError

#: The 19 columns, in file order, with the names GeoNames' readme gives them.
COLUMNS: tuple[str, ...] = (
    "geonameid",
    "name",
    "asciiname",
    "alternatenames",
    "latitude",
    "longitude",
    "feature_class",
    "feature_code",
    "country_code",
    "cc2",
    "admin1_code",
    "admin2_code",
    "admin3_code",
    "admin4_code",
    "population",
    "elevation",
    "dem",
    "timezone",
    "modification_date",
)

#: Where GeoNames features live on the web: ``https://sws.geonames.org/<id>/``.
GEONAMES_IRI_PREFIX = "https://sws.geonames.org/"


def geonames_iri(geonameid: int) -> str:
    """The standard IRI of a GeoNames feature.

    Args:
        geonameid: the feature's integer id (first column of the dump).
    Returns:
        ``https://sws.geonames.org/<id>/``.

    >>> geonames_iri(5780993)
    'https://sws.geonames.org/5780993/'
    """
    return f"{GEONAMES_IRI_PREFIX}{geonameid}/"


@dataclass(frozen=True, slots=True)
class Feature:
    """One GeoNames feature: the columns the pipeline uses, typed."""

    geonameid: int
    name: str
    latitude: float
    longitude: float
    feature_class: str
    feature_code: str
    country_code: str
    admin1_code: str
    population: int
    elevation: int | None
    modification_date: str


@contextmanager
def open_dump(path: str | os.PathLike[str]) -> Iterator[TextIO]:
    """Open a GeoNames dump as text, whether plain, ``.gz`` or ``.zip``.

    Args:
        path: the file; a zip must hold exactly one ``.txt`` member other than ``readme.txt``.
    Returns:
        a context manager yielding a text stream of the dump's lines.
    Raises:
        KnowledgeError: for a missing file or an unusable archive.

    >>> with open_dump("data/geonames/US-mountain-cities15000.txt") as f:  # doctest: +SKIP
    ...     first = f.readline()
    """
    file = Path(path)
    if not file.is_file():
        raise KnowledgeError(f"{file}: no such GeoNames file")
    try:
        if file.suffix.lower() == ".gz":
            with gzip.open(file, "rt", encoding="utf-8", newline="\n") as text:
                yield text
        elif file.suffix.lower() == ".zip":
            with zipfile.ZipFile(file) as archive:
                member = _dump_member(file, archive)
                with archive.open(member) as raw:
                    yield io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
        else:
            with file.open(encoding="utf-8", newline="\n") as text:
                yield text
    except (OSError, zipfile.BadZipFile, UnicodeDecodeError) as e:
        raise KnowledgeError(f"{file}: cannot read GeoNames dump: {e}") from e


def _dump_member(file: Path, archive: zipfile.ZipFile) -> str:
    # GeoNames zips carry a readme.txt beside the data file: skip it.
    members = [n for n in archive.namelist() if n.endswith(".txt") and Path(n).name != "readme.txt"]
    if len(members) != 1:
        raise KnowledgeError(f"{file}: expected one .txt dump in the archive, found {members}")
    return members[0]


def parse_line(line: str, where: str) -> Feature:
    """Parse one line of a GeoNames dump.

    Args:
        line: the line, with or without its newline.
        where: ``file:line`` for error messages.
    Returns:
        the :class:`Feature`.
    Raises:
        KnowledgeError: for a wrong column count or unparsable numbers.

    >>> parse_line("5780993\\tSalt Lake City\\tSalt Lake City\\t\\t40.76078\\t-111.89105\\t"
    ...            "P\\tPPLA\\tUS\\t\\tUT\\t035\\t\\t\\t200133\\t1288\\t1294\\tAmerica/Denver\\t"
    ...            "2019-09-05", "x:1").name
    'Salt Lake City'
    """
    cols = line.rstrip("\r\n").split("\t")
    if len(cols) != len(COLUMNS):
        raise KnowledgeError(
            f"{where}: expected {len(COLUMNS)} tab-separated columns, got {len(cols)}"
        )
    try:
        return Feature(
            geonameid=int(cols[0]),
            name=cols[1],
            latitude=float(cols[4]),
            longitude=float(cols[5]),
            feature_class=cols[6],
            feature_code=cols[7],
            country_code=cols[8],
            admin1_code=cols[10],
            population=int(cols[14] or 0),
            elevation=int(cols[15]) if cols[15] else None,
            modification_date=cols[18],
        )
    except ValueError as e:
        raise KnowledgeError(f"{where}: malformed GeoNames row: {e}") from e


def read_dump(path: str | os.PathLike[str]) -> Iterator[Feature]:
    """Every feature of a GeoNames dump, in file order.

    Args:
        path: a plain, ``.gz`` or ``.zip`` dump.
    Returns:
        an iterator of :class:`Feature`.
    Raises:
        KnowledgeError: naming the file and line of the first malformed row.

    >>> next(read_dump("data/geonames/US-mountain-cities15000.txt")).country_code  # doctest: +SKIP
    'US'
    """
    with open_dump(path) as text:
        for number, line in enumerate(text, start=1):
            if line.strip():
                yield parse_line(line, f"{path}:{number}")
