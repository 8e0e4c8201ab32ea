"""The MesoWest station table: the shared station-table reader, elevations in feet."""

from __future__ import annotations

from pathlib import Path

from connectors.shipped import shipped
from connectors.stations.table import Station, read_station_csv

#: The shipped table of real stations in the US mountain states (see data/mesowest/README.md).
SHIPPED_STATIONS = shipped("data", "mesowest", "stations.csv")


def load_stations(path: str | Path = SHIPPED_STATIONS) -> list[Station]:
    """Read a MesoWest station table: columns ``id,name,lat,lon,elevation,state``, the
    elevation in feet as MesoWest gives it.

    Args:
        path: the CSV file; by default the shipped ``data/mesowest/stations.csv``.

    Returns:
        The stations in file order (elevation converted to metres, ``None`` when empty).

    Raises:
        KnowledgeError: when the file is missing, lacks a column, has a malformed row (its
            ``file:line`` and what was expected) or a duplicate id.

    Example:
        >>> next(s for s in load_stations() if s.id == "KSLC").state
        'UT'
    """
    return read_station_csv(path, elevation_unit="ft")
