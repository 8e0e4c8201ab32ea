"""Key groups' detection across micro-batches (no Spark: the micro-batches are simulated as
Spark runs them, each group's state live or restored from its state row) gives the single
engine's detections, and reports late events exactly; a state row that cannot be resumed is
refused; the sink writes and publishes each micro-batch once."""

from __future__ import annotations

import io
import json
import math
import pickle
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connectors.events.jsonl import JsonLinesWriter
from connectors.events.times import TimeStyle
from connectors.spark import keystate, live
from connectors.spark.detect import Stage
from connectors.spark.keystate import (
    DETECTION,
    EVENTS,
    LATE,
    GroupDetector,
    GroupState,
    Row,
    StateError,
    from_millis,
    timeout_millis,
)
from connectors.spark.runs import formatted_run
from connectors.spark.sources import Keys
from connectors.spark.stream import Sink
from reasoner.compiler.partition import analyse
from reasoner.language.parser import parse
from reasoner.runtime.checkpoint import encode
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.runtime.options import EngineOptions

PROGRAMS = [
    # a window, a WHERE, a sliding aggregate over time, an absolute time point
    "rise(S, P1, P2) <- (stock(S, P1, _V1) SEQ stock(S, P2, _V2)).10 WHERE P2 > P1.\n"
    "avg(S, A) <- aggregate(avg(P), stock(S, P, _V), A, time(5)).\n"
    "after(S, P) <- stock(S, P, _V) SEQ 25.\n",
    # a negation and a rule over a derived event
    "calm(S) <- NOT(stock(S, 9, _V))[stock(S, P1, _V1), stock(S, P2, _V2)].\n"
    "twice(S) <- (calm(S) SEQ calm(S)).6.\n",
]


def simulate(
    program: str, policy: str, batches: list[list[Event]], lateness: int, restores: list[bool]
) -> tuple[list[str], list[dict[str, object]]]:
    """Run the batches as Spark runs the query: the watermark is the latest end of the
    earlier batches less the lateness (never below 0), the keys are in two key groups (the
    stocks' keys in one, the tick's in the other), each group with new events or a due
    timeout is stepped, and one batch without data follows the last. A group's state is
    the live one, or restored from its state row when ``restores[batch]`` (another worker)."""
    parsed = parse(program)
    partitioning = analyse(parsed, policy)
    keys = Keys(partitioning.keys, whole=bool(partitioning.remainder))
    detector = GroupDetector(Stage(parsed, EngineOptions(policy=policy)), lateness, keys, "ck")
    states: dict[int, GroupState] = {}
    due: dict[int, object] = {}
    watermark, latest = 0, -math.inf
    detections: list[str] = []
    late: list[dict[str, object]] = []
    for number, batch in enumerate([*batches, []]):
        rows: dict[int, list[Row]] = {}
        for line, event in enumerate(batch, 1):
            key = keys.key(event)
            row = (f"batch{number}", line, key, json.dumps(encode(event)), False)
            rows.setdefault(len(key) % 2, []).append(row)
        called = set(rows) | {g for g, t in due.items() if t is not None and t <= watermark}
        for group in sorted(called):
            state = states.get(group)
            if state is None:
                state = states[group] = detector.new()
            elif restores[number]:
                row = detector.dump(state, "stamp")
                state = states[group] = detector.load(row, group, None)
            out, due[group] = detector.step(state, rows.get(group, []), watermark)
            runs = [pickle.loads(run) for kind, _, run in out if kind == DETECTION]
            detections += [line for run in runs for _, line in run]
            late += [json.loads(text) for kind, text, _ in out if kind == LATE]
        if batch:
            latest = max(latest, *(e.end for e in batch))
            watermark = max(watermark, latest - lateness)
    return detections, late


times = st.integers(0, 40)


