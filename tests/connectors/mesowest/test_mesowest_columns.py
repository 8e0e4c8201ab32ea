"""The archive merge (read in rounds of blocks, a column at a time) gives exactly what the heap
merge of the row loops gives: the same events (values and their types), in the same order, each
reader's position, and every rejection (and a read error) handed over at the same moment."""

import heapq
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from operator import attrgetter
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from connectors.events import InputFormatError
from connectors.events.merge import merge_streams
from connectors.mesowest import MesoWestFile, archive, blocks, read_mesowest
from connectors.mesowest.archive import merge_files, merge_in_order, merge_in_order_labelled

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


@contextmanager
def _small_blocks(size: int):
    """Blocks of ``size`` bytes (one a file per round): many blocks and rounds on small files.
    (Reads then end on other offsets than the row loop's 8 KiB chunks: no test of bytes that
    are not UTF-8 runs under it.)"""
    with mock.patch.object(archive, "CHUNK", size), mock.patch.object(archive, "_ROUND_BYTES", 0):
        yield


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
def _archive(draw, steps=st.sampled_from([0, 0, 20, 40]), rows=8) -> list[list[str]]:  # noqa: B008
    """Up to 4 files of up to ``rows`` rows, ``steps`` minutes apart (less than 0: out of time
    order), some malformed."""
    files = []
    for n in range(draw(st.integers(1, 4))):
        ident, lines, minute = f"K{n}", [], 600
        for _ in range(draw(st.integers(0, rows))):
            minute += draw(steps)
            time = f"2021-01-{10 + minute // 1440}T{minute // 60 % 24:02d}:{minute % 60:02d}:00Z"
            time = draw(st.sampled_from([time] * 6 + ["bad", time.replace("Z", "+00:00")]))
            who = draw(st.sampled_from([ident] * 8 + ["KX"]))
            cells = [who, time, *(draw(_CELLS[k]) for k in ("temp", "wind", "vis", "cond"))]
            if draw(st.integers(0, 12)) == 0:
                cells = cells[:3]
            lines.append(",".join(cells) + "\n")
        files.append(lines)
    return files


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_archive(), st.sampled_from(["us", "si"]), st.sampled_from([None, 1, 2]))
def test_random_archives_give_what_the_heap_merge_gives(files, units, stop_at) -> None:
    with tempfile.TemporaryDirectory() as folder:
        paths = [_write(Path(folder), f"K{n}", rows, units=units) for n, rows in enumerate(files)]
        _same(paths, stop_at=stop_at)


def _rows(ident: str, count: int, step: int = 20, start: int = 0) -> list[str]:
    def at(minute: int) -> str:
        return f"2021-01-{10 + minute // 1440:02d}T{minute // 60 % 24:02d}:{minute % 60:02d}:00Z"

    return [f"{ident},{at(start + n * step)},{n % 7}.5,{n % 5},10,snow\n" for n in range(count)]


@pytest.mark.parametrize("size", [40, 64, 300, 8192])
def test_files_read_in_many_blocks_and_rounds(tmp_path: Path, size: int) -> None:
    a = _write(tmp_path, "KAAA", _rows("KAAA", 60))
    b = _write(tmp_path, "KBBB", _rows("KBBB", 25, step=50, start=10))
    odd = _rows("KODD", 40, step=30)
    odd[7], odd[20], odd[33] = "KODD,x\n", "# a note\n", "\n"
    odd[25], odd[38] = "KODD,2021-01-10T20:00:00Z,warm,5,10,snow\n", "KODD,2021-01-11T00:00:00Z\n"
    c = _write(tmp_path, "KODD", odd)
    late = _rows("KLATE", 30)
    late[5], late[17] = late[17], late[5]  # two readings out of time order
    d = _write(tmp_path, "KLATE", late)
    with _small_blocks(size):
        for paths in ([a, b, c, d], [d, c, b, a], [b]):
            _same(paths)
        for stop in (1, 2, 3):
            assert _same([a, c, b], stop_at=stop)[-1] == ("stopped",)


@pytest.mark.parametrize("size", [64, 8192])
def test_merge_in_order_refuses_a_file_out_of_order_or_unreadable(
    tmp_path: Path, size: int
) -> None:
    a = _write(tmp_path, "KAAA", _rows("KAAA", 40))
    late_rows = _rows("KLATE", 40)
    late_rows[30], late_rows[31] = late_rows[31], late_rows[30]
    late = _write(tmp_path, "KLATE", late_rows)
    odd_rows = _rows("KODD", 40)
    odd_rows[10] = "KODD,x\n"
    odd = _write(tmp_path, "KODD", odd_rows)
    with _small_blocks(size):
        rejected: list = []
        merged = merge_in_order([MesoWestFile(path, rejected.append) for path in (a, odd)])
        assert merged is not None and not rejected  # (handed over as the events are taken)
        assert [repr(e) for e in merged] == [
            repr(e)
            for e in heapq.merge(*(MesoWestFile(p) for p in (a, odd)), key=attrgetter("end"))
        ]
        assert len(rejected) == 1
        assert merge_in_order([MesoWestFile(path) for path in (a, late)]) is None
    broken = _write(tmp_path, "KBAD", _rows("KBAD", 600))
    broken.write_bytes(
        broken.read_bytes().replace(b"KBAD,2021-01-13T05:00", b"KBAD,2021-01-13T05:\xff0")
    )
    assert merge_in_order([MesoWestFile(path) for path in (a, broken)]) is None


