"""A seeded generator of realistic winter weather, written as MesoWest CSV exports.

The model, per station and time step (all noise from one ``random.Random`` per station,
seeded by ``f"{seed}:{station_id}"``, so a station's data does not depend on which other
stations are generated):

* **temperature** (°F): a climate mean falling 3 °F per 1000 ft of elevation and 1.2 °F per
  degree of latitude north of 40°, a synoptic anomaly (AR(1), about 6 °F spread, 36 h memory)
  and a diurnal cycle of ±9 °F peaking at 15:00 local solar time;
* **humidity** (%): high at night and in cold spells, low in the afternoon;
* **wind** (mph): AR(1) around 6 mph with 6 h memory and an afternoon bump, capped at 24 mph
  outside storms; a **gust** is reported only when it is gusty (as in METAR), else ``none``;
* **visibility** (statute miles): 10 in fair weather, 2–6 in passing light-snow showers;
* **condition**: ``clear``, ``cloudy``, ``light snow``, ``snow`` or ``heavy snow``;
* **precipitation** (inches in the last hour): 0, 0.01 in showers, more in storms;
* rare sensor dropouts (``missing_rate``) outside storms.

A :class:`Storm` placed at a station lays an envelope over that weather: it ramps up over its
first quarter, holds its peak for the middle half and dies down over the last quarter. At the
peak, wind reaches ``20 + 22 * intensity`` mph (±2), visibility falls to
``max(0.05, 0.6 - 0.5 * intensity)`` miles (±15 %), snow is heavy and the temperature drops.
With intensity >= 1, every reading in the middle half meets the NOAA blizzard conditions
(wind >= 35 mph, visibility < 1/4 mile, considerable snow), and no reading outside the storm
does (background wind stays below 35 mph and visibility above 1 mile). Intensity 0.5 gives a
snowstorm that is no blizzard.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from connectors.mesowest.reader import NONE, SENSOR_READING
from connectors.mesowest.station import load_stations
from connectors.mesowest.writer import write_mesowest
from connectors.stations.table import Station, metres_to_feet
from reasoner.errors import ReasonerError
from reasoner.runtime.events import Event
from reasoner.values import Value

DEFAULT_START = datetime(2021, 1, 10, tzinfo=UTC)
#: Minutes between two readings of a station.
DEFAULT_INTERVAL_MINUTES = 20.0
_BACKGROUND_WIND_CAP = 24.0


class GeneratorError(ReasonerError):
    """Generator settings that cannot work (unknown station, no days, a bad storm)."""


@dataclass(frozen=True, slots=True)
class Storm:
    """A storm placed at ``station`` from ``start`` (UTC) for ``hours``; see the module doc."""

    station: str
    start: datetime
    hours: float
    intensity: float = 1.0

    def envelope(self, time: float) -> float:
        """Storm strength at epoch second ``time``: 0 outside, ramps to 1 for the middle half."""
        begin = self.start.timestamp()
        fraction = (time - begin) / (self.hours * 3600)
        if not 0 <= fraction <= 1:
            return 0.0
        return min(1.0, fraction / 0.25, (1 - fraction) / 0.25)

    def peak(self) -> tuple[float, float]:
        """The (first, last) epoch second of the middle half, where the storm is at its peak."""
        begin, length = self.start.timestamp(), self.hours * 3600
        return begin + 0.25 * length, begin + 0.75 * length


def simulate(
    station: Station,
    days: float,
    seed: int,
    storms: Sequence[Storm] = (),
    *,
    start: datetime = DEFAULT_START,
    interval_minutes: float = DEFAULT_INTERVAL_MINUTES,
    missing_rate: float = 0.003,
) -> Iterator[Event]:
    """Generate one station's ``sensor_reading`` events (see the module doc for the model).

    Args:
        station: the station (its elevation, latitude and longitude shape the weather).
        days: how many days to cover.
        seed: the random seed; equal arguments give equal readings.
        storms: storms to place; those of other stations are ignored.
        start: the first reading's time (UTC).
        interval_minutes: minutes between readings.
        missing_rate: the chance that a value outside a storm is missing (``none``).

    Returns:
        Readings in time order, in °F, %, mph, mph, miles, condition text, inches.

    Example:
        >>> s = Station("KXYZ", "Test", 40.0, -111.0, 1371.6, "UT")
        >>> len(list(simulate(s, days=1, seed=1)))
        72
    """
    rng = random.Random(f"{seed}:{station.id}")
    mine = [storm for storm in storms if storm.station == station.id]
    step = interval_minutes * 60
    steps = int(days * 86400 // step)
    first = start.timestamp()
    background = _Background(station, step, rng)
    for index in range(steps):
        time = first + index * step
        weather = background.at(time)
        strength, intensity = _strongest(mine, time)
        if strength > 0:
            weather.storm(strength, intensity, rng)
        values = weather.values(strength > 0, rng)
        if strength == 0:
            values = [
                NONE if position != 5 and rng.random() < missing_rate else value
                for position, value in enumerate(values)
            ]
        yield Event(SENSOR_READING, (station.id, int(time), *values), int(time), int(time))


@dataclass(slots=True)
class _Weather:
    """One reading's weather before rounding: °F, %, mph, miles, condition text, inches."""

    temp: float
    humidity: float
    wind: float
    visibility: float
    condition: str
    precip: float

    def storm(self, strength: float, intensity: float, rng: random.Random) -> None:
        """Lay a storm of ``intensity`` at ``strength`` of its envelope over this weather (the
        peak values are in the module doc)."""
        peak_wind = 20 + 22 * intensity
        peak_visibility = max(0.05, 0.6 - 0.5 * intensity)
        self.wind = self.wind + (peak_wind - self.wind) * strength + rng.uniform(-2, 2)
        self.visibility = min(
            10.0, 10 * (peak_visibility / 10) ** strength * rng.uniform(0.85, 1.15)
        )
        snow = strength * intensity
        self.condition = "heavy snow" if snow >= 0.6 else "snow" if snow >= 0.3 else "light snow"
        self.precip = max(self.precip, 0.1 * snow * rng.uniform(0.7, 1.3))
        self.temp = min(self.temp - 8 * strength, 31.0)
        self.humidity += (96 - self.humidity) * strength

    def values(self, stormy: bool, rng: random.Random) -> list[Value]:
        """The reading's values, rounded as MesoWest writes them; a gust only when it is gusty
        (always in a storm), else ``none``."""
        gusty = stormy or (self.wind >= 10 and rng.random() < 0.6)
        return [
            round(self.temp, 1),
            round(min(100.0, max(12.0, self.humidity))),
            round(max(0.0, self.wind), 1),
            round(self.wind * rng.uniform(1.25, 1.5), 1) if gusty else NONE,
            round(self.visibility, 2),
            self.condition,
            round(self.precip, 2),
        ]