@st.composite
def batched_streams(draw: st.DrawFn) -> list[list[Event]]:
    """Batches each ordered by time (a batch may go back before the previous one's end)."""
    batches = []
    for _ in range(draw(st.integers(1, 4))):
        events = draw(
            st.lists(
                st.builds(
                    lambda k, p, t: Event("stock", (k, p, 1), t, t),
                    st.sampled_from("AB"),
                    st.integers(1, 9),
                    times,
                ),
                max_size=12,
            )
        )
        batches.append(sorted(events, key=lambda e: e.end))
    return batches


@settings(max_examples=60, deadline=None)
@given(
    program=st.sampled_from(PROGRAMS),
    policy=st.sampled_from(["unrestricted", "recent", "chronological"]),
    batches=batched_streams(),
    lateness=st.integers(0, 3),
    restores=st.lists(st.booleans(), min_size=6, max_size=6),
)
def test_micro_batches_give_the_single_engines_detections(
    program: str, policy: str, batches: list[list[Event]], lateness: int, restores: list[bool]
) -> None:
    # A trailing event far ahead moves the watermark past everything, as the end of the
    # single engine's stream (its flush) does.
    tail = Event("tick", (), 100, 100)
    batches = [*batches[:-1], [*batches[-1], tail]]
    detections, late = simulate(program, policy, batches, lateness, restores)
    # Independently: late are the events ending before the watermark of their batch.
    expected_late, accepted, latest = [], [], -math.inf
    for number, batch in enumerate(batches):
        watermark = max(0, latest - lateness)
        for line, event in enumerate(batch, 1):
            if event.end < watermark:
                reason = (
                    f"late: ends at {event.end}, before the watermark {watermark} (the latest "
                    f"end of earlier micro-batches less the lateness {lateness})"
                )
                expected_late.append({"file": f"batch{number}", "line": line, "reason": reason})
            else:
                accepted.append(event)
        latest = max(latest, *(e.end for e in batch)) if batch else latest
    assert sorted(late, key=repr) == sorted(expected_late, key=repr)
    engine = Engine(program, policy=policy, lateness=lateness)
    buffer = io.StringIO()
    JsonLinesWriter(buffer, TimeStyle()).write_all(engine.run(accepted))
    assert sorted(detections) == sorted(buffer.getvalue().splitlines(keepends=True))


def test_a_group_is_called_again_at_its_next_waiting_event_or_timer() -> None:
    detector = GroupDetector(Stage(parse(PROGRAMS[0])), 2, Keys((), True))
    group = detector.new()
    rows = [("f", 1, "A", json.dumps(encode(Event("stock", ("A", 3, 1), 4, 4))), False)]
    assert detector.step(group, rows, 0) == ([(EVENTS, "1", None)], 4)  # it waits
    out, due = detector.step(group, [], 4)
    # released: an average at 4, then the next thing to do is the time point 25 (and the
    # average's window closing at 4 + 5 comes first)
    assert [line for kind, _, run in out if kind == DETECTION for _, line in pickle.loads(run)] == [
        '{"name":"avg","args":["A",3],"start":4,"end":4}\n'
    ]
    assert due == 9
    assert group.waiting.buffer == [] and group.texts == {}


def _row(detector: GroupDetector) -> tuple[str, str, bytes]:
    """The state row of a group that took two events, one of them still waiting."""
    group = detector.new()
    for line, (time, watermark) in enumerate([(4, 0), (6, 5)]):
        text = json.dumps(encode(Event("stock", ("A", 3, 1), time, time)))
        detector.step(group, [("f", line, "A", text, line == 0)], watermark)
    return detector.dump(group, "s1")


def _changed(meta: str = "", to: str = "", cut: int = 0, prefix: bytes = b"") -> Any:
    """A change of a state row: ``meta`` replaced by ``to``, the last ``cut`` characters of
    its JSON or bytes of its snapshot cut, ``prefix`` put before its snapshot."""

    def change(row: tuple[str, str, bytes]) -> tuple[str, str, bytes]:
        text = row[1].replace(meta, to) if meta else row[1]
        if cut < 0:
            return row[0], text, prefix + row[2][:cut]
        return row[0], text[: len(text) - cut], prefix + row[2]

    return change


