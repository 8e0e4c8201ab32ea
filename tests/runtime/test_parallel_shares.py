"""Workers reading their own share of the input (``ParallelEngine.read_shares``) give the
single engine's detections, in the defined order, for any number of workers, and hand the
notes over in input order (reasoner/runtime/shares.py)."""

from __future__ import annotations

import multiprocessing
import os
import signal
from dataclasses import dataclass
from itertools import islice
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import keyed_streams, partitionable_programs
from test_parallel import _explained, _single

from reasoner.compiler.partition import analyse
from reasoner.errors import EngineError, ReasonerError
from reasoner.language.ast import Program
from reasoner.language.parser import parse
from reasoner.runtime.batches import key_owner
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.runtime.order import event_order
from reasoner.runtime.parallel import ParallelEngine
from reasoner.runtime.shares import Chunk

_PLACE = 32


@dataclass(frozen=True)
class Files:
    """A worker's "files" (one key's events each, in time order): its events merged by time
    (ties in file order), numbered ``file << 32 | n``; each note after its file's event."""

    files: tuple[tuple[int, tuple[Event, ...]], ...]
    notes: tuple[tuple[int, int, str], ...] = ()  # (file, after its n-th event (-1: first), text)
    problem: str | None = None

    def __call__(self) -> Files:
        return self

    def open(self) -> str | None:
        return self.problem

    def chunks(self, size: int) -> Any:
        merged = sorted(
            ((e[3], place, n, e) for place, events in self.files for n, e in enumerate(events)),
            key=lambda row: row[:3],
        )
        numbered = [(place << _PLACE | i, e, place, n) for i, (_, place, n, e) in enumerate(merged)]
        for at in range(0, max(len(numbered), 1), size):
            rows = numbered[at : at + size]
            notes = [
                ((e[3], seq, 1, k), ("malformed", text))
                for seq, e, place, n in rows
                for k, (file, after, text) in enumerate(self.notes)
                if (file, after) == (place, n)
            ]
            if at == 0:
                notes += [
                    ((float("-inf"), file, 1, k), ("malformed", text))
                    for k, (file, after, text) in enumerate(self.notes)
                    if after < 0
                ]
            yield Chunk(
                [e for _, e, _, _ in rows], [seq for seq, _, _, _ in rows], notes, _refuse(rows)
            )


def _refuse(rows: list[tuple[int, Event, int, int]]) -> Any:
    return lambda index, reason: ("refused", f"{rows[index][1]}: {reason}")


def _archive(
    stream: list[Event], keys: dict[tuple[str, int], int]
) -> tuple[list[tuple[int, Any, list[Event]]], list[Event]]:
    """The stream as one "file" per key value (``keys``: the key's argument position per
    event type; the events of no keyed type in a file of their own), in order of first
    appearance, and the stream the merge of those files gives (what one engine reads)."""
    files: dict[Any, list[Event]] = {}
    for event in stream:
        position = keys.get((event[0], len(event[1])))
        key = ("key", event[1][position]) if position is not None else ("none",)
        files.setdefault(key, []).append(event)
    ordered = sorted(
        (
            (e[3], place, n, e)
            for place, events in enumerate(files.values())
            for n, e in enumerate(events)
        ),
        key=lambda row: row[:3],
    )
    return [(place, key, events) for place, (key, events) in enumerate(files.items())], [
        row[3] for row in ordered
    ]


def _shares(files: list[tuple[int, Any, list[Event]]], workers: int, notes=()) -> list[Files]:
    """Each key's file to the worker owning the key (the others' to worker 0)."""
    mine: list[list[tuple[int, tuple[Event, ...]]]] = [[] for _ in range(workers)]
    for place, key, events in files:
        owner = key_owner(key[1], workers) if key[0] == "key" else 0
        mine[owner].append((place, tuple(events)))
    return [
        Files(tuple(share), tuple(n for n in notes if n[0] in {p for p, _ in share}))
        for share in mine
    ]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    partitionable_programs(),
    keyed_streams(),
    st.sampled_from(["unrestricted", "recent", "chronological"]),
    st.sampled_from(["", "provenance", "explain"]),
    st.sampled_from([1, 3, 64]),
)
def test_workers_reading_their_keys_equal_one_engine(
    program: Program, stream: list[Event], policy: str, record: str, batch: int
) -> None:
    options = {"policy": policy, **({record: True} if record else {})}
    files, merged = _archive(stream, analyse(program, policy).key_positions())
    expected = _single(program, merged, options)
    for workers in (1, 2, 3):
        with ParallelEngine(program, workers=workers, batch=batch, **options) as engine:
            if not engine.workers:
                return  # (nothing keyed: one engine, no workers to read)
            notes: list[Any] = []
            found = engine.read_shares(_shares(files, workers), notes.append)
            assert found is not None
            found = [d for run in found for d in run] + engine.flush()
            assert notes == []
            assert engine.stats().events_in == len(merged)
        assert found == expected
        assert [d.sources for d in found] == [d.sources for d in expected]
        assert list(map(_explained, found)) == list(map(_explained, expected))


