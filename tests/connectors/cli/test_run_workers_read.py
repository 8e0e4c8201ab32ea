"""``reasoner run --workers N`` on a MesoWest archive: the workers read their own stations'
files, and the output, the rejections (file:line, reason, in input order), the summary and the
exit status are byte for byte those of the router reading every file and sending the events."""

from __future__ import annotations

import random
import signal
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from workers_reading import run_reading

from connectors.cli import main
from connectors.events.run_session import RunSession
from connectors.events.stopping import Interrupted
from connectors.mesowest.generator import Storm, generate
from connectors.stations.table import Station, to_metres

ROOT = Path(__file__).resolve().parents[3]
RULES = [str(ROOT / "rules" / "blizzard.event"), str(ROOT / "rules" / "blizzard_noaa.event")]


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path]:
    """Twelve stations in a small area, a blizzard over most of them (area detections from
    the global stage), and their neighbourhood as facts."""
    folder = tmp_path_factory.mktemp("archive")
    rng = random.Random(5)
    stations = [
        Station(f"S{i:02d}", f"S {i}", 40 + rng.uniform(0, 0.5), -111 + rng.uniform(0, 0.5), 0)
        for i in range(12)
    ]
    stations = [Station(s.id, s.name, s.lat, s.lon, to_metres(5000, "ft")) for s in stations]
    start = datetime(2021, 1, 10, 6, tzinfo=UTC)
    storms = [
        Storm(s.id, start + timedelta(minutes=20 * i), 9, 1.2) for i, s in enumerate(stations[:9])
    ]
    paths = [str(p) for p in generate(folder / "csv", stations, 1.5, 3, storms)]
    facts = folder / "near.event"
    facts.write_text(
        "".join(
            f"near_station('{a.id}', '{b.id}').\n" for a in stations for b in stations if a != b
        )
    )
    return paths, facts


