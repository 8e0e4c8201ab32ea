"""Engine snapshots: everything an engine holds, as plain data that runs no code when loaded.

A snapshot is a header line, ``reasoner-snapshot <version> <sha256 of the body>``, then the
body: UTF-8 JSON of plain values (docs/scale-out.md lists its fields), written with the value
codec of :mod:`reasoner.runtime.codec`. This module writes the header, the checksum, the
version and the engine-level fields (clock, timers, de-duplication, lateness buffer,
counters); every node writes and reads its own state (``Node.state`` / ``Node.load``, the
state contract of docs/architecture.md).

Restoring checks the header, the checksum, the version and the program's fingerprint (its
compiled network and the engine's options) before it changes anything.
"""

from __future__ import annotations

import hashlib
import json
import operator
import weakref
from itertools import groupby
from typing import TYPE_CHECKING, Any

from reasoner.errors import ReasonerError, SnapshotError
from reasoner.language.ast import Program, dump
from reasoner.runtime.alarms import AlarmTimer
from reasoner.runtime.codec import Codec, Derivations, decode, encode
from reasoner.runtime.events import Event
from reasoner.runtime.nodes import Node

if TYPE_CHECKING:
    from reasoner.runtime.engine import Engine

__all__ = ["Derivations", "decode", "encode", "fingerprint", "pack", "restore", "snapshot"]

MAGIC = "reasoner-snapshot"
VERSION = 1


def fingerprint(engine: Engine) -> str:
    """What a snapshot may only be restored into: the compiled network, the static
    rules when actions changed them (``ins_static_rule``) and the options.

    ``explain`` counts only when on (its snapshots hold derivations, which an engine without
    it cannot use and an engine with it needs): off, the fingerprint is the one of engines
    that had no such option, whose snapshots still restore. The same for the static rules:
    written only when they differ from those the engine was given (whatever the changes that
    led there). Computed once per program (every rule change makes a new one)."""
    given = engine.rule_changes.given_static
    cached = _fingerprints.get(engine)
    if cached is not None and cached[0] is engine.program and cached[1] is given:
        return cached[2]
    options = engine.settings.fingerprinted()
    text = (
        engine.network()
        + "\n"
        + _changed_static(engine)
        + json.dumps({k: encode(v) for k, v in options.items()}, sort_keys=True)
    )
    value = hashlib.sha256(text.encode("utf-8")).hexdigest()
    _fingerprints[engine] = (engine.program, given, value)
    return value


#: Per engine, its fingerprint and the program (and static rules given) it is of.
_fingerprints: weakref.WeakKeyDictionary[Engine, tuple[Any, Any, str]] = weakref.WeakKeyDictionary()


def _changed_static(engine: Engine) -> str:
    now, given = engine.program.clauses, engine.rule_changes.given_static
    if len(now) == len(given) and all(map(operator.is_, now, given)):
        return ""  # (no action changed them: the clauses themselves, in their order)
    now_text = sorted(dump(c) for c in Program(now).static_rules)
    given_text = sorted(dump(c) for c in Program(given).static_rules)
    return "" if now_text == given_text else "".join(f"{c}\n" for c in now_text)


def snapshot(engine: Engine, rules: Derivations | None = None) -> bytes:
    """The engine's state as bytes (between two events); ``rules``: how to name the rules of
    derivations, when the engine also holds another engine's detections (default: its own)."""
    rt, sink, clock, intake = engine.runtime, engine.sink, engine.clock, engine.intake
    codec = Codec(rules or Derivations.of(engine))
    state: dict[str, Any] = {"fingerprint": fingerprint(engine)}
    made = engine.rule_changes.made
    if made:  # (snapshots of engines whose actions changed no rule stay as they were)
        state["changes"] = [list(change) for change in made]
    state |= {
        "now": encode(rt.now),
        "timers": [_timer(at, order, fire, engine, codec) for at, order, fire in rt.timers],
        # sorted by their JSON text (the same state gives the same bytes, whatever the set's
        # order), each written once: the order of json.dumps's text too (it only adds a space
        # after each separator, at the same places in both texts up to where they differ)
        "seen": Written("[" + ",".join(sorted(_write(encode(e)) for e in sink.seen)) + "]"),
        "buffer": [[encode(end), n, encode(e)] for end, n, e in intake.buffer],
        "latest": encode(intake.latest),
        "counts": sink.counts,
        "sweep": [encode(clock.last_sweep), clock.ticks, clock.since_sweep],
        "sweep_budget": clock.sweep_budget,
        "nodes": [node.state(codec) for node in engine.wiring.nodes],
    }
    return pack(state)


