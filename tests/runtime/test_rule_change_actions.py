"""ETALIS's rule changes as actions: ``ins_static_rule`` / ``del_static_rule`` change the static
knowledge between two events (every event sees one version), and the rules of
``ins_event_rule`` / ``del_event_rule`` may be written unquoted."""

from __future__ import annotations

import hashlib
import json

import pytest

from reasoner.errors import EngineError, SnapshotError
from reasoner.knowledge.facts import FactBase
from reasoner.language.ast import Atom, Compound, StaticRule, dump
from reasoner.language.parser import parse
from reasoner.runtime import checkpoint
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.runtime.parallel import ParallelEngine

CHANGES = """
noop <- a do ins_static_rule(s1 :- s2).
noop <- b do del_static_rule(s2).
s2.
"""
ASKS = "seen(E) <- x(E) WHERE s1.\nseen(a) <- a WHERE s1.\n"


def _run(engine: Engine, names: str) -> list[Event]:
    out = []
    for time, name in enumerate(names, 1):
        args = (time,) if name == "x" else ()
        out += [d for d in engine.push(Event.at(name, args, time)) if d.name == "seen"]
    return out


@pytest.mark.parametrize("rules", [CHANGES + ASKS, ASKS + CHANGES])
def test_a_static_change_applies_from_the_next_event_on(rules: str) -> None:
    # Whatever the rule order, the event that inserts s1 :- s2 sees the old knowledge (no
    # seen(a) at 2) and the next ones the new; deleting s2 makes s1 false again from 5 on.
    found = _run(Engine(rules), "xaxabx")
    assert found == [
        Event("seen", (3,), 3, 3),
        Event("seen", ("a",), 4, 4),
    ]


def test_rules_in_actions_may_be_written_unquoted() -> None:
    program = parse("n <- a do ins_event_rule(r2 'rule:' d(Y) <- c(Y) WHERE Y > 1).")
    (rule,) = program.event_rules
    action = rule.body.condition  # type: ignore[attr-defined]
    assert action == Compound(
        "do", (Compound("ins_event_rule", (Atom("r2 'rule:' d(Y) <- c(Y) WHERE Y > 1"),)),)
    )
    rules = """
    n <- a do ins_event_rule(r2 'rule:' d(Y) <- c(Y) WHERE Y > 1).
    n <- b do del_event_rule(r2).
    n <- b2 do del_event_rule(e(X) <- a).
    e(1) <- a.
    """
    engine = Engine(rules)
    pushed = [
        Event.at("c", (5,), 1),
        Event.at("a", (), 2),
        Event.at("c", (5,), 3),
        Event.at("c", (1,), 4),
        Event.at("b2", (), 5),  # a rule equal to none: nothing happens
        Event.at("b", (), 6),
        Event.at("c", (7,), 7),
        Event.at("a", (), 8),
    ]
    found = [d for event in pushed for d in engine.push(event) if d.name != "n"]
    assert found == [Event("e", (1,), 2, 2), Event("d", (5,), 3, 3), Event("e", (1,), 8, 8)]


def test_static_changes_need_the_programs_own_knowledge() -> None:
    message = "<rules>:2:1: ins_static_rule and del_static_rule change the program's own facts"
    with pytest.raises(EngineError, match=message):
        Engine(CHANGES, knowledge=FactBase())
    engine = Engine("c <- a.", knowledge=FactBase())
    with pytest.raises(EngineError, match="<rules>:1:1: ins_static_rule"):
        engine.add_rules("noop <- b do del_static_rule(s2).")
    with pytest.raises(EngineError, match="<rules>:1:1: ins_static_rule"):
        engine.add_rules("noop <- b do (nl, del_static_rule(s2)).")  # among other actions
    with pytest.raises(EngineError, match="<rules>:2:1: ins_static_rule"):
        Engine(CHANGES).use_knowledge(FactBase())


def test_a_snapshot_restores_into_an_engine_that_made_the_same_changes_or_none() -> None:
    engine = Engine(CHANGES + ASKS)
    Engine(CHANGES + ASKS).restore(engine.snapshot())  # no change made yet: any engine
    engine.push(Event.at("a", (), 1))
    fresh = Engine(CHANGES + ASKS)  # (makes the snapshot's change first)
    fresh.restore(engine.snapshot())
    assert fresh.push(Event.at("x", (2,), 2)) == [Event("seen", (2,), 2, 2)]
    same = Engine(CHANGES + ASKS)
    same.push(Event.at("a", (), 1))
    same.restore(engine.snapshot())
    assert same.push(Event.at("x", (2,), 2)) == [Event("seen", (2,), 2, 2)]


