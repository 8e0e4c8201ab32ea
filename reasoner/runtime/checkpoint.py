"""Engine snapshots: everything an engine holds, as plain data that runs no code when loaded.

A snapshot is a header line, ``reasoner-snapshot <version> <sha256 of the body>``, then the
body: UTF-8 JSON of plain values (docs/scale-out.md lists its fields). Values JSON has no type
for are tagged arrays (an array is never a value itself): ``["t", ...]`` a tuple, ``["q", n,
d]`` a fraction, ``["i", iri]`` an IRI, ``["s", functor, [args]]`` a compound, ``["x",
"inf"]`` (or ``"-inf"``, ``"nan"``) a float JSON cannot write, ``["e", name, args, start,
end]`` an event and ``["d", name, args, start, end, [sources]]`` a detection with provenance;
an explaining engine's detections add ``[rule, values, why]``, their derivation (the rule by its
place among the engine's rules in use, the values of its variables, the ``why`` tree).

Restoring checks the header, the checksum, the version and the program's fingerprint (its
compiled network and the engine's options) before it changes anything.
"""

from __future__ import annotations

import hashlib
import json
import math
import operator
from collections import deque
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from itertools import count, groupby
from typing import TYPE_CHECKING, Any

from reasoner.errors import ReasonerError, SnapshotError
from reasoner.language.ast import Program, dump
from reasoner.runtime.aggregates import (
    SlidingAggregateNode,
    SlidingWindow,
    StartedAggregateNode,
)
from reasoner.runtime.alarms import AlarmTimer
from reasoner.runtime.events import Detection, Event
from reasoner.runtime.nodes import Blockers, ClockNode, GuardNode, JoinNode, NegationNode
from reasoner.runtime.policies import Store
from reasoner.values import IRI, Struct

if TYPE_CHECKING:
    from reasoner.runtime.engine import Engine

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
    cached = engine._fingerprint
    if cached is not None and cached[0] is engine.program and cached[1] is engine._given_static:
        return cached[2]
    options = engine.options()
    if not options["explain"]:
        del options["explain"]
    text = (
        engine.network()
        + "\n"
        + _changed_static(engine)
        + json.dumps({k: encode(v) for k, v in options.items()}, sort_keys=True)
    )
    value = hashlib.sha256(text.encode("utf-8")).hexdigest()
    engine._fingerprint = (engine.program, engine._given_static, value)
    return value


def _changed_static(engine: Engine) -> str:
    now, given = engine.program.clauses, engine._given_static
    if len(now) == len(given) and all(map(operator.is_, now, given)):
        return ""  # (no action changed them: the clauses themselves, in their order)
    now_text = sorted(dump(c) for c in Program(now).static_rules)
    given_text = sorted(dump(c) for c in Program(given).static_rules)
    return "" if now_text == given_text else "".join(f"{c}\n" for c in now_text)


