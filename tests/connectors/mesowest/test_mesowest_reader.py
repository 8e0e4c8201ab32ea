import io
from pathlib import Path

import pytest

from connectors.events import InputFormatError, Rejected
from connectors.mesowest import MesoWestFile, Station, read_mesowest, write_mesowest
from connectors.mesowest.reader import station_of
from connectors.mesowest.units import CANONICAL, known_units
from reasoner.runtime.events import Event

HEADER = """# STATION: {id}
# STATION NAME: Test station {id}
# LATITUDE: 40.5
# LONGITUDE: -111.5
# ELEVATION [{elevation_unit}]: {elevation}
# STATE: UT
"""


def _file(tmp_path: Path, ident: str, body: str, elevation: str = "1000", unit: str = "m") -> Path:
    path = tmp_path / f"{ident}.csv"
    path.write_text(HEADER.format(id=ident, elevation=elevation, elevation_unit=unit) + body)
    return path


def _read(path: Path) -> tuple[list[Event], list[Rejected]]:
    rejected: list[Rejected] = []
    return list(MesoWestFile(path, rejected.append)), rejected


def test_si_units_are_converted_and_metadata_exposed(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        "KXYZ",
        "Station_ID,Date_Time,air_temp_set_1,relative_humidity_set_1,wind_speed_set_1,"
        "wind_gust_set_1,visibility_set_1,weather_cond_code_set_1,precip_accum_one_hour_set_1\n"
        ",,Celsius,%,m/s,knots,kilometers,code,Millimeters\n"
        "KXYZ,2021-01-10T06:00:00Z,-10,85,20,40,0.2,71,2.54\n",
    )
    reader = MesoWestFile(path)
    assert reader.station == Station(
        "KXYZ", "Test station KXYZ", 40.5, -111.5, 3280.8 * 0.3048, "UT"
    )
    assert list(reader) == [
        Event(
            "sensor_reading",
            ("KXYZ", 1610258400, 14.0, 85.0, 44.739, 46.031, 0.124, 71, 0.1),
            1610258400,
            1610258400,
        )
    ]


def test_other_units_and_column_order(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        "KABC",
        "Date_Time,Station_ID,visibility_set_1,air_temp_set_1,wind_speed_set_1,pressure_set_1,"
        "weather_condition_set_1d\n"
        ",,meters,Kelvin,km/h,Pascals,text\n"
        "2021-01-10T06:00:00,KABC,402.336,273.15,56.327,80000,heavy snow\n",
        elevation="5000",
        unit="ft",
    )
    reader = MesoWestFile(path)
    assert reader.station.elevation == 1524.0  # 5000 ft
    [event] = list(reader)
    # No humidity, gust or precipitation columns: those values are 'none'.
    assert event.args == ("KABC", event.end, 32.0, "none", 35.0, "none", 0.25, "heavy snow", "none")


#: Per quantity: its column, its position in a reading's arguments, and per group of unit
#: spellings a value in that unit with the same value in the canonical unit, by hand
#: (1 mi = 1609.344 m, 1 in = 25.4 mm, 1 kn = 1852 m/h, °F = °C × 9/5 + 32).
UNIT_TABLE = {
    "temperature": (
        "air_temp_set_1",
        2,
        [
            (("fahrenheit", "°f", "degf", "f"), "50", 50.0),
            (("celsius", "°c", "degc", "c"), "10", 50.0),
            (("kelvin", "k"), "283.15", 50.0),
        ],
    ),
    "humidity": ("relative_humidity_set_1", 3, [(("%", "percent", "pct"), "85", 85.0)]),
    "speed": (
        "wind_speed_set_1",
        4,
        [
            (("mph", "miles/hour", "mi/h"), "10", 10.0),
            (("m/s", "meters/second", "ms-1", "m s-1"), "10", 22.369),  # 36000 / 1609.344
            (("knots", "knot", "kt", "kts"), "10", 11.508),  # 18520 / 1609.344
            (("km/h", "kph", "kmh", "kilometers/hour"), "16.09344", 10.0),
        ],
    ),
    "distance": (
        "visibility_set_1",
        6,
        [
            (("statute miles", "miles", "mi", "statute_miles"), "2", 2.0),
            (("kilometers", "km"), "1.609344", 1.0),
            (("meters", "m"), "1609.344", 1.0),
        ],
    ),
    "precipitation": (
        "precip_accum_one_hour_set_1",
        8,
        [
            (("inches", "in", "inch"), "1", 1.0),
            (("millimeters", "mm"), "25.4", 1.0),
            (("centimeters", "cm"), "2.54", 1.0),
        ],
    ),
}
UNIT_CASES = [
    (quantity, spelling, given, expected)
    for quantity, (_, _, groups) in UNIT_TABLE.items()
    for spellings, given, expected in groups
    for spelling in spellings
]