PROGRAM = parse(
    """
d(K, X) <- a(K, X) SEQ b(K, X).
n(N) <- aggregate(count, d(_K, _X), N).
"""
)


def test_notes_and_refused_events_come_in_input_order() -> None:
    stream = [Event.at("a", (k, 1), t) for t in range(4) for k in ("p", "q", "r", "s")]
    stream += [Event.at("b", (k, 1), 9) for k in ("p", "q", "r", "s")]
    stream.insert(5, Event.at("b", ("q", 1, 2), 1))  # (b takes 2 arguments: refused)
    files, merged = _archive(stream, analyse(PROGRAM, "unrestricted").key_positions())
    notes = [(0, -1, "before p"), (2, 0, "after r's first"), (1, 3, "after q's fourth")]
    notes += [(3, 4, "after s's last"), (1, -1, "before q")]
    expected = ["before p", "before q", "after r's first", "refused", "after q's fourth"]
    expected.append("after s's last")
    one = Engine(PROGRAM)
    detections = [d for e in merged if len(e[1]) == 2 for d in one.push(e)] + one.flush()
    for workers in (1, 2, 3):
        with ParallelEngine(PROGRAM, workers=workers, batch=2) as engine:
            seen: list[Any] = []
            found = engine.read_shares(_shares(files, workers, notes), seen.append)
            assert found is not None
            assert [d for run in found for d in run] == event_order(detections)
            assert [kind if kind == "refused" else text for kind, text in seen] == expected
            assert "b takes 2 argument(s), not 3" in next(t for k, t in seen if k == "refused")
            assert engine.stats().rejected == 1


def test_a_share_that_cannot_run_alone_leaves_the_engine_to_the_router() -> None:
    stream = [Event.at("a", ("p", 1), 1), Event.at("b", ("p", 1), 2)]
    with ParallelEngine(PROGRAM, workers=2) as engine:
        refused = [Files(((0, tuple(stream)),), problem="out of order"), Files(())]
        assert engine.read_shares(refused, print) is None
        assert list(engine.run(stream)) == event_order(Engine(PROGRAM).run(stream))  # (in step)
    with ParallelEngine(PROGRAM, workers=2, lateness=1) as engine, pytest.raises(EngineError):
        engine.read_shares([Files(()), Files(())], print)


@dataclass(frozen=True)
class Broken(Files):
    """Files whose reading fails after its first chunk (a file unreadable from some line on)."""

    def chunks(self, size: int) -> Any:
        yield from islice(Files.chunks(self, size), 1)
        raise InputError("in.jsonl: cannot read events: [Errno 5] Input/output error")


class InputError(ReasonerError):
    """What a reader raises for a file it cannot read on."""


def test_a_share_whose_reading_fails_raises_its_error_in_the_router() -> None:
    stream = [Event.at("a", (k, 1), t) for t in range(4) for k in ("p", "q")]
    files, _ = _archive(stream, analyse(PROGRAM, "unrestricted").key_positions())
    with ParallelEngine(PROGRAM, workers=2, batch=1) as engine:
        shares = _shares(files, 2)
        broken = [Broken(share.files) for share in shares]
        found = engine.read_shares(broken, print)
        assert found is not None
        with pytest.raises(InputError, match="cannot read events"):
            list(found)


def _kill_a_worker() -> int:
    """SIGKILL one of this process's forked workers (as the out-of-memory killer would)."""
    pid = multiprocessing.active_children()[0].pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    return pid


def _reading(engine: ParallelEngine, times: int) -> Any:
    """Two workers reading their shares of ``a`` events of two keys at ``times`` times."""
    stream = [Event.at("a", (k, 1), t) for t in range(times) for k in ("p", "q")]
    files, _ = _archive(stream, analyse(PROGRAM, "unrestricted").key_positions())
    found = engine.read_shares(_shares(files, 2), print)
    assert found is not None
    return found


def test_a_worker_killed_during_its_share_is_named_in_the_routers_error() -> None:
    with ParallelEngine(PROGRAM, workers=2, batch=1) as engine:
        found = _reading(engine, 4)
        pid = _kill_a_worker()
        with pytest.raises(EngineError, match=rf"\(process {pid}\) ended .*killed by SIGKILL"):
            list(found)


def test_a_worker_killed_while_the_router_reads_is_named_in_its_error() -> None:
    with ParallelEngine(PROGRAM, workers=2) as engine:
        assert engine.push(Event.at("a", ("p", 1), 1)) == []
        pid = _kill_a_worker()
        with pytest.raises(EngineError, match=rf"\(process {pid}\) ended .*killed by SIGKILL"):
            engine.push(Event.at("b", ("p", 1), 2))
            engine.flush()


def test_a_worker_killed_before_the_router_halts_the_shares_is_named_in_its_error() -> None:
    with ParallelEngine(PROGRAM, workers=2, batch=1) as engine:
        found = _reading(engine, 40)
        next(iter(found))  # (the run under way: a stop signal now closes it)
        pid = _kill_a_worker()
        with pytest.raises(EngineError, match=rf"\(process {pid}\) ended .*killed by SIGKILL"):
            found.close()