def _argv(paths: list[str], facts: Path, *extra: str) -> list[str]:
    events = [arg for path in paths for arg in ("--events", path)]
    return ["run", *RULES, str(facts), "--format", "mesowest", *events, *extra]


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_workers_reading_their_stations_write_the_routers_output(
    archive: tuple[list[str], Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    workers: int,
) -> None:
    paths, facts = archive
    argv = _argv(paths, facts, "--workers", str(workers), "--explain")
    status, out, err, read = run_reading(capsys, monkeypatch, argv, tmp_path / "a.jsonl")
    assert read == 1
    assert (status, out, err) == run_reading(
        capsys, monkeypatch, argv, tmp_path / "b.jsonl", router=True
    )[:3]
    assert '"blizzardArea"' in out and '"blizzardWarning"' in out  # (both stages ran)
    single = run_reading(capsys, monkeypatch, _argv(paths, facts), tmp_path / "c.jsonl")[1]
    assert sorted(out.splitlines()) == sorted(
        run_reading(capsys, monkeypatch, [*_argv(paths, facts), "--explain"], tmp_path / "d.jsonl")[
            1
        ].splitlines()
    )
    assert len(single.splitlines()) == len(out.splitlines())


def _spoil(paths: list[str], folder: Path) -> list[str]:
    """Copies of the archive with malformed rows in several files (a bad number, another
    station's id, a row cut short, a time that is no time), one of them before its file's
    first reading and one after its last."""
    spoiled = []
    for n, path in enumerate(paths):
        lines = Path(path).read_text().splitlines(keepends=True)
        first = next(i for i, line in enumerate(lines) if line.startswith(Path(path).stem + ","))
        if n == 1:
            lines[first + 5] = lines[first + 5].replace(",", ",x", 3)
            lines[first + 40] = "S99" + lines[first + 40][3:]
        if n == 4:
            lines[first] = lines[first].split(",")[0] + ",2021\n"
            lines.append(lines[-1].replace(":00Z", ":0xZ", 1))
        if n == 7:
            lines[first + 60] = lines[first + 60].replace("2021-", "2021/", 1)
        copy = folder / Path(path).name
        copy.write_text("".join(lines))
        spoiled.append(str(copy))
    return spoiled


@pytest.mark.parametrize("workers", [2, 3])
def test_malformed_rows_in_several_files_are_reported_in_input_order(
    archive: tuple[list[str], Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    workers: int,
) -> None:
    paths, facts = archive
    spoiled = _spoil(paths, tmp_path)
    argv = _argv(spoiled, facts, "--workers", str(workers))
    status, out, err, read = run_reading(capsys, monkeypatch, argv, tmp_path / "a.jsonl")
    assert read == 1 and status == 3
    assert err.count("skipped ") == 5
    assert (status, out, err) == run_reading(
        capsys, monkeypatch, argv, tmp_path / "b.jsonl", router=True
    )[:3]
    # one process reports the same rows, in the same order
    single = run_reading(capsys, monkeypatch, _argv(spoiled, facts), tmp_path / "c.jsonl")
    assert [line for line in single[2].splitlines() if line.startswith("skipped")] == [
        line for line in err.splitlines() if line.startswith("skipped")
    ]


def test_strict_stops_at_the_first_malformed_row_in_input_order(
    archive: tuple[list[str], Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    paths, facts = archive
    spoiled = _spoil(paths, tmp_path)
    single = run_reading(
        capsys, monkeypatch, [*_argv(spoiled, facts), "--strict"], tmp_path / "a.jsonl"
    )
    for workers in ("1", "2", "3"):
        argv = _argv(spoiled, facts, "--workers", workers, "--strict")
        status, _, err, read = run_reading(capsys, monkeypatch, argv, tmp_path / "b.jsonl")
        assert status == 4 and read == 0  # (the router reads: it stops where one process does)
        assert err.splitlines()[0] == single[2].splitlines()[0]
        assert err.splitlines()[0].startswith(f"skipped {spoiled[4]}:")


def test_a_file_out_of_time_order_is_read_by_the_router(
    archive: tuple[list[str], Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    paths, facts = archive
    lines = Path(paths[2]).read_text().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if line.startswith(Path(paths[2]).stem + ","))
    lines[first + 3], lines[first + 4] = lines[first + 4], lines[first + 3]
    swapped = tmp_path / Path(paths[2]).name
    swapped.write_text("".join(lines))
    files = [*paths[:2], str(swapped), *paths[3:]]
    argv = _argv(files, facts, "--workers", "2")
    status, out, err, read = run_reading(capsys, monkeypatch, argv, tmp_path / "a.jsonl")
    assert read == 0 and status == 3 and "late" in err  # (a worker found it: the router read)
    assert (status, out, err) == run_reading(
        capsys, monkeypatch, argv, tmp_path / "b.jsonl", router=True
    )[:3]


def test_a_run_resumed_from_a_checkpoint_writes_the_uninterrupted_output(
    archive: tuple[list[str], Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    paths, facts = archive
    whole = run_reading(
        capsys, monkeypatch, _argv(paths, facts, "--workers", "2"), tmp_path / "a.jsonl"
    )
    argv = _argv(paths, facts, "--workers", "2", "--checkpoint", str(tmp_path / "cp"))
    argv += ["--checkpoint-every", "300"]
    out = tmp_path / "b.jsonl"
    with monkeypatch.context() as patch:  # a crash after the second checkpoint
        saves = []
        from connectors.events.checkpoints import Checkpoints

        original = Checkpoints.save

        def crash(self, *args):  # type: ignore[no-untyped-def]
            original(self, *args)
            saves.append(1)
            if len(saves) == 2:
                raise Interrupted(signal.SIGINT)

        patch.setattr(Checkpoints, "save", crash)
        main([*argv, "--output", str(out)])  # (cut short: the checkpoint stays)
        assert len(saves) >= 2 and any((tmp_path / "cp").iterdir())
    status, text, _, read = run_reading(capsys, monkeypatch, argv, out)
    assert (status, text, read) == (whole[0], whole[1], 0)


def test_the_router_opens_no_file_when_the_workers_read_them(
    archive: tuple[list[str], Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    paths, facts = archive
    opened: list[str] = []
    original = RunSession._events

    def spy(self: RunSession) -> object:
        opened.append("router")
        return original(self)

    monkeypatch.setattr(RunSession, "_events", spy)
    argv = _argv(paths, facts, "--workers", "2")
    status, out, _, read = run_reading(capsys, monkeypatch, argv, tmp_path / "a.jsonl")
    assert (status, read, opened) == (0, 1, [])
    assert out.count('"areaSettling"') > 0  # (times written as the input gives them: ISO)
    assert '"2021-01-10T' in out


@pytest.mark.parametrize("broken", ["# STATION: S99\nStation_ID,Date_Time\n", None])
def test_a_file_the_router_cannot_divide_fails_as_in_one_process(
    archive: tuple[list[str], Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    broken: str | None,
) -> None:
    paths, facts = archive
    bad = tmp_path / "bad.csv"  # a header without its units row, or no file at all
    if broken is not None:
        bad.write_text(broken)
    files = [*paths[:2], str(bad), *paths[2:]]
    one = run_reading(capsys, monkeypatch, _argv(files, facts), tmp_path / "a.jsonl")
    two = run_reading(
        capsys, monkeypatch, _argv(files, facts, "--workers", "2"), tmp_path / "b.jsonl"
    )
    assert two[3] == 0 and one[0] != 0 and str(bad) in one[2]
    assert two[:3] == one[:3]


def test_readings_the_engine_refuses_are_reported_as_one_process_reports_them(
    archive: tuple[list[str], Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # (readings of another arity than the rules': every one refused by the engine's checks,
    # with its file, line and the EventError's text, the event with it)
    paths, _ = archive
    rules = tmp_path / "odd.event"
    rules.write_text("odd(S) <- sensor_reading(S, T, V).\n")
    events = [arg for path in paths[:3] for arg in ("--events", path)]
    argv = ["run", str(rules), "--format", "mesowest", *events]
    status, _, err, read = run_reading(
        capsys, monkeypatch, [*argv, "--workers", "2"], tmp_path / "a.jsonl"
    )
    assert read == 1 and status == 3
    single = run_reading(capsys, monkeypatch, argv, tmp_path / "b.jsonl")
    assert single[0] == status
    assert single[2] == err
    assert "sensor_reading takes 3 argument(s), not 9: Event(" in err
