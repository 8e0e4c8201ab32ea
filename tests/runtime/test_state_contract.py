"""The state contract: every stateful node kind writes and reads its own state (Node.state /
Node.load); snapshots written before the contract (tests/runtime/snapshots, written by the
engine of commit 6a85a50) still restore, continue as the uninterrupted run, and are written
again byte for byte."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reasoner.errors import SnapshotError
from reasoner.runtime.codec import Codec
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.runtime.nodes import Node

SNAPSHOTS = Path(__file__).parent / "snapshots"

#: Programs covering every stateful node kind (joins, NOT, CNOT, FNOT with and without a
#: memory, sliding and started aggregates, time points, alarms), some options, and the
#: snapshot each was written to after CUT events of STREAM.
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "join": (
        "c(X) <- a(X) SEQ b(X). d(X) <- a(X) AND b(X). e(X) <- (a(X) PAR b(X)) WHERE X > 0.",
        {},
    ),
    "negation": (
        "c(X) <- NOT(n(X)).[a(X), b(X)]. g(X) <- a(X) CNOT n(X). f(X) <- b(X) FNOT n(X).",
        {},
    ),
    "fnot_window": ("f(X) <- (b(X) FNOT n(X)).5.", {}),
    "aggregates": (
        "s(V) <- aggregate(sum(K), a(K), V, time(5)). "
        "m(V) <- aggregate(max(K), a(K), V, count(3)). "
        "t(V) <- b(K) SEQ aggregate(avg(K), a(K), V, time(4)).",
        {},
    ),
    "clock_alarm": ("c <- a(X) SEQ 7. exceptionAlarm(late(X), 4) <- b(X).", {}),
    "explain": ("near(1, 2). w(X, Y) <- a(X) SEQ b(X) WHERE near(X, Y).", {"explain": True}),
    "lateness": ("c(X) <- a(X) SEQ b(X).", {"lateness": 3}),
    "recent": ("c(X) <- a(X) SEQ b(X).", {"policy": "recent"}),
    "chronological": (
        "c(X) <- a(X) SEQ b(X). d(X) <- NOT(n(X)).[a(X), b(X)].",
        {"policy": "chronological", "max_span": 0},
    ),
}
CUT = 17


def stream() -> list[Event]:
    out = []
    for t in range(1, 13):
        k = t % 3
        out.append(Event.at("a", (k,), t))
        if t % 2:
            out.append(Event.at("b", (k,), t))
        if t % 4 == 0:
            out.append(Event.at("n", (k,), t))
    return out


def _finish(engine: Engine, events: list[Event]) -> list[Event]:
    found = [d for e in events for d in engine.push(e)]
    return found + engine.flush() + engine.advance(40)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_snapshot_written_before_the_contract_restores_and_is_written_again(name: str) -> None:
    rules, options = CASES[name]
    data = (SNAPSHOTS / f"{name}.snapshot").read_bytes()
    straight = Engine(rules, **options)
    for event in stream()[:CUT]:
        straight.push(event)
    assert straight.snapshot() == data  # (the same bytes as before the contract)
    restored = Engine(rules, **options)
    restored.restore(data)
    assert restored.snapshot() == data
    assert _finish(restored, stream()[CUT:]) == _finish(straight, stream()[CUT:])


def test_every_node_state_reads_back_to_the_same_state() -> None:
    for rules, options in CASES.values():
        engine = Engine(rules, **options)
        for event in stream()[:CUT]:
            engine.push(event)
        codec = Codec()
        for node in engine.wiring.nodes:
            state = node.state(codec)
            node.load(state, codec)()
            assert node.state(codec) == state


def test_a_stateless_node_refuses_state() -> None:
    with pytest.raises(ValueError, match="state for stateless node 3"):
        Node(3, Engine("").runtime).load({"left": []}, Codec())


def test_a_snapshot_giving_a_stateless_node_state_is_refused_unchanged() -> None:
    rules, options = CASES["join"]
    engine = Engine(rules, **options)
    data = engine.snapshot()
    text = data.decode().split("\n", 1)[1].replace('"nodes":[null', '"nodes":[{"x":1}')
    import hashlib

    body = text.encode()
    forged = f"reasoner-snapshot 1 {hashlib.sha256(body).hexdigest()}\n".encode() + body
    with pytest.raises(SnapshotError, match="malformed"):
        engine.restore(forged)
    assert engine.snapshot() == data
