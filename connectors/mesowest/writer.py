"""Writing ``sensor_reading`` events back as a MesoWest CSV export (canonical units)."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from connectors.events.times import epoch_to_iso
from connectors.mesowest.reader import NONE, SENSOR_READING
from connectors.mesowest.units import CANONICAL
from connectors.stations.table import Station, metres_to_feet
from reasoner.runtime.events import Event
from reasoner.values import Value

COLUMNS = (
    "Station_ID",
    "Date_Time",
    "air_temp_set_1",
    "relative_humidity_set_1",
    "wind_speed_set_1",
    "wind_gust_set_1",
    "visibility_set_1",
    "weather_condition_set_1d",
    "precip_accum_one_hour_set_1",
)
UNITS = (
    "",
    "",
    CANONICAL["temperature"],
    CANONICAL["humidity"],
    CANONICAL["speed"],
    CANONICAL["speed"],
    CANONICAL["distance"],
    "text",
    CANONICAL["precipitation"],
)


def write_mesowest(target: str | Path | TextIO, station: Station, readings: Iterable[Event]) -> int:
    """Write one station's readings as a MesoWest CSV export in °F, %, mph, miles, inches.

    Args:
        target: a path or an open text stream.
        station: the station named in the header; every reading must be of it.
        readings: ``sensor_reading`` events in time order (``none`` becomes an empty cell).

    Returns:
        The number of rows written.

    Raises:
        ValueError: a reading is not a ``sensor_reading`` of ``station``.

    Example:
        >>> import io
        >>> out = io.StringIO()
        >>> s = Station("KXYZ", "Test", 40.0, -111.0, 1280.16, "UT")
        >>> write_mesowest(out, s, [Event.at("sensor_reading",
        ...     ("KXYZ", 1610236800, 20.5, 80, 12, "none", 0.5, "snow", 0.02), 1610236800)])
        1
        >>> out.getvalue().splitlines()[-1]
        'KXYZ,2021-01-10T00:00:00Z,20.5,80,12,,0.5,snow,0.02'
    """
    if isinstance(target, str | Path):
        with open(target, "w", encoding="utf-8", newline="") as stream:
            return _write(stream, station, readings)
    return _write(target, station, readings)


def _write(out: TextIO, station: Station, readings: Iterable[Event]) -> int:
    out.write(f"# STATION: {station.id}\n# STATION NAME: {station.name}\n")
    out.write(f"# LATITUDE: {station.lat}\n# LONGITUDE: {station.lon}\n")
    if station.elevation is not None:
        out.write(f"# ELEVATION [ft]: {_cell(metres_to_feet(station.elevation))}\n")
    if station.state:
        out.write(f"# STATE: {station.state}\n")
    rows = csv.writer(out, lineterminator="\n")
    rows.writerow(COLUMNS)
    rows.writerow(UNITS)
    count = 0
    for event in readings:
        if event.name != SENSOR_READING or len(event.args) != 9 or event.args[0] != station.id:
            raise ValueError(f"not a sensor_reading of station {station.id}: {event!r}")
        rows.writerow((station.id, epoch_to_iso(event.end), *map(_cell, event.args[2:])))
        count += 1
    return count


def _cell(value: Value) -> str:
    if value == NONE:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
