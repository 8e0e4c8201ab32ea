from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from connectors.cli import main
from connectors.mesowest import (
    SHIPPED_STATIONS,
    GeneratorError,
    MesoWestFile,
    Storm,
    generate,
    load_stations,
    read_mesowest,
    simulate,
)
from reasoner.runtime.events import Event

START = datetime(2021, 1, 10, tzinfo=UTC)
SAMPLE = SHIPPED_STATIONS.parent / "sample"


def _blizzard(event: Event) -> bool:
    _, _, _, _, wind, _, visibility, condition, _ = event.args
    return (
        isinstance(wind, float)
        and isinstance(visibility, float)
        and wind >= 35
        and visibility < 0.25
        and condition in ("snow", "heavy snow")
    )


def test_same_seed_same_files_and_stations_independent(tmp_path: Path) -> None:
    storm = Storm("KSLC", START + timedelta(hours=20), hours=6)
    first = generate(tmp_path / "a", ["KSLC", "KOGD"], 2, 5, [storm])
    second = generate(tmp_path / "b", ["KOGD", "KSLC"], 2, 5, [storm])
    other_seed = generate(tmp_path / "c", ["KSLC"], 2, 6, [storm])
    assert [p.name for p in first] == ["KSLC.csv", "KOGD.csv"]
    for path in first:
        assert path.read_bytes() == (tmp_path / "b" / path.name).read_bytes()
    assert other_seed[0].read_bytes() != first[0].read_bytes()
    assert second[0].name == "KOGD.csv"


def test_interval_and_days_set_the_number_of_readings() -> None:
    [station] = [s for s in load_stations() if s.id == "KJAC"]
    readings = list(simulate(station, days=2, seed=1, interval_minutes=15))
    assert len(readings) == 2 * 96
    assert readings[1].end - readings[0].end == 900
    assert readings[0].end == int(START.timestamp())
    assert all(e.args[1] == e.end for e in readings)  # the time is an argument too


def test_placed_storm_is_a_blizzard_at_its_peak_and_nowhere_else() -> None:
    stations = {s.id: s for s in load_stations()}
    storm = Storm("KEVW", START + timedelta(days=1, hours=5), hours=8)
    for seed in range(5):
        readings = list(simulate(stations["KEVW"], 3, seed, [storm]))
        peak_from, peak_to = storm.peak()
        begin, end = storm.start.timestamp(), storm.start.timestamp() + 8 * 3600
        at_peak = [e for e in readings if peak_from <= e.end <= peak_to]
        assert len(at_peak) == 13  # 4 hours at 20-minute steps, both ends included
        assert all(_blizzard(e) for e in at_peak)
        assert all(begin <= e.end <= end for e in readings if _blizzard(e))
        quiet = [e for e in readings if not begin <= e.end <= end]
        assert all(e.args[7] in ("clear", "cloudy", "light snow") for e in quiet)


def test_a_weak_storm_brings_snow_but_no_blizzard() -> None:
    [station] = [s for s in load_stations() if s.id == "KPVU"]
    storm = Storm("KPVU", START + timedelta(hours=10), hours=8, intensity=0.5)
    readings = list(simulate(station, 1, 3, [storm]))
    assert not any(_blizzard(e) for e in readings)
    assert any(e.args[7] == "snow" for e in readings)


def test_bad_settings_raise_generator_errors(tmp_path: Path) -> None:
    with pytest.raises(GeneratorError, match="unknown station 'KNOPE'"):
        generate(tmp_path, ["KNOPE"], 1, 0)
    with pytest.raises(GeneratorError, match="storm at KOGD, which is not among"):
        generate(tmp_path, ["KSLC"], 1, 0, [Storm("KOGD", START, 3)])
    with pytest.raises(GeneratorError, match="must be positive"):
        generate(tmp_path, ["KSLC"], 0, 0)
    with pytest.raises(GeneratorError, match="listed twice"):
        generate(tmp_path, ["KSLC", "KSLC"], 1, 0)


def test_shipped_station_table_lists_mountain_state_stations() -> None:
    stations = load_stations()
    assert len(stations) >= 30
    assert {s.state for s in stations} == {"UT", "CO", "WY", "ID", "MT"}
    assert all(36 < s.lat < 49 and -117 < s.lon < -104 for s in stations)
    assert len({s.id for s in stations}) == len(stations)


def test_shipped_sample_is_reproduced_by_the_documented_command(tmp_path: Path) -> None:
    # Keep these arguments equal to the command in data/mesowest/README.md.
    code = main(
        [
            "mesowest",
            "generate",
            "--out",
            str(tmp_path),
            "--stations",
            "KSLC,KOGD,KPVU,KEVW,KJAC,KGJT",
            "--days",
            "3",
            "--seed",
            "2021",
            "--interval",
            "20",
            "--start",
            "2021-01-10T00:00:00Z",
            "--storm",
            "KOGD,2021-01-11T03:00:00Z,8",
            "--storm",
            "KSLC,2021-01-11T04:00:00Z,8",
            "--storm",
            "KEVW,2021-01-11T06:00:00Z,9",
            "--storm",
            "KPVU,2021-01-11T05:00:00Z,6,0.6",
        ]
    )
    assert code == 0
    shipped = sorted(SAMPLE.glob("*.csv"))
    assert [p.name for p in shipped] == sorted(p.name for p in tmp_path.glob("*.csv"))
    for path in shipped:
        assert path.read_bytes() == (tmp_path / path.name).read_bytes()


def test_shipped_sample_has_one_known_multi_station_blizzard() -> None:
    readings = list(
        read_mesowest(*sorted(SAMPLE.glob("*.csv")), on_reject=lambda r: pytest.fail(str(r)))
    )
    assert len(readings) == 6 * 3 * 72
    by_station: dict[str, list[int]] = {}
    for event in readings:
        if _blizzard(event):
            by_station.setdefault(str(event.args[0]), []).append(int(event.end))
    assert sorted(by_station) == ["KEVW", "KOGD", "KSLC"]
    day = datetime(2021, 1, 11, tzinfo=UTC).timestamp()
    for times in by_station.values():
        assert day < min(times) and max(times) < day + 16 * 3600
        assert max(times) - min(times) >= 3 * 3600
    stations = {MesoWestFile(p).station.id for p in SAMPLE.glob("*.csv")}
    assert stations == {"KSLC", "KOGD", "KPVU", "KEVW", "KJAC", "KGJT"}


def test_cli_reports_user_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mesowest", "generate", "--out", str(tmp_path), "--stations", "KSLC,KZZZ"]) == 1
    assert capsys.readouterr().err.startswith("reasoner: unknown station(s) KZZZ")
    with pytest.raises(SystemExit) as usage:
        main(
            ["mesowest", "generate", "--out", str(tmp_path), "--storm", "KSLC,2021-01-10T00:00:00Z"]
        )
    assert usage.value.code == 2
    assert "expected ID,START,HOURS[,INTENSITY]" in capsys.readouterr().err
