"""Weather stations and their tables: CSV files of ``id,name,lat,lon,elevation,state``.

A :class:`Station`'s elevation is in metres. A table gives it in metres (the knowledge
pipeline's tables) or in feet (MesoWest's, ``data/mesowest/stations.csv``), empty when unknown;
:func:`to_metres` and :func:`metres_to_feet` are the only conversions. ``state`` is the
two-letter US state (or any region code). Station ids become part of IRIs, so they are
restricted to letters, digits, ``_`` and ``-`` (ICAO ids such as ``KSLC`` and MesoWest ids such
as ``UTALP`` qualify).
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
#: Metres in an international foot.
METRES_PER_FOOT = 0.3048
_METRES_PER_UNIT = {"m": 1.0, "meters": 1.0, "ft": METRES_PER_FOOT, "feet": METRES_PER_FOOT}


@dataclass(frozen=True, slots=True)
class Station:
    """One weather station: id (e.g. ``"KSLC"``), name, WGS84 position in degrees, elevation
    in metres (``None`` when unknown), state."""

    id: str
    name: str
    lat: float
    lon: float
    elevation: float | None = None
    state: str = ""


def to_metres(value: float, unit: str) -> float:
    """An elevation in metres.

    Args:
        value: the elevation in ``unit``.
        unit: ``m``, ``meters``, ``ft`` or ``feet``.
    Returns:
        the elevation in metres (unchanged for ``m``).
    Raises:
        ValueError: for another unit.

    >>> to_metres(1000.0, "ft")
    304.8
    """
    if unit not in _METRES_PER_UNIT:
        raise ValueError(
            f"unknown elevation unit {unit!r} (expected one of {list(_METRES_PER_UNIT)})"
        )
    return value * _METRES_PER_UNIT[unit]


def metres_to_feet(metres: float) -> float:
    """An elevation in feet, rounded to a millionth of a foot: feet read with up to six
    decimals come back exactly through :func:`to_metres`.

    >>> metres_to_feet(to_metres(4230.9, "ft"))
    4230.9
    """
    return round(metres / METRES_PER_FOOT, 6)


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


def parse_row(row: dict[str, str], where: str, elevation_unit: str = "m") -> Station:
    """Turn one CSV row (a dict keyed by :data:`STATION_COLUMNS`) into a :class:`Station`.

    Args:
        row: the row, as ``csv.DictReader`` gives it.
        where: ``file:line`` for error messages.
        elevation_unit: the unit of the row's elevation (see :func:`to_metres`).
    Returns:
        the station, its elevation in metres.
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
        elevation=None if elevation is None else to_metres(elevation, elevation_unit),
        state=(row.get("state") or "").strip(),
    )


def read_station_csv(path: str | os.PathLike[str], *, elevation_unit: str = "m") -> list[Station]:
    """Read a station table.

    Args:
        path: a CSV file with the header ``id,name,lat,lon,elevation,state``.
        elevation_unit: the unit of its elevation column: ``m`` (default) or ``ft``.
    Returns:
        the stations in file order, elevations in metres.
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
            stations = [
                parse_row(row, f"{file}:{reader.line_num}", elevation_unit) for row in reader
            ]
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
    """Write stations in the format :func:`read_station_csv` reads (elevation in metres).

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
