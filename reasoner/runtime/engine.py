"""The event-at-a-time engine.

``Engine.push(event)`` advances the clock to the event's end (firing the time points it
passes), dispatches the event to the sources waiting for its name, and drains the agenda of
derived events (a FIFO, so recursion does not grow the Python stack). Every derived event
ends at the current time, so de-duplication (set semantics) only needs the events of the
current time point, and is forgotten when the clock moves on.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TextIO

from reasoner.compiler.compile import Options, compile_program
from reasoner.compiler.network import Network, NodeSpec, Output, Source, delivery_ranks
from reasoner.errors import EngineError, EventError
from reasoner.knowledge.actions import Action
from reasoner.knowledge.actions import actions as action_table
from reasoner.knowledge.base import Knowledge
from reasoner.knowledge.facts import FactBase
from reasoner.knowledge.program import check_conditions, program_knowledge
from reasoner.language.ast import EventRule, Facts, Program, StaticRule
from reasoner.language.check import check_program
from reasoner.language.loader import Rules, load_rules
from reasoner.modes import TIE_BREAKS, Policy, TieBreak
from reasoner.runtime.alarms import AlarmTimer
from reasoner.runtime.build import build_head, build_node, build_ring
from reasoner.runtime.events import Event, is_time, rejection
from reasoner.runtime.inline import inline
from reasoner.runtime.nodes import Node, Runtime, SourceNode, dispatcher
from reasoner.runtime.rulechanges import quoted, refuse_static_changes, select_rules
from reasoner.values import NUMBER_TYPES, Time

Callback = Callable[[Event], None]


@dataclass(frozen=True, slots=True)
class Stats:
    """Counters since the engine started."""

    events_in: int
    detections: int
    stored: int
    expired: int
    rejected: int
    duplicates: int


class Engine:
    """Detects complex events over a stream, one event at a time.

    Args:
        rules: rule text, ``.event`` paths, or parsed programs.
        knowledge: the static knowledge WHERE conditions ask (default: the program's facts).
        policy: the consumption policy for every rule without its own:
            ``unrestricted``, ``recent`` or ``chronological``.
        tie_break: under ``recent``, which of two occurrences ending together is the latest:
            ``longer`` or ``shorter``.
        max_derivations: derived events that other rules read, allowed for one input event
            (or time point) before the engine stops
            with an EngineError naming the rule (guards runaway recursion).
        lateness: how far (in time) an event may arrive out of order; events are buffered
            and processed in time order once the stream is that far past them. Detections
            are then reported that much later; call :meth:`flush` at the end of a stream.
        max_span: the longest interval an input event may have (0: input events are
            instantaneous, as SEMANTICS.md's atomic events are; None: any). Knowing it lets
            the engine free goals that only an input starting in the past could complete
            (PAR, MEETS, DURING, STARTS partners, blocked NOT goals, CNOT blockers) without a
            window; a longer input event is rejected.
        provenance: record on every detection the input events it was built from
            (``detection.sources``). It costs memory: a detection keeps its inputs alive.
        actions: Python callables by name that ``p do name(Args)`` runs when ``p`` is
            detected (``reasoner/knowledge/actions.py``), besides the built-in printing ones.
        action_output: where the printing actions write (default: standard output).
        explain: record on every detection its derivation (implies ``provenance``): the
            rule, its variables' values, the events it was built from and the knowledge
            version asked; :func:`~reasoner.runtime.explain.explain` turns it into a tree
            with the knowledge facts each condition used, justified down to asserted facts.
            It costs memory (a detection keeps the detections it was built from alive) and a
            little time per detection, none per event.

    >>> engine = Engine("c <- a SEQ b.")
    >>> engine.push(Event.at("a", (), 1)), engine.push(Event.at("b", (), 2))
    ([], [Event(name='c', args=(), start=1, end=2)])
    """

    #: Whether dispatches record where each parent's derivations end (:meth:`_mark`).
    _marking = False

    def __init__(
        self,
        rules: Rules,
        *,
        knowledge: Knowledge | None = None,
        policy: Policy = "unrestricted",
        tie_break: TieBreak = "longer",
        max_derivations: int = 100_000,
        lateness: Time = 0,
        max_span: Time | None = None,
        provenance: bool = False,
        actions: Mapping[str, Action] | None = None,
        action_output: TextIO | None = None,
        explain: bool = False,
    ) -> None:
        if tie_break not in TIE_BREAKS:
            raise EngineError(f"unknown tie-break '{tie_break}' (choose {', '.join(TIE_BREAKS)})")
        self.program = Program()
        self._options = Options(policy)
        self._tie_break = tie_break
        self._max_derivations = max_derivations
        if not is_time(lateness):
            raise EngineError(f"lateness must be a non-negative number, not {lateness!r}")
        self._lateness = lateness
        if max_span is not None and not is_time(max_span):
            raise EngineError(f"max_span must be a non-negative number or None, not {max_span!r}")
        self._max_span = max_span
        self._span_limit = math.inf if max_span is None else max_span
        self._actions = action_table(actions, action_output, self._rule_action)
        self._provenance = provenance or explain
        self._explain = explain
        self._facts_at: dict[Any, Any] = {}  # with explain: where each fact is written
        self._infos: dict[int, Any] = {}  # with explain: id(output) -> its rule's RuleInfo
        self._buffer: list[tuple[Time, int, Event]] = []  # (end, arrival, event) heap
        self._latest: Time = -math.inf
        self._own_facts = knowledge is None
        self._runtime = Runtime(knowledge if knowledge is not None else FactBase())
        self._nodes: list[Node] = []
        self._specs: list[NodeSpec] = []  # the compiled description of each node
        # event name -> arity -> the receivers of the sources waiting for it
        self._routes: dict[tuple[str, int], list[Callable[..., None]]] = {}
        self._source_nodes: dict[tuple[str, int], list[SourceNode]] = {}
        self._arity: dict[str, set[int]] = {}
        self._outputs: list[Output] = []  # the rule bodies in use, in the order added
        self._heads: list[Callable[..., None]] = []  # each output's head function
        self._rules: list[EventRule] = []  # the rule each output belongs to
        self._compiled = [0, 0]  # rules and outputs ever compiled (they number the next ones)
        self._removed: set[int] = set()  # ids of the nodes of removed rules
        self._producers: dict[tuple[str, int], list[int]] = {}  # head -> output input nodes
        self._callbacks: dict[str | None, list[Callback]] = {}
        self._in_callback = 0  # callbacks running (rule changes they ask for wait)
        self._deferred: list[Callable[[], object]] = []  # those changes, in order
        #: the rule changes actions made, in order (snapshots carry them: checkpoint.restore)
        self._changes: list[tuple[str, str]] = []
        self._written: Program | None = None  # the program before the first of them
        # the static rules the engine was given (the actions' changes aside)
        self._given_static: tuple[StaticRule | Facts, ...] = ()
        # the snapshot fingerprint (reasoner.runtime.checkpoint) of the program it was computed
        # for: every rule change makes a new program, so it holds until the program changes
        self._fingerprint: tuple[Program, tuple[StaticRule | Facts, ...], str] | None = None
        # derived events, each with the receivers waiting for it
        self._agenda: deque[tuple[Event, list[Callable[..., None]], Output]] = deque()
        # the events of the current time point (events are tuples: they hash in C)
        self._seen: set[Event] = set()
        self._detected: list[Event] = []
        self._marks: list[tuple[Any, int]] = []  # with _marking: (edge key, derived so far)
        self._counts = {
            "events_in": 0,
            "detections": 0,
            "expired": 0,
            "rejected": 0,
            "duplicates": 0,
        }
        # input events no rule reads, by name (counted off the hot path: they have no route)
        self._unread: Counter[str] = Counter()
        self._last_sweep: Time = -math.inf
        self._ticks = 0
        self._sweep_every: Time = math.inf
        self._since_sweep = 0  # events processed and detected since the last sweep
        self._sweep_budget = 0  # events that pay for the next sweep
        self._feed_lists: list[Sequence[int]] = []
        self._input_lists: list[tuple[int, ...]] = []
        self._keepers: list[int] = []
        # an alarm's timer rings: its event derived as the rule's head derives one
        self._ring = build_ring(self)
        self.add_rules(rules)

    # ------------------------------------------------------------------ building

    def add_rules(self, rules: Rules) -> None:
        """Compile more rules into the running engine (between two events); every other
        rule keeps its state.

        The new rules share no stored occurrence with the rules already running: they see
        the events (input and derived) processed from now on, and never match an event
        processed before (their time points before now never fire). What they derive feeds
        every rule reading it, old or new. Raises RuleSyntaxError or RuleCompileError,
        changing nothing, for rules that do not parse or do not compile (also together with
        the running ones, e.g. a negation through recursion).
        """
        program = load_rules(rules)
        if not self._own_facts:
            refuse_static_changes(program)
        if self._in_callback:
            self._deferred.append(partial(self.add_rules, program))
            return
        self._add(program)
        self._given_static += program.clauses

    def _add(self, rules: Rules, removed: Sequence[EventRule] = ()) -> None:
        """Remove ``removed`` (of ``self.program``) and compile ``rules`` in
        (``ins_event_rule`` and ``ins_static_rule`` too). Everything that may refuse the
        change runs before anything changes."""
        program = load_rules(rules)
        doomed = {id(rule) for rule in removed}
        kept = Program(tuple(s for s in self.program.statements if id(s) not in doomed))
        if kept.event_rules:  # problems between the running rules and the new ones
            check_program(kept + program)
        rules_before, outputs_before = self._compiled
        network = compile_program(
            program, self._options, first_node=len(self._nodes), first_rule=rules_before
        )
        combined = kept + program
        if self._own_facts:
            knowledge = program_knowledge(combined)
        else:
            check_conditions(self._runtime.knowledge, combined)
            knowledge = self._runtime.knowledge
        if removed:
            self._rewire(self._remove(removed))
        self._runtime.knowledge = knowledge
        self.program = combined
        self._compiled = [rules_before + len(program.event_rules), outputs_before]
        self._instantiate(network, program.event_rules, rules_before)

    def remove_rules(self, which: str | EventRule) -> tuple[EventRule, ...]:
        """Remove rules from the running engine (between two events); every other rule
        keeps its state. Returns the rules removed.

        ``which`` is a label (every rule carrying it, as ETALIS's ``del_event_rule(Label)``),
        else a head ``name`` or ``name/arity`` (every rule deriving it), or a rule (text or
        :class:`EventRule`; the rules equal to it, label included). The partial matches of
        the removed rules are dropped; nodes they shared with other rules stay as they are.
        Rules reading what a removed rule derived keep what they stored of it, and receive
        no more. Raises EngineError, changing nothing, when no rule matches.
        """
        selected = select_rules(self.program.event_rules, which)
        if not selected:
            raise EngineError(f"no rule is labelled or derives {quoted(which)}")
        if self._in_callback:
            self._deferred.append(partial(self.remove_rules, which))
            return tuple(selected)
        self._rewire(self._remove(selected))
        return tuple(selected)

    def change_rules(self, removed: Iterable[EventRule], added: Program) -> None:
        """Remove the rules equal to each of ``removed``, then add the event rules of
        ``added`` (with its directives), as :meth:`remove_rules` and :meth:`add_rules` do
        (``reasoner run --watch-rules`` reloading a file). Raises as they do, changing
        nothing: the whole change is checked before anything is removed."""
        selected: list[EventRule] = []
        for rule in removed:
            found = select_rules(self.program.event_rules, rule)
            if not found:
                raise EngineError(f"no rule is labelled or derives {quoted(rule)}")
            selected += [r for r in found if all(r is not s for s in selected)]
        self._replace(selected, added)

    def _replace(self, selected: Sequence[EventRule], added: Rules) -> None:
        """Remove ``selected`` (of ``self.program``) and add the event rules of ``added``, as
        :meth:`change_rules` describes."""
        program = load_rules(added)
        if not self._own_facts:
            refuse_static_changes(program)
        if self._in_callback:
            self._deferred.append(partial(self._replace, selected, program))
            return
        if program.event_rules:
            self._add(program, selected)
            self._given_static += program.clauses
        elif selected:
            self._rewire(self._remove(selected))

    def _remove(self, rules: Iterable[EventRule]) -> set[int]:
        """Remove ``rules`` (of ``self.program``) in one pass, as :meth:`remove_rules`
        describes; return the nodes the caller must rewire (:meth:`_rewire`)."""
        doomed = {id(rule) for rule in rules}
        kept = []
        changed = set()  # the nodes whose parents change
        gone = set()  # their outputs
        for out, head, rule in zip(self._outputs, self._heads, self._rules, strict=True):
            if id(rule) in doomed:
                self._nodes[out.input].disconnect(head)
                changed.add(out.input)
                gone.add(id(out))
                self._infos.pop(id(out), None)
            else:
                kept.append((out, head, rule))
        # their pending alarms are dropped with their partial matches (heapified below)
        timers = self._runtime.timers
        timers[:] = [t for t in timers if id(getattr(t[2], "output", None)) not in gone]
        self._outputs = [out for out, _, _ in kept]
        self._heads = [head for _, head, _ in kept]
        self._rules = [rule for _, _, rule in kept]
        self.program = Program(tuple(s for s in self.program.statements if id(s) not in doomed))
        return changed | self._drop_unused()

    def _drop_unused(self) -> set[int]:
        """Disconnect the nodes no rule uses any more, and cancel their timers (and heapify
        the timers, which the caller may have filtered); each is
        replaced by an inert node (node ids stay: generated code and snapshots use them).
        Returns their ids."""
        used = self._subtree(out.input for out in self._outputs)
        dropped = set(range(len(self._nodes))) - used - self._removed
        for node_id in sorted(dropped):
            spec, node = self._specs[node_id], self._nodes[node_id]
            for child, receiver in zip(spec.inputs, node.receivers, strict=True):
                self._nodes[child].disconnect(receiver)
            if isinstance(node, SourceNode):
                self._source_nodes[(spec.name, len(spec.args))].remove(node)  # type: ignore[union-attr]
            self._nodes[node_id] = Node(node_id, self._runtime)
        self._removed |= dropped
        timers = self._runtime.timers
        timers[:] = [t for t in timers if _timer_node(t[2]) not in dropped]
        heapq.heapify(timers)
        return dropped

    def options(self) -> dict[str, Any]:
        """The options the engine was built with (what a snapshot must agree on)."""
        return {
            "policy": self._options.policy,
            "tie_break": self._tie_break,
            "max_derivations": self._max_derivations,
            "lateness": self._lateness,
            "max_span": self._max_span,
            "provenance": self._provenance,
            "explain": self._explain,
        }

    def snapshot(self) -> bytes:
        """Everything the engine holds (stored occurrences, clock, timers, aggregate windows,
        de-duplication state, counters) as bytes in a versioned format that runs no code when
        loaded (:mod:`reasoner.runtime.checkpoint`; call between two events)."""
        from reasoner.runtime.checkpoint import snapshot

        return snapshot(self)

    def restore(self, data: bytes) -> None:
        """Replace the engine's state with a :meth:`snapshot` of an engine with the same rules
        and options. Raises SnapshotError, changing nothing, for anything else."""
        from reasoner.runtime.checkpoint import restore

        restore(self, data)

    def network(self) -> str:
        """The compiled network of the rules in use, as text (as ``reasoner check --emit
        network`` prints it)."""
        nodes = tuple(s for s in self._specs if s.id not in self._removed)
        horizons = tuple((s.id, self._nodes[s.id].horizon) for s in nodes if s.stores)
        return Network(nodes, tuple(self._outputs), horizons).dump()

    def _instantiate(self, network: Network, rules: Sequence[EventRule], first_rule: int) -> None:
        prefixes = dict(network.prefixes)
        horizon = dict(network.horizons)
        rank = delivery_ranks(network, self._compiled[1])
        self._compiled[1] += len(network.outputs)
        for spec in network.nodes:
            node = build_node(self, spec, prefixes)
            for position in node.wiring:
                receiver, side = node.receivers[position], spec.sides[position]
                self._nodes[spec.inputs[position]].connect(receiver, rank[(spec.id, side)])
            node.horizon = horizon.get(spec.id)
            self._nodes.append(node)
            self._specs.append(spec)
        if self._explain:
            from reasoner.runtime.explain import written_facts

            self._facts_at = written_facts(self.program)
        for index, out in enumerate(network.outputs):
            head = build_head(self, out, prefixes)
            self._nodes[out.input].connect(head, rank[(-1 - index, 0)])
            self._outputs.append(out)
            self._heads.append(head)
            self._rules.append(rules[out.rule - first_rule])
        self._rewire(spec.id for spec in network.nodes)

    def _rewire(self, changed: Iterable[int]) -> None:
        """Rebuild what is derived from the nodes in use and their connections: the event
        types known, the fused dispatchers (of the event types whose sources are below the
        ``changed`` nodes), what sweeps visit and how often."""
        self._producers = {}
        self._arity = {}
        for out in self._outputs:
            self._producers.setdefault((out.head.name, len(out.head.args)), []).append(out.input)
            self._arity.setdefault(out.head.name, set()).add(len(out.head.args))
        self._feed_lists = [self._feeds(spec) for spec in self._specs]
        self._input_lists = [spec.inputs for spec in self._specs]
        # The nodes that hold something (the others pass occurrences on): what a sweep visits.
        self._keepers = [i for i, node in enumerate(self._nodes) if node.holds]
        for (name, arity), sources in self._source_nodes.items():
            if sources:
                self._arity.setdefault(name, set()).add(arity)
        for name, arity in self._sources_below(changed):
            # One function per event type, the network above its sources fused into it
            # (rebuilt whenever nodes connect). Updated in place: heads hold these lists.
            sources = self._source_nodes.get((name, arity), [])
            mark = self._mark if self._marking else None
            fused = [inline(dispatcher(sources, mark), f"{name}/{arity}")] if sources else []
            self._receivers(name, arity)[:] = fused
            if not sources and (name, arity) not in self._producers:
                # no rule reads or derives it any more: its events count as unread
                del self._routes[(name, arity)]
        windows = [node.horizon for node in self._nodes if node.horizon is not None]
        # Sweeping expired occurrences every half window keeps memory within ~1.5 windows.
        self._sweep_every = min(windows) / 2 if windows else math.inf

    def _sources_below(self, nodes: Iterable[int]) -> set[tuple[str, int]]:
        """The event types of the sources at or below ``nodes`` (whose dispatchers fuse them)."""
        specs = (self._specs[i] for i in self._subtree(nodes))
        return {(s.name, len(s.args)) for s in specs if isinstance(s, Source)}

    def _receivers(self, name: str, arity: int) -> list[Callable[..., None]]:
        """The receivers of the sources waiting for ``name/arity`` (a list that grows as
        rules are added)."""
        return self._routes.setdefault((name, arity), [])

    def _runaway(self, out: Output) -> EngineError:
        label = out.label or f"rule {out.rule}"
        return EngineError(
            f"runaway recursion: more than {self._max_derivations} events derived from "
            f"one input; last by {label} ({out.head.name}/{len(out.head.args)})"
        )

    # ------------------------------------------------------------------ running

    def use_knowledge(self, knowledge: Knowledge) -> None:
        """Evaluate every later event against ``knowledge`` (e.g. a refreshed
        ``KnowledgeBase.current()``). Takes effect between two events, never inside one.
        Raises EngineError, changing nothing, when a rule changes the program's static rules
        (``ins_static_rule``): those changes need the program's own knowledge."""
        refuse_static_changes(self.program)
        self._own_facts = False
        self._runtime.knowledge = knowledge

    def on(self, name: str | None, callback: Callback) -> None:
        """Call ``callback(event)`` for every detection of ``name`` (None: every detection),
        as soon as it is detected (before the rules reading it see it)."""
        self._callbacks.setdefault(name, []).append(callback)

    def push(self, event: Event) -> list[Event]:
        """Process one input event; return the complex events it completed, in order.

        With a lateness bound the event is buffered, and the detections returned are those
        of the buffered events it released (every event ending at least ``lateness`` before
        the latest end seen). Raises EventError (and changes nothing) for a late or
        malformed event.
        """
        # The common case (an Event of a known arity, on time, with number times) is
        # checked inline; anything else gets the full checks and a reason.
        if (
            type(event) is not Event
            or self._lateness
            or type(start := event[2]) not in NUMBER_TYPES
            or type(end := event[3]) not in NUMBER_TYPES
            or not 0 <= start <= end
            or end < self._runtime.now
            or end - start > self._span_limit
            or (receivers := self._routes.get((event[0], len(event[1])))) is None
        ):
            return self._push_checked(event)
        self._counts["events_in"] += 1
        detected: list[Event] = []
        self._detected = detected
        self._process(event, receivers)
        return detected

    def _push_checked(self, event: Event) -> list[Event]:
        """:meth:`push` with the full checks (raising EventError with the reason), and the
        buffer of a lateness bound."""
        self._validate(event)
        self._counts["events_in"] += 1
        if (event.name, len(event.args)) not in self._routes:
            self._unread[event.name] += 1
        if self._lateness:
            heapq.heappush(self._buffer, (event.end, self._counts["events_in"], event))
            self._latest = max(self._latest, event.end)
            return self._release(self._latest - self._lateness)
        self._detected = []
        self._process(event, self._routes.get((event.name, len(event.args))))
        return self._detected

    def flush(self) -> list[Event]:
        """Process every buffered event (at the end of a stream with a lateness bound)."""
        return self._release(math.inf)

    def _release(self, up_to: Time) -> list[Event]:
        self._detected = []
        while self._buffer and self._buffer[0][0] <= up_to:
            event = heapq.heappop(self._buffer)[2]
            self._process(event, self._routes.get((event.name, len(event.args))))
        return self._detected

    def _process(self, event: Event, receivers: list[Callable[..., None]] | None) -> None:
        """Process one checked event (``receivers``: its sources'): the clock moves to its
        end, it is dispatched, and the agenda drained into ``_detected``."""
        name, args, start, end = event
        detected = self._detected
        already = len(detected)
        runtime = self._runtime
        fresh = False  # whether nothing happened yet at this time point
        if end > runtime.now:
            if runtime.timers and runtime.timers[0][0] <= end:
                self._advance(end)
            else:
                self._tick(end)
                fresh = True
        seen = self._seen
        if not fresh and event in seen:
            self._counts["duplicates"] += 1
        else:
            seen.add(event)
            if receivers:
                why = event if self._provenance else None
                for receive in receivers:
                    receive(args, start, end, why)
                if self._agenda:
                    self._drain()
        # the event and its detections are work a sweep can pay for
        new = len(detected) - already
        self._since_sweep += 1 + new
        if new:
            self._counts["detections"] += new
        if self._deferred:  # (rule changes asked for by callbacks or actions)
            self._apply_deferred()

    def advance(self, time: Time) -> list[Event]:
        """Move the clock to ``time`` without an event (a heartbeat): fires time points,
        aggregate windows and alarms due by then. With a lateness bound, :meth:`flush` first."""
        if not is_time(time):
            raise EventError(f"time must be a non-negative number, not {time!r}")
        if time < self._runtime.now:
            raise EventError(f"cannot move the clock back from {self._runtime.now} to {time}")
        if self._buffer:
            raise EngineError("events wait in the lateness buffer: flush before advance")
        self._detected = []
        self._advance(time)
        self._count(len(self._detected))
        return self._detected

    def run(self, events: Iterable[Event]) -> Iterator[Event]:
        """Push every event and yield the detections as they happen (then flush)."""
        for event in events:
            yield from self.push(event)
        yield from self.flush()

    def _validate(self, event: Event) -> None:
        reason = self._rejection(event)
        if reason is not None:
            self._counts["rejected"] += 1
            raise EventError(reason, event)

    def _rejection(self, event: Event) -> str | None:
        """Why ``event`` cannot be processed now (None: it can)."""
        return rejection(event, self._runtime.now, self._arity, self._max_span, self._lateness)

    @property
    def now(self) -> Time:
        """The current time (-infinity before the first event)."""
        return self._runtime.now

    @property
    def next_timer(self) -> Time | None:
        """When the clock next has something to do without an event (a time point, an
        occurrence leaving an aggregate's window, an alarm); None: nothing pending."""
        timers = self._runtime.timers
        return timers[0][0] if timers else None

    def _advance(self, time: Time) -> None:
        """Move the clock forward to ``time``, firing every timer up to it on the way (time
        points, occurrences leaving an aggregate's window, alarms)."""
        rt = self._runtime
        timers = rt.timers
        while timers and timers[0][0] <= time:
            at, _, fire = heapq.heappop(timers)
            if at > rt.now:
                self._tick(at)
            fire()
            self._drain()
        if time > rt.now:
            self._tick(time)

    def _tick(self, time: Time) -> None:
        self._runtime.now = time
        self._seen.clear()
        self._ticks += 1
        # Sweep every half window, and every few thousand time points in any case (negation
        # nodes free blockers no stored occurrence can use, windows or not); but only once
        # enough events came in and were detected to pay for it (a sweep costs nodes +
        # stored; what it leaves is what the rules still need): O(1) per event, memory
        # within a constant factor of what the rules need.
        if self._since_sweep >= self._sweep_budget and (
            time - self._last_sweep >= self._sweep_every or self._ticks >= 4096
        ):
            self._last_sweep = time
            self._ticks = 0
            self.collect()

    def _count(self, detections: int) -> None:
        """Count the detections of a push (or advance); they are work a sweep can pay for."""
        self._counts["detections"] += detections
        self._since_sweep += detections
        if self._deferred:
            self._apply_deferred()

    def _rule_action(self, name: str, text: str) -> None:
        """ETALIS's rule changes, made once the event is processed (so every event sees one
        version of the rules and knowledge): ``ins_event_rule(Rule)``, ``del_event_rule(Label
        or Rule)``, ``ins_static_rule(Clause)``, ``del_static_rule(Clause)``. A deletion
        matching nothing does nothing, as in ETALIS."""
        if name != "del_event_rule" or "<-" in text:  # a rule or clause, maybe unterminated
            text = text if text.rstrip().endswith(".") else text + "."
        self._deferred.append(partial(self._change, name, text))

    def _change(self, name: str, text: str) -> None:
        """Make one rule change of :meth:`_rule_action` (the event is processed) and record
        it."""
        if not self._changes:
            self._written = self.program
        if name in ("ins_event_rule", "ins_static_rule"):
            self._add(text)
        elif name == "del_event_rule":
            self._delete_rules(text)
        else:
            self._delete_static(text)
        self._changes.append((name, text))

    def _delete_rules(self, which: str) -> None:
        if select_rules(self.program.event_rules, which):
            self.remove_rules(which)

    def _delete_static(self, text: str) -> None:
        """``del_static_rule``: remove the program's clauses equal to those of ``text`` and
        rebuild the knowledge the conditions ask (``ins_static_rule`` is :meth:`_add`)."""
        self.program = self.program.without(load_rules(text).static_rules)
        self._runtime.knowledge = program_knowledge(self.program)

    def _apply_deferred(self) -> None:
        """Make the rule changes callbacks asked for (the event that triggered them is
        processed: they take effect between two events)."""
        changes, self._deferred = self._deferred, []
        for change in changes:
            change()

    def _drain(self) -> None:
        """Dispatch the agenda's derived events to their receivers, FIFO (at most
        ``max_derivations`` of them, the guard against runaway recursion)."""
        agenda, trace = self._agenda, self._provenance
        limit = self._max_derivations
        while agenda:
            event, receivers, rule = agenda.popleft()
            limit -= 1
            if limit < 0:
                agenda.clear()
                raise self._runaway(rule)
            _, args, start, end = event
            why = event if trace else None
            for receive in receivers:
                receive(args, start, end, why)

    def _mark(self, edge: Any) -> None:
        """Record, in a marking dispatch, that a dispatch starts (``edge`` None) or that the
        parent at ``edge`` returned: how many events the current push derived so far."""
        self._marks.append((edge, len(self._detected)))

    def _notify(self, event: Event) -> None:
        """Call the callbacks registered for ``event``'s name, then those for every event."""
        callbacks = self._callbacks
        self._in_callback += 1
        try:
            for callback in (*callbacks.get(event[0], ()), *callbacks.get(None, ())):
                callback(event)
        finally:
            self._in_callback -= 1

    def collect(self) -> int:
        """Free every stored occurrence that can no longer contribute to a detection and
        return how many (the engine also does this every half window, or every 4096 time
        points)."""
        now = self._runtime.now
        floors = self._floors()
        freed = sum(
            self._nodes[i].expire(now, [floors[j] for j in self._input_lists[i]])
            for i in self._keepers
        )
        self._counts["expired"] += freed
        self._since_sweep = 0
        self._sweep_budget = 64 * len(self._keepers) + self.stored() // 2
        return freed

    def _floors(self) -> list[Time]:
        """Per node, a lower bound on the start of every occurrence it emits from now on.

        A node's bound is the earliest of its stored occurrences that may still reach its
        output and the bounds of the inputs whose start its output takes; a source's also
        includes the rules deriving its event (a fixpoint, since rules may be recursive), its
        pending alarms and the input stream (now minus ``max_span``).
        """
        entry = -math.inf if self._max_span is None else self._runtime.now - self._max_span
        feeds = self._feed_lists
        floors = [entry if isinstance(spec, Source) else math.inf for spec in self._specs]
        for i in self._keepers:
            held = self._nodes[i].held()
            if held < floors[i]:
                floors[i] = held
        for _, _, fire in self._runtime.timers:  # a pending alarm's event starts in the past
            if isinstance(fire, AlarmTimer):
                name, args, start, _ = fire.event
                for source in self._source_nodes.get((name, len(args)), ()):
                    floors[source.id] = min(floors[source.id], start)
        changed = True
        while changed:
            changed = False
            for i, inputs in enumerate(feeds):
                for j in inputs:
                    if floors[j] < floors[i]:
                        floors[i] = floors[j]
                        changed = True
        return floors

    def _feeds(self, spec: NodeSpec) -> Sequence[int]:
        """The nodes whose occurrences' starts can become the start of ``spec``'s output (a
        source's: the rules deriving its event)."""
        if isinstance(spec, Source):
            return self._producers.get((spec.name, len(spec.args)), ())
        return spec.feeds

    # ------------------------------------------------------------------ reporting

    def stats(self) -> Stats:
        """Events in, detections out, occurrences stored now, expired, rejected."""
        return Stats(stored=self.stored(), **self._counts)

    def unread(self) -> dict[str, int]:
        """How many input events of each name no rule reads (a misspelt name shows here).

        >>> engine = Engine("c <- a SEQ b.")
        >>> _ = engine.push(Event.at("A", (), 1)), engine.push(Event.at("A", (), 2))
        >>> engine.unread()
        {'A': 2}
        """
        return dict(self._unread)

    def stored(self) -> int:
        """How many occurrences the network holds right now (its "goals")."""
        return sum(node.stored() for node in self._nodes)

    def status(self) -> list[dict[str, Any]]:
        """Per rule: its head, the nodes its pattern uses, and the goals waiting at each."""
        report = []
        for out in self._outputs:
            waiting = {}
            for node_id in sorted(self._subtree([out.input])):
                count = self._nodes[node_id].stored()
                if count:
                    waiting[f"n{node_id}"] = count
            report.append(
                {"rule": out.label or out.rule, "head": out.head.name, "waiting": waiting}
            )
        return report

    def _subtree(self, roots: Iterable[int]) -> set[int]:
        """The nodes at or below ``roots``."""
        seen: set[int] = set()
        todo = list(roots)
        while todo:
            node_id = todo.pop()
            if node_id not in seen:
                seen.add(node_id)
                todo.extend(self._specs[node_id].inputs)
        return seen


def _timer_node(fire: Any) -> int | None:
    """The id of the node a timer belongs to (a time point's ``fire``, an aggregate's
    ``partial``; None for an alarm, which belongs to a rule)."""
    if isinstance(fire, AlarmTimer):
        return None
    node: Node = getattr(fire, "func", fire).__self__
    return node.id
