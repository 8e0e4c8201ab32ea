"""The column-at-a-time archive merge gives exactly what the heap merge of the row loops gives:
the same events (values and their types), in the same order, each reader's position, and
every rejection (and a read error) handed over at the same moment."""

import heapq
import tempfile
from operator import attrgetter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from connectors.events import InputFormatError
from connectors.events.merge import merge_streams
from connectors.mesowest import MesoWestFile, read_mesowest
from connectors.mesowest.archive import merge_files

HEADER = "# STATION: {id}\n# LATITUDE: 40.5\n# LONGITUDE: -111.5\n"
COLUMNS = (
    "Station_ID,Date_Time,air_temp_set_1,wind_speed_set_1,visibility_set_1,"
    "weather_condition_set_1d\n"
)
UNITS = {"us": ",,Fahrenheit,mph,Statute miles,text\n", "si": ",,Celsius,m/s,km,text\n"}


def _trace(paths: list[Path], columns: bool, stop_at: int | None = None) -> list[tuple]:
    """What a consumer sees: each event (repr: 1 and 1.0 differ) with the line its reader
    names, each rejection where it is handed over, a read error; ``stop_at``: the consumer
    stops (as --strict does) at that rejection."""
    trace: list[tuple] = []

    class Stop(Exception):
        pass

    def on_reject(rejected):
        trace.append(("rejected", str(rejected)))
        if stop_at is not None and sum(t[0] == "rejected" for t in trace) == stop_at:
            raise Stop

    files = [MesoWestFile(path, on_reject) for path in paths]
    merged = merge_files(files) if columns else heapq.merge(*files, key=attrgetter("end"))
    try:
        for event in merged:
            lines = [f.where.line for f in files if f.where.event is event]
            trace.append(("event", repr(event), lines))
    except InputFormatError as error:
        trace.append(("error", str(error)))
    except Stop:
        trace.append(("stopped",))
    return trace


def _write(folder: Path, name: str, rows: list[str], units: str = "us", ident: str = "") -> Path:
    path = folder / f"{name}.csv"
    path.write_text(HEADER.format(id=ident or name) + COLUMNS + UNITS[units] + "".join(rows))
    return path


def _row(ident: str, hour: int, temp: str = "20.5", wind: str = "5", vis: str = "10") -> str:
    return f"{ident},2021-01-10T{hour:02d}:00:00Z,{temp},{wind},{vis},snow\n"


def _same(paths: list[Path], **kwargs) -> list[tuple]:
    columns, heap = _trace(paths, True, **kwargs), _trace(paths, False, **kwargs)
    assert columns == heap
    return columns


def test_clean_files_tie_in_file_order(tmp_path: Path) -> None:
    a = _write(tmp_path, "KAAA", [_row("KAAA", h) for h in (1, 3, 3, 5)])
    b = _write(tmp_path, "KBBB", [_row("KBBB", h, temp="-4") for h in (0, 3, 4, 5)])
    c = _write(tmp_path, "KCCC", [_row("KCCC", h, wind="") for h in (3, 5)], units="si")
    trace = _same([a, b, c])
    stations = [t[1].split("'")[3] for t in trace]
    assert stations == ["KBBB", "KAAA"] + ["KAAA"] * 2 + ["KBBB", "KCCC", "KBBB"] + [
        "KAAA",
        "KBBB",
        "KCCC",
    ]
    _same([c, b, a])


def test_units_conditions_and_missing_values_match_the_row_loop(tmp_path: Path) -> None:
    rows = [
        "KSI,2021-01-10T01:00:00Z,-3.3,12.5,0.4,71\n",
        "KSI,2021-01-10T02:00:00Z,,0,,-3\n",
        "KSI,2021-01-10T03:00:00Z,1e1,7,2, Heavy snow \n",
        "KSI,2021-01-10T04:00:00Z,-0,7,2,\n",
        "KSI,2021-01-10T05:00:00Z,5.,.5,3,na\n",
    ]
    path = _write(tmp_path, "KSI", rows, units="si")
    trace = _same([path])
    assert len(trace) == 5 and all(t[0] == "event" for t in trace)


@pytest.mark.parametrize(
    "odd",
    [
        "KODD,2021-01-10T02:00:00Z,20\n",  # a cell short
        "KODD,2021-01-10T02:00:00Z,20,5,10,snow,extra\n",
        "KODD,not a time,20,5,10,snow\n",
        "KODD,2021-02-30T02:00:00Z,20,5,10,snow\n",
        "KODD,1969-12-31T23:00:00Z,20,5,10,snow\n",
        "KODD,2021-01-10T02:00:00+00:00,20,5,10,snow\n",  # another spelling, accepted
        "KODD,2021-01-10T02:00:00.5Z,20,5,10,snow\n",  # a fraction: a float time
        "KODD,2021-01-10 02:00:00Z,20,5,10,snow\n",
        "KODD,2021-01-10T02:00:00Z,warm,5,10,snow\n",
        "KODD,2021-01-10T02:00:00Z,M,NA,NaN,M\n",
        "KODD,2021-01-10T02:00:00Z, 20 ,inf,10,snow\n",
        "KODD,2021-01-10T02:00:00Z,1_0,5,10,snow\n",
        "KOTHER,2021-01-10T02:00:00Z,20,5,10,snow\n",
        " KODD ,2021-01-10T02:00:00Z,20,5,10,snow\n",
        ",2021-01-10T02:00:00Z,20,5,10,snow\n",
        '"KODD",2021-01-10T02:00:00Z,20,5,10,"snow, heavy"\n',
        "\n",
        "   \n",
        "# a note\n",
        "KODD,2021-01-10T02:00:00Z,20,5,10,snow\r\n",
        "KODD,2021-01-10T02:00:00Z,20,5,10,snow\r",
    ],
)
def test_an_odd_row_anywhere_gives_what_the_row_loop_gives(tmp_path: Path, odd: str) -> None:
    plain = _write(tmp_path, "KPLAIN", [_row("KPLAIN", h) for h in range(5)])
    for where in (0, 2, 4):
        rows = [_row("KODD", h) for h in (1, 2, 3, 4)]
        rows.insert(where, odd)
        odd_file = _write(tmp_path, f"KODD{where}", rows, ident="KODD")
        _same([plain, odd_file])
        _same([odd_file, plain])
        _same([odd_file])


