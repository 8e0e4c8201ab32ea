"""Reading MesoWest / Synoptic CSV time-series exports as ``sensor_reading`` events.

An export holds one station::

    # STATION: KSLC
    # STATION NAME: Salt Lake City International Airport
    # LATITUDE: 40.78839
    # LONGITUDE: -111.97777
    # ELEVATION [ft]: 4227
    # STATE: UT
    Station_ID,Date_Time,air_temp_set_1,relative_humidity_set_1,wind_speed_set_1,...
    ,,Celsius,%,m/s,...
    KSLC,2021-01-10T00:00:00Z,-2.2,71,2.6,...

Each data row becomes ``sensor_reading(Station, Time, Temp, Humidity, Wind, Gust, Visibility,
Condition, Precip)`` at the row's time, in °F, %, mph, mph, statute miles, the condition as
given (an integer code or text) and inches of precipitation in the last hour. ``Time`` repeats
the reading's time (epoch seconds) as an argument, as seed 004's ``SensorReading(ID, T, ...)``
does, so that rules can compute durations in WHERE (``T2 - T1 >= 10800``). Empty cells
(and ``M``, ``NA``, ``NaN``) and absent columns give the atom ``none``. Columns are found by
name (``air_temp_set_1``, ``weather_cond_code_set_1``, ``weather_condition_set_1d`` ...);
others are ignored. A malformed row is reported as a :class:`Rejected` and skipped.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import NamedTuple

from connectors.events.merge import merge_streams
from connectors.events.rejects import (
    InputFormatError,
    Position,
    Rejected,
    RejectHandler,
    log_rejected,
)
from connectors.events.times import iso_to_epoch
from connectors.mesowest.units import Converter, converter, identity, known_units
from connectors.stations.table import Station, metres_to_feet, to_metres
from reasoner.runtime.events import Event
from reasoner.values import Value

SENSOR_READING = "sensor_reading"
NONE = "none"
_MISSING = frozenset(("", "m", "na", "nan", "none", "null"))

# Argument position in sensor_reading (after Station and Time) and quantity, by column base name.
_FIELDS: dict[str, tuple[int, str | None]] = {
    "air_temp": (0, "temperature"),
    "relative_humidity": (1, "humidity"),
    "wind_speed": (2, "speed"),
    "wind_gust": (3, "speed"),
    "visibility": (4, "distance"),
    "weather_cond_code": (5, None),
    "weather_condition": (5, None),
    "weather_summary": (5, None),
    "precip_accum_one_hour": (6, "precipitation"),
}
_CONDITION = 5
_COLUMN = re.compile(r"(?P<base>[a-z_]+?)_set_\d+d?")
_HEADER = re.compile(r"#\s*(?P<key>[A-Za-z ]+?)\s*(?:\[(?P<unit>[^\]]*)\])?\s*:\s*(?P<value>.*)")


class Cell(NamedTuple):
    """A column the reader takes: where it is, where it goes and how it is converted."""

    at: int  # the cell's index in a row
    position: int  # its argument position after Station and Time
    convert: Converter | None  # to the canonical unit; None: none needed
    name: str  # the column's name, for messages


class MesoWestFile:
    """One MesoWest CSV export: its station (read at once) and its readings (read lazily).

    Args:
        path: the CSV file.
        on_reject: called with each malformed row (file, line, reason); default: log it.
        positions: a list the reader adds its :class:`Position` to.

    Raises:
        InputFormatError: the file cannot be read, or its header is broken (no station id
            or position, no ``Station_ID``/``Date_Time`` column, no units row, an unknown
            unit).

    Example:
        >>> f = MesoWestFile("data/mesowest/sample/KSLC.csv")
        >>> f.station.id, next(iter(f)).name
        ('KSLC', 'sensor_reading')
    """

    def __init__(
        self,
        path: str | Path,
        on_reject: RejectHandler | None = None,
        positions: list[Position] | None = None,
    ) -> None:
        self.path = Path(path)
        self.on_reject = on_reject or log_rejected
        self.where = Position(str(path))
        if positions is not None:
            positions.append(self.where)
        try:
            with open(self.path, encoding="utf-8", newline="") as stream:
                self._parse_header(stream)
        except (OSError, UnicodeDecodeError) as exc:
            raise InputFormatError(f"{path}: cannot read MesoWest file: {exc}") from exc

    def _fail(self, line: int, reason: str) -> InputFormatError:
        return InputFormatError(f"{self.path}:{line}: {reason}")

    def _parse_header(self, stream: Iterator[str]) -> None:
        meta: dict[str, tuple[str, str | None]] = {}
        columns: list[str] | None = None
        number = 0
        for number, line in enumerate(stream, 1):
            if line.startswith("#"):
                match = _HEADER.fullmatch(line.strip())
                if match:  # other comment lines (credits, notes) carry no metadata
                    meta[match["key"].upper()] = (match["value"].strip(), match["unit"])
            elif not line.strip():
                continue
            elif columns is None:
                columns = next(csv.reader([line]))
                self._columns_line = number
            else:
                self._parse_columns(columns, next(csv.reader([line])), number)
                self.data_from = number + 1
                break
        else:
            missing = "column header row" if columns is None else "units row"
            raise self._fail(number, f"no {missing} (is this a MesoWest CSV export?)")
        self.station = self._station(meta)

    def _station(self, meta: dict[str, tuple[str, str | None]]) -> Station:
        for key in ("STATION", "LATITUDE", "LONGITUDE"):
            if not meta.get(key, ("", None))[0]:
                raise self._fail(1, f"header lacks the '# {key}: ...' line")
        try:
            lat, lon = float(meta["LATITUDE"][0]), float(meta["LONGITUDE"][0])
            elevation: float | None = None
            if meta.get("ELEVATION", ("", None))[0]:
                value, unit = meta["ELEVATION"]
                metres = to_metres(float(value), (unit or "ft").strip().lower())
                # kept to 0.1 ft, as MesoWest gives it: a written file reads back equal
                elevation = to_metres(round(metres_to_feet(metres), 1), "ft")
        except ValueError as exc:
            raise self._fail(1, f"bad station position or elevation in header: {exc}") from exc
        ident = meta["STATION"][0]
        return Station(
            id=ident,
            name=meta.get("STATION NAME", (ident, None))[0],
            lat=lat,
            lon=lon,
            elevation=elevation,
            state=meta.get("STATE", ("", None))[0],
        )

    def _parse_columns(self, columns: list[str], units: list[str], units_line: int) -> None:
        names = [c.strip() for c in columns]
        for required in ("Station_ID", "Date_Time"):
            if required not in names:
                raise self._fail(self._columns_line, f"no '{required}' column")
        self.width = len(names)
        self.id_at, self.time_at = names.index("Station_ID"), names.index("Date_Time")
        self.units: dict[str, str] = {}
        self.cells: list[Cell] = []
        taken: set[int] = set()
        for index, name in enumerate(names):
            match = _COLUMN.fullmatch(name)
            field = _FIELDS.get(match["base"]) if match else None
            if field is None or field[0] in taken:  # the first column of a quantity wins
                continue
            taken.add(field[0])
            unit = units[index].strip() if index < len(units) else ""
            self.units[name] = unit
            convert = None
            if field[1] is not None:
                convert = converter(field[1], unit)
                if convert is None:
                    raise self._fail(
                        units_line,
                        f"unknown unit {unit!r} for column {name} "
                        f"(known: {', '.join(known_units(field[1]))})",
                    )
            self.cells.append(Cell(index, field[0], None if convert is identity else convert, name))

    def __iter__(self) -> Iterator[Event]:
        return self.rows(self.on_reject)

    @classmethod
    def merge_all(cls, files: Sequence[MesoWestFile]) -> Iterator[Event]:
        """The readings of several exports merged by time, read column by column
        (:func:`connectors.mesowest.archive.merge_files`): what :func:`merge_streams` gives
        for them, faster."""
        from connectors.mesowest.archive import merge_files

        return merge_files(files)

    def rows(self, on_reject: RejectHandler) -> Iterator[Event]:
        """The row loop: this file's readings in file order, each malformed row handed to
        ``on_reject``; :attr:`where` names the line of the reading yielded last.

        Raises:
            InputFormatError: the file cannot be read (on iteration).
        """
        try:
            with open(self.path, encoding="utf-8", newline="") as stream:
                yield from self._rows(stream, on_reject)
        except (OSError, UnicodeDecodeError) as exc:
            raise InputFormatError(f"{self.path}: cannot read MesoWest file: {exc}") from exc

    def _rows(self, stream: Iterator[str], on_reject: RejectHandler) -> Iterator[Event]:
        rows = islice(stream, self.data_from - 1, None)  # (the header's lines read, not parsed)
        yield from self.read_lines(rows, self.data_from, on_reject)

    def read_lines(
        self, lines: Iterable[str], first: int, on_reject: RejectHandler
    ) -> Iterator[Event]:
        """The row loop over data lines of this file (with their line ends), the first of them
        line ``first``: comment and blank lines skipped, each malformed row handed to
        ``on_reject``; :attr:`where` names the line of the reading yielded last.

        Example:
            >>> f = MesoWestFile("data/mesowest/sample/KSLC.csv")
            >>> line = "KSLC,2021-01-10T00:00:00Z,34.8,56,10.3,,10,clear,0\\n"
            >>> next(f.read_lines([line], 9, print)).args[:3], f.where.line
            (('KSLC', 1610236800, 34.8), 9)
        """
        file, ident, width, where = str(self.path), self.station.id, self.width, self.where
        for number, line in enumerate(lines, first):
            if line.startswith("#") or not line.strip():
                continue
            # Plain split is much faster than csv and exports only quote text with commas.
            cells = next(csv.reader([line])) if '"' in line else line.rstrip("\r\n").split(",")
            if len(cells) != width:
                on_reject(Rejected(file, number, f"expected {width} cells, found {len(cells)}"))
                continue
            if cells[self.id_at].strip() != ident:
                reason = f"station {cells[self.id_at]!r} differs from the header's {ident!r}"
                on_reject(Rejected(file, number, reason))
                continue
            try:
                time = iso_to_epoch(cells[self.time_at].strip())
                values = self._values(cells)
            except ValueError as exc:
                on_reject(Rejected(file, number, str(exc)))
                continue
            event = Event(SENSOR_READING, (ident, time, *values), time, time)
            where.line, where.event = number, event
            yield event

    def _values(self, cells: list[str]) -> list[Value]:
        # The hot path of a replay: try float() first and look at missing markers only
        # when that fails; identity units skip the converter call.
        values: list[Value] = [NONE] * 7
        for index, position, convert, name in self.cells:
            cell = cells[index]
            if not cell:
                continue
            if position == _CONDITION:
                values[position] = condition_value(cell)
                continue
            try:
                number = float(cell)
            except ValueError:
                if cell.strip().lower() in _MISSING:
                    continue
                raise ValueError(f"{name}: {cell.strip()!r} is not a number") from None
            if number == number:  # NaN marks a missing value
                values[position] = number if convert is None else convert(number)
        return values


def station_of(path: str | Path) -> str:
    """The station an export's header names (its ``# STATION:`` line), read without the rest of
    the header: what ``MesoWestFile(path).station.id`` gives for a file that opens (a broken
    header is found when the file is read).

    Raises:
        InputFormatError: the file cannot be read, or its header names no station.

    Example:
        >>> station_of("data/mesowest/sample/KSLC.csv")
        'KSLC'
    """
    ident, rows = "", 0
    try:
        with open(path, encoding="utf-8", newline="") as stream:
            for line in stream:
                if line.startswith("#"):
                    match = _HEADER.fullmatch(line.strip())
                    if match and match["key"].upper() == "STATION":  # (the last one counts)
                        ident = match["value"].strip()
                elif line.strip():
                    rows += 1
                    if rows == 2:  # (the units row: the header ends, as MesoWestFile reads it)
                        break
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFormatError(f"{path}: cannot read MesoWest file: {exc}") from exc
    if not ident:
        raise InputFormatError(f"{path}:1: header lacks the '# STATION: ...' line")
    return ident


def condition_value(cell: str) -> Value:
    """A condition cell's value: an integer code, the text, or ``none`` when missing.

    Example:
        >>> condition_value(" 71 "), condition_value("snow"), condition_value("M")
        (71, 'snow', 'none')
    """
    cell = cell.strip()
    if cell.lower() in _MISSING:
        return NONE
    return int(cell) if _is_int(cell) else cell


def _is_int(text: str) -> bool:
    return text.isdigit() or (text[:1] == "-" and text[1:].isdigit())


def read_mesowest(
    *paths: str | Path,
    on_reject: RejectHandler | None = None,
    positions: list[Position] | None = None,
) -> Iterator[Event]:
    """Read several stations' exports as one stream of readings ordered by time.

    Args:
        paths: MesoWest CSV files, each ordered by time (headers are checked at once).
        on_reject: called with each malformed row; default: log it.
        positions: a list each file's reader adds its :class:`Position` to.

    Returns:
        A lazy iterator of ``sensor_reading`` events; equal times keep the order of ``paths``.

    Example:
        >>> events = read_mesowest(*sorted(Path("data/mesowest/sample").glob("*.csv")))
        >>> next(events).args[0]
        'KEVW'
    """
    files = [MesoWestFile(path, on_reject, positions) for path in paths]
    return merge_streams(*files)