def test_the_unit_table_lists_every_spelling_the_reader_accepts() -> None:
    for quantity, (_, _, groups) in UNIT_TABLE.items():
        listed = [spelling for spellings, _, _ in groups for spelling in spellings]
        assert sorted(listed) == sorted(known_units(quantity))
    assert set(UNIT_TABLE) == set(CANONICAL)


@pytest.mark.parametrize(("quantity", "spelling", "given", "expected"), UNIT_CASES)
def test_every_unit_spelling_is_read_and_converted(
    tmp_path: Path, quantity: str, spelling: str, given: str, expected: float
) -> None:
    column, position, _ = UNIT_TABLE[quantity]
    for written in (spelling, f" {spelling.upper()} "):  # case and spaces do not matter
        path = _file(
            tmp_path,
            "KU",
            f"Station_ID,Date_Time,{column}\n,,{written}\nKU,2021-01-10T06:00:00Z,{given}\n",
        )
        [event] = list(MesoWestFile(path))
        assert event.args[position] == expected, written


def test_missing_values_are_none(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        "KXYZ",
        "Station_ID,Date_Time,air_temp_set_1,wind_speed_set_1,wind_gust_set_1,"
        "weather_condition_set_1d\n"
        ",,Fahrenheit,mph,mph,text\n"
        "KXYZ,2021-01-10T06:00:00Z,,M,NaN,\n"
        "KXYZ,2021-01-10T06:20:00Z,21.5,40,NA,snow\n",
    )
    events, rejected = _read(path)
    assert rejected == []
    assert [e.args[2:] for e in events] == [
        ("none", "none", "none", "none", "none", "none", "none"),
        (21.5, "none", 40.0, "none", "none", "snow", "none"),
    ]
    assert [e.args[:2] for e in events] == [("KXYZ", 1610258400), ("KXYZ", 1610259600)]


