"""The MesoWest station table (elevation in feet) read by the shared station-table reader."""

import io
from pathlib import Path

import pytest

from connectors.cli import main
from connectors.mesowest import MesoWestFile, load_stations, write_mesowest
from connectors.mesowest.knowledge import write_station_table
from connectors.stations import read_station_csv
from reasoner.errors import KnowledgeError

HEADER = "id,name,lat,lon,elevation,state\n"


def test_feet_become_metres_and_come_back_as_feet(tmp_path: Path) -> None:
    table = tmp_path / "stations.csv"
    table.write_text(HEADER + "KSLC,Salt Lake City,40.788393,-111.977773,4230.9,UT\n")
    [station] = load_stations(table)
    assert station.elevation == pytest.approx(1289.57832, abs=1e-9)  # 4230.9 x 0.3048
    # A MesoWest file header carries feet: the elevation written is the table's, and reads back.
    out = tmp_path / "KSLC.csv"
    write_mesowest(out, station, [])
    assert "# ELEVATION [ft]: 4230.9\n" in out.read_text()
    assert MesoWestFile(out).station == station
    # The knowledge pipeline's table carries metres (to 0.1 m).
    metres = write_station_table([station], tmp_path / "kb-stations.csv")
    assert metres.read_text().splitlines()[1] == (
        "KSLC,Salt Lake City,40.788393,-111.977773,1289.6,UT"
    )
    assert read_station_csv(metres)[0].elevation == 1289.6


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("KX,X,north,-111,4000,UT", "latitude 'north' is not a number"),
        ("KX,X,40,-191,4000,UT", "longitude -191.0 is outside [-180.0, 180.0]"),
        ("KX,X,40,-111,4000 ft,UT", "elevation '4000 ft' is not a number"),
        ("KSLC,Again,40,-111,4000,UT", "duplicate station id 'KSLC'"),
    ],
)
def test_bad_rows_name_file_line_and_what_was_expected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], row: str, message: str
) -> None:
    table = tmp_path / "stations.csv"
    table.write_text(HEADER + f"KSLC,Salt Lake City,40.8,-112.0,4230.9,UT\n{row}\n")
    where = f"{table}:" if message.startswith("duplicate") else f"{table}:3:"
    with pytest.raises(KnowledgeError) as info:
        load_stations(table)
    assert str(info.value) == f"{where} {message}"
    # The command reports it as an error (exit status 1), writing nothing.
    out = tmp_path / "out"
    assert main(["mesowest", "generate", "--out", str(out), "--station-table", str(table)]) == 1
    assert capsys.readouterr().err == f"reasoner: {where} {message}\n"
    assert not out.exists()


def test_a_missing_column_is_named(tmp_path: Path) -> None:
    table = tmp_path / "stations.csv"
    table.write_text("id,name,lat,lon,state\nKSLC,Salt Lake City,40.8,-112.0,UT\n")
    with pytest.raises(KnowledgeError) as info:
        load_stations(table)
    assert str(info.value) == f"{table}:1: station table lacks columns ['elevation']"


def test_writer_header_in_feet_from_metres() -> None:
    out = io.StringIO()
    write_mesowest(out, load_stations()[0], [])
    assert "# ELEVATION [ft]: 4230.9\n" in out.getvalue()  # KSLC, as the shipped table says
