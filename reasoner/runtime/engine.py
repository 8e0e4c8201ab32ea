"""The event-at-a-time engine: one compiled program and one state, behind a small face.

``Engine.push(event)`` checks the event (:mod:`.intake`), then runs it (:mod:`.clock`: the
clock moves to its end, the event is dispatched through the fused dispatchers of
:mod:`.wiring`, the agenda drained). Rule changes are :mod:`.rulechanges`'s; snapshots
:mod:`.checkpoint`'s; what the rules compile into, :mod:`.program`'s.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TextIO

from reasoner.errors import EngineError, EventError
from reasoner.knowledge.actions import Action
from reasoner.knowledge.actions import actions as action_table
from reasoner.knowledge.base import Knowledge
from reasoner.knowledge.facts import FactBase
from reasoner.language.ast import EventRule, Program
from reasoner.language.loader import Rules
from reasoner.modes import Policy, TieBreak
from reasoner.runtime.clock import Clock
from reasoner.runtime.events import Event, is_time
from reasoner.runtime.intake import Intake
from reasoner.runtime.nodes import Runtime
from reasoner.runtime.options import EngineOptions
from reasoner.runtime.program import CompiledProgram, compile_rules
from reasoner.runtime.rulechanges import RuleChanges, refuse_static_changes
from reasoner.runtime.sink import Sink
from reasoner.runtime.wiring import Wiring
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
        rules: rule text, ``.event`` paths, or parsed programs; or a compiled program
            (:meth:`of`: its options and knowledge, the other arguments but the actions
            ignored).
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

    def __init__(
        self,
        rules: Rules | CompiledProgram,
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
        if isinstance(rules, CompiledProgram):  # (Engine.of)
            given = None if rules.own_facts else rules.knowledge
            self._start(rules.options, given, actions, action_output)
            self._run(rules, copy=True)
        else:
            options = EngineOptions(
                policy, tie_break, max_derivations, lateness, max_span, provenance, explain
            )
            self._start(options, knowledge, actions, action_output)
            self._run(compile_rules(rules, options, knowledge), copy=False)

    @classmethod
    def of(
        cls,
        compiled: CompiledProgram,
        *,
        actions: Mapping[str, Action] | None = None,
        action_output: TextIO | None = None,
    ) -> Engine:
        """A new engine (one key's state) running ``compiled`` with its options and knowledge,
        without parsing, checking or compiling it again
        (:func:`~reasoner.runtime.program.compile_rules`), nor generating code: its nodes are
        a copy of the program's template nodes (:mod:`reasoner.runtime.instances`, built by
        the first engine of it), bound to the generated code compiled for them."""
        return cls(compiled, actions=actions, action_output=action_output)

    def _run(self, compiled: CompiledProgram, *, copy: bool) -> None:
        """Instantiate ``compiled`` (this engine runs no rules yet): with ``copy``, from its
        template (:mod:`.instances`: the nodes of one program's many keys cost no code
        generation), else built (one engine of it: no template to keep)."""
        wiring = self._wiring
        wiring.runtime.knowledge = compiled.knowledge
        if not (copy and compiled.template.copy_into(compiled, wiring)):
            wiring.start(compiled.program, compiled.network)
        self._changes.given_static += compiled.program.clauses

    def _start(
        self,
        options: EngineOptions,
        knowledge: Knowledge | None,
        actions: Mapping[str, Action] | None,
        action_output: TextIO | None,
    ) -> None:
        """An engine running no rules yet, with these options."""
        self.settings = options
        self._span_limit = options.span_limit
        self._lateness = options.lateness
        self._sink = Sink()
        runtime = self._runtime = Runtime(knowledge if knowledge is not None else FactBase())
        # (ETALIS's rule-changing actions: made once the event is processed)
        table = action_table(actions, action_output, lambda n, t: self._changes.action(n, t))
        wiring = self._wiring = Wiring(options, runtime, self._sink, table)
        self._changes = RuleChanges(wiring, own_facts=knowledge is None)
        self._clock = Clock(wiring, self._changes.deferred, self._changes.apply_deferred)
        self._intake = Intake(wiring.arity, options.max_span, options.lateness, self._sink.counts)
        self._routes, self._process = wiring.routes, self._clock.process  # (read per push)
        self._counts = self._sink.counts
        # input events no rule reads, by name (counted off the hot path: they have no route)
        self._unread: Counter[str] = Counter()

    # ------------------------------------------------------------------ rule changes

    @property
    def program(self) -> Program:
        """The rules and static clauses in use."""
        return self._wiring.program

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
        self._changes.add_rules(rules)

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
        return self._changes.remove_rules(which)

    def change_rules(self, removed: Iterable[EventRule], added: Program) -> None:
        """Remove the rules equal to each of ``removed``, then add the event rules of
        ``added`` (with its directives), as :meth:`remove_rules` and :meth:`add_rules` do
        (``reasoner run --watch-rules`` reloading a file). Raises as they do, changing
        nothing: the whole change is checked before anything is removed."""
        self._changes.change_rules(removed, added)

    @property
    def rule_changes(self) -> RuleChanges:
        """The engine's rule changes: those its actions made (``made``), the program before
        them (``written``), and the means to make more (stage engines, snapshots)."""
        return self._changes

    @property
    def wiring(self) -> Wiring:
        """The engine's running network: node instances, dispatchers, outputs (read by the
        snapshot module and the parallel stages)."""
        return self._wiring

    # The engine's parts (the snapshot module, the stages and the workers read them).

    @property
    def clock(self) -> Clock:
        """Dispatch, the clock, garbage collection."""
        return self._clock

    @property
    def sink(self) -> Sink:
        """What generated heads write to."""
        return self._sink

    @property
    def intake(self) -> Intake:
        """Checks and the lateness buffer."""
        return self._intake

    @property
    def runtime(self) -> Runtime:
        """The time, the timers and the knowledge nodes read."""
        return self._runtime

    @property
    def knowledge(self) -> Knowledge:
        """The knowledge the conditions ask now."""
        return self._runtime.knowledge

    def options(self) -> dict[str, Any]:
        """The options the engine was built with (what a snapshot must agree on)."""
        return self.settings.as_dict()

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
        return self._wiring.network().dump()

    # ------------------------------------------------------------------ running

    def use_knowledge(self, knowledge: Knowledge) -> None:
        """Evaluate every later event against ``knowledge`` (e.g. a refreshed
        ``KnowledgeBase.current()``). Takes effect between two events, never inside one.
        Raises EngineError, changing nothing, when a rule changes the program's static rules
        (``ins_static_rule``): those changes need the program's own knowledge."""
        refuse_static_changes(self.program)
        self._changes.own_facts = False
        self._runtime.knowledge = knowledge

    def on(self, name: str | None, callback: Callback) -> None:
        """Call ``callback(event)`` for every detection of ``name`` (None: every detection),
        as soon as it is detected (before the rules reading it see it)."""
        self._wiring.callbacks.setdefault(name, []).append(callback)

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
        self._sink.detected = detected
        self._process(event, receivers)
        return detected

    def push_accepted(self, event: Event) -> list[Event]:
        """:meth:`push` for an :class:`Event` known to pass its checks on this engine, which
        has no lateness bound (number times, not before the clock, not too long, a known
        arity: e.g. a chunk :func:`~reasoner.runtime.batches.acceptable` took): the same
        detections, without checking it again (a worker's share of the input runs so)."""
        receivers = self._routes.get((event[0], len(event[1])))
        if receivers is None:  # (no rule reads it: counted as push counts it)
            return self._push_checked(event)
        # (push's last lines repeated, not shared: a shared helper is a call per event more)
        self._counts["events_in"] += 1
        detected: list[Event] = []
        self._sink.detected = detected
        self._process(event, receivers)
        return detected

    def _push_checked(self, event: Event) -> list[Event]:
        """:meth:`push` with the full checks (raising EventError with the reason), and the
        buffer of a lateness bound."""
        intake = self._intake
        intake.check(event, self._runtime.now)
        self._sink.counts["events_in"] += 1
        if (event.name, len(event.args)) not in self._routes:
            self._unread[event.name] += 1
        if self._lateness:
            intake.hold(event)
            return self._release(intake.released)
        self._sink.detected = []
        self._clock.process(event, self._routes.get((event.name, len(event.args))))
        return self._sink.detected

    def flush(self) -> list[Event]:
        """Process every buffered event (at the end of a stream with a lateness bound)."""
        return self._release(math.inf)

    def _release(self, up_to: Time) -> list[Event]:
        self._sink.detected = []
        for event in self._intake.due(up_to):
            self._clock.process(event, self._routes.get((event.name, len(event.args))))
        return self._sink.detected

    def advance(self, time: Time) -> list[Event]:
        """Move the clock to ``time`` without an event (a heartbeat): fires time points,
        aggregate windows and alarms due by then. With a lateness bound, :meth:`flush` first."""
        if not is_time(time):
            raise EventError(f"time must be a non-negative number, not {time!r}")
        if time < self._runtime.now:
            raise EventError(f"cannot move the clock back from {self._runtime.now} to {time}")
        if self._intake.buffer:
            raise EngineError("events wait in the lateness buffer: flush before advance")
        detected: list[Event] = []
        self._sink.detected = detected
        self._clock.advance(time)
        self._clock.count(len(detected))
        return detected

    def run(self, events: Iterable[Event]) -> Iterator[Event]:
        """Push every event and yield the detections as they happen (then flush)."""
        for event in events:
            yield from self.push(event)
        yield from self.flush()

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

    def collect(self) -> int:
        """Free every stored occurrence that can no longer contribute to a detection and
        return how many (the engine also does this every half window, or every 4096 time
        points)."""
        return self._clock.collect()

    # ------------------------------------------------------------------ reporting

    def stats(self) -> Stats:
        """Events in, detections out, occurrences stored now, expired, rejected."""
        return Stats(stored=self.stored(), **self._sink.counts)

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
        return self._wiring.stored()

    def status(self) -> list[dict[str, Any]]:
        """Per rule: its head, the nodes its pattern uses, and the goals waiting at each."""
        return self._wiring.status()