#: ``json.dumps`` with a snapshot's settings (compact; no NaN or infinity).
_write = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode


class Written(str):
    """JSON text already written (:func:`pack` puts it in as it is)."""

    __slots__ = ()


def pack(state: dict[str, Any]) -> bytes:
    """JSON data (values written with :func:`encode`, or :class:`Written`) as a
    checksummed, versioned snapshot."""
    parts: list[str] = []  # (the fields between two Written ones are written together)
    for written, fields in groupby(state.items(), lambda field: isinstance(field[1], Written)):
        if written:
            parts += (f"{_write(key)}:{value}" for key, value in fields)
        else:
            parts.append(_write(dict(fields))[1:-1])
    body = ("{" + ",".join(parts) + "}").encode("utf-8")
    header = f"{MAGIC} {VERSION} {hashlib.sha256(body).hexdigest()}\n".encode("ascii")
    return header + body


def restore(engine: Engine, data: bytes, rules: Derivations | None = None) -> None:
    """Replace ``engine``'s state with the snapshot's; SnapshotError (engine unchanged) for
    data that is not a snapshot, is corrupt or truncated, has another format version or comes
    from another program or other options.

    An engine that made the first of the rule changes the snapshot's engine made (by its
    actions; none at all: built from the same rules) makes the others first, in order: a new
    engine takes a snapshot taken after actions changed the rules. They are made, and the
    snapshot restored, on a copy of the engine's rules first: refused, nothing changed."""
    state = unpack(data)
    changes = state.get("changes", [])
    made = engine.rule_changes.made
    if len(changes) > len(made) and all(
        isinstance(c, list) and list(m) == c for m, c in zip(made, changes, strict=False)
    ):
        more = [(str(name), str(text)) for name, text in changes[len(made) :]]
        _load(_probe(engine), state, rules, more)  # (raises SnapshotError, engine unchanged)
        _load(engine, state, rules, more)
    else:
        _load(engine, state, rules, [])


def _probe(engine: Engine) -> Engine:
    """A new engine compiled as ``engine`` is: built from its program as written, with its
    options and knowledge, then making the rule changes it made (to make a snapshot's further
    changes on); SnapshotError when that does not give the engine's network."""
    from reasoner.runtime.engine import Engine

    if type(engine) is Engine:  # (stage engines make no rule changes: nothing to check)
        changes = engine.rule_changes
        knowledge = None if changes.own_facts else engine.knowledge
        probe = Engine("", knowledge=knowledge, **engine.options())
        probe.wiring.actions = engine.wiring.actions  # (the rules' actions, for compiling them)
        written = changes.written or engine.program
        probe.rule_changes.add(written)
        probe.rule_changes.given_static = written.clauses
        for name, text in changes.made:
            probe.rule_changes.make(name, text)
        if _compiled(probe) == _compiled(engine):
            return probe
    raise SnapshotError(
        "the snapshot's rule changes cannot be checked on this engine (its rules were "
        "changed otherwise): restore it into an engine built from the rules"
    )


def _compiled(engine: Engine) -> tuple[Any, ...]:
    """What an engine's next rule changes compile into, besides their own rules."""
    wiring = engine.wiring
    return fingerprint(engine), len(wiring.nodes), wiring.removed, wiring.compiled