@pytest.mark.parametrize("size", [64, 8192])
def test_merge_in_order_labelled_gives_each_events_file_and_line(tmp_path: Path, size: int) -> None:
    # the heap merge of the row loops: each event's file and line (its file's ``where``), and
    # after how many events each rejection is handed over
    a = _write(tmp_path, "KAAA", _rows("KAAA", 40))
    odd_rows = _rows("KODD", 40, step=30)
    odd_rows[0], odd_rows[10], odd_rows[25] = "KODD,x\n", "KODD,y\n", "KODD,z\n"
    odd = _write(tmp_path, "KODD", odd_rows)
    b = _write(tmp_path, "KBBB", _rows("KBBB", 25, step=50, start=10))
    paths = [a, odd, b]
    expected: list = []
    files = [MesoWestFile(path, lambda r: expected.append(("rejected", r.line))) for path in paths]
    for event in heapq.merge(*files, key=attrgetter("end")):
        index = next(i for i, file in enumerate(files) if file.where.event is event)
        expected.append((index, files[index].where.line, repr(event)))
    got: list = []
    with _small_blocks(size):

        def rejected(r: object) -> None:
            last = merged.last if merged is not None else None
            got.append(("rejected", r.line, None if last is None else (last[0], last[1])))  # type: ignore[attr-defined]

        merged = None
        merged = merge_in_order_labelled([MesoWestFile(path, rejected) for path in paths])
        assert merged is not None
        for block in merged.blocks():
            got += [(i, line, repr(e)) for i, line, e in zip(*block, strict=True)]
    # each rejection names the event the heap merge hands it over after (handed over a block
    # at a time: before the block's events are given)
    previous = None
    want = []
    for item in expected:
        if item[0] == "rejected":
            want.append((*item, previous))
        else:
            previous = (item[0], item[1])
    assert [item for item in got if item[0] != "rejected"] == [
        item for item in expected if item[0] != "rejected"
    ]
    assert [item for item in got if item[0] == "rejected"] == want
    assert len(want) == 3


_CUTS = [8192, 8193, 8200, 16383, 16384, 16420, 24575, -1]


@pytest.mark.parametrize(
    ("at", "bad"),
    [(at, bad) for at in _CUTS for bad in (b"\xff", b"\xc3", b"\xc3\xa9")]
    + [(8191, b"\xc3"), (8191, b"\xc3\xa9"), (16383, b"\xe2\x82\xac")],
)
def test_a_byte_not_utf8_anywhere_fails_where_the_row_loop_fails(
    tmp_path: Path, at: int, bad: bytes
) -> None:
    """A byte that is not UTF-8 (or a character cut short) ends the file where the row loop's
    8 KiB chunks make it fail; a whole character across a chunk's end is read."""
    a = _write(tmp_path, "KAAA", _rows("KAAA", 700, step=2))
    b = _write(tmp_path, "KBBB", _rows("KBBB", 700, step=2))
    data = b.read_bytes()
    where = len(data) - 1 if at < 0 else at
    b.write_bytes(data[:where] + bad + data[where + 1 :])
    trace = _same([a, b])
    whole = bad in (b"\xc3\xa9", b"\xe2\x82\xac")
    assert trace[-1][0] == ("event" if whole else "error")


def test_the_first_event_comes_before_the_archive_is_read(tmp_path: Path) -> None:
    paths = [_write(tmp_path, f"K{n}", _rows(f"K{n}", 400, step=5)) for n in range(3)]
    read: list[int] = []
    pread = blocks._pread

    def counted(path: str, size: int, offset: int) -> bytes:
        data = pread(path, size, offset)
        read.append(len(data))
        return data

    # (a round reads about _ROUND_BYTES of the archive, here a chunk a file)
    with (
        mock.patch.object(blocks, "_pread", counted),
        mock.patch.object(archive, "_ROUND_BYTES", 0),
    ):
        merged = merge_files([MesoWestFile(path) for path in paths])
        assert not read  # (nothing before the first event is asked for)
        next(merged)
        first = sum(read)
        rest = sum(1 for _ in merged)
    assert rest == 3 * 400 - 1
    assert first <= 3 * blocks.CHUNK < sum(read) == sum(path.stat().st_size for path in paths)


def test_the_merge_does_not_import_pandas() -> None:
    """(pyarrow's conversions from Python objects or to numpy import it: a second of start-up)"""
    code = (
        "import sys; from pathlib import Path; from connectors.mesowest import read_mesowest; "
        "list(read_mesowest(*sorted(Path('data/mesowest/sample').glob('*.csv')))); "
        "assert 'pyarrow' in sys.modules and 'pandas' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


_LATE = st.sampled_from([0, 0, 20, 40, 40, -20, -60])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _archive(steps=_LATE, rows=30), st.sampled_from([40, 100, 8192]), st.sampled_from([None, 1, 3])
)
def test_random_archives_in_small_blocks_give_what_the_heap_merge_gives(
    files, size, stop_at
) -> None:
    with tempfile.TemporaryDirectory() as folder, _small_blocks(size):
        paths = [_write(Path(folder), f"K{n}", rows) for n, rows in enumerate(files)]
        _same(paths, stop_at=stop_at)


def test_a_file_deleted_while_read_fails_after_the_readings_handed_out(tmp_path: Path) -> None:
    """(The heap merge holds its files open; the archive merge opens a file for each block.)"""
    paths = [_write(tmp_path, f"K{n}", _rows(f"K{n}", 300, step=5)) for n in range(2)]
    with _small_blocks(blocks.CHUNK):
        merged = merge_files([MesoWestFile(path) for path in paths])
        taken = [next(merged)]
        paths[1].unlink()
        with pytest.raises(InputFormatError, match="cannot read MesoWest file"):
            taken += list(merged)
    assert len(taken) < 600
