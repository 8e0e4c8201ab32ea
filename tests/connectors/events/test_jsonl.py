import io
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connectors.events import (
    InputFormatError,
    JsonLinesWriter,
    Rejected,
    TimeStyle,
    merge_streams,
    read_jsonl,
)
from connectors.events.jsonl import read_jsonl_blocks
from connectors.events.rejects import Position
from reasoner.runtime.events import Detection, Event
from reasoner.values import IRI, Struct


def _read(text: str, style: TimeStyle | None = None) -> tuple[list[Event], list[Rejected]]:
    rejected: list[Rejected] = []
    stream = io.StringIO(text)
    stream.name = "in.jsonl"
    return list(read_jsonl(stream, style=style, on_reject=rejected.append)), rejected


def test_reads_atomic_and_interval_events_with_iris_and_lists() -> None:
    events, rejected = _read(
        '{"name": "stock", "args": [1, 101.5, 300], "time": 17}\n'
        '{"name": "at", "args": [{"iri": "http://ex.org/s"}, [1, ["a"]]], "start": 18, "end": 20}\n'
        '{"name": "tick", "time": 21.5}\n'
    )
    assert rejected == []
    assert events == [
        Event("stock", (1, 101.5, 300), 17, 17),
        Event("at", (IRI("http://ex.org/s"), (1, ("a",))), 18, 20),
        Event("tick", (), 21.5, 21.5),
    ]


def test_iso_times_become_epoch_seconds_and_are_remembered() -> None:
    style = TimeStyle()
    events, _ = _read('{"name": "a", "time": 5}\n', style)
    assert not style.iso and events[0].end == 5
    events, _ = _read('{"name": "a", "time": "2021-01-10T06:20:00Z"}\n', style)
    assert style.iso
    assert events[0].start == events[0].end == 1610259600
    events, _ = _read('{"name": "a", "start": "2021-01-10T07:20:00+01:00", "end": 1610259601}')
    assert (events[0].start, events[0].end) == (1610259600, 1610259601)


def test_bad_lines_are_reported_with_file_and_line_and_skipped() -> None:
    text = "\n".join(
        [
            '{"name": "ok", "time": 1}',
            "{not json",
            '{"args": [1], "time": 2}',
            '{"name": "a", "time": "yesterday"}',
            '{"name": "a", "start": 9, "end": 3}',
            '{"name": "a", "time": -1}',
            '{"name": "a", "args": [true], "time": 2}',
            '{"name": "a", "args": [{"x": 1}], "time": 2}',
            '{"name": "a", "time": 2, "end": 3}',
            '{"name": "a", "start": 2}',
            "[1, 2]",
            "",
            '{"name": "ok", "time": 4}',
        ]
    )
    events, rejected = _read(text)
    assert [e.end for e in events] == [1, 4]
    assert [(r.file, r.line) for r in rejected] == [("in.jsonl", n) for n in range(2, 12)]
    reasons = [r.reason for r in rejected]
    assert reasons[0].startswith("bad JSON")
    assert reasons[1] == "missing or empty 'name'"
    assert "not ISO-8601" in reasons[2]
    assert reasons[3] == "start 9 is after end 3"
    assert "non-negative" in reasons[4]
    assert "unsupported argument true" in reasons[5]
    assert "not both" in reasons[7]
    assert str(rejected[0]).startswith("in.jsonl:2: bad JSON")


def test_missing_file_is_an_input_format_error(tmp_path: Path) -> None:
    with pytest.raises(InputFormatError, match="no such events file"):
        read_jsonl(tmp_path / "absent.jsonl")


