"""The input-format registry: every command's format list comes from it, each reader returns
its positions and time style, and a worker's share (files, or a byte range of JSON lines)
reads as that part of the whole input: the same events and rejections, the same lines."""

import argparse
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from connectors.cli import build_parser
from connectors.events.inputs import (
    FORMATS,
    REGISTRY,
    ReadContext,
    Share,
    format_names,
    read_share,
    split_input,
)
from connectors.events.times import TimeStyle

MESOWEST = (
    "# STATION: {id}\n# LATITUDE: 40.5\n# LONGITUDE: -111.5\n"
    "Station_ID,Date_Time,air_temp_set_1\n,,Fahrenheit\n"
)


def _choices(argv: list[str]) -> tuple[str, ...]:
    """The --format choices of the command ``argv`` names."""
    parser = build_parser()
    for name in argv:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
        parser = action.choices[name]
    found = next(a for a in parser._actions if a.dest == "format")  # noqa: SLF001
    return tuple(found.choices)


def test_every_command_takes_its_formats_from_the_registry() -> None:
    assert FORMATS == tuple(REGISTRY) == ("jsonl", "mesowest", "rdf", "trig", "nquads")
    assert _choices(["run"]) == FORMATS
    assert _choices(["why-not"]) == FORMATS
    assert _choices(["spark", "replay"]) == FORMATS
    assert _choices(["spark", "stream"]) == format_names(streams=True) == ("jsonl", "mesowest")
    assert {name: entry.split for name, entry in REGISTRY.items()} == {
        "jsonl": "lines",
        "mesowest": "files",
        "rdf": "none",
        "nquads": "none",
        "trig": "none",
    }


def _context(rejected: list) -> ReadContext:
    return ReadContext(rejected.append, {}, {}, TimeStyle())


def test_readers_return_their_positions_and_time_style(tmp_path: Path) -> None:
    csv = tmp_path / "K1.csv"
    csv.write_text(MESOWEST.format(id="K1") + "K1,2021-01-10T00:00:00Z,3\n")
    reading = read_share("mesowest", Share(str(csv)), _context([]))
    assert reading.style.iso  # MesoWest times are ISO text: detections are written so
    [event] = list(reading.events)
    assert [(p.file, p.line, p.holds(event)) for p in reading.positions] == [(str(csv), 6, True)]
    lines = tmp_path / "a.jsonl"
    lines.write_text('{"name": "a", "time": 1}\n{"name": "b", "time": "1970-01-01T00:00:02Z"}\n')
    reading = read_share("jsonl", Share(str(lines)), _context([]))
    assert not reading.style.iso
    assert [e.name for e in reading.events] == ["a", "b"]
    assert reading.style.iso and reading.positions[0].line == 2


def _read(path: Path, shares: list[Share]) -> tuple[list, list]:
    """Every share of ``path`` read in order: (event, line) pairs and rejections."""
    events, rejected = [], []
    for share in shares:
        reading = read_share("jsonl", share, _context(rejected))
        [where] = reading.positions
        events += [(event, where.line) for event in reading.events]
    return events, [str(r) for r in rejected]


_LINES = st.sampled_from(
    [
        '{"name": "a", "args": [1], "time": 3}\n',
        '{"name": "b", "args": ["x", {"iri": "urn:y"}], "start": 1, "end": 4}\n',
        '{"name": "c", "time": "1970-01-01T00:00:09Z"}\n',
        "\n",
        "not json\n",
        '{"name": "", "time": 1}\n',
        b'{"name": "\xff", "time": 1}\n'.decode("latin-1"),
        '{"name": "d", "time": 5}',  # (the last line may lack its end)
    ]
)


@settings(max_examples=80, deadline=None)
@given(
    st.booleans(),
    st.lists(_LINES, max_size=12),
    st.lists(st.integers(0, 400), max_size=5),
)
def test_byte_ranges_of_json_lines_read_as_the_whole_file(bom, lines, cuts) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "in.jsonl"
        path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + "".join(lines).encode("latin-1"))
        size = path.stat().st_size
        points = sorted({0, *(min(c, size) for c in cuts)})
        spans = [
            Share(str(path), start, stop)
            for start, stop in zip(points, [*points[1:], None], strict=True)
        ]
        assert _read(path, spans) == _read(path, [Share(str(path))])


def test_split_input_gives_each_worker_a_share(tmp_path: Path) -> None:
    paths = []
    for n, ident in enumerate(["K1", "K2", "K1", "K3"]):  # two files of K1: one worker
        path = tmp_path / f"{n}.csv"
        path.write_text(MESOWEST.format(id=ident) + f"{ident},2021-01-10T00:00:00Z,{n}\n" * (n + 1))
        paths.append(str(path))
    shares = split_input("mesowest", paths, 2)
    assert sorted(s.path for share in shares for s in share) == sorted(paths)
    assert all(s.whole for share in shares for s in share)
    [with_k1] = [share for share in shares if paths[0] in [s.path for s in share]]
    assert paths[2] in [s.path for s in with_k1]
    assert all([s.path for s in share] == sorted(s.path for s in share) for share in shares)
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text("".join(f'{{"name": "e", "args": [{n}], "time": {n}}}\n' for n in range(50)))
    shares = split_input("jsonl", [str(jsonl)], 3)
    assert [len(share) for share in shares] == [1, 1, 1]
    spans = [share[0] for share in shares]
    assert _read(jsonl, spans) == _read(jsonl, [Share(str(jsonl))])
    assert split_input("trig", ["a.trig", "b.trig"], 2) == [[Share("a.trig"), Share("b.trig")], []]