def test_a_state_row_round_trips_and_a_live_state_is_reused_only_under_its_stamp() -> None:
    detector = GroupDetector(Stage(parse(PROGRAMS[0])), 0, Keys((), True), "/ck")
    row = _row(detector)
    restored = detector.load(row, 3, None)
    assert (restored.arrivals, restored.iso, len(restored.waiting.buffer)) == (2, {"A"}, 1)
    again = detector.dump(restored, "s1")
    assert (again[0], json.loads(again[1]), again[2]) == (row[0], json.loads(row[1]), row[2])
    live.keep(detector, 3, "s1", restored)
    assert live.take(detector, 3, row) == (restored, True)
    live.keep(detector, 3, "s1", restored)
    other = ("s2", *row[1:])  # written since by another worker
    again, reused = live.take(detector, 3, other)
    assert not reused and again is not restored
    assert again.engine is restored.engine  # (the engine is restored into, not compiled again)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (_changed('"format":4', '"format":2'), "of another state format (2; this version: 4)"),
        (_changed('"format":4', '"format":5'), "of another state format (5; this version: 4)"),
        (_changed('"program":"', '"program":"x'), "was written by another program"),
        (_changed(cut=5), "is corrupt"),
        (_changed(cut=-5), "is corrupt"),
        (_changed(prefix=b"x"), "is corrupt"),
    ],
)  # fmt: skip
def test_a_state_row_of_another_program_format_or_corrupt_is_refused_naming_the_checkpoint(
    change: Any, reason: str
) -> None:
    detector = GroupDetector(Stage(parse(PROGRAMS[0])), 0, Keys((), True), "/ck")
    with pytest.raises(StateError) as caught:
        detector.load(change(_row(detector)), 5, None)
    message = str(caught.value)
    assert message.startswith("/ck: the state of key group 5 ")
    assert reason in message
    assert message.endswith("or start a new checkpoint folder (--checkpoint)")


def test_a_state_row_of_another_program_is_refused() -> None:
    ours = GroupDetector(Stage(parse(PROGRAMS[0])), 0, Keys((), True), "/ck")
    theirs = GroupDetector(Stage(parse(PROGRAMS[1])), 0, Keys((), True), "/ck")
    with pytest.raises(StateError, match="written by another program"):
        ours.load(_row(theirs), 0, None)


def _batch(number: int) -> list[Row]:
    """Micro-batch ``number`` of a stream of 3 stocks per batch (the last one late from the
    fourth batch on, B with ISO times)."""
    stocks = [
        ("A", number % 4, 2 * number, False),
        ("B", 5 - number % 3, 2 * number + 1, True),
        ("A", 9, max(0, 2 * number - 4), False),
    ]
    return [
        ("f", 3 * number + k, key, json.dumps(encode(Event("stock", (key, p, 1), t, t))), iso)
        for k, (key, p, t, iso) in enumerate(stocks)
    ]


def _stepped(
    detector: GroupDetector, batches: int, restore_every: int = 0
) -> tuple[list[tuple[list[Any], Any]], list[tuple[str, str, bytes]], GroupState]:
    """A group stepped through ``batches`` micro-batches of :func:`_batch` (the watermark
    one before the batch's first end), its row written after each; restored from its row
    before every ``restore_every``-th batch after the first (0: never). Returns each
    batch's outputs and next call, each row, and the group."""
    group, found, rows = detector.new(), [], []
    for number in range(batches):
        if rows and restore_every and number % restore_every == 0:
            group = detector.load(rows[-1], 0, None)
        found.append(detector.step(group, _batch(number), max(0, 2 * number - 1)))
        rows.append(detector.dump(group, f"s{number}"))
    return found, rows, group


