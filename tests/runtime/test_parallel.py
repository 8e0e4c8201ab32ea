"""Parallel workers give the single engine's detections, in the defined order, for any
number of workers, under every policy."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from strategies import keyed_streams, partitionable_programs

from reasoner.errors import EventError, ReasonerError, RuleCompileError, SnapshotError
from reasoner.language.ast import Program, dump
from reasoner.language.parser import parse
from reasoner.runtime import checkpoint
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Detection, Event
from reasoner.runtime.explain import explain, to_json
from reasoner.runtime.options import EngineOptions
from reasoner.runtime.order import event_order
from reasoner.runtime.parallel import ParallelEngine
from reasoner.runtime.stages import StageEngine, stage_engine
from reasoner.runtime.worker import ordered_batch
from reasoner.values import Struct


def _single(program: Program, stream: list[Event], options: dict) -> list[Event]:
    try:
        return event_order(Engine(program, **options).run(stream))
    except RuleCompileError:
        reject()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    partitionable_programs(),
    keyed_streams(),
    st.sampled_from(["unrestricted", "recent", "chronological"]),
    st.sampled_from(["", "provenance", "explain"]),
    st.sampled_from([1, 3, 64]),
)
def test_any_number_of_workers_equals_one_engine(
    program: Program, stream: list[Event], policy: str, record: str, batch: int
) -> None:
    # (with explain, the explanations too: workers send derivations, the router reads them)
    options = {"policy": policy, **({record: True} if record else {})}
    expected = _single(program, stream, options)
    for workers in (1, 2, 3):
        with ParallelEngine(program, workers=workers, batch=batch, **options) as engine:
            if workers == 2:  # (the batch API)
                found, errors = engine.push_many(stream)
                found += engine.flush()
                assert errors == []
            else:
                found = list(engine.run(stream))
        assert found == expected
        assert [d.sources for d in found] == [d.sources for d in expected]
        assert list(map(_explained, found)) == list(map(_explained, expected))


def _explained(d: Event) -> object:
    return to_json(explain(d)) if isinstance(d, Detection) and d.derivation else None


def test_explanations_cross_the_stages_and_a_snapshot() -> None:
    # warn/2 is keyed (by the alarm's station, in the workers); pair/2 joins two warnings of
    # different stations (global): its explanation holds the workers' derivations, with the
    # knowledge facts they used, the same as one engine's, before and after a restore.
    rules = (
        "near(a, b). near(b, c). near(c, a).\n"
        "warn(S, Y) <- alarm(S) WHERE near(S, Y).\n"
        "pair(X, Z) <- warn(X, Y) SEQ warn(Y, Z).\n"
    )
    stream = [Event.at("alarm", (s,), t) for t, s in enumerate("abcab", 1)]
    expected = event_order(Engine(rules, explain=True).run(stream))
    assert [d.name for d in expected].count("pair") == 5
    with ParallelEngine(rules, workers=2, batch=1, explain=True) as first:
        assert first.workers == 2
        before = [d for e in stream[:3] for d in first.push(e)]
        data = first.snapshot()
    with ParallelEngine(rules, workers=2, batch=1, explain=True) as second:
        second.restore(data)
        found = before + list(second.run(stream[3:]))
    assert found == expected
    assert list(map(_explained, found)) == list(map(_explained, expected))
    pair = _explained([d for d in found if d.name == "pair"][-1])  # pair(a, c) over [4, 5]
    assert isinstance(pair, dict) and pair["event"]["start"] == 4
    assert [step["where"][0]["facts"][0]["args"] for step in pair["from"]] == [
        ["a", "b"],
        ["b", "c"],
    ]


def test_blizzard_like_two_stage_program_uses_workers() -> None:
    rules = (
        "hot(S, T) <- reading(S, T, V) WHERE V > 30.\n"
        "streak(S, T1, T2) <- (hot(S, T1) SEQ hot(S, T2)).10.\n"
        "wide(T2) <- streak(S1, _, T2) AND streak(S2, _, T2) WHERE S1 < S2.\n"
    )
    stream = [
        Event.at("reading", (s, t, v), t)
        for t in range(0, 40, 2)
        for s, v in ((1, 31 + t % 3), (2, 35 - t % 7), (3, 20 + t))
    ]
    expected = event_order(Engine(rules).run(stream))
    with ParallelEngine(rules, workers=2, batch=5) as engine:
        assert engine.partitioning.keyed == (0, 1) and engine.partitioning.remainder == (2,)
        assert list(engine.run(stream)) == expected
    assert Event("wide", (2,), 0, 2) in expected  # streak(1, 0, 2) AND streak(2, 0, 2)


def test_a_worker_sends_its_detections_in_the_defined_order() -> None:
    engine = Engine("b(X) <- a(X). c(X, 1) <- a(X) SEQ a(X).", provenance=True)
    batch = [(0, ("a", (2,), 1, 1)), (1, ("a", ("x",), 1, 1)), (2, ("a", (1,), 1, 1))]
    batch.append((3, ("a", (2,), 2, 2)))
    run, feed, errors = ordered_batch(engine, batch, 3, {("c", 2)})
    a1, a2, ax, a2_2 = ("a", (1,), 1, 1), ("a", (2,), 1, 1), ("a", ("x",), 1, 1), ("a", (2,), 2, 2)
    # by end, start, name, then the arguments' text ("('x',)" before "(1,)")
    assert run == [
        ((1, 1, "b", "('x',)"), ("b", ("x",), 1, 1, (ax,))),
        ((1, 1, "b", "(1,)"), ("b", (1,), 1, 1, (a1,))),
        ((1, 1, "b", "(2,)"), ("b", (2,), 1, 1, (a2,))),
        ((2, 1, "c", "(2, 1)"), ("c", (2, 1), 1, 2, (a2, a2_2))),
        ((2, 2, "b", "(2,)"), ("b", (2,), 2, 2, (a2_2,))),
    ]
    # only what the global remainder reads (c/2), with everything its input event derived
    # (no positions: this engine does not mark its dispatches)
    assert feed == [(3, [("b", (2,), 2, 2, (a2_2,)), ("c", (2, 1), 1, 2, (a2, a2_2))], None)]
    assert errors == []
    assert ordered_batch(engine, [(4, ("a", (3,), 4, 4))], 4, set()) == (
        [((4, 4, "b", "(3,)"), ("b", (3,), 4, 4, (("a", (3,), 4, 4),)))],
        [],
        [],
    )


def test_a_marking_worker_sends_positions_in_the_derivation_tree() -> None:
    """a(2) at 2 derives b(2) (rule 0's edge, first) and c(2, 1) (rule 1's join, second),
    and b(2) derives d(2) a generation later: positions are paths of (edge, index)."""
    program = parse("b(X) <- a(X). c(X, 1) <- a(X) SEQ a(X). d(X) <- b(X). g <- c(_, _).")
    engine = stage_engine(program, (0, 1, 2), EngineOptions(), marking=True)
    batch = [(0, ("a", (2,), 1, 1)), (1, ("a", (2,), 2, 2))]
    _, feed, _ = ordered_batch(engine, batch, 3, {("c", 2)})
    [(seq, detections, paths)] = feed
    assert seq == 1
    b2, c21, d2 = ("b", (2,), 2, 2), ("c", (2, 1), 1, 2), ("d", (2,), 2, 2)
    assert [d[:4] for d in detections] == [b2, c21, d2]
    b_edge, c_edge, d_edge = paths[0][0][0], paths[1][0][0], paths[2][1][0]
    assert paths == [((b_edge, 0),), ((c_edge, 1),), ((b_edge, 0), (d_edge, 2))]
    assert b_edge < c_edge  # rule 0's edge is delivered first


def test_bad_events_are_rejected_as_by_the_engine() -> None:
    with ParallelEngine("c(X) <- a(X, Y) SEQ b(X).", workers=2) as engine:
        with pytest.raises(EventError, match="a takes 2 argument"):
            engine.push(Event.at("a", (1,), 1))
        engine.push(Event.at("a", (1, 2), 5))
        with pytest.raises(EventError, match="late: ends at 3"):
            engine.push(Event.at("b", (1,), 3))
        assert engine.flush() == []
        assert engine.stats().rejected == 2 and engine.stats().events_in == 1


def test_lateness_reorders_before_routing() -> None:
    rules = "c(X) <- a(X) SEQ b(X)."
    stream = [Event.at("b", (1,), 4), Event.at("a", (1,), 2), Event.at("a", (2,), 3)]
    expected = event_order(Engine(rules, lateness=3).run(stream))
    with ParallelEngine(rules, workers=2, lateness=3, batch=1) as engine:
        assert list(engine.run(stream)) == expected == [Event("c", (1,), 2, 4)]


def test_snapshot_restore_between_batches() -> None:
    rules = "c(X, N) <- aggregate(count, a(X), N, time(4)). d(X) <- a(X) SEQ b(X)."
    stream = [Event.at(n, (k,), t) for t in range(12) for n, k in (("a", t % 3), ("b", t % 2))]
    expected = event_order(Engine(rules).run(stream))
    with ParallelEngine(rules, workers=2, batch=3) as first:
        before = [d for e in stream[:10] for d in first.push(e)]
        data = first.snapshot()
    with ParallelEngine(rules, workers=2, batch=3) as second:
        second.restore(data)
        assert before + list(second.run(stream[10:])) == expected
    with ParallelEngine(rules, workers=3) as other, pytest.raises(SnapshotError):
        other.restore(data)


@pytest.mark.parametrize(
    ("options", "fingerprint"),
    [
        ({}, "ea01f5607b1ce0f3301fc243efc13d26299f0e38e6cb400964f4d0e20eecac59"),
        ({"explain": True}, "b0aecba1bc32b70cec9f7ba2a0307413ce1b3d92bd1ac66c83eb408c2c316238"),
        (
            {"explain": True, "provenance": True},
            "4515d9cc3c5c6a3fe0f3c6632fb4b3ded74f8b20a448cf7380ac1e625ed58ef5",
        ),
        (
            {"lateness": 3, "max_span": 5, "policy": "recent", "tie_break": "shorter",
             "max_derivations": 7, "provenance": True},
            "563437e4f8cb92639db7c6bbfefdcc1e54760bb61c51bf63e47606793a55da62",
        ),
        ({"workers": 1}, "4f95ceb548b2bffeb3606ca16cf6a9ffc225f7464e93f558973c0cca8f33b8fb"),
    ],
)  # fmt: skip
def test_a_snapshot_keeps_the_fingerprint_of_earlier_versions(
    options: dict[str, object], fingerprint: str
) -> None:
    # Written before the options were one record: a checkpoint of --workers still resumes.
    rules = "c(K) <- a(K) SEQ b(K). d <- c(K)."
    with ParallelEngine(rules, **{"workers": 2, **options}) as engine:  # type: ignore[arg-type]
        assert checkpoint.unpack(engine.snapshot())["fingerprint"] == fingerprint


def test_snapshots_write_the_program_out_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # The router's fingerprint (the whole program, its facts included) is written once per
    # engine, not at every snapshot and restore.
    from reasoner.runtime import parallel

    written: list[Program] = []
    monkeypatch.setattr(parallel, "dump", lambda program: written.append(program) or dump(program))
    facts = "".join(f"near({i}, 1).\n" for i in range(500))
    with ParallelEngine("c(X) <- a(X) SEQ b(X) WHERE near(X, 1).\n" + facts, workers=2) as engine:
        assert engine.push(Event.at("a", (3,), 1)) == []
        for _ in range(3):
            engine.restore(engine.snapshot())
        assert list(engine.run([Event.at("b", (3,), 2)])) == [Event("c", (3,), 1, 2)]
    assert len(written) == 1


ROUTER = """
import sys
from reasoner.runtime.parallel import ParallelEngine
engine = ParallelEngine("c(K) <- a(K) SEQ b(K).", workers=2)
print(*engine._pool.pids, flush=True)
sys.stdin.read()
"""


def _running(pid: int) -> bool:
    """Whether the process exists and is not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_workers_exit_when_the_router_is_killed() -> None:
    with subprocess.Popen(
        [sys.executable, "-c", ROUTER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as router:
        assert router.stdout is not None
        workers = [int(pid) for pid in router.stdout.readline().split()]
        assert len(workers) == 2 and all(_running(pid) for pid in workers)
        router.kill()
    for _ in range(600):  # a liveness bound, not a speed check: orphans would stay forever
        if not any(_running(pid) for pid in workers):
            break
        time.sleep(0.1)
    left = [pid for pid in workers if _running(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == []


def test_global_rule_in_arrival_order_gets_one_engines_order() -> None:
    """One input event derives d0 and d1 (keyed); g (global) follows d0. One engine
    dispatches d1 before g (first in, first out), so under recent h meets d1(2) (the latest),
    not d1(1): run apart, the global stage would see g first. It places the keyed stage's
    events and its own by their positions in the input event's derivation tree."""
    rules = (
        "d0(K, V) <- a(K, V). d1(K, V) <- a(K, V). d1(K, V) <- b(K, V).\n"
        "g <- d0(_, _). h(K) <- g AND d1(K, _). e(K) <- c(K) SEQ c(K).\n"
    )
    stream = [Event.at("b", (1, 5), 0), Event.at("a", (2, 5), 1), Event.at("c", (3,), 2)]
    stream.append(Event.at("c", (3,), 3))
    for policy, h in (("recent", [2]), ("chronological", [1]), ("unrestricted", [1, 2])):
        expected = event_order(Engine(rules, policy=policy).run(stream))
        assert [d.args[0] for d in expected if d.name == "h"] == h
        for workers in (1, 2, 3):
            with ParallelEngine(rules, workers=workers, policy=policy, batch=1) as engine:
                assert list(engine.run(stream)) == expected
                assert engine.partitioning.keyed == (0, 1, 2, 5)


def test_derivation_trees_are_merged_breadth_first() -> None:
    """a derives k1 and k2 (keyed, in that order); k1 derives k3 (keyed, its rule first)
    and g1 (global), k2 derives g2 (global). One engine dispatches k1, k2, k3, g1, g2, so
    s(2), s(1), s(3) in that order, and under recent each s pairs with the one before it.
    The global stage, feeding each keyed event apart (k1, then k2, then k3), would dispatch
    s(1), s(3), s(2): it must interleave its g1 and g2 with the keyed k3 by depth."""
    rules = (
        "k1(K) <- a(K). k2(K) <- a(K). k3(K) <- k1(K).\n"
        "g1 <- k1(_). g2 <- k2(_). s(1) <- g1. s(2) <- k3(_). s(3) <- g2.\n"
        "last(X, Y) <- s(X) AND s(Y) WHERE X =\\= Y.\n"
    )
    stream = [Event.at("a", (1,), 1), Event.at("a", (2,), 2)]
    expected = event_order(Engine(rules, policy="recent").run(stream))
    pairs = [(1, 3), (2, 1), (3, 2), (1, 3), (2, 1)]  # (3, 2): s(3) at 1, then s(2) at 2
    assert [d.args for d in expected if d.name == "last"] == pairs
    for workers in (1, 2):
        with ParallelEngine(rules, workers=workers, policy="recent", batch=2) as engine:
            assert list(engine.run(stream)) == expected
            assert engine.partitioning.keyed == (0, 1, 2)


def test_a_global_stage_the_keyed_stage_does_not_feed_takes_input_events_directly() -> None:
    """The global rules read g (derived only by a global rule), never k: the keyed stage
    sends the global stage nothing, so neither marks positions (its events are not merged
    into derivation trees), and the detections are still one engine's."""
    rules = "k(K) <- a(K) SEQ a(K).\ng(X, Y) <- b(X) SEQ b(Y).\nh(X) <- g(X, _) AND c(X).\n"
    stream = [
        Event.at(n, (v,), t)
        for t, (n, v) in enumerate(
            [("a", 1), ("b", 1), ("a", 2), ("b", 2), ("a", 1), ("c", 1), ("a", 2), ("c", 2)]
        )
    ]
    for policy in ("unrestricted", "recent", "chronological"):
        expected = event_order(Engine(rules, policy=policy).run(stream))
        # k(1) from a(1)@0, a(1)@4; h(1) from g(1, 2) (b(1)@1, b(2)@3) and c(1)@5
        assert [d[:4] for d in expected if d.name in ("k", "h")] == [
            ("k", (1,), 0, 4),
            ("h", (1,), 1, 5),
            ("k", (2,), 2, 6),
        ]
        for workers in (1, 2):
            with ParallelEngine(rules, workers=workers, policy=policy, batch=3) as engine:
                assert engine.partitioning.keyed == (0,)
                assert type(engine._global) is StageEngine and not engine._global.wiring.marking
                assert list(engine.run(stream)) == expected


def test_stats_mid_stream_count_what_was_taken_and_keep_the_answers_in_step() -> None:
    # Batches of 4 stay in flight between pushes: stats() runs them first (the workers
    # answer in order), so it counts every event taken, and the stream goes on unchanged.
    rules = "c(X) <- a(X) SEQ b(X)."
    stream = [Event.at(n, (t % 5,), t) for t in range(30) for n in ("a", "b")]
    single = Engine(rules)
    expected = event_order(Engine(rules).run(stream))
    found = []
    with ParallelEngine(rules, workers=2, batch=4) as engine:
        for i, event in enumerate(stream, 1):
            found += engine.push(event)
            single.push(event)
            if i % 7 == 0:
                stats, one = engine.stats(), single.stats()
                # every a is stored (for a b to come); the b, the sequence's end, is not
                assert (stats.events_in, stats.stored) == (one.events_in, one.stored)
                assert (stats.events_in, stats.stored) == (i, (i + 1) // 2)
        found += engine.flush()
    assert found == expected and len(expected) == 5 * 15  # per key, 6 a and 6 b: 15 pairs


def test_large_batches_and_answers_cross_without_waiting_on_each_other() -> None:
    # Every batch and every answer is larger than a pipe holds (64 KiB): the router sends
    # the next batch while a worker writes its answer to the one before.
    rules = "b(X, Y) <- a(X, Y)."
    stream = [Event.at("a", (i % 7, "x" * 200), i) for i in range(6000)]
    expected = event_order(Engine(rules).run(stream))
    with ParallelEngine(rules, workers=2, batch=2000) as engine:
        assert list(engine.run(stream)) == expected
    assert len(expected) == 6000


def test_push_many_refuses_what_push_refuses_and_takes_the_rest() -> None:
    rules = "c(X) <- a(X) SEQ b(X)."
    good = [Event.at(n, (k,), t) for t in range(1, 40) for n, k in (("a", t % 3), ("b", t % 2))]
    bad = [Event.at("a", (1, 2), 20), Event.at("b", (1,), 3), Event("a", (1,), 21, 20)]
    stream = good[:41] + bad[:2] + good[41:60] + bad[2:] + good[60:]
    single = Engine(rules)
    expected: list[Event] = []
    reasons = []
    for event in stream:
        try:
            expected += single.push(event)
        except EventError as error:
            reasons.append(str(error))
    expected = event_order(expected + single.flush())
    assert len(reasons) == 3  # the arity, the late one, the start after the end
    for workers, batch in ((1, 16), (2, 7), (3, 2048)):
        with ParallelEngine(rules, workers=workers, batch=batch) as engine:
            found, errors = engine.push_many(stream)
            found += engine.flush()
            assert found == expected
            assert [(str(e), e.event) for e in errors] == list(zip(reasons, bad, strict=True))
            stats = engine.stats()
            assert (stats.events_in, stats.rejected) == (len(good), 3)


def test_events_of_an_event_subclass_are_taken_as_by_the_engine() -> None:
    # (a Detection fails the common case's inline check; the full check takes it)
    rules = "c(X) <- a(X) SEQ b(X)."
    stream = [Detection("a", (1,), 1, 1), Event.at("b", (1,), 2), Detection("b", (1,), 3, 3)]
    expected = event_order(Engine(rules).run(stream))
    assert expected == [Event("c", (1,), 1, 2), Event("c", (1,), 1, 3)]
    with ParallelEngine(rules, workers=2) as engine:
        assert [d for e in stream for d in engine.push(e)] + engine.flush() == expected
        assert engine.now == 3
    with ParallelEngine(rules, workers=2) as engine:
        assert engine.push_many(stream) == ([], [])
        assert engine.flush() == expected


def test_run_raises_at_the_first_refused_event_having_taken_those_before() -> None:
    rules = "c(X) <- a(X) SEQ b(X)."
    stream = [Event.at("a", (1,), 1), Event.at("b", (1,), 2), Event.at("b", (1,), 1)]
    with ParallelEngine(rules, workers=2) as engine:
        with pytest.raises(EventError, match="late: ends at 1"):
            list(engine.run(stream))
        assert engine.flush() == [Event("c", (1,), 1, 2)]
        assert engine.stats().events_in == 2


def test_equal_keys_of_other_number_types_meet_after_a_restore() -> None:
    # 2.0 and 2 are one key for the engine's joins; the restored router must send b(2) to
    # the worker holding a(2.0) (a hash of repr sent them to different workers).
    rules = "c(X) <- a(X) SEQ b(X)."
    stream = [Event.at("a", (2.0,), 1), Event.at("b", (2,), 2), Event.at("b", (Fraction(2),), 3)]
    expected = event_order(Engine(rules).run(stream))
    assert [(e.name, e.args, e.end) for e in expected] == [("c", (2.0,), 2), ("c", (2.0,), 3)]
    with ParallelEngine(rules, workers=2, batch=1) as first:
        before = [d for e in stream[:1] for d in first.push(e)]
        data = first.snapshot()
    with ParallelEngine(rules, workers=2, batch=1) as second:
        second.restore(data)
        assert before + list(second.run(stream[1:])) == expected


def test_an_event_that_cannot_reach_a_worker_is_refused_and_the_workers_stay_in_step() -> None:
    """A lock as an argument cannot be pickled: that event alone is refused (one engine
    takes it), and every other event of its batch, before and after, is detected as by
    one engine fed the stream without it."""
    rules = "c(K) <- a(K, X) SEQ b(K).\n"
    keys = ["k1", "k2", "k3", "k4"]
    first = [Event("a", (k, 1), t, t) for t, k in enumerate(keys)]
    lock = Event("a", ("k1", threading.Lock()), 10, 10)
    second = [Event("a", (k, 1), 10, 10) for k in keys[1:]]
    last = [Event("b", (k,), 20, 20) for k in keys]
    expected = event_order(Engine(rules).run(first + second + last))
    assert len(expected) == 7  # c(k1) from 0; c(k2..k4) from their two a events
    with ParallelEngine(rules, workers=2, batch=4) as engine:
        found, errors = engine.push_many(first)
        assert errors == []
        taken, errors = engine.push_many([lock, *second])
        found += taken
        assert [e.event for e in errors] == [lock]
        assert str(errors[0]).startswith("a/2: an argument is not a value that can be sent")
        taken, errors = engine.push_many(last)
        assert errors == []
        assert found + taken + engine.flush() == expected
        stats = engine.stats()
        assert (stats.events_in, stats.rejected) == (11, 1)


def test_an_event_whose_where_raises_loses_only_itself_as_in_one_engine() -> None:
    """atom_length of a compound raises for that event: one engine's push raises and it
    goes on; with workers the flush that ran the batch raises the same error, and every
    other detection, of every worker, is kept and reported by the next call."""
    text = "h(K, L) <- a(K, X) WHERE atom_length(X, L).\n"
    values = [("k1", "a"), ("k2", "bb"), ("k3", Struct("f", (1,))), ("k4", "ccc"), ("k1", "dddd")]
    stream = [Event("a", kx, t, t) for t, kx in enumerate(values)]
    one, one_errors = Engine(text), []
    expected: list[Event] = []
    for event in stream:
        try:
            expected += one.push(event)
        except ReasonerError as error:
            one_errors.append(str(error))
    assert [d.args for d in expected] == [("k1", 1), ("k2", 2), ("k4", 3), ("k1", 4)]
    with ParallelEngine(text, workers=2, batch=64) as engine:
        found: list[Event] = []
        for event in stream:
            found += engine.push(event)
        errors = []
        with pytest.raises(ReasonerError) as raised:
            engine.flush()
        errors.append(str(raised.value))
        found += engine.flush()
    assert errors == one_errors and len(errors) == 1
    assert found == event_order(expected)
