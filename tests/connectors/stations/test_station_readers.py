"""Station tables (CSV), Linked-Sensor-Data RDF and the synthetic generator."""

from pathlib import Path

import pytest

from connectors.stations import read_station_csv, write_station_csv
from connectors.stations.lsd import read_station_rdf
from connectors.stations.synthetic import synthetic_stations, write_synthetic_stations
from reasoner.errors import KnowledgeError

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "data" / "stations" / "us-mountain-stations.csv"
KSFO = Path(__file__).parent / "data" / "KSFO.rdf"


def test_shipped_sample_is_real_mountain_state_stations() -> None:
    stations = read_station_csv(SAMPLE)
    assert len(stations) == 122
    assert {s.state for s in stations} == {"UT", "CO", "WY", "ID", "MT"}
    slc = next(s for s in stations if s.id == "KSLC")
    assert slc.name == "Salt Lake City International Airport"
    assert (slc.lat, slc.lon) == pytest.approx((40.788393, -111.977773))
    assert slc.elevation == pytest.approx(1289.6)


def test_csv_round_trip(tmp_path: Path) -> None:
    stations = synthetic_stations(5, seed=3)
    write_station_csv(stations, tmp_path / "s.csv")
    assert read_station_csv(tmp_path / "s.csv") == stations


def test_empty_elevation_is_none(tmp_path: Path) -> None:
    file = tmp_path / "s.csv"
    file.write_text("id,name,lat,lon,elevation,state\nKX,X,1.5,2.5,,UT\n")
    assert read_station_csv(file)[0].elevation is None


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("K X,X,1,2,3,UT", "station id 'K X' must be letters, digits, '_' or '-'"),
        ("KX,X,91,2,3,UT", "latitude 91.0 is outside [-90.0, 90.0]"),
        ("KX,X,1,east,3,UT", "longitude 'east' is not a number"),
        ("KX,X,1,2,high,UT", "elevation 'high' is not a number"),
    ],
)
def test_malformed_rows_name_file_and_line(tmp_path: Path, row: str, message: str) -> None:
    file = tmp_path / "s.csv"
    file.write_text(f"id,name,lat,lon,elevation,state\nKA,A,1,2,3,UT\n{row}\n")
    with pytest.raises(KnowledgeError) as info:
        read_station_csv(file)
    assert str(info.value) == f"{file}:3: {message}"


def test_missing_columns_and_duplicates(tmp_path: Path) -> None:
    file = tmp_path / "s.csv"
    file.write_text("id,name,lat\nKA,A,1\n")
    with pytest.raises(KnowledgeError, match=r"lacks columns \['lon', 'elevation', 'state'\]"):
        read_station_csv(file)
    file.write_text("id,name,lat,lon,elevation,state\nKA,A,1,2,3,UT\nKA,B,1,2,3,UT\n")
    with pytest.raises(KnowledgeError, match="duplicate station id 'KA'"):
        read_station_csv(file)


def test_linked_sensor_data_rdf() -> None:
    found = read_station_rdf(KSFO)
    (ksfo,) = found.stations
    assert (ksfo.id, ksfo.name, ksfo.state) == ("KSFO", "KSFO", "")
    assert (ksfo.lat, ksfo.lon, ksfo.elevation) == pytest.approx((37.61972, -122.36472, 10.0))
    (link,) = found.near
    assert link.station_id == "KSFO"
    assert link.feature_iri == "http://sws.geonames.org/5391989/"
    assert link.distance_km == pytest.approx(1.5 * 1.609344)


def test_rdf_without_coordinates_is_an_error(tmp_path: Path) -> None:
    file = tmp_path / "s.nt"
    file.write_text(
        "<http://e/s> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> "
        "<http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#System> .\n"
        '<http://e/s> <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#ID> "KX" .\n'
    )
    with pytest.raises(KnowledgeError, match="has no processLocation"):
        read_station_rdf(file)
    file.write_text("this is not RDF")
    with pytest.raises(KnowledgeError, match="cannot read station RDF"):
        read_station_rdf(file)


def test_synthetic_stations_are_seeded(tmp_path: Path) -> None:
    a = write_synthetic_stations(tmp_path / "a.csv", 50, seed=7)
    b = write_synthetic_stations(tmp_path / "b.csv", 50, seed=7)
    assert a.read_text() == b.read_text()
    stations = read_station_csv(a)
    assert len(stations) == 50 and stations[49].id == "S000049"
    assert all(25.0 <= s.lat <= 49.0 and -124.5 <= s.lon <= -67.0 for s in stations)