def _parsed(texts: dict[int, str]) -> dict[int, Any]:
    return {n: json.loads(text) for n, text in texts.items()}


def test_a_row_with_a_log_restores_the_uninterrupted_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(keystate, "LOG_BATCHES", 4)  # (a row logs 4 batches at most)
    detector = GroupDetector(Stage(parse(PROGRAMS[0])), 1, Keys((), True), "/ck")
    _, rows, _ = _stepped(detector, 12)
    logs = [len(json.loads(row[1])["log"]) for row in rows]
    assert logs == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1]  # (full writes, logs of batches)
    for stop, row in enumerate(rows, 1):  # a worker stops after batch `stop`; another restores
        *_, group = _stepped(detector, stop)
        restored = detector.load(row, 0, None)
        assert (restored.arrivals, restored.iso) == (group.arrivals, group.iso)
        assert _parsed(restored.texts) == _parsed(group.texts)
        assert restored.engine.snapshot() == group.engine.snapshot()
        again = detector.dump(restored, "s")  # (the same base and log)
        assert (json.loads(again[1]), again[2]) == (json.loads(row[1]), row[2])


@pytest.mark.parametrize(
    ("restore_every", "log_batches", "explain"),
    [(1, 4, False), (2, 32, False), (3, 2, False), (5, 4, False), (1, 32, True), (3, 4, True)],
)
def test_a_restored_group_steps_on_as_the_uninterrupted_one(
    restore_every: int, log_batches: int, explain: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keystate, "LOG_BATCHES", log_batches)
    stage = Stage(parse(PROGRAMS[0]), EngineOptions(explain=explain))
    detector = GroupDetector(stage, 1, Keys((), True), "/ck")
    found, _, _ = _stepped(detector, 14)
    assert sum(kind == DETECTION for out, _ in found for kind, *_ in out) >= 5
    assert sum(kind == LATE for out, _ in found for kind, *_ in out) >= 5
    assert _stepped(detector, 14, restore_every)[0] == found


#: Rules whose actions change the rules (a program of one key group).
CHANGING = """noop <- a do ins_static_rule(s1 :- s2).
noop <- c do ins_event_rule(r 'rule:' got(Y) <- x(Y)).
noop <- k do del_event_rule(r).
s2.
seen(E) <- x(E) WHERE s1.
"""


@pytest.mark.parametrize("restores", [[False] * 6, [True] * 6, [False, False, True] * 2])
def test_rule_changes_of_logged_batches_are_made_again_by_a_restore(restores: list[bool]) -> None:
    batches = [
        [Event("x", (1,), 1, 1), Event("a", (), 2, 2), Event("c", (), 3, 3)],
        [Event("x", (4,), 4, 4), Event("k", (), 5, 5), Event("x", (6,), 6, 6)],
        [Event("x", (7,), 7, 7), Event("tick", (), 100, 100)],
    ]
    detections, _ = simulate(CHANGING, "unrestricted", batches, 0, restores)
    buffer = io.StringIO()
    JsonLinesWriter(buffer, TimeStyle()).write_all(Engine(CHANGING).run(sum(batches, [])))
    assert sorted(detections) == sorted(buffer.getvalue().splitlines(keepends=True))
    assert len(detections) == 7  # (s1 holds from 2 on, got(Y) from 3 to 5)


def test_a_knowledge_query_writes_every_row_in_full() -> None:
    stage = Stage(parse(PROGRAMS[0]), knowledge=lambda: Engine("").knowledge)
    detector = GroupDetector(stage, 1, Keys((), True), "/ck")
    assert not detector.logging
    _, rows, _ = _stepped(detector, 4)
    assert [json.loads(row[1])["log"] for row in rows] == [[], [], [], []]


def _with_log(log: str) -> Any:
    """A change of a state row: its log replaced by ``log`` (JSON text)."""

    def change(row: tuple[str, str, bytes]) -> tuple[str, str, bytes]:
        head = row[1][: row[1].index(',"log":')]
        return row[0], f'{head},"log":{log}}}', row[2]

    return change