def test_files_without_events_and_files_out_of_order(tmp_path: Path) -> None:
    empty = _write(tmp_path, "KEMPTY", [])
    rejected = _write(tmp_path, "KREJ", ["KREJ,x,1,2,3,snow\n", "KREJ,2021\n"])
    plain = _write(tmp_path, "KPLAIN", [_row("KPLAIN", h) for h in range(4)])
    late = _write(tmp_path, "KLATE", [_row("KLATE", h) for h in (2, 1, 3)])
    _same([empty, rejected, plain])
    _same([plain, late, rejected])
    trace = _same([rejected, empty])
    assert [t[0] for t in trace] == ["rejected", "rejected"]


def test_strict_stops_at_the_same_event(tmp_path: Path) -> None:
    a = _write(tmp_path, "KAAA", [_row("KAAA", h) for h in range(6)])
    b = _write(tmp_path, "KBBB", [_row("KBBB", 1), "KBBB,x\n", _row("KBBB", 4), "KBBB,y\n"])
    for stop in (1, 2):
        trace = _same([a, b], stop_at=stop)
        assert trace[-1] == ("stopped",)


def test_an_unreadable_byte_fails_where_the_row_loop_fails(tmp_path: Path) -> None:
    # (far enough into the file that the header is read first: text is decoded in chunks)
    def rows(ident: str) -> list[str]:
        return [
            f"{ident},2021-01-10T{m // 60:02d}:{m % 60:02d}:00Z,1,2,3,snow\n" for m in range(600)
        ]

    a = _write(tmp_path, "KAAA", rows("KAAA"))
    b = _write(tmp_path, "KBBB", rows("KBBB"))
    b.write_bytes(
        b.read_bytes().replace(b"snow\nKBBB,2021-01-10T08:00", b"sn\xffw\nKBBB,2021-01-10T08:00")
    )
    trace = _same([a, b])
    assert trace[-1][0] == "error" and "cannot read MesoWest file" in trace[-1][1]


def test_merge_streams_and_read_mesowest_take_the_column_merge(tmp_path: Path) -> None:
    paths = [_write(tmp_path, f"K{n}", [_row(f"K{n}", h) for h in range(3)]) for n in range(3)]
    files = [MesoWestFile(path) for path in paths]
    assert type(merge_streams(*files)).__name__ == "generator"
    assert list(merge_streams(*files)) == list(heapq.merge(*files, key=attrgetter("end")))
    assert list(read_mesowest(*paths)) == list(heapq.merge(*files, key=attrgetter("end")))


_CELLS = {
    "temp": st.sampled_from(["20.5", "-3", "", "M", "warm", "NaN", " 7 ", "1e2", "-0"]),
    "wind": st.sampled_from(["5", "40.25", "", "NA", "x"]),
    "vis": st.sampled_from(["10", "0.125", "", "nan"]),
    "cond": st.sampled_from(["snow", "71", "", "M", " heavy snow ", "-2", "none"]),
}


@st.composite
def _archive(draw) -> list[list[str]]:
    files = []
    for n in range(draw(st.integers(1, 4))):
        ident, rows, minute = f"K{n}", [], 0
        for _ in range(draw(st.integers(0, 8))):
            minute += draw(st.sampled_from([0, 0, 20, 40]))
            time = f"2021-01-10T{minute // 60:02d}:{minute % 60:02d}:00Z"
            time = draw(st.sampled_from([time] * 6 + ["bad", time.replace("Z", "+00:00")]))
            who = draw(st.sampled_from([ident] * 8 + ["KX"]))
            cells = [who, time, *(draw(_CELLS[k]) for k in ("temp", "wind", "vis", "cond"))]
            if draw(st.integers(0, 12)) == 0:
                cells = cells[:3]
            rows.append(",".join(cells) + "\n")
        files.append(rows)
    return files


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_archive(), st.sampled_from(["us", "si"]), st.sampled_from([None, 1, 2]))
def test_random_archives_give_what_the_heap_merge_gives(files, units, stop_at) -> None:
    with tempfile.TemporaryDirectory() as folder:
        paths = [_write(Path(folder), f"K{n}", rows, units=units) for n, rows in enumerate(files)]
        _same(paths, stop_at=stop_at)