def test_reads_a_file_by_path(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text('{"name": "a", "args": ["x"], "time": 3}\n{"name": "b"}\n')
    rejected: list[Rejected] = []
    assert list(read_jsonl(path, on_reject=rejected.append)) == [Event("a", ("x",), 3, 3)]
    assert rejected == [Rejected(str(path), 2, "missing 'time' (or both 'start' and 'end')")]


def test_writer_writes_numbers_iris_structs_and_lists() -> None:
    out = io.StringIO()
    writer = JsonLinesWriter(out)
    event = Event("ce", (IRI("http://x/y"), Struct("f", (1, "a")), (1, (2,)), Fraction(1, 2)), 3, 9)
    assert writer.write_all([event, Event("e", (), Fraction(4, 2), 5.5)]) == 2
    lines = out.getvalue().splitlines()
    assert json.loads(lines[0]) == {
        "name": "ce",
        "args": [{"iri": "http://x/y"}, {"functor": "f", "args": [1, "a"]}, [1, [2]], 0.5],
        "start": 3,
        "end": 9,
    }
    assert lines[1] == '{"name":"e","args":[],"start":2,"end":5.5}'


def test_written_lines_read_back_equal_in_iso_form() -> None:
    style = TimeStyle()
    text = (
        '{"name": "r", "args": [{"iri": "http://x/s"}, ["a", 2]], "time": "2021-01-10T06:20:00Z"}\n'
        '{"name": "s", "args": [{"functor": "g", "args": [1]}], '
        '"start": "2021-01-10T06:20:00Z", "end": "2021-01-10T09:20:00.5Z"}\n'
    )
    events, _ = _read(text, style)
    out = io.StringIO()
    JsonLinesWriter(out, style).write_all(events)
    assert '"start":"2021-01-10T06:20:00Z","end":"2021-01-10T09:20:00.500000Z"' in out.getvalue()
    again, rejected = _read(out.getvalue())
    assert rejected == [] and again == events


def test_merge_orders_by_end_time_and_is_stable() -> None:
    a = [Event("a", (1,), 0, 1), Event("a", (2,), 2, 5), Event("a", (3,), 5, 5)]
    b = [Event("b", (1,), 1, 1), Event("b", (2,), 5, 5)]
    c: list[Event] = []
    merged = [(e.name, e.args[0]) for e in merge_streams(a, b, c)]
    assert merged == [("a", 1), ("b", 1), ("a", 2), ("a", 3), ("b", 2)]
    assert list(merge_streams(b)) == b


def _detection(event: Event, *sources: Event) -> Detection:
    detection = Detection(*event)
    detection.sources = sources
    return detection


def test_writer_adds_the_sources_of_a_detection_encoded_like_the_record() -> None:
    smoke = Event("smoke", (IRI("http://x/room1"), Fraction(1, 2)), 10, 10)
    heat = Event("heat", (Struct("level", (3,)), ("a", 2)), 11, 12)
    out = io.StringIO()
    JsonLinesWriter(out).write(_detection(Event("fire", ("room1",), 10, 12), smoke, heat))
    assert json.loads(out.getvalue()) == {
        "name": "fire",
        "args": ["room1"],
        "start": 10,
        "end": 12,
        "sources": [
            {"name": "smoke", "args": [{"iri": "http://x/room1"}, 0.5], "start": 10, "end": 10},
            {
                "name": "heat",
                "args": [{"functor": "level", "args": [3]}, ["a", 2]],
                "start": 11,
                "end": 12,
            },
        ],
    }


def test_writer_gives_source_times_in_iso_form_when_the_input_used_it() -> None:
    source = Event("a", (), 1610259600, 1610259600)
    out = io.StringIO()
    JsonLinesWriter(out, TimeStyle(iso=True)).write(
        _detection(Event("d", (), 1610259600, 1610263200), source)
    )
    assert out.getvalue() == (
        '{"name":"d","args":[],"start":"2021-01-10T06:20:00Z","end":"2021-01-10T07:20:00Z",'
        '"sources":[{"name":"a","args":[],"start":"2021-01-10T06:20:00Z",'
        '"end":"2021-01-10T06:20:00Z"}]}\n'
    )


def test_writer_output_without_sources_is_unchanged() -> None:
    plain, empty = io.StringIO(), io.StringIO()
    event = Event("ce", (IRI("http://x/y"), 2.5), 3, 9)
    JsonLinesWriter(plain).write(event)
    JsonLinesWriter(empty).write(_detection(event))
    expected = '{"name":"ce","args":[{"iri":"http://x/y"},2.5],"start":3,"end":9}\n'
    assert plain.getvalue() == empty.getvalue() == expected


@given(
    st.text(min_size=1),
    st.lists(st.one_of(st.integers(), st.text(), st.floats(allow_nan=False, allow_infinity=False))),
    st.integers(0, 10**12),
    st.integers(0, 10),
)
def test_written_lines_are_what_json_writes_and_read_back(
    name: str, args: list[object], start: int, span: int
) -> None:
    event = Event(name, tuple(args), start, start + span)
    buffer = io.StringIO()
    JsonLinesWriter(buffer).write(event)
    expected = json.dumps(
        {"name": name, "args": args, "start": start, "end": start + span},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    assert json.loads(buffer.getvalue()) == json.loads(expected)
    assert buffer.getvalue().count("\n") == 1 and buffer.getvalue().endswith("\n")
    assert next(read_jsonl(io.StringIO(buffer.getvalue()))) == event
    as_bytes = io.BytesIO(buffer.getvalue().encode())
    assert next(read_jsonl(as_bytes)) == event


def test_rejection_reasons_are_exact_whichever_decoder_saw_the_line() -> None:
    text = "\n".join(
        [
            "{not json",
            "[1, 2]",
            '{"name": "a", "args": [1, NaN], "time": 2}',
            '{"name": "a", "args": {"x": 1}, "time": 2}',
            '{"name": "a", "args": [{"iri": "http://x/s"}], "time": 2, "start": null}',
            '{"name": "a", "args": [1], "time": 2, "start": null}',
            '{"name": "a", "args": [1], "start": null, "end": 3}',
            '{"name": "", "args": [1], "time": 2}',
            '{"name": "a", "args": [1], "time": 2} x',
            "   ",
            '{"name": "a", "args": [1], "time": null, "start": 2, "end": 2}',
        ]
    )
    events, rejected = _read(text)
    assert events == [Event("a", (1,), 2, 2)]
    quotes = "Expecting property name enclosed in double quotes"
    assert [(r.line, r.reason) for r in rejected] == [
        (1, f"bad JSON: {quotes}: line 1 column 2 (char 1)"),
        (2, "a line must be a JSON object"),
        (3, "bad JSON: JSON is malformed: invalid character (byte 26)"),
        (4, "'args' must be a list"),
        (5, "give either 'time' or 'start' and 'end', not both"),
        (6, "give either 'time' or 'start' and 'end', not both"),
        (7, "missing 'time' (or both 'start' and 'end')"),
        (8, "missing or empty 'name'"),
        (9, "bad JSON: Extra data: line 1 column 39 (char 38)"),
    ]


def test_a_line_that_is_not_utf8_is_rejected_alone_and_a_bom_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_bytes(
        b'\xef\xbb\xbf{"name": "a", "time": 1}\n'
        b'{"name": "b\xff", "time": 2}\r\n'
        b'{"name": "c\xc3\xa9", "args": [{"iri": "http://x/\xc3\xa9"}], "time": 3}\r\n'
    )
    rejected: list[Rejected] = []
    events = list(read_jsonl(path, on_reject=rejected.append))
    assert events == [Event("a", (), 1, 1), Event("c\u00e9", (IRI("http://x/\u00e9"),), 3, 3)]
    assert rejected == [Rejected(str(path), 2, "not UTF-8: byte 12 is 0xff (invalid start byte)")]


def test_standard_input_gets_the_same_decoding() -> None:
    script = (
        "from connectors.events import read_jsonl\n"
        "print([e.name for e in read_jsonl('-', on_reject=lambda r: print(r))])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=b'\xef\xbb\xbf{"name": "a", "time": 1}\n{"name": "\xfe", "time": 2}\n',
        capture_output=True,
        check=True,
    )
    assert done.stdout.decode().splitlines() == [
        "<stdin>:2: not UTF-8: byte 11 is 0xfe (invalid start byte)",
        "['a']",
    ]


def test_a_time_beyond_the_documented_range_rejects_its_line_only(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text(
        '{"name": "a", "time": 5}\n'
        '{"name": "a", "time": 1e308}\n'
        '{"name": "a", "time": 100000000000000000000}\n'
        '{"name": "a", "start": 6, "end": 9007199254740993}\n'
        '{"name": "a", "time": 7}\n'
    )
    rejected: list[Rejected] = []
    assert list(read_jsonl(path, on_reject=rejected.append)) == [
        Event("a", (), 5, 5),
        Event("a", (), 7, 7),
    ]
    limit = "is not a non-negative number up to 9007199254740992"
    assert rejected == [
        Rejected(str(path), 2, f"time 1e+308 {limit}"),
        Rejected(str(path), 3, f"time 100000000000000000000 {limit}"),
        Rejected(str(path), 4, f"time 9007199254740993 {limit}"),
    ]


#: Lines for the block reader: the writer's form, json's, spans, plain and non-plain arguments,
#: and lines that are bad or that a block decoded at once could misread (two values on a line,
#: one value on two, a repeated key, an unknown one, blank lines, CR LF, spacing, escapes,
#: a byte that is not UTF-8, a time out of range, a wrong arity).
_BLOCK_LINES = [
    b'{"name":"a","args":["x",1],"time":@}',
    b'{"name":"a","args":["x",1.5],"start":@,"end":@}',
    b'{"name": "a", "args": ["y", 2], "time": @}',
    b'{"name":"b","args":[],"time":@}',
    b'{"name":"b","time":@}',
    b'{"name":"a","args":[{"iri":"http://x/y"},1],"time":@}',
    b'{"name":"a","args":["\\"}\\n{\\"",1],"time":@}',
    b'{"name":"a","args":["\\u00e9",1],"time":@}',
    b'{"name":"a","args":["x",1],"time":@}{"name":"a","args":["x",1],"time":@}',
    b'{"name":"a","args":["x",1],"time":@} {"name":"b","time":@}',
    b'{"name":"a","args":["x",1],"x":{}\n{"time":@}}',
    b'{"name":"a","args":["x",1],\n"time":@}',
    b'{"name":"b","name":"a","args":["x",1],"time":@}',
    b'{"name":"a","args":["x",1],"time":"@","time":@}',
    b'{"name":"a","args":["x",1],"time":@,"note":{"name":"b"}}',
    b'{"name":"a","args":["x",1],"time":@,"start":@}',
    b'{"name":"a","args":["x",1],"time":null,"start":@,"end":@}',
    b'{"name":"a","args":["x",1],"start":9,"end":@}',
    b'{"name":"a","args":["x"],"time":@}',
    b'{"name":"","time":@}',
    b'{"name":"a","args":["x",true],"time":@}',
    b'{"name":"a","args":["x",1],"time":true}',
    b'{"name":"a","args":["x",1],"time":9007199254740993}',
    b'{"name":"a","args":["x",1],"time":@.0}',
    b'{"name":"a","args":["x\xff",1],"time":@}',
    b'{"name":"a","args":["x",1],"time":@}\r',
    b'  {"name":"a","args":["x",1],"time":@}',
    b"",
    b"   ",
    b"[1]",
    b"not json",
]


@given(
    lines=st.lists(st.tuples(st.sampled_from(_BLOCK_LINES), st.integers(0, 20)), max_size=30),
    bom=st.booleans(),
    ended=st.booleans(),
    size=st.sampled_from([1, 24, 64, 200, 1 << 16]),
)
def test_blocks_give_the_events_and_rejections_of_the_line_reader(
    tmp_path_factory: pytest.TempPathFactory,
    lines: list[tuple[bytes, int]],
    bom: bool,
    ended: bool,
    size: int,
) -> None:
    """read_jsonl_blocks, whatever its block size, gives read_jsonl's events (of the same
    types), line numbers and rejections, in the same order."""
    path = tmp_path_factory.mktemp("blocks") / "in.jsonl"
    text = b"\n".join(line.replace(b"@", str(time).encode()) for line, time in lines)
    path.write_bytes(b"\xef\xbb\xbf" * bom + text + b"\n" * ended)
    arities = {"a": {2}}
    expected: list[object] = []
    positions: list[Position] = []
    read = read_jsonl(path, on_reject=expected.append, arities=arities, positions=positions)
    for event in read:
        expected.append((positions[0].line, event))
    found: list[object] = []
    for block in read_jsonl_blocks(str(path), arities, size):
        rejected = iter(block.rejected)
        after, line = next(rejected, (None, None))
        for index in range(len(block.ends)):
            while after == index:
                found.append(line)
                after, line = next(rejected, (None, None))
            found.append((block.lines[index], block.event(index)))
        found += [line] if after is not None else []
        found += [line for _, line in rejected]
    assert repr(found) == repr(expected)