_STOCK = '["e","stock",["t","A",3,1],7,7]'


@pytest.mark.parametrize(
    ("log", "reason"),
    [
        ('{"a":1}', "its log is not a list"),
        ("[[1,[]]]", "is corrupt (not enough values to unpack"),
        ('[["x",[],[]]]', "a logged watermark is not a time"),
        ('[[8,[],["stock"]]]', "a logged event is not one taken"),
        (f"[[8,[],[{_STOCK}]]]", "a logged event is not one taken"),  # (before its watermark)
        (f'[[5,"A",[{_STOCK}]]]', "a logged batch is not"),
        ('[[5,[],[["z",1]]]]', "is corrupt (unknown tag"),
    ],
)
def test_a_corrupt_or_foreign_log_is_refused_naming_the_checkpoint(log: str, reason: str) -> None:
    detector = GroupDetector(Stage(parse(PROGRAMS[0])), 0, Keys((), True), "/ck")
    row = _with_log(log)(_row(detector))
    with pytest.raises(StateError) as caught:
        detector.load(row, 5, None)
    message = str(caught.value)
    assert message.startswith("/ck: the state of key group 5 is corrupt (")
    assert reason in message
    assert message.endswith("or start a new checkpoint folder (--checkpoint)")
    good = _with_log(f"[[5,[],[{_STOCK}]]]")(_row(detector))  # (and a good one is taken)
    assert detector.load(good, 5, None).arrivals == 3


#: A state row as the streaming command wrote it before the engine options were one record
#: (given as policy, tie-break and explain; arrival numbers from 0, the waiting events in
#: arrival order), of the rules below: two micro-batches of stock(A, P, 1) at 4 (P 3), then
#: at 9, 8, 9 (P 5, 6, 7), both below the watermark 2, lateness 2.
EARLIER_ROW = Path(__file__).parent / "states" / "before_engine_options.json"


def test_a_state_row_written_before_options_were_one_record_resumes() -> None:
    program = parse(
        "rise(S, P1, P2) <- (stock(S, P1, _V1) SEQ stock(S, P2, _V2)).10 WHERE P2 > P1.\n"
        "avg(S, A) <- aggregate(avg(P), stock(S, P, _V), A, time(5)).\n"
    )
    options = EngineOptions(policy="unrestricted", tie_break="longer", explain=False)
    detector = GroupDetector(Stage(program, options), 2, Keys((), True), "/ck")
    written = json.loads(EARLIER_ROW.read_text(encoding="utf-8"))
    row = (written["stamp"], written["meta"], written["engine"].encode())
    group = detector.load(row, 0, None)  # (the same program fingerprint; format 3: no log)
    assert (group.arrivals, len(group.waiting.buffer)) == (4, 4)
    assert json.loads(detector.dump(group, "s2")[1])["format"] == 4
    out, due = detector.step(group, [], 10)
    lines = [line for kind, _, run in out if kind == DETECTION for _, line in pickle.loads(run)]
    assert lines == [
        '{"name":"avg","args":["A",3],"start":4,"end":4}\n',
        '{"name":"avg","args":["A",4.5],"start":4,"end":8}\n',
        '{"name":"rise","args":["A",3,6],"start":4,"end":8}\n',
        '{"name":"rise","args":["A",3,5],"start":4,"end":9}\n',
        '{"name":"rise","args":["A",3,7],"start":4,"end":9}\n',
        '{"name":"avg","args":["A",5.5],"start":8,"end":9}\n',
        '{"name":"avg","args":["A",6],"start":8,"end":9}\n',
        '{"name":"avg","args":["A",6.5],"start":8,"end":9}\n',
        '{"name":"rise","args":["A",6,7],"start":8,"end":9}\n',
    ]
    assert due == 13