def test_rule_changes_run_in_one_engine_with_workers() -> None:
    # seen(E) <- x(E) alone would be keyed by E; the rule changes keep every rule global, in
    # one engine owning the program's knowledge (as test_a_static_change_applies... finds).
    rules = CHANGES + ASKS
    with ParallelEngine(rules, workers=2) as engine:
        assert engine.workers == 0
        found = list(engine.run(Event.at(n, (t,) if n == "x" else (), t) for t, n in _ts("xaxabx")))
    assert [d for d in found if d.name == "seen"] == [
        Event("seen", (3,), 3, 3),
        Event("seen", ("a",), 4, 4),
    ]


def _ts(names: str) -> list[tuple[int, str]]:
    return list(enumerate(names, 1))


def test_snapshots_match_by_the_static_rules_not_by_the_changes_that_led_there() -> None:
    rules = "noop <- a do ins_static_rule(s1 :- s2).\nnoop <- b do del_static_rule(s1 :- s2).\n"
    rules += "s2.\n" + ASKS
    once, thrice, back = Engine(rules), Engine(rules), Engine(rules)
    _run(once, "a")
    _run(thrice, "aba")
    _run(back, "ab")  # inserted then deleted: the rules it was given
    thrice.restore(once.snapshot())
    once.restore(thrice.snapshot())
    assert once.push(Event.at("x", (9,), 9)) == [Event("seen", (9,), 9, 9)]
    assert thrice.push(Event.at("x", (9,), 9)) == [Event("seen", (9,), 9, 9)]
    Engine(rules).restore(back.snapshot())
    fresh = Engine(rules)  # (makes thrice's three changes first)
    fresh.restore(thrice.snapshot())
    assert fresh.push(Event.at("x", (10,), 10)) == [Event("seen", (10,), 10, 10)]
    ins = Engine(rules)
    _run(ins, "a")
    with pytest.raises(SnapshotError, match="another program"):
        back.restore(ins.snapshot())  # (back made a change ins's engine did not make)


def test_the_fingerprint_follows_every_rule_change(monkeypatch: pytest.MonkeyPatch) -> None:
    # The fingerprint is computed once per program: each change of the rules (by an action)
    # gives the documented value, and the static rules are written out only while they differ
    # from those given, once per change (not per snapshot or restore).
    rules = """
    noop <- a do ins_static_rule(s1 :- s2).
    noop <- b do del_static_rule(s1 :- s2).
    noop <- c do ins_event_rule(r 'rule:' got(Y) <- x(Y)).
    noop <- k do del_event_rule(r).
    s2.
    """
    given = parse(rules).static_rules
    dumped: list[object] = []
    monkeypatch.setattr(checkpoint, "dump", lambda node: dumped.append(node) or dump(node))
    engine = Engine(rules)
    prints, dumps = [], []
    for time, name in enumerate(" abck"):
        if name != " ":
            engine.push(Event.at(name, (), time))
        dumped.clear()
        for _ in range(3):
            engine.restore(engine.snapshot())
        dumps.append(len(dumped))
        prints.append(json.loads(engine.snapshot().partition(b"\n")[2])["fingerprint"])
        assert prints[-1] == _documented_fingerprint(engine, given), name
    assert dumps == [0, 3, 0, 0, 0]  # after a: s2 and s1 :- s2 in use, s2 given
    assert prints[2] == prints[0]  # the rules given again
    assert len({prints[0], prints[1], prints[3]}) == 3


