"""The run-time parts of a compiled network: one node per network node, and each rule's
head (generated Python, the head arguments inlined), wired to the engine that runs them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from reasoner.compiler.network import (
    Clock,
    Expand,
    Filter,
    Fold,
    Guard,
    Join,
    Negation,
    NodeSpec,
    Output,
    Source,
    Union,
)
from reasoner.knowledge.goals import compile_expression, compile_goal, term_value
from reasoner.language.ast import Term, Var
from reasoner.runtime.aggregates import SlidingAggregateNode, StartedAggregateNode
from reasoner.runtime.alarms import alarm_head
from reasoner.runtime.conditions import condition
from reasoner.runtime.events import Detection, Event
from reasoner.runtime.generated import define
from reasoner.runtime.negation import GuardNode, NegationNode
from reasoner.runtime.nodes import (
    ClockNode,
    ExpandNode,
    FilterNode,
    JoinNode,
    Node,
    SourceNode,
    UnionNode,
    argument_matcher,
)

if TYPE_CHECKING:
    from reasoner.runtime.wiring import Wiring


def build_node(wiring: Wiring, spec: NodeSpec, prefixes: dict[str, str]) -> Node:
    """The run-time node of one network node (not yet connected)."""
    rt = wiring.runtime
    match spec:
        case Source():
            return _source(wiring, spec, prefixes)
        case Clock(time=time):
            # (a time point at ``now`` is past: events of that time were processed)
            clock = ClockNode(spec.id, rt, time, pending=time > rt.now)
            if time > rt.now:
                rt.schedule(time, clock.fire)
            return clock
        case Join():
            return JoinNode(
                spec.id,
                rt,
                spec.op,
                spec.left_key,
                spec.right_key,
                spec.right_rest,
                len(wiring.specs[spec.right].variables),
                _condition(wiring, spec.conditions, spec.variables, prefixes),
                spec.window,
                spec.policy,
                wiring.options.tie_break,
                wiring.options.provenance,
            )
        case Negation():
            return NegationNode(
                spec.id,
                rt,
                spec.left_key,
                spec.right_key,
                spec.right_rest,
                len(wiring.specs[spec.left].variables),
                spec.blocker_key,
                _condition(wiring, spec.conditions, spec.variables, prefixes),
                spec.window,
                spec.policy,
                wiring.options.tie_break,
                wiring.options.provenance,
            )
        case Guard():
            return GuardNode(spec.id, rt, spec.op, spec.blocker_key, spec.memory)
        case Union():
            return UnionNode(spec.id, rt, spec.left_projection, spec.right_projection)
        case Filter():
            check = _condition(wiring, spec.conditions, spec.variables, prefixes)
            return FilterNode(spec.id, rt, check, spec.window)
        case Fold(start=None):
            return SlidingAggregateNode(
                spec.id, rt, spec.function, spec.value, spec.group, spec.window
            )
        case Fold():
            return StartedAggregateNode(
                spec.id,
                rt,
                spec.function,
                spec.value,
                spec.group,
                spec.start_key,
                spec.window,
                spec.policy,
                wiring.options.tie_break,
                wiring.options.provenance,
            )
        case Expand():
            goal = compile_goal(spec.goal, prefixes, wiring.actions)
            # the input's values under this node's names (a shared input has its own)
            inputs = spec.variables[: len(wiring.specs[spec.input].variables)]
            return ExpandNode(spec.id, rt, goal, inputs, spec.variables)
    raise TypeError(f"not a network node: {spec!r}")


def _source(wiring: Wiring, spec: Source, prefixes: dict[str, str]) -> SourceNode:
    test, values, constants = argument_matcher(
        spec.args, lambda term: term_value(term, prefixes), f"c{spec.id}_"
    )
    node = SourceNode(spec.id, wiring.runtime, test, values, constants)
    wiring.source_nodes.setdefault((spec.name, len(spec.args)), []).append(node)
    return node


def _condition(
    wiring: Wiring, conditions: Sequence[Any], names: Sequence[str], prefixes: dict[str, str]
) -> Callable[[tuple[Any, ...]], bool] | None:
    goals = [compile_goal(c, prefixes, wiring.actions) for c in conditions]
    return condition(goals, names, wiring.runtime)


def build_head(wiring: Wiring, out: Output, prefixes: dict[str, str]) -> Callable[..., None]:
    """A rule's output: builds the head event and drops duplicates; reports the rest at
    once (in derivation order, which is the order the agenda dispatches them in) and
    queues the ones sources wait for on the agenda. Generated, with the head arguments
    inlined. An alarm rule's output schedules the head instead (:mod:`.alarms`)."""
    alarm = () if out.alarm is None else (out.alarm.time,)
    arguments, scope = head_arguments((*out.head.args, *alarm), out.variables, prefixes)
    scope.update(
        name=out.head.name,
        new=tuple.__new__,
        kind=Detection if wiring.options.provenance else Event,
        seen=wiring.sink.seen,
        append=wiring.sink.agenda.append,
        callbacks=wiring.callbacks,
        notify=wiring.notify,
        receivers=wiring.receivers(out.head.name, len(out.head.args)),
        sink=wiring.sink,
        rule=out,
        provenance=provenance,
        runtime=wiring.runtime,
        schedule=wiring.runtime.schedule,
        ring=wiring.ring,
    )
    trace = ["event.sources = provenance(w)"] if wiring.options.provenance else []
    if wiring.options.explain:
        from reasoner.runtime.explain import Derivation, rule_info

        info = wiring.infos[id(out)] = rule_info(out, wiring.specs, prefixes, wiring.facts_at)
        scope.update(derivation=Derivation, info=info)
        trace.append("event.derivation = derivation(info, v, w, runtime.knowledge)")
    if out.alarm is not None:
        return alarm_head(out, out.alarm.absolute, arguments, scope, trace)
    source = (
        "def derive(v, s, e, w):\n"
        f"    event = new(kind, (name, {arguments}, s, e))\n" + _deliver(trace)
    )
    return define(source, f"head {out.head.name}", scope)


