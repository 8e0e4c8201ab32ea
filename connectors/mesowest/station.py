"""Weather-station metadata: what a MesoWest file header says about its station."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from connectors.events.rejects import InputFormatError
from connectors.shipped import shipped

#: The shipped table of real stations in the US mountain states (see data/mesowest/README.md).
SHIPPED_STATIONS = shipped("data", "mesowest", "stations.csv")


@dataclass(frozen=True, slots=True)
class Station:
    """A weather station: id (e.g. ``"KSLC"``), name, position in degrees, elevation in feet."""

    id: str
    name: str
    lat: float
    lon: float
    elevation: float | None = None
    state: str = ""


def load_stations(path: str | Path = SHIPPED_STATIONS) -> list[Station]:
    """Read a station table with the columns ``id,name,lat,lon,elevation,state``.

    Args:
        path: the CSV file; by default the shipped ``data/mesowest/stations.csv``.

    Returns:
        The stations in file order (elevation in feet, ``None`` when empty).

    Raises:
        InputFormatError: when the file is missing or a row is malformed.

    Example:
        >>> next(s for s in load_stations() if s.id == "KSLC").state
        'UT'
    """
    try:
        with open(path, encoding="utf-8", newline="") as stream:
            rows = list(csv.DictReader(stream))
    except OSError as exc:
        raise InputFormatError(f"{path}: cannot read station table: {exc}") from exc
    stations = []
    for line, row in enumerate(rows, 2):
        try:
            elevation = row["elevation"].strip()
            stations.append(
                Station(
                    id=row["id"].strip(),
                    name=row["name"].strip(),
                    lat=float(row["lat"]),
                    lon=float(row["lon"]),
                    elevation=float(elevation) if elevation else None,
                    state=row["state"].strip(),
                )
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputFormatError(f"{path}:{line}: bad station row: {exc}") from exc
    return stations