@pytest.mark.parametrize(
    ("options", "fingerprint"),
    [
        (EngineOptions(), "b947ba4915f120e792224ede0fd4c1b10f752829b95d3628d8cfcb14d505e753"),
        (
            EngineOptions(policy="recent", tie_break="shorter", explain=True),
            "e5167ab9d6f4126d7bf8b6fc679f12a5b6d06acace1cdc48179a6316d1fec67d",
        ),
    ],
)
def test_a_stage_keeps_the_fingerprint_of_earlier_versions(
    options: EngineOptions, fingerprint: str
) -> None:
    # (as `reasoner spark stream` gave its options before they were one record)
    assert Stage(parse("c(K) <- a(K) SEQ b(K). d <- c(K)."), options).fingerprint == fingerprint


@pytest.mark.parametrize(
    ("ms", "time", "timeout"),
    [(5000, 5, 4999), (2500, Fraction(5, 2), 2499), (0, 0, -1)],
)
def test_watermark_and_timeout_conversions(ms: int, time: object, timeout: int) -> None:
    assert from_millis(ms) == time
    assert type(from_millis(ms)) is type(time)
    # Spark calls a key when the watermark passes its timeout: at the watermark ms.
    assert timeout_millis(time) == timeout
    assert timeout < ms or ms == 0


class _Frame:
    """A micro-batch as foreachBatch hands it (only ``collect`` is used)."""

    def __init__(self, rows: list[tuple[str, str, bytes | None]]) -> None:
        self.rows = rows

    def collect(self) -> list[tuple[str, str, bytes | None]]:
        return self.rows


def test_the_sink_writes_each_batch_once_in_the_defined_order_and_publishes_it_once(
    tmp_path: Path,
) -> None:
    a, b = Event("avg", ("B", 2), 1, 3), Event("avg", ("A", 5), 3, 3)
    late = json.dumps({"file": "f", "line": 10, "reason": "late"})
    early = json.dumps({"file": "f", "line": 9, "reason": "late"})
    # two key groups' runs: b (and a repeat of it: two keys may derive one event), and a
    # from a key whose input wrote ISO times
    first = formatted_run([b], TimeStyle())
    second = sorted(formatted_run([a], TimeStyle(iso=True)) + first, key=lambda item: item[0])
    rows = [
        (DETECTION, "1", pickle.dumps(first)),
        (DETECTION, "2", pickle.dumps(second)),
        (LATE, late, None),
        (LATE, early, None),
        (EVENTS, "7", None),
    ]
    published: list[list[Event]] = []
    sink = Sink(tmp_path, published.append)
    sink(_Frame(rows), 3)  # type: ignore[arg-type]
    written = (tmp_path / "detections" / "batch-00000003.jsonl").read_text(encoding="utf-8")
    assert written == (
        '{"name":"avg","args":["B",2],"start":"1970-01-01T00:00:01Z","end":"1970-01-01T00:00:03Z"}\n'
        '{"name":"avg","args":["A",5],"start":3,"end":3}\n'
    )
    assert (tmp_path / "late" / "batch-00000003.jsonl").read_text() == f"{early}\n{late}\n"
    assert published == [[a, b]]
    assert sink.counts == {
        "events": 7,
        "detection": 2,
        "late": 2,
        "reject": 0,
        "batches": 1,
        "group_steps": 0,
        "reused": 0,
    }
    # Run again after a crash: the same files, not published twice.
    sink(_Frame(rows), 3)  # type: ignore[arg-type]
    assert (tmp_path / "detections" / "batch-00000003.jsonl").read_text() == written
    assert published == [[a, b]]
    # A new process publishes what earlier runs wrote, then skips those batches.
    again: list[list[Event]] = []
    restarted = Sink(tmp_path, again.append)
    restarted.republish()
    restarted(_Frame(rows), 3)  # type: ignore[arg-type]
    assert again == [[a, b]]
    assert sorted(p.name for p in (tmp_path / "detections").iterdir()) == ["batch-00000003.jsonl"]