def build_ring(wiring: Wiring) -> Callable[[Event, Output], None]:
    """What an alarm's timer calls when it rings, ``ring(event, rule)``: ``event`` (built,
    provenance and all, when the alarm was scheduled) is derived by ``rule`` as its head
    derives an event (:func:`build_head`)."""
    source = (
        "def ring(event, rule):\n"
        "    receivers = routes.get((event[0], len(event[1])))\n" + _deliver([])
    )
    scope = {
        "seen": wiring.sink.seen,
        "append": wiring.sink.agenda.append,
        "callbacks": wiring.callbacks,
        "notify": wiring.notify,
        "routes": wiring.routes,
        "sink": wiring.sink,
    }
    return define(source, "alarm ring", scope)


def _deliver(trace: list[str]) -> str:
    """Source of what a head does with its ``event`` (``rule`` derived it, ``receivers``
    wait for it): a duplicate is counted and dropped; anything else is recorded (with the
    lines of ``trace``), reported to the callbacks and queued on the agenda."""
    return (
        "    if event in seen:\n"
        "        sink.counts['duplicates'] += 1\n"
        "    else:\n"
        "        seen.add(event)\n"
        + "".join(f"        {line}\n" for line in trace)
        + "        sink.detected.append(event)\n"
        "        if callbacks:\n"
        "            notify(event)\n"
        "        if receivers:\n"
        "            append((event, receivers, rule))\n"
    )


def head_arguments(
    args: Sequence[Term], names: tuple[str, ...], prefixes: dict[str, str]
) -> tuple[str, dict[str, Any]]:
    """Python source building a head's argument tuple from the body's values ``v``
    (arithmetic evaluated), and the names it reads."""
    scope: dict[str, Any] = {}
    parts = []
    for i, arg in enumerate(args):
        if isinstance(arg, Var):
            parts.append(f"v[{names.index(arg.name)}]")
            continue
        value = term_value(arg, prefixes)
        if value is not None:
            scope[f"c{i}"] = value
            parts.append(f"c{i}")
            continue
        expression = compile_expression(arg, prefixes)
        scope[f"f{i}"] = lambda values, f=expression: f(dict(zip(names, values, strict=True)))
        parts.append(f"f{i}(v)")
    return "(" + "".join(p + ", " for p in parts) + ")", scope


def provenance(why: Any) -> tuple[Event, ...]:
    """The input events in a ``why`` (an event, None, or nested pairs), once each, in time
    order; a detection stands for its own sources."""
    found: dict[Event, None] = {}
    todo = [why]
    while todo:
        item = todo.pop()
        if item is None:
            continue
        if isinstance(item, Detection):
            found.update(dict.fromkeys(item.sources))
        elif isinstance(item, Event):
            found[item] = None
        else:
            todo.extend(item)
    return tuple(sorted(found, key=lambda event: (event[3], event[2])))