def _load(
    engine: Engine, state: dict[str, Any], rules: Derivations | None, changes: list[tuple[str, str]]
) -> None:
    """Make the rule ``changes``, then put the snapshot's ``state`` in ``engine``."""
    try:
        for name, text in changes:
            engine.rule_changes.make(name, text)
    except (ReasonerError, ValueError, TypeError) as error:
        raise SnapshotError(f"the snapshot's rule changes cannot be made ({error})") from None
    if state.get("fingerprint") != fingerprint(engine):
        raise SnapshotError(
            "the snapshot was taken from another program (or with other engine options): "
            "its rules, policy, tie-break, lateness, max_span, provenance or explain differ"
        )
    nodes = engine.wiring.nodes
    if len(state["nodes"]) != len(nodes):
        raise SnapshotError("the snapshot's network does not match the engine's")
    codec = Codec(rules or Derivations.of(engine))
    sink, clock, intake = engine.sink, engine.clock, engine.intake
    try:
        timers = [_unpack_timer(t, engine, codec) for t in state["timers"]]
        loaded = [node.load(s, codec) for node, s in zip(nodes, state["nodes"], strict=True)]
        seen = [decode(e) for e in state["seen"]]
        buffer = [(decode(end), n, decode(e)) for end, n, e in state["buffer"]]
        last_sweep, ticks, since_sweep = state["sweep"]
        counts = {k: int(state["counts"][k]) for k in sink.counts}
        now, latest = decode(state["now"]), decode(state["latest"])
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise SnapshotError(f"the snapshot's contents are malformed ({error})") from None
    # Everything decoded: now change the engine (in place: generated code holds these).
    engine.runtime.resume(now, timers)
    for apply in loaded:
        apply()
    sink.seen.clear()
    sink.seen.update(seen)
    intake.buffer[:] = buffer
    intake.latest = latest
    sink.counts.update(counts)
    clock.last_sweep = decode(last_sweep)
    clock.ticks, clock.since_sweep = ticks, since_sweep
    clock.sweep_budget = state["sweep_budget"]
    sink.agenda.clear()


def unpack(data: bytes) -> dict[str, Any]:
    """The JSON data of a :func:`pack`ed snapshot; SnapshotError for anything else."""
    if not isinstance(data, bytes | bytearray):
        raise SnapshotError("a snapshot is bytes")
    header, newline, body = bytes(data).partition(b"\n")
    parts = header.split(b" ")
    if not newline or len(parts) != 3 or parts[0] != MAGIC.encode():
        raise SnapshotError("not an engine snapshot (no 'reasoner-snapshot' header)")
    if parts[1] != str(VERSION).encode():
        version = parts[1].decode("ascii", "replace")
        raise SnapshotError(f"snapshot format version {version}; this engine reads {VERSION}")
    if hashlib.sha256(body).hexdigest().encode() != parts[2]:
        raise SnapshotError("the snapshot is corrupt or truncated (its checksum does not match)")
    try:
        state = json.loads(body)
    except ValueError as error:
        raise SnapshotError(f"the snapshot's body is not JSON ({error})") from None
    if not isinstance(state, dict):
        raise SnapshotError("the snapshot's body is not a JSON object")
    return state


# ------------------------------------------------------------------------ timers


def _timer(at: Any, order: int, fire: Any, engine: Engine, codec: Codec) -> list[Any]:
    if isinstance(fire, AlarmTimer):  # the rule by its place among the engine's outputs
        place = next(i for i, out in enumerate(engine.wiring.outputs) if out is fire.output)
        return [encode(at), order, "alarm", place, codec.write_why(fire.event)]
    node = getattr(getattr(fire, "func", fire), "__self__", None)
    if not isinstance(node, Node):
        raise SnapshotError(f"cannot write timer {fire!r} into a snapshot")
    kind, *data = node.timer(fire, codec)
    return [encode(at), order, kind, node.id, *data]


def _unpack_timer(t: list[Any], engine: Engine, codec: Codec) -> tuple[Any, int, Any]:
    at, order, kind, node_id = decode(t[0]), int(t[1]), t[2], int(t[3])
    wiring = engine.wiring
    if kind == "alarm":
        event = codec.read_why(t[4])
        if not isinstance(event, Event) or event.end != at:
            raise ValueError(f"alarm {t[4]!r} does not ring at {at!r}")
        return at, order, AlarmTimer(event, wiring.outputs[node_id], wiring.ring)
    return at, order, wiring.nodes[node_id].read_timer(str(kind), t[4:], codec)
