"""``reasoner run --workers N`` on JSON lines: every worker reads the whole input and keeps
its keys' events (connectors/events/line_shares.py), and the output, the rejections
(file:line, reason, in input order), the summary and the exit status are byte for byte those
of the router reading every line and sending the events; the detections those of one
process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from workers_reading import run_reading

from connectors.events import jsonl

#: Keyed rises per company; a global stage reading them (pairs across companies) and an
#: input type no key reaches (halt).
RULES = """
up(C, P1, P2) <- stock(C, P1) SEQ stock(C, P2) WHERE P2 > P1.
pair(C, D) <- up(C, _, _) SEQ up(D, _, _).
halted(C) <- up(C, _, _) SEQ halt(X).
"""


def _line(name: str, args: list[object], time: object) -> str:
    return json.dumps({"name": name, "args": args, "time": time})


#: Two files: ties across them, malformed lines (before the first event, between events,
#: after the last), an event of the wrong arity, one going back in time (late), one lasting
#: too long for --max-span 5, an event no rule reads, and halts for the global stage.
FILES = {
    "a.jsonl": [
        "not json",
        _line("stock", ["A", 1], 1),
        _line("stock", ["B", 5], 1),
        _line("stock", ["A", 2], 2),
        '{"name": "stock", "args": ["C"], "time": 2}',
        _line("stock", ["C", 1], 3),
        _line("stock", ["B", 6], 2),
        _line("noise", [1, 2], 3),
        json.dumps({"name": "stock", "args": ["B", 9], "start": 0, "end": 7}),
        _line("stock", ["C", 4], 4),
        _line("halt", [1], 4),
        '{"args": []}',
    ],
    "b.jsonl": [
        _line("stock", ["D", 1], 1),
        _line("stock", ["A", 3], 2),
        '{"name": "stock", "args": ["D", 2], "time": -1}',
        _line("stock", ["D", 3], 3),
        _line("stock", ["B", 7], 4),
        _line("halt", [2], 5),
        _line("stock", ["A", 9], 5),
        _line("stock", ["E", 1], 6),
        _line("stock", ["E", 2], 7),
        "[1, 2]",
    ],
}


@pytest.fixture
def stream(tmp_path: Path) -> tuple[Path, list[str]]:
    rules = tmp_path / "rules.event"
    rules.write_text(RULES)
    paths = []
    for name, lines in FILES.items():
        path = tmp_path / name
        path.write_text("\n".join(lines) + "\n")
        paths += ["--events", str(path)]
    return rules, paths


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_workers_reading_json_lines_write_the_routers_output(
    stream: tuple[Path, list[str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    workers: int,
) -> None:
    rules, events = stream
    argv = ["run", str(rules), *events, "--max-span", "5", "--workers", str(workers)]
    shared = run_reading(capsys, monkeypatch, argv, tmp_path / "a.out")
    assert shared[3] == 1
    routed = run_reading(capsys, monkeypatch, argv, tmp_path / "b.out", router=True)
    assert shared[:3] == routed[:3]
    status, out, err, _ = shared
    assert status == 3 and '"pair"' in out and '"halted"' in out  # (both stages ran)
    assert "late: ends at 2, before the current time 3" in err
    assert "longer than the engine's max_span 5" in err
    assert err.index("a.jsonl:1:") < err.index("b.jsonl:3:") < err.index("b.jsonl:10:")
    one = run_reading(capsys, monkeypatch, argv[:-2], tmp_path / "c.out")
    assert sorted(out.splitlines()) == sorted(one[1].splitlines())
    assert status == one[0]
    assert err.splitlines()[:-1] == one[2].splitlines()[:-1]  # (its summary names noise)


@pytest.mark.parametrize(
    ("first", "later", "read"),
    [
        ("2021-01-10T06:00:00Z", "2021-01-10T06:00:05Z", 1),  # ISO from the first line: ISO
        (1610258400, "2021-01-10T06:00:05Z", 0),  # ISO only later: the router reads
        (1610258400, 1610258405, 1),
    ],
)
def test_times_given_as_text_are_written_as_the_router_writes_them(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    first: object,
    later: object,
    read: int,
) -> None:
    rules = tmp_path / "rules.event"
    rules.write_text(RULES)
    lines = [_line("stock", ["A", 1], first), _line("stock", ["A", 2], later)]
    lines += [_line("stock", ["B", 1], later), _line("stock", ["B", 3], later)]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n")
    argv = ["run", str(rules), "--events", str(path), "--workers", "2"]
    shared = run_reading(capsys, monkeypatch, argv, tmp_path / "a.out")
    assert shared[3] == read
    assert shared[:3] == run_reading(capsys, monkeypatch, argv, tmp_path / "b.out", router=True)[:3]
    assert ("2021-01-10T06:00:05Z" in shared[1]) == (first != 1610258400 or later != 1610258405)


@pytest.mark.parametrize("extra", [["--strict"], ["--lateness", "2"], ["--speed", "1000000"]])
def test_options_between_two_events_keep_the_routers_reading(
    stream: tuple[Path, list[str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
) -> None:
    rules, events = stream
    argv = ["run", str(rules), *events, "--workers", "2", *extra]
    assert run_reading(capsys, monkeypatch, argv, tmp_path / "a.out")[3] == 0


#: Lines a key scan could misread (escaped quotes, a field name inside a string, spacing,
#: unicode escapes, repeated keys, a nested object with the same fields, keys equal as
#: numbers, two values on a line, one value on two lines, CR LF ...); ``@T@``: the time.
TRICKY = [
    '{"name": "stock", "args": ["A\\"B", 1], "time": @T@}',
    '{"name":"stock","args":["\\u0042",2],"time":@T@}',
    '{"args": ["C", 3], "time": @T@, "name": "stock"}',
    ' \t{"name" : "stock" , "args" : [ "D" , 4 ] , "time" : @T@ }\t ',
    '{"name": "halt", "name": "stock", "args": ["E", 5], "time": @T@}',
    '{"name": "stock", "args": ["A", 6], "time": @T@, "args": ["B", 6]}',
    '{"name": "stock", "args": ["\\"name\\": \\"halt\\", \\"args\\": [", 7], "time": @T@}',
    '{"name": "stock", "args": ["C", 8], "time": @T@, "x": {"name": "halt", "args": ["D"]}}',
    '{"name": "stock", "args": [{"functor": "f", "args": ["A"]}, 9], "time": @T@}',
    '{"name": "stock", "args": [1, 2], "time": @T@}',
    '{"name": "stock", "args": [1.0, 3], "time": @T@}',
    '{"name":"stock","args":["A",1],"time":@T@}{"name":"stock","args":["B",1],"time":@T@}',
    '{"name":"stock","args":["A",1],"time":@T@} {"name":"stock","args":["B",1],"time":@T@}',
    '{"name":"stock","args":["A",1],\n"time":@T@}',
    '{"name":"stock","args":["A",1],"x":{}\n{"time":@T@}}',
    '{"name": "stock", "args": ["D", 2], "start": @T@, "end": @T@}',
    '{"name":"stock","args":["E",3],"time":@T@,"start":@T@}',
    '{"name": "stock", "args": ["A", 4], "time": @T@.0}',
    '{"name": "stock", "args": ["\\u00e9", 4], "time": @T@}',
    '{"name": "stock", "args": ["\u00e9", 5], "time": @T@}',
    '{"name": "stock", "args": ["B", 5], "time": @T@}\r',
    '{"name": "stock", "args": ["B", 5], "time": true}',
    '{"name": "stock", "args": ["C", true], "time": @T@}',
]

_lines = st.one_of(
    st.tuples(
        st.sampled_from(["stock", "stock", "stock", "halt", "other"]),
        st.sampled_from(["A", "B", "C", "D", "E"]),
        st.integers(0, 9),
        st.integers(0, 3),
    ).map(lambda t: (t[0], [t[1], t[2]] if t[0] == "stock" else [t[2]], t[3])),
    st.sampled_from(["{", '{"name": ""}', "", '{"name": "stock", "args": [1], "time": 1}']),
    st.sampled_from(TRICKY),
)


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    files=st.lists(st.lists(_lines, max_size=12), min_size=1, max_size=3),
    workers=st.integers(1, 3),
    steps=st.lists(st.integers(0, 2), min_size=36, max_size=36),
    block=st.sampled_from([48, 160, 65536]),
)
def test_any_json_lines_give_the_routers_output(
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    files: list[list[object]],
    workers: int,
    steps: list[int],
    block: int,
) -> None:
    """Random files of keyed quotes, halts, events no rule reads, malformed lines and lines a
    key scan could misread (:data:`TRICKY`), times mostly rising by ``steps`` (a decrease: a
    late event), ties across files, read ``block`` bytes at a time (blocks of lines decoded
    together, and line by line, side by side)."""
    folder = tmp_path_factory.mktemp("lines")
    rules = folder / "rules.event"
    rules.write_text(RULES)
    events, escaped = [], False
    for n, lines in enumerate(files):
        time, text = 0, []
        for i, line in enumerate(lines):
            if isinstance(line, str):
                time += steps[i] if "@T@" in line else 0
                text.append(line.replace("@T@", str(time)))
                continue
            name, args, back = line
            time += steps[i]
            text.append(_line(name, args, max(time - back if back == 3 else time, 0)))
        path = folder / f"{n}.jsonl"
        path.write_bytes(("\n".join(text) + "\n").encode())
        events += ["--events", str(path)]
        escaped |= any("\\u" in line for line in text)
    argv = ["run", str(rules), *events, "--workers", str(workers)]
    monkeypatch.setattr(jsonl, "BLOCK_BYTES", block)
    shared = run_reading(capsys, monkeypatch, argv, folder / "a.out")
    assert shared[3] == (not escaped)  # (a \u escape may hide a time as text: the router reads)
    assert shared[:3] == run_reading(capsys, monkeypatch, argv, folder / "b.out", router=True)[:3]