class _Background:
    """A station's weather outside storms, one step at a time: the climate of its elevation
    and latitude, the AR(1) temperature anomaly and breeze, the diurnal cycle of its longitude
    and passing light-snow showers (see the module doc)."""

    def __init__(self, station: Station, step: float, rng: random.Random) -> None:
        feet = 0.0 if station.elevation is None else metres_to_feet(station.elevation)
        self.lon = station.lon
        self.climate = 44 - 3.0 * feet / 1000 - 1.2 * (station.lat - 40)
        self.temp_memory = math.exp(-step / (36 * 3600))
        self.wind_memory = math.exp(-step / (6 * 3600))
        self.rng = rng
        self.anomaly = rng.gauss(0, 6)
        self.breeze = rng.gauss(0, 4)
        self.shower = 0  # steps left in a passing light-snow shower

    def at(self, time: float) -> _Weather:
        """The weather at epoch second ``time``, the step after the previous call's."""
        rng = self.rng
        self.anomaly = self.anomaly * self.temp_memory + rng.gauss(
            0, 6 * math.sqrt(1 - self.temp_memory**2)
        )
        self.breeze = self.breeze * self.wind_memory + rng.gauss(
            0, 4 * math.sqrt(1 - self.wind_memory**2)
        )
        solar_hour = (time / 3600 + self.lon / 15) % 24
        daily = math.cos(2 * math.pi * (solar_hour - 15) / 24)  # +1 mid-afternoon, -1 at 3 am
        temp = self.climate + self.anomaly + 9 * daily + rng.gauss(0, 0.7)
        humidity = 68 - 18 * daily - 0.8 * self.anomaly + rng.gauss(0, 3)
        wind = min(_BACKGROUND_WIND_CAP, max(0.0, 6 + self.breeze + 2 * max(0.0, daily)))
        if self.shower == 0 and rng.random() < 0.01:
            self.shower = rng.randint(2, 6)
        visibility, condition, precip = 10.0, "cloudy" if humidity > 75 else "clear", 0.0
        if self.shower:
            self.shower -= 1
            visibility, condition, precip = rng.uniform(2, 6), "light snow", 0.01
            humidity += 10
        return _Weather(temp, humidity, wind, visibility, condition, precip)


