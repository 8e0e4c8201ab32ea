"""The blizzard results as seed 004's Tables 2-4: detections per station, areas, places.

Everything here reads a :class:`~connectors.mesowest.replay.Replay` of ``rules/blizzard.event``
(its ``blizzardSettling``, ``blizzardWarning``, ``blizzardArea`` and ``blizzardPlace``
detections). An area grows one ``blizzardArea`` per station that joins it; it is identified by
its anchor station and start, and its row shows its last (largest) state.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from connectors.events.times import epoch_to_iso
from connectors.mesowest.replay import Replay
from reasoner.knowledge.base import Knowledge
from reasoner.values import IRI, Time
from reasoner.vocab import WGS84


@dataclass(frozen=True, slots=True)
class StationRow:
    """Table 2: a station's readings and what the patterns detected from them."""

    station: str
    readings: int
    settlings: int  # pattern (39)
    warnings: int  # pattern (40)
    areas: int  # blizzard areas (42) the station belongs to


@dataclass(frozen=True, slots=True)
class AreaRow:
    """Table 3: a blizzard area, its stations in the order they joined (each once), its
    interval, and its iterations (warnings that built it; a station may warn twice)."""

    anchor: str
    stations: tuple[str, ...]
    start: Time
    end: Time
    iterations: int


@dataclass(frozen=True, slots=True)
class PlaceRow:
    """Table 4: a GeoNames place near a station of an area (position when known)."""

    anchor: str
    area_start: Time
    station: str
    name: str
    km: float
    place: IRI
    lat: float | None = None
    lon: float | None = None


def station_rows(result: Replay) -> list[StationRow]:
    """One row per replayed station, sorted by id.

    >>> station_rows(result)[0]  # doctest: +SKIP
    StationRow(station='KEVW', readings=216, settlings=31, warnings=1, areas=1)
    """
    settlings = Counter(str(d.args[0]) for d in result.named("blizzardSettling"))
    warnings = Counter(str(d.args[0]) for d in result.named("blizzardWarning"))
    areas = Counter(s for area in area_rows(result) for s in area.stations)
    return [
        StationRow(s, len(result.series.get(s, ())), settlings[s], warnings[s], areas[s])
        for s in sorted(result.stations)
    ]


def area_rows(result: Replay) -> list[AreaRow]:
    """One row per blizzard area (its largest state), by start time then anchor.

    >>> [a.stations for a in area_rows(result)]  # doctest: +SKIP
    [('KOGD', 'KSLC', 'KEVW')]
    """
    last: dict[tuple[str, Time], AreaRow] = {}
    for d in result.named("blizzardArea"):
        anchor, stations, iterations = d.args
        joined = tuple(dict.fromkeys(reversed(stations)))  # type: ignore[arg-type]
        row = AreaRow(str(anchor), joined, d.start, d.end, int(iterations))  # type: ignore[arg-type]
        key = (row.anchor, row.start)
        if key not in last or row.iterations > last[key].iterations:
            last[key] = row
    return sorted(last.values(), key=lambda a: (a.start, a.anchor))


def place_rows(result: Replay, knowledge: Knowledge | None = None) -> list[PlaceRow]:
    """The places of every area, by area, station and distance.

    Args:
        result: the replay.
        knowledge: when given, places get their ``wgs84:lat``/``wgs84:long`` from it.
    Returns:
        the rows, each (area, station, place) once.
    """
    rows = set()
    for d in result.named("blizzardPlace"):
        anchor, station, place, name, km = d.args
        lat, lon = _position(knowledge, place) if knowledge is not None else (None, None)  # type: ignore[arg-type]
        rows.add(
            PlaceRow(str(anchor), d.start, str(station), str(name), float(km), place, lat, lon)  # type: ignore[arg-type]
        )
    return sorted(rows, key=lambda p: (p.area_start, p.anchor, p.station, p.km, p.name))


def _position(knowledge: Knowledge, place: IRI) -> tuple[float | None, float | None]:
    def first(prop: str) -> float | None:
        found = next(knowledge.solve(WGS84 + prop, (place, None)), None)
        return None if found is None else float(found[1])  # type: ignore[arg-type]

    return first("lat"), first("long")


def render(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain-text table: columns padded to their widest cell, numbers right-aligned.

    >>> print(render(["a", "n"], [["x", 1], ["yy", 22]]))
    a    n
    --  --
    x    1
    yy  22
    """
    cells = [[str(c) for c in headers]] + [[_cell(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    numeric = [all(isinstance(row[i], int | float) for row in rows) for i in range(len(headers))]

    def line(row: list[str]) -> str:
        parts = [
            c.rjust(w) if n else c.ljust(w) for c, w, n in zip(row, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    rule = ["-" * w for w in widths]
    return "\n".join([line(cells[0]), line(rule), *(line(r) for r in cells[1:])])


def report(result: Replay) -> str:
    """Tables 2-4 as text, with titles.

    >>> print(report(result))  # doctest: +SKIP
    """
    stations = render(
        ["station", "readings", "settlings (39)", "warnings (40)", "areas (42)"],
        [[r.station, r.readings, r.settlings, r.warnings, r.areas] for r in station_rows(result)],
    )
    areas = render(
        ["area", "stations", "start", "end", "iterations"],
        [
            [a.anchor, " ".join(a.stations), _time(a.start), _time(a.end), a.iterations]
            for a in area_rows(result)
        ],
    )
    places = render(
        ["area", "start", "station", "place", "km"],
        [[p.anchor, _time(p.area_start), p.station, p.name, p.km] for p in place_rows(result)],
    )
    return (
        f"Detections per station\n\n{stations}\n\n"
        f"Blizzard areas\n\n{areas}\n\n"
        f"Places affected\n\n{places}\n"
    )


def _time(t: Time) -> str:
    """UTC time to the minute, e.g. ``2021-01-11 04:40``."""
    return epoch_to_iso(t)[:16].replace("T", " ")


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)