def test_malformed_rows_are_reported_with_file_and_line_and_skipped(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        "KXYZ",
        "Station_ID,Date_Time,air_temp_set_1,wind_speed_set_1\n"
        ",,Fahrenheit,mph\n"
        "KXYZ,2021-01-10T06:00:00Z,20,5\n"  # line 9
        "KXYZ,2021-01-10T06:20:00Z,20\n"
        "KXYZ,not a time,20,5\n"
        "KXYZ,2021-01-10T07:00:00Z,warm,5\n"
        "KOTHER,2021-01-10T07:20:00Z,20,5\n"
        "\n"
        "KXYZ,2021-01-10T07:40:00Z,19,6\n",  # line 15
    )
    events, rejected = _read(path)
    assert [e.args[2:4] for e in events] == [(20.0, "none"), (19.0, "none")]
    assert [(r.file, r.line) for r in rejected] == [(str(path), n) for n in (10, 11, 12, 13)]
    assert rejected[0].reason == "expected 4 cells, found 3"
    assert "not ISO-8601" in rejected[1].reason
    assert rejected[2].reason == "air_temp_set_1: 'warm' is not a number"
    assert rejected[3].reason == "station 'KOTHER' differs from the header's 'KXYZ'"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# LATITUDE: 1\n# LONGITUDE: 2\nStation_ID,Date_Time\n,\n", "lacks the '# STATION"),
        ("# STATION: K\n# LATITUDE: 1\n# LONGITUDE: 2\n", "no column header row"),
        ("# STATION: K\n# LATITUDE: 1\n# LONGITUDE: 2\nStation_ID,Date_Time\n", "no units row"),
        ("# STATION: K\n# LATITUDE: 1\n# LONGITUDE: 2\nStation_ID,Time\n,\n", "no 'Date_Time'"),
        (
            "# STATION: K\n# LATITUDE: 1\n# LONGITUDE: 2\nStation_ID,Date_Time,wind_speed_set_1\n"
            ",,furlongs/fortnight\n",
            "bad.csv:5: unknown unit 'furlongs/fortnight' for column wind_speed_set_1",
        ),
        ("# STATION: K\n# LATITUDE: north\n# LONGITUDE: 2\nStation_ID,Date_Time\n,\n", "position"),
    ],
)
def test_broken_headers_raise(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(InputFormatError, match=message):
        MesoWestFile(path)


def test_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(InputFormatError, match="cannot read MesoWest file"):
        MesoWestFile(tmp_path / "absent.csv")


def test_the_station_of_a_header_is_the_files(tmp_path: Path) -> None:
    sample = sorted(Path("data/mesowest/sample").glob("*.csv"))
    assert [station_of(p) for p in sample] == [MesoWestFile(p).station.id for p in sample]
    two = _file(tmp_path, "K1", "# STATION:  K2 \nStation_ID,Date_Time\n,\nK2,2021-01-10T00:00Z\n")
    assert station_of(two) == MesoWestFile(two).station.id == "K2"  # (the last line counts)
    bad = tmp_path / "bad.csv"
    bad.write_text("# STATION: K\nStation_ID,Date_Time\n")  # (no units row: found when read)
    assert station_of(bad) == "K"
    bad.write_text("# LATITUDE: 1\nStation_ID,Date_Time\n,\n")
    with pytest.raises(InputFormatError, match="lacks the '# STATION"):
        station_of(bad)
    # (a header line between the column row and the units row is the header's too)
    late = _file(tmp_path, "K0", "Station_ID,Date_Time\n# STATION: K3\n,\nK3,2021-01-10T00:00Z\n")
    assert station_of(late) == MesoWestFile(late).station.id == "K3"
    with pytest.raises(InputFormatError, match="cannot read MesoWest file"):
        station_of(tmp_path / "absent.csv")


def test_several_stations_merge_in_time_order(tmp_path: Path) -> None:
    body = "Station_ID,Date_Time,air_temp_set_1\n,,Fahrenheit\n"
    a = _file(
        tmp_path, "KAAA", body + "".join(f"KAAA,2021-01-10T0{h}:00:00Z,{h}\n" for h in (1, 3, 5))
    )
    b = _file(
        tmp_path, "KBBB", body + "".join(f"KBBB,2021-01-10T0{h}:00:00Z,{h}\n" for h in (0, 3, 4))
    )
    merged = [(e.args[0], e.args[2]) for e in read_mesowest(a, b)]
    assert merged == [
        ("KBBB", 0.0),
        ("KAAA", 1.0),
        ("KAAA", 3.0),  # equal times: the first file's reading first
        ("KBBB", 3.0),
        ("KBBB", 4.0),
        ("KAAA", 5.0),
    ]
    times = [e.end for e in read_mesowest(b, a)]
    assert times == sorted(times)


def test_writer_round_trip(tmp_path: Path) -> None:
    path = _file(
        tmp_path,
        "KXYZ",
        "Station_ID,Date_Time,air_temp_set_1,relative_humidity_set_1,wind_speed_set_1,"
        "wind_gust_set_1,visibility_set_1,weather_cond_code_set_1,precip_accum_one_hour_set_1\n"
        ",,Celsius,%,m/s,m/s,meters,code,mm\n"
        "KXYZ,2021-01-10T06:00:00Z,-10.3,85,17.2,,150,71,1.3\n"
        'KXYZ,2021-01-10T06:20:00Z,,,,,,"snow, blowing",\n'
        "KXYZ,2021-01-10T06:40:00.5Z,-11,90,18,25,100,snow,0\n",
    )
    original = MesoWestFile(path)
    events = list(original)
    out = tmp_path / "out" / "KXYZ.csv"
    out.parent.mkdir()
    assert write_mesowest(out, original.station, events) == 3
    again = MesoWestFile(out)
    assert again.station == original.station
    assert list(again) == events
    assert events[1].args[7] == "snow, blowing"
    text = out.read_text()
    assert ",,Fahrenheit,%,mph,mph,Statute miles,text,Inches\n" in text
    assert 'KXYZ,2021-01-10T06:20:00Z,,,,,,"snow, blowing",\n' in text


def test_writer_refuses_other_stations_readings() -> None:
    station = Station("KXYZ", "X", 40.0, -111.0)
    with pytest.raises(ValueError, match="not a sensor_reading of station KXYZ"):
        write_mesowest(io.StringIO(), station, [Event.at("sensor_reading", ("KABC",) * 9, 0)])
