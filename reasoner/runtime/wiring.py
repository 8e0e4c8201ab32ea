"""The running network of one engine: its node instances, how they connect, and what is
derived from them (the fused dispatcher of every event type, what sweeps visit).

A :class:`Wiring` instantiates compiled networks (:func:`~reasoner.runtime.build.build_node`
per node, a generated head per rule), removes rules (their nodes become inert: node ids stay,
generated code and snapshots use them) and rebuilds the dispatchers of the event types whose
sources lie below the nodes a change touched (:meth:`Wiring.rewire`).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from reasoner.compiler.network import Network, NodeSpec, Output, Source, delivery_ranks
from reasoner.knowledge.actions import Action
from reasoner.language.ast import EventRule, Program
from reasoner.runtime.alarms import AlarmTimer
from reasoner.runtime.build import build_head, build_node, build_ring
from reasoner.runtime.events import Event
from reasoner.runtime.inline import inline
from reasoner.runtime.nodes import Node, Runtime, SourceNode, dispatcher
from reasoner.runtime.options import EngineOptions
from reasoner.runtime.sink import Sink
from reasoner.values import Time

Callback = Callable[[Event], None]


class Wiring:
    """The node instances of one engine's rules in use, and how they are connected.

    Attributes (read by the engine's parts, the builders and the snapshot module):
        options, runtime, sink, actions: what nodes and heads are built with.
        callbacks: detection callbacks by event name (None: every detection); generated
            heads call :meth:`notify`.
        program: the program in use (rules and static clauses).
        specs, nodes: per node id, its compiled description and its instance.
        outputs, heads, rules: per rule body in use (in the order added), its output, its
            generated head and the rule it belongs to.
        routes: per event type, the fused dispatcher of the sources waiting for it.
        arity: the arities of every event name read or derived (updated in place).
        keepers: the nodes that hold occurrences (what a sweep visits).
    """

    def __init__(
        self,
        options: EngineOptions,
        runtime: Runtime,
        sink: Sink,
        actions: Mapping[tuple[str, int] | str, Action],
    ) -> None:
        self.options = options
        self.runtime = runtime
        self.sink = sink
        self.actions = actions
        self.callbacks: dict[str | None, list[Callback]] = {}
        self.in_callback = 0  # callbacks running (rule changes they ask for wait)
        self.program = Program()
        self.marking = False  # whether dispatches mark their edges (Sink.mark)
        self.facts_at: dict[Any, Any] = {}  # with explain: where each fact is written
        self.infos: dict[int, Any] = {}  # with explain: id(output) -> its rule's RuleInfo
        self.nodes: list[Node] = []
        self.specs: list[NodeSpec] = []
        # event name -> arity -> the receivers of the sources waiting for it
        self.routes: dict[tuple[str, int], list[Callable[..., None]]] = {}
        self.source_nodes: dict[tuple[str, int], list[SourceNode]] = {}
        self.arity: dict[str, set[int]] = {}
        self.outputs: list[Output] = []
        self.heads: list[Callable[..., None]] = []
        self.rules: list[EventRule] = []
        self.compiled = [0, 0]  # rules and outputs ever compiled (they number the next ones)
        self.removed: set[int] = set()  # ids of the nodes of removed rules
        self.producers: dict[tuple[str, int], list[int]] = {}  # head -> output input nodes
        self.feed_lists: list[Sequence[int]] = []
        self.input_lists: list[tuple[int, ...]] = []
        self.keepers: list[int] = []
        self.sweep_every: Time = math.inf
        self._ring: Callable[[Event, Any], None] | None = None

    @property
    def ring(self) -> Callable[[Event, Any], None]:
        """What an alarm's timer calls when it rings: its event derived as the rule's head
        derives one (:func:`~reasoner.runtime.build.build_ring`; built when first asked)."""
        if self._ring is None:
            self._ring = build_ring(self)
        return self._ring

    def notify(self, event: Event) -> None:
        """Call the callbacks registered for ``event``'s name, then those for every event
        (rule changes they ask for wait until the event is processed: ``in_callback``)."""
        callbacks = self.callbacks
        self.in_callback += 1
        try:
            for callback in (*callbacks.get(event[0], ()), *callbacks.get(None, ())):
                callback(event)
        finally:
            self.in_callback -= 1

    # ------------------------------------------------------------------ building

    def start(self, program: Program, network: Network) -> None:
        """Build the nodes and heads of ``program`` (compiled into ``network``; this wiring
        runs no rules yet)."""
        self.program = program
        self.compiled = [len(program.event_rules), 0]
        self.instantiate(network, program.event_rules, 0)

    def seeds(self) -> tuple[Any, ...]:
        """What the generated code of this wiring's nodes is bound to besides the nodes: this
        wiring, its sink, runtime, callbacks and actions, and the containers of theirs it
        reads (a copy of another wiring's nodes binds to this one's: :meth:`adopt`)."""
        sink, runtime = self.sink, self.runtime
        return (
            self, sink, runtime, sink.seen, sink.agenda, sink.counts, sink.marks,
            self.callbacks, self.actions, self.routes, self.arity,
        )  # fmt: skip

    def parts(self) -> tuple[Any, ...]:
        """This wiring's node instances and what is built from them (:meth:`adopt`)."""
        return (
            self.nodes, self.ring, self.routes.copy(), self.source_nodes, self.heads,
            self.producers, self.feed_lists, self.runtime.timers,
        )  # fmt: skip

    def adopt(self, template: Wiring, parts: Sequence[Any]) -> None:
        """Run the rules of ``template`` (a wiring that :meth:`start` built and that never
        ran an event; this one runs no rules yet) with ``parts``: a copy of the template's
        :meth:`parts` bound to this wiring's :meth:`seeds`
        (:class:`~reasoner.runtime.instances.Plan`)."""
        nodes, ring, routes, source_nodes, heads, producers, feed_lists, timers = parts
        self.program = template.program
        self.compiled = list(template.compiled)
        self.nodes = nodes
        self.specs = list(template.specs)
        self._ring = ring
        self.routes.update(routes)
        self.arity.update({name: set(arities) for name, arities in template.arity.items()})
        self.source_nodes = source_nodes
        self.outputs = list(template.outputs)
        self.heads = heads
        self.rules = list(template.rules)
        self.removed = set(template.removed)
        self.producers = producers
        self.feed_lists = feed_lists
        self.input_lists = list(template.input_lists)
        self.keepers = list(template.keepers)
        self.sweep_every = template.sweep_every
        self.facts_at = dict(template.facts_at)
        self.infos = dict(template.infos)
        self.runtime.resume(template.runtime.now, timers)

    def instantiate(self, network: Network, rules: Sequence[EventRule], first_rule: int) -> None:
        """Build and connect the nodes and heads of ``network`` (compiled from ``rules``,
        numbered from ``first_rule``), then rewire."""
        prefixes = dict(network.prefixes)
        horizon = dict(network.horizons)
        rank = delivery_ranks(network, self.compiled[1])
        self.compiled[1] += len(network.outputs)
        for spec in network.nodes:
            node = build_node(self, spec, prefixes)
            for position in node.wiring:
                receiver, side = node.receivers[position], spec.sides[position]
                self.nodes[spec.inputs[position]].connect(receiver, rank[(spec.id, side)])
            node.horizon = horizon.get(spec.id)
            self.nodes.append(node)
            self.specs.append(spec)
        if self.options.explain:
            from reasoner.runtime.explain import written_facts

            self.facts_at = written_facts(self.program)
        for index, out in enumerate(network.outputs):
            head = build_head(self, out, prefixes)
            self.nodes[out.input].connect(head, rank[(-1 - index, 0)])
            self.outputs.append(out)
            self.heads.append(head)
            self.rules.append(rules[out.rule - first_rule])
        self.rewire(spec.id for spec in network.nodes)

    def remove(self, rules: Iterable[EventRule]) -> set[int]:
        """Remove ``rules`` (of :attr:`program`) in one pass; return the nodes the caller
        must :meth:`rewire`."""
        doomed = {id(rule) for rule in rules}
        kept = []
        changed = set()  # the nodes whose parents change
        gone = set()  # their outputs
        for out, head, rule in zip(self.outputs, self.heads, self.rules, strict=True):
            if id(rule) in doomed:
                self.nodes[out.input].disconnect(head)
                changed.add(out.input)
                gone.add(id(out))
                self.infos.pop(id(out), None)
            else:
                kept.append((out, head, rule))
        # their pending alarms are dropped with their partial matches (heapified below)
        timers = self.runtime.timers
        timers[:] = [t for t in timers if id(getattr(t[2], "output", None)) not in gone]
        self.outputs = [out for out, _, _ in kept]
        self.heads = [head for _, head, _ in kept]
        self.rules = [rule for _, _, rule in kept]
        self.program = Program(tuple(s for s in self.program.statements if id(s) not in doomed))
        return changed | self._drop_unused()

    def _drop_unused(self) -> set[int]:
        """Disconnect the nodes no rule uses any more, and cancel their timers (and heapify
        the timers, which the caller may have filtered); each is replaced by an inert node.
        Returns their ids."""
        used = self.subtree(out.input for out in self.outputs)
        dropped = set(range(len(self.nodes))) - used - self.removed
        for node_id in sorted(dropped):
            spec, node = self.specs[node_id], self.nodes[node_id]
            for child, receiver in zip(spec.inputs, node.receivers, strict=True):
                self.nodes[child].disconnect(receiver)
            if isinstance(node, SourceNode):
                self.source_nodes[(spec.name, len(spec.args))].remove(node)  # type: ignore[union-attr]
            self.nodes[node_id] = Node(node_id, self.runtime)
        self.removed |= dropped
        timers = self.runtime.timers
        timers[:] = [t for t in timers if timer_node(t[2]) not in dropped]
        heapq.heapify(timers)
        return dropped

    def rewire(self, changed: Iterable[int]) -> None:
        """Rebuild what is derived from the nodes in use and their connections: the event
        types known, the fused dispatchers (of the event types whose sources are below the
        ``changed`` nodes), what sweeps visit and how often."""
        self.producers = {}
        self.arity.clear()
        for out in self.outputs:
            self.producers.setdefault((out.head.name, len(out.head.args)), []).append(out.input)
            self.arity.setdefault(out.head.name, set()).add(len(out.head.args))
        self.feed_lists = [self._feeds(spec) for spec in self.specs]
        self.input_lists = [spec.inputs for spec in self.specs]
        # The nodes that hold something (the others pass occurrences on): what a sweep visits.
        self.keepers = [i for i, node in enumerate(self.nodes) if node.holds]
        for (name, arity), sources in self.source_nodes.items():
            if sources:
                self.arity.setdefault(name, set()).add(arity)
        for name, arity in self._sources_below(changed):
            # One function per event type, the network above its sources fused into it
            # (rebuilt whenever nodes connect). Updated in place: heads hold these lists.
            sources = self.source_nodes.get((name, arity), [])
            sink = self.sink if self.marking else None
            fused = [inline(dispatcher(sources, sink), f"{name}/{arity}")] if sources else []
            self.receivers(name, arity)[:] = fused
            if not sources and (name, arity) not in self.producers:
                # no rule reads or derives it any more: its events count as unread
                del self.routes[(name, arity)]
        windows = [node.horizon for node in self.nodes if node.horizon is not None]
        # Sweeping expired occurrences every half window keeps memory within ~1.5 windows.
        self.sweep_every = min(windows) / 2 if windows else math.inf

    def mark_all(self) -> None:
        """Make every dispatch mark its edges (:meth:`Sink.mark`; the parallel stages)."""
        self.marking = True
        self.rewire(set(range(len(self.nodes))) - self.removed)

    def _sources_below(self, nodes: Iterable[int]) -> set[tuple[str, int]]:
        """The event types of the sources at or below ``nodes``."""
        specs = (self.specs[i] for i in self.subtree(nodes))
        return {(s.name, len(s.args)) for s in specs if isinstance(s, Source)}

    def receivers(self, name: str, arity: int) -> list[Callable[..., None]]:
        """The receivers of the sources waiting for ``name/arity`` (a list that grows as
        rules are added)."""
        return self.routes.setdefault((name, arity), [])

    def _feeds(self, spec: NodeSpec) -> Sequence[int]:
        """The nodes whose occurrences' starts can become the start of ``spec``'s output (a
        source's: the rules deriving its event)."""
        if isinstance(spec, Source):
            return self.producers.get((spec.name, len(spec.args)), ())
        return spec.feeds

    def subtree(self, roots: Iterable[int]) -> set[int]:
        """The nodes at or below ``roots``."""
        seen: set[int] = set()
        todo = list(roots)
        while todo:
            node_id = todo.pop()
            if node_id not in seen:
                seen.add(node_id)
                todo.extend(self.specs[node_id].inputs)
        return seen

    # ------------------------------------------------------------------ reporting

    def network(self) -> Network:
        """The compiled network of the rules in use."""
        nodes = tuple(s for s in self.specs if s.id not in self.removed)
        horizons = tuple((s.id, self.nodes[s.id].horizon) for s in nodes if s.stores)
        return Network(nodes, tuple(self.outputs), horizons)

    def stored(self) -> int:
        """How many occurrences the nodes hold right now."""
        return sum(node.stored() for node in self.nodes)

    def status(self) -> list[dict[str, Any]]:
        """Per rule: its head, the nodes its pattern uses, and the goals waiting at each."""
        report = []
        for out in self.outputs:
            waiting = {}
            for node_id in sorted(self.subtree([out.input])):
                count = self.nodes[node_id].stored()
                if count:
                    waiting[f"n{node_id}"] = count
            report.append(
                {"rule": out.label or out.rule, "head": out.head.name, "waiting": waiting}
            )
        return report

    def rule_infos(self) -> tuple[Any, ...]:
        """With explain: each rule in use's RuleInfo, in the order of :attr:`outputs`."""
        return tuple(self.infos[id(out)] for out in self.outputs) if self.options.explain else ()


def timer_node(fire: Any) -> int | None:
    """The id of the node a timer belongs to (a time point's ``fire``, an aggregate's
    ``partial``; None for an alarm, which belongs to a rule)."""
    if isinstance(fire, AlarmTimer):
        return None
    node: Node = getattr(fire, "func", fire).__self__
    return node.id