def _strongest(storms: Sequence[Storm], time: float) -> tuple[float, float]:
    """The strongest envelope of ``storms`` at epoch second ``time`` and that storm's
    intensity; (0, 0) outside every storm."""
    strength, intensity = 0.0, 0.0
    for storm in storms:
        level = storm.envelope(time)
        if level > strength:
            strength, intensity = level, storm.intensity
    return strength, intensity


def generate(
    out_dir: str | Path,
    stations: Sequence[Station | str],
    days: float,
    seed: int,
    storms: Sequence[Storm] = (),
    *,
    start: datetime = DEFAULT_START,
    interval_minutes: float = DEFAULT_INTERVAL_MINUTES,
) -> list[Path]:
    """Generate winter weather for several stations, one MesoWest CSV file each.

    Args:
        out_dir: the directory to write ``<STATION_ID>.csv`` files into (created if needed).
        stations: stations, or ids of stations in the shipped ``data/mesowest/stations.csv``.
        days: how many days to cover (> 0).
        seed: the random seed; equal arguments give byte-identical files.
        storms: storms to place (see :class:`Storm`); each must name a generated station.
        start: the first reading's time (UTC).
        interval_minutes: minutes between readings (> 0), e.g. 15 or 20.

    Returns:
        The paths written, in the order of ``stations``.

    Raises:
        GeneratorError: an unknown station id, a storm at a station not generated, or
            non-positive days, interval or storm length.

    Example:
        >>> import tempfile
        >>> storm = Storm("KSLC", datetime(2021, 1, 10, 6, tzinfo=UTC), hours=8)
        >>> [p.name for p in generate(tempfile.mkdtemp(), ["KSLC", "KOGD"], 1, 7, [storm])]
        ['KSLC.csv', 'KOGD.csv']
    """
    if days <= 0 or interval_minutes <= 0:
        raise GeneratorError("days and interval must be positive")
    resolved = _resolve(stations)
    ids = {station.id for station in resolved}
    for storm in storms:
        if storm.station not in ids:
            raise GeneratorError(f"storm at {storm.station}, which is not among the stations")
        if storm.hours <= 0 or storm.intensity <= 0:
            raise GeneratorError(f"storm at {storm.station}: hours and intensity must be positive")
        if storm.start.tzinfo is None:
            raise GeneratorError(f"storm at {storm.station}: give its start with a time zone")
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for station in resolved:
        path = folder / f"{station.id}.csv"
        readings = simulate(
            station, days, seed, storms, start=start, interval_minutes=interval_minutes
        )
        write_mesowest(path, station, readings)
        paths.append(path)
    return paths


def _resolve(stations: Sequence[Station | str]) -> list[Station]:
    known: dict[str, Station] = {}
    resolved = []
    for station in stations:
        if isinstance(station, str):
            known = known or {entry.id: entry for entry in load_stations()}
            if station not in known:
                raise GeneratorError(f"unknown station {station!r} (not in the station table)")
            station = known[station]
        resolved.append(station)
    if len({station.id for station in resolved}) != len(resolved):
        raise GeneratorError("a station is listed twice")
    return resolved