def snapshot(engine: Engine, rules: Derivations | None = None) -> bytes:
    """The engine's state as bytes (between two events); ``rules``: how to name the rules of
    derivations, when the engine also holds another engine's detections (default: its own)."""
    rt = engine._runtime
    rules = rules or Derivations.of(engine)
    state: dict[str, Any] = {"fingerprint": fingerprint(engine)}
    if engine._changes:  # (snapshots of engines whose actions changed no rule stay as they were)
        state["changes"] = [list(change) for change in engine._changes]
    state |= {
        "now": encode(rt.now),
        "timers": [_timer(at, order, fire, engine, rules) for at, order, fire in rt.timers],
        # sorted by their JSON text (the same state gives the same bytes, whatever the set's
        # order), each written once: the order of json.dumps's text too (it only adds a space
        # after each separator, at the same places in both texts up to where they differ)
        "seen": Written("[" + ",".join(sorted(_write(encode(e)) for e in engine._seen)) + "]"),
        "buffer": [[encode(end), n, encode(e)] for end, n, e in engine._buffer],
        "latest": encode(engine._latest),
        "counts": engine._counts,
        "sweep": [encode(engine._last_sweep), engine._ticks, engine._since_sweep],
        "sweep_budget": engine._sweep_budget,
        "nodes": [_node_state(node, rules) for node in engine._nodes],
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
    made = engine._changes
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
        own = engine._own_facts
        probe = Engine("", knowledge=None if own else engine._runtime.knowledge, **engine.options())
        probe._actions = engine._actions  # (the rules' actions, for compiling them)
        written = engine._written or engine.program
        probe._add(written)
        probe._given_static = written.clauses
        for name, text in engine._changes:
            probe._change(name, text)
        if _compiled(probe) == _compiled(engine):
            return probe
    raise SnapshotError(
        "the snapshot's rule changes cannot be checked on this engine (its rules were "
        "changed otherwise): restore it into an engine built from the rules"
    )


def _compiled(engine: Engine) -> tuple[Any, ...]:
    """What an engine's next rule changes compile into, besides their own rules."""
    return fingerprint(engine), len(engine._nodes), engine._removed, engine._compiled


def _load(
    engine: Engine, state: dict[str, Any], rules: Derivations | None, changes: list[tuple[str, str]]
) -> None:
    """Make the rule ``changes``, then put the snapshot's ``state`` in ``engine``."""
    try:
        for name, text in changes:
            engine._change(name, text)
    except (ReasonerError, ValueError, TypeError) as error:
        raise SnapshotError(f"the snapshot's rule changes cannot be made ({error})") from None
    if state.get("fingerprint") != fingerprint(engine):
        raise SnapshotError(
            "the snapshot was taken from another program (or with other engine options): "
            "its rules, policy, tie-break, lateness, max_span, provenance or explain differ"
        )
    nodes = engine._nodes
    if len(state["nodes"]) != len(nodes):
        raise SnapshotError("the snapshot's network does not match the engine's")
    rules = rules or Derivations.of(engine)
    try:
        timers = [_unpack_timer(t, engine, rules) for t in state["timers"]]
        loaded = [
            (node, _restorer(node, s, rules)) for node, s in zip(nodes, state["nodes"], strict=True)
        ]
        seen = [decode(e) for e in state["seen"]]
        buffer = [(decode(end), n, decode(e)) for end, n, e in state["buffer"]]
        last_sweep, ticks, since_sweep = state["sweep"]
        counts = {k: int(state["counts"][k]) for k in engine._counts}
        now, latest = decode(state["now"]), decode(state["latest"])
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise SnapshotError(f"the snapshot's contents are malformed ({error})") from None
    # Everything decoded: now change the engine (in place: generated code holds these).
    rt = engine._runtime
    rt.now = now
    rt.timers[:] = timers
    rt._order = count(max((t[1] for t in timers), default=-1) + 1)
    for _node, apply in loaded:
        apply()
    engine._seen.clear()
    engine._seen.update(seen)
    engine._buffer[:] = buffer
    engine._latest = latest
    engine._counts.update(counts)
    engine._last_sweep = decode(last_sweep)
    engine._ticks, engine._since_sweep = ticks, since_sweep
    engine._sweep_budget = state["sweep_budget"]
    engine._agenda.clear()


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


# ------------------------------------------------------------------------ values


@dataclass(frozen=True, slots=True)
class Derivations:
    """Explaining engines' rules in use (``RuleInfo``s, by place) and the knowledge: what
    writing and reading derivations needs."""

    infos: tuple[Any, ...]
    places: dict[int, int]  # id(RuleInfo) -> place
    knowledge: Any

    @staticmethod
    def of(*engines: Engine) -> Derivations | None:
        """The rules of ``engines``, one after the other (None unless they explain); the
        knowledge of the first."""
        if not engines or not engines[0]._explain:
            return None
        infos = tuple(e._infos[id(out)] for e in engines for out in e._outputs)
        places = {id(info): place for place, info in enumerate(infos)}
        return Derivations(infos, places, engines[0]._runtime.knowledge)

    def write(self, derivation: Any) -> list[Any] | None:
        """A :class:`~reasoner.runtime.explain.Derivation` as JSON data ``[rule, values,
        why]``; None for one of a rule not in use any more."""
        place = self.places.get(id(derivation.rule))
        if place is None:
            return None
        return [place, encode(derivation.values), encode(derivation.why, self)]

    def read(self, data: list[Any]) -> Any:
        """The inverse of :meth:`write`."""
        from reasoner.runtime.explain import Derivation

        place, values, why = data
        return Derivation(self.infos[int(place)], decode(values), decode(why, self), self.knowledge)


def encode(x: Any, rules: Derivations | None = None) -> Any:
    """A run-time value as JSON data (tagged arrays for what JSON lacks); with ``rules``,
    detections with their derivations."""
    # (isinstance with a tuple, not a union: this runs for every value a snapshot writes)
    if x is None or isinstance(x, (str, int)):  # (bool is an int)
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else ["x", repr(x)]
    if isinstance(x, Event):
        name, args, start, end = x
        out = ["e", name, encode(args), encode(start), encode(end)]
        if isinstance(x, Detection):
            out[0] = "d"
            out.append([encode(s) for s in x.sources])
            # (the derivation of a rule removed since is not kept: the event explains as a leaf)
            written = None if rules is None or x.derivation is None else rules.write(x.derivation)
            if written is not None:
                out.append(written)
        return out
    if isinstance(x, tuple):
        return ["t", *[encode(i, rules) for i in x]]
    if isinstance(x, Fraction):
        return ["q", x.numerator, x.denominator]
    if isinstance(x, IRI):
        return ["i", x.value]
    if isinstance(x, Struct):
        return ["s", x.functor, [encode(a) for a in x.args]]
    raise SnapshotError(f"cannot write a value of type {type(x).__name__} into a snapshot")


def decode(x: Any, rules: Derivations | None = None) -> Any:
    """The inverse of :func:`encode` (builds only plain values, events and detections)."""
    if not isinstance(x, list):
        if x is None or isinstance(x, (str, int, float)):
            return x
        raise ValueError(f"unexpected {type(x).__name__}")
    tag = x[0]
    if tag == "t":
        return tuple([decode(i, rules) for i in x[1:]])
    if tag == "x":
        if x[1] not in ("inf", "-inf", "nan"):
            raise ValueError(f"bad float {x[1]!r}")
        return float(x[1])
    if tag == "q":
        return Fraction(int(x[1]), int(x[2]))
    if tag == "i":
        return IRI(str(x[1]))
    if tag == "s":
        return Struct(str(x[1]), tuple(decode(a) for a in x[2]))
    if tag == "e":
        return Event(str(x[1]), decode(x[2]), decode(x[3]), decode(x[4]))
    if tag == "d":
        detection = Detection(str(x[1]), decode(x[2]), decode(x[3]), decode(x[4]))
        detection.sources = tuple(decode(s) for s in x[5])
        if rules is not None and len(x) > 6:
            detection.derivation = rules.read(x[6])
        return detection
    raise ValueError(f"unknown tag {tag!r}")


# ------------------------------------------------------------------------ timers


def _timer(at: Any, order: int, fire: Any, engine: Engine, rules: Derivations | None) -> list[Any]:
    if isinstance(fire, AlarmTimer):  # the rule by its place among the engine's outputs
        place = next(i for i, out in enumerate(engine._outputs) if out is fire.output)
        return [encode(at), order, "alarm", place, encode(fire.event, rules)]
    if isinstance(fire, partial):
        node = getattr(fire.func, "__self__", None)
        if isinstance(node, SlidingAggregateNode):
            return [encode(at), order, "leave", node.id, encode(fire.args[0])]
    owner = getattr(fire, "__self__", None)
    if isinstance(owner, ClockNode):
        return [encode(at), order, "clock", owner.id]
    raise SnapshotError(f"cannot write timer {fire!r} into a snapshot")


def _unpack_timer(t: list[Any], engine: Engine, rules: Derivations | None) -> tuple[Any, int, Any]:
    at, order, kind, node_id = decode(t[0]), int(t[1]), t[2], int(t[3])
    if kind == "alarm":
        event = decode(t[4], rules)
        if not isinstance(event, Event) or event.end != at:
            raise ValueError(f"alarm {t[4]!r} does not ring at {at!r}")
        return at, order, AlarmTimer(event, engine._outputs[node_id], engine._ring)
    node = engine._nodes[node_id]
    if kind == "clock" and isinstance(node, ClockNode):
        return at, order, node.fire
    if kind == "leave" and isinstance(node, SlidingAggregateNode):
        return at, order, partial(node._leave, decode(t[4]))
    raise ValueError(f"timer {kind} does not match node {node_id}")


# ------------------------------------------------------------------------ nodes


def _node_state(node: Any, rules: Derivations | None) -> Any:
    match node:
        case ClockNode():
            return {"pending": node.pending}
        case JoinNode():
            return {
                "left": _store(node.left, rules),
                "right": _store(node.right, rules),
                "stamp": encode(node._stamp),
            }
        case NegationNode():
            return {"left": _store(node.left, rules), "blockers": _blockers(node.blockers)}
        case GuardNode():
            ends = [[encode(k), [encode(e) for e in v]] for k, v in node._ends.items()]
            return {"blockers": _blockers(node.blockers), "ends": ends}
        case SlidingAggregateNode():
            return {
                "groups": [
                    [encode(k), encode(values), _window(w)]
                    for k, (values, w) in node.groups.items()
                ]
            }
        case StartedAggregateNode():
            return {"starts": _store(node.starts, rules)}
    return None


def _restorer(node: Any, state: Any, rules: Derivations | None) -> Any:
    """A function applying ``state`` to ``node`` (everything decoded before it runs)."""
    match node:
        case ClockNode():
            pending = bool(state["pending"])
            return partial(setattr, node, "pending", pending)
        case JoinNode():
            left, right = _unstore(state["left"], rules), _unstore(state["right"], rules)
            stamp = decode(state["stamp"])

            def apply_join() -> None:
                _fill(node.left, left)
                _fill(node.right, right)
                node._stamp = stamp

            return apply_join
        case NegationNode():
            left, blockers = _unstore(state["left"], rules), _unblockers(state["blockers"])

            def apply_negation() -> None:
                _fill(node.left, left)
                _refill(node.blockers, blockers)

            return apply_negation
        case GuardNode():
            blockers = _unblockers(state["blockers"])
            ends = {decode(k): [decode(e) for e in v] for k, v in state["ends"]}

            def apply_guard() -> None:
                _refill(node.blockers, blockers)
                node._ends.clear()
                node._ends.update(ends)

            return apply_guard
        case SlidingAggregateNode():
            groups = {
                decode(k): (decode(values), _unwindow(w, node._function, node._window))
                for k, values, w in state["groups"]
            }

            def apply_groups() -> None:
                node.groups.clear()
                node.groups.update(groups)

            return apply_groups
        case StartedAggregateNode():
            starts = _unstore(state["starts"], rules, (node._function, node._window))
            return partial(_fill, node.starts, starts)
    if state is not None:
        raise ValueError(f"state for stateless node {node.id}")
    return lambda: None


def _store(store: Store, rules: Derivations | None) -> list[Any]:
    return [
        [encode(key), [_occurrence(o, rules) for o in bucket]]
        for key, bucket in store.buckets.items()
    ]


def _occurrence(o: tuple[Any, ...], rules: Derivations | None) -> list[Any]:
    out = [encode(o[0]), encode(o[1]), encode(o[2]), encode(o[3], rules)]
    if len(o) == 5:  # a started aggregate's window
        out.append(_window(o[4]))
    return out


def _unstore(
    data: list[Any], rules: Derivations | None, window: tuple[str, Any] | None = None
) -> dict[Any, list[tuple[Any, ...]]]:
    buckets: dict[Any, list[tuple[Any, ...]]] = {}
    for key, bucket in data:
        occurrences = []
        for o in bucket:
            occ: tuple[Any, ...] = (decode(o[0]), decode(o[1]), decode(o[2]), decode(o[3], rules))
            if len(o) == 5:
                if window is None:
                    raise ValueError("an aggregate window outside an aggregate")
                occ += (_unwindow(o[4], *window),)
            occurrences.append(occ)
        buckets[decode(key)] = occurrences
    return buckets


def _fill(store: Store, buckets: dict[Any, list[tuple[Any, ...]]]) -> None:
    store.buckets.clear()
    store.buckets.update(buckets)
    store.size = sum(len(b) for b in buckets.values())


def _blockers(blockers: Blockers) -> list[Any]:
    return [
        [
            encode(k),
            [encode(t) for t in ends],
            [encode(t) for t in maxima],
            [encode(t) for t in starts],
        ]
        for k, (ends, maxima, starts) in blockers._by_key.items()
    ]


def _unblockers(data: list[Any]) -> dict[Any, tuple[list[Any], list[Any], list[Any]]]:
    return {
        decode(k): ([decode(t) for t in e], [decode(t) for t in m], [decode(t) for t in s])
        for k, e, m, s in data
    }


def _refill(blockers: Blockers, by_key: dict[Any, tuple[list[Any], list[Any], list[Any]]]) -> None:
    blockers._by_key.clear()
    blockers._by_key.update(by_key)
    blockers.size = sum(len(entry[0]) for entry in by_key.values())


def _window(w: SlidingWindow) -> dict[str, Any]:
    return {
        "items": [[seq, encode(v), encode(s), encode(e)] for seq, v, s, e in w.items],
        "total": encode(w.total),
        "squares": encode(w.squares),
        "lows": [[encode(v), seq] for v, seq in w.lows],
        "highs": [[encode(v), seq] for v, seq in w.highs],
        "starts": [[encode(s), seq] for s, seq in w.starts],
        "pending": [[encode(v), encode(s), encode(e)] for v, s, e in w.pending],
        "pending_time": encode(w.pending_time),
        "next": w._next,
    }


def _unwindow(data: dict[str, Any], function: str, window: tuple[str, Any] | None) -> SlidingWindow:
    w = SlidingWindow(function, window)
    w.items = deque((int(q), decode(v), decode(s), decode(e)) for q, v, s, e in data["items"])
    w.total = decode(data["total"])
    w.squares = float(decode(data["squares"]))
    w.lows = deque((decode(v), int(q)) for v, q in data["lows"])
    w.highs = deque((decode(v), int(q)) for v, q in data["highs"])
    w.starts = deque((decode(s), int(q)) for s, q in data["starts"])
    w.pending = [(decode(v), decode(s), decode(e)) for v, s, e in data["pending"]]
    w.pending_time = decode(data["pending_time"])
    w._next = int(data["next"])
    return w