def _documented_fingerprint(engine: Engine, given: tuple[StaticRule, ...]) -> str:
    """docs/scale-out.md's fingerprint: the network, the static rules in use when they
    differ from those given, the options (explain off: left out)."""
    now = sorted(dump(c) for c in engine.program.static_rules)
    static = "" if now == sorted(dump(c) for c in given) else "".join(f"{c}\n" for c in now)
    options = {"policy": "unrestricted", "tie_break": "longer", "max_derivations": 100_000,
               "lateness": 0, "max_span": None, "provenance": False}  # fmt: skip
    text = engine.network() + "\n" + static + json.dumps(options, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_a_snapshot_after_rule_changes_restores_into_an_engine_built_from_the_rules() -> None:
    # A snapshot carries the changes the actions made; an engine built from the rules as
    # written (or one that made the first of them) makes the others, then restores.
    rules = """
    noop <- a do ins_static_rule(s1 :- s2).
    noop <- c do ins_event_rule(r 'rule:' got(Y) <- x(Y)).
    noop <- k do del_event_rule(r).
    s2.
    seen(E) <- x(E) WHERE s1.
    """
    stream = [("x", (1,)), ("a", ()), ("c", ()), ("x", (4,)), ("k", ()), ("x", (6,)), ("x", (7,))]
    events = [Event.at(name, args, time) for time, (name, args) in enumerate(stream, 1)]
    one = Engine(rules)
    whole = [d for e in events for d in one.push(e)]
    assert [(d.name, d.args, d.end) for d in whole] == [
        ("noop", (), 2), ("noop", (), 3), ("seen", (4,), 4), ("got", (4,), 4), ("noop", (), 5),
        ("seen", (6,), 6), ("seen", (7,), 7),
    ]  # fmt: skip
    for cut in range(len(events) + 1):
        before = Engine(rules)
        found = [d for e in events[:cut] for d in before.push(e)]
        for after in (Engine(rules), _made(rules, events[: min(cut, 2)])):
            after.restore(before.snapshot())
            assert found + [d for e in events[cut:] for d in after.push(e)] == whole, cut
            assert after.snapshot() == one.snapshot()
    changes = json.loads(one.snapshot().partition(b"\n")[2])["changes"]
    assert changes == [
        ["ins_static_rule", "s1 :- s2."],
        ["ins_event_rule", "r 'rule:' got(Y) <- x(Y)."],
        ["del_event_rule", "r"],
    ]
    # an engine that made a change the snapshot's did not make refuses it, as before
    with pytest.raises(SnapshotError, match="another program"):
        _made(rules, events[:3]).restore(Engine(rules).snapshot())


def _made(rules: str, events: list[Event]) -> Engine:
    engine = Engine(rules)
    for e in events:
        engine.push(e)
    return engine


INSERTS = "n <- a do ins_event_rule('d(Y) <- c(Y).').\n"


def test_a_refused_snapshot_makes_none_of_its_rule_changes() -> None:
    # The snapshot's changes are made and checked on a copy first: refused (other options
    # here), the engine keeps its rules and detects as one that never saw the snapshot.
    other = Engine(INSERTS, policy="recent")
    other.push(Event.at("a", (), 1))
    engine, twin = Engine(INSERTS), Engine(INSERTS)
    with pytest.raises(SnapshotError, match="another program"):
        engine.restore(other.snapshot())
    assert engine.program == twin.program
    assert len(engine.program.event_rules) == 1
    assert engine.snapshot() == twin.snapshot()
    stream = [Event.at("c", (5,), 2), Event.at("a", (), 3), Event.at("c", (6,), 4)]
    assert [engine.push(e) for e in stream] == [
        [],
        [Event("n", (), 3, 3)],
        [Event("d", (6,), 4, 4)],
    ]
    assert [twin.push(e) for e in stream] == [[], [Event("n", (), 3, 3)], [Event("d", (6,), 4, 4)]]


def test_a_parallel_engine_refusing_its_global_part_changes_nothing() -> None:
    # (a one-engine ParallelEngine's global part, replaced by a refused engine snapshot
    # carrying rule changes: the global engine keeps its rules)
    other = Engine(INSERTS, policy="recent")
    other.push(Event.at("a", (), 1))
    with ParallelEngine(INSERTS, workers=2) as engine, ParallelEngine(INSERTS) as twin:
        state = checkpoint.unpack(engine.snapshot())
        state["global"] = other.snapshot().decode("utf-8")
        with pytest.raises(SnapshotError, match="another program"):
            engine.restore(checkpoint.pack(state))
        assert engine.snapshot() == twin.snapshot()
        stream = [Event.at("c", (5,), 2), Event.at("a", (), 3), Event.at("c", (6,), 4)]
        found = list(engine.run(stream))
        assert found == list(twin.run(stream)) == [Event("n", (), 3, 3), Event("d", (6,), 4, 4)]


DELETES = """
noop <- a do ins_event_rule(r 'rule:' got(Y) <- x(Y)).
noop <- k do del_event_rule(r).
noop <- m do ins_event_rule(q 'rule:' kept(Y) <- x(Y)).
"""


def test_an_engine_that_deleted_a_rule_makes_the_snapshots_further_changes() -> None:
    # (the copy the changes are checked on makes this engine's changes too: the deleted
    # rule's nodes keep their numbers, and the next rule's nodes come after them)
    ahead, behind = Engine(DELETES), Engine(DELETES)
    for time, name in enumerate("akm", 1):
        ahead.push(Event.at(name, (), time))
        if name != "m":
            behind.push(Event.at(name, (), time))
    behind.restore(ahead.snapshot())
    assert behind.snapshot() == ahead.snapshot()
    assert behind.push(Event.at("x", (9,), 9)) == [Event("kept", (9,), 9, 9)]


def test_an_engine_whose_rules_were_changed_otherwise_refuses_changes_unchanged() -> None:
    ahead = Engine(DELETES)
    ahead.push(Event.at("a", (), 1))
    engine, twin = Engine(DELETES), Engine(DELETES)
    for e in (engine, twin):
        e.remove_rules("noop/0")
        e.add_rules("noop <- a do ins_event_rule(r 'rule:' got(Y) <- x(Y)).")
    with pytest.raises(SnapshotError, match="changed otherwise"):
        engine.restore(ahead.snapshot())
    assert engine.program == twin.program
    assert engine.snapshot() == twin.snapshot()
