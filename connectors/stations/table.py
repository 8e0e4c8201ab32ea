"""Weather-station tables: CSV files with the columns ``id,name,lat,lon,elevation,state``.

``elevation`` is in metres (empty when unknown); ``state`` is the two-letter US state (or any
region code). Station ids become part of IRIs, so they are restricted to letters, digits,
``_`` and ``-`` (ICAO ids such as ``KSLC`` and MesoWest ids such as ``UTALP`` qualify).
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from reasoner.errors import KnowledgeError

#: The header every station CSV carries (extra columns are ignored).
STATION_COLUMNS: tuple[str, ...] = ("id", "name", "lat", "lon", "elevation", "state")

_ID = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class Station:
    """One weather station: identifier, name, WGS84 position, elevation in metres, state."""

    id: str
    name: str
    lat: float
    lon: float
    elevation: float | None
    state: str


def check_station_id(station_id: str, where: str) -> str:
    """Return a station id unchanged, or fail if it cannot be part of an IRI.

    Args:
        station_id: the identifier, e.g. ``"KSLC"``.
        where: ``file:line`` for the error message.
    Returns:
        the id.
    Raises:
        KnowledgeError: for an empty id or one with characters other than ``[A-Za-z0-9_-]``.

    >>> check_station_id("KSLC", "x:2")
    'KSLC'
    """
    if not _ID.fullmatch(station_id):
        raise KnowledgeError(
            f"{where}: station id {station_id!r} must be letters, digits, '_' or '-'"
        )
    return station_id


def _coordinate(text: str, low: float, high: float, what: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise KnowledgeError(f"{where}: {what} {text!r} is not a number") from None
    if not low <= value <= high:
        raise KnowledgeError(f"{where}: {what} {value} is outside [{low}, {high}]")
    return value


def parse_row(row: dict[str, str], where: str) -> Station:
    """Turn one CSV row (a dict keyed by :data:`STATION_COLUMNS`) into a :class:`Station`.

    Args:
        row: the row, as ``csv.DictReader`` gives it.
        where: ``file:line`` for error messages.
    Returns:
        the station.
    Raises:
        KnowledgeError: for a bad id, coordinates out of range or a non-numeric elevation.

    >>> parse_row({"id": "KSLC", "name": "Salt Lake", "lat": "40.79", "lon": "-111.98",
    ...            "elevation": "1289.6", "state": "UT"}, "x:2").elevation
    1289.6
    """
    elevation_text = (row.get("elevation") or "").strip()
    try:
        elevation = float(elevation_text) if elevation_text else None
    except ValueError:
        raise KnowledgeError(f"{where}: elevation {elevation_text!r} is not a number") from None
    return Station(
        id=check_station_id((row.get("id") or "").strip(), where),
        name=(row.get("name") or "").strip(),
        lat=_coordinate(row.get("lat") or "", -90.0, 90.0, "latitude", where),
        lon=_coordinate(row.get("lon") or "", -180.0, 180.0, "longitude", where),
        elevation=elevation,
        state=(row.get("state") or "").strip(),
    )


def read_station_csv(path: str | os.PathLike[str]) -> list[Station]:
    """Read a station table.

    Args:
        path: a CSV file with the header ``id,name,lat,lon,elevation,state``.
    Returns:
        the stations in file order.
    Raises:
        KnowledgeError: for a missing file or column, a malformed row (with its line) or a
            duplicate id.

    >>> read_station_csv("data/stations/us-mountain-stations.csv")[0].id  # doctest: +SKIP
    'KAFF'
    """
    file = Path(path)
    try:
        with file.open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in STATION_COLUMNS if c not in (reader.fieldnames or ())]
            if missing:
                raise KnowledgeError(f"{file}:1: station table lacks columns {missing}")
            stations = [parse_row(row, f"{file}:{reader.line_num}") for row in reader]
    except OSError as e:
        raise KnowledgeError(f"{file}: cannot read station table: {e}") from e
    check_unique(stations, str(file))
    return stations


def check_unique(stations: Iterable[Station], where: str) -> None:
    """Fail when two stations share an id (their IRIs would merge).

    Args:
        stations: the stations.
        where: the source, for the message.
    Raises:
        KnowledgeError: naming the first duplicate id.

    >>> check_unique([], "x")
    """
    seen: set[str] = set()
    for station in stations:
        if station.id in seen:
            raise KnowledgeError(f"{where}: duplicate station id {station.id!r}")
        seen.add(station.id)


def write_station_csv(stations: Iterable[Station], path: str | os.PathLike[str]) -> None:
    """Write stations in the format :func:`read_station_csv` reads.

    Args:
        stations: the stations.
        path: the CSV file to write.

    >>> write_station_csv([], "/tmp/none.csv")
    """
    with Path(path).open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(STATION_COLUMNS)
        for s in stations:
            elevation = "" if s.elevation is None else repr(s.elevation)
            writer.writerow([s.id, s.name, repr(s.lat), repr(s.lon), elevation, s.state])
