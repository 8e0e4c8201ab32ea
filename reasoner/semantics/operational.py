"""The consumption policies, operationally: a plain reference for recent and chronological.

The declarative reference (:mod:`reasoner.semantics.reference`) defines the unrestricted
policy. The other two policies decide, per operator and per join key, which stored
occurrences an arriving one may still combine with, so they are defined by a run over the
stream in arrival order. This module performs that run as docs/semantics.md states it,
with lists and linear scans only:

* every operator of a rule body (left-associative, as written; ``p SEQ q STAR_TIMES`` is
  ``p OR (p SEQ q)``, ``(p SEQ q) CNOT n`` is ``NOT(n).[p, q]``, ORs hiding a variable used
  outside them are lifted into alternative bodies) keeps, per side, the occurrences that
  arrived, in arrival order;
* an occurrence arriving at one side is matched against the other side's occurrences with the
  same join key: *unrestricted* every fitting one; *chronological* the oldest fitting one,
  and both are consumed (the arriving one is then not kept); *recent* only the latest one
  (ties between equal ends broken by the tie-break), if it fits; nothing is consumed.
  "Fitting" is the operator's time condition, every enclosing window (an occurrence longer
  than a window around it is never formed or kept), every WHERE conjunct whose variables the
  operator binds, and for NOT the absence of a blocker;
* an event reaches the operators that read it one after the other, in *delivery order*:
  rules (and their alternative bodies) as written; within one body an outer operator before
  the operators nested in it, and the right operand before the left one (descending
  post-order). Everything an operator derives is passed up at once; derived rule heads are
  queued and dispatched first in, first out, after the event that caused them;
* identical events of one time point count once; time points fire when the stream reaches
  them, before the events of that time.

* ``p1 FORALL_SEQ p2`` is its own policy, the same under every one: an arriving ``p2``
  occurrence takes every waiting ``p1`` occurrence with the same join key that ends before it
  starts (they wait no more), together with those that ``p2`` occurrences ending at the same
  time took, and combines with each of them, oldest first. Conditions on ``p2`` or on the
  pair are decided after the taking (those on ``p1`` alone before it waits).

Aggregates are not covered (:func:`run` rejects them).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reasoner.compiler.binarize import binding_condition
from reasoner.compiler.disjunction import alternatives
from reasoner.errors import EngineError
from reasoner.knowledge.base import Knowledge
from reasoner.knowledge.facts import FactBase
from reasoner.knowledge.goals import Expression, Goal, compile_expression, compile_goal
from reasoner.language.ast import (
    Aggregate,
    Atom,
    Binary,
    EventAtom,
    EventRule,
    Multiply,
    Not,
    Number,
    Pattern,
    Program,
    Star,
    Term,
    TimePoint,
    Where,
    Window,
    conjuncts,
)
from reasoner.language.check import bound_variables, term_variables
from reasoner.runtime.events import Event
from reasoner.semantics.reference import Bindings, Match, blocks, join_bindings, relate, unify
from reasoner.values import Time

#: Derived events per input allowed before the run is declared runaway.
MAX_DERIVED = 20_000

Rank = tuple[float, ...]


def run(
    program: Program,
    stream: Iterable[Event],
    *,
    policy: str = "unrestricted",
    tie_break: str = "longer",
    knowledge: Knowledge | None = None,
) -> list[Event]:
    """The events the program's event rules derive from ``stream``, in derivation order.

    Args:
        program: the rules (a rule's ``consumption_policy`` property overrides ``policy``).
        stream: input events, ordered by end time.
        policy: ``unrestricted``, ``recent`` or ``chronological``.
        tie_break: for ``recent``: ``longer`` or ``shorter`` wins between equal ends.
        knowledge: for WHERE goals; defaults to the program's facts.
    Returns:
        Each derived event once, in the order derived.

    >>> from reasoner.language.parser import parse
    >>> rules = parse("c <- a SEQ b SEQ b.")
    >>> events = [Event.at(n, (), t) for n, t in [("a", 1), ("b", 2), ("b", 3)]]
    >>> [(e.start, e.end) for e in run(rules, events, policy="recent")]
    [(1, 3)]
    """
    kb = knowledge if knowledge is not None else FactBase.from_program(program)
    network = _Network(program, policy, tie_break, kb)
    return network.run(stream)


# --------------------------------------------------------------------- the run


@dataclass(eq=False)
class _Network:
    program: Program
    policy: str
    tie_break: str
    kb: Knowledge
    leaves: list[_Leaf] = field(default_factory=list)
    detected: list[Event] = field(default_factory=list)
    seen: set[Event] = field(default_factory=set)
    agenda: deque[Event] = field(default_factory=deque)
    now: Time = float("-inf")
    count: int = 0

    def number(self) -> int:
        """The next operator number (post-order: operands before their operator)."""
        self.count += 1
        return self.count

    def __post_init__(self) -> None:
        index = 0
        for rule in self.program.event_rules:
            body, policy = body_and_policy(rule, self.policy)
            for alternative in alternatives(rule.head, body):
                builder = _Builder(self, policy, -index)
                root = builder.build(alternative, _Scope())
                root.parent, root.side = _Head(self, rule, (-index, float("inf"))), 0
                index += 1
        # Delivery order: highest rank first (earlier bodies, outer operators, right sides).
        self.leaves.sort(key=lambda leaf: leaf.rank(), reverse=True)

    def run(self, stream: Iterable[Event]) -> list[Event]:
        points = sorted({leaf.time for leaf in self.leaves if isinstance(leaf, _Point)})
        for event in stream:
            while points and points[0] <= event.end:
                self._tick(points[0])
                for leaf in self.leaves:
                    if isinstance(leaf, _Point) and leaf.time == points[0]:
                        leaf.emit((frozenset(), leaf.time, leaf.time))
                self._drain()
                points.pop(0)
            self._tick(event.end)
            if event not in self.seen:
                self.seen.add(event)
                self._dispatch(event)
                self._drain()
        return self.detected

    def _tick(self, time: Time) -> None:
        if time > self.now:
            self.now = time
            self.seen.clear()

    def _dispatch(self, event: Event) -> None:
        for leaf in self.leaves:
            if isinstance(leaf, _Atom):
                bindings = leaf.match(event)
                if bindings is not None:
                    leaf.emit((bindings, event.start, event.end))

    def _drain(self) -> None:
        derived = 0
        while self.agenda:
            derived += 1
            if derived > MAX_DERIVED:
                raise EngineError(f"runaway derivation: more than {MAX_DERIVED} events")
            self._dispatch(self.agenda.popleft())

    def derive(self, event: Event) -> None:
        if event not in self.seen:
            self.seen.add(event)
            self.detected.append(event)
            self.agenda.append(event)


def body_and_policy(rule: EventRule, policy: str) -> tuple[Pattern, str]:
    """The body (a rule window wraps it) and the rule's policy.

    Args:
        rule: an event rule, with its properties.
        policy: the program's policy, used when the rule names none.
    Returns:
        the body to evaluate and the policy to evaluate it under.

    >>> from reasoner.language.parser import parse
    >>> text = "r([property(event_rule_window, 5), property(consumption_policy, recent)]) "
    >>> rule = parse(text + "'rule:' c <- a SEQ b.").event_rules[0]
    >>> body, policy = body_and_policy(rule, "unrestricted")
    >>> type(body).__name__, body.size, policy
    ('Window', 5, 'recent')
    """
    body = rule.body
    for name, value in rule.properties:
        if name in ("event_rule_window", "window") and isinstance(value, Number):
            body = Window(body, value.value)
        if name in ("consumption_policy", "policy", "event_rule_policy") and isinstance(
            value, Atom
        ):
            policy = value.name
    return body, policy


# ------------------------------------------------------------------- operators


class _Node:
    """Where an occurrence goes next: its parent's input ``side``."""

    parent: _Node
    side: int = 0

    def emit(self, occ: Match) -> None:
        self.parent.receive(self.side, occ)

    def receive(self, side: int, occ: Match) -> None:
        raise NotImplementedError

    def reads(self, side: int) -> Rank | None:
        """This node's rank as the reader of ``side`` (None: it passes occurrences on)."""
        return None

    def rank(self) -> Rank:
        """The delivery rank of what this node emits: its first reader's."""
        node, side = self.parent, self.side
        while (rank := node.reads(side)) is None:
            node, side = node.parent, node.side
        return rank


@dataclass(eq=False)
class _Head(_Node):
    network: _Network
    rule: EventRule
    number: Rank

    def __post_init__(self) -> None:
        prefixes = self.network.program.prefixes
        self.args: tuple[Expression, ...] = tuple(
            compile_expression(a, prefixes) for a in self.rule.head.args
        )

    def reads(self, side: int) -> Rank:
        return self.number

    def receive(self, side: int, occ: Match) -> None:
        env = dict(occ[0])
        try:
            args = tuple(f(env) for f in self.args)
        except EngineError as exc:
            raise EngineError(f"rule for '{self.rule.head.name}': {exc}") from exc
        self.network.derive(Event(self.rule.head.name, args, occ[1], occ[2]))


@dataclass(frozen=True)
class _Scope:
    """What encloses a sub-pattern: the tightest window and the WHERE conjuncts around it
    (each with its variables; those a sub-pattern binds are decided on it). ``top``: the
    conditions with variables no sub-pattern binds, decided on the first operator below."""

    window: Time | None = None
    conjuncts: tuple[tuple[Goal, frozenset[str]], ...] = ()
    top: tuple[Goal, ...] = ()

    def within(self, size: Time) -> _Scope:
        tighter = size if self.window is None else min(self.window, size)
        return _Scope(tighter, self.conjuncts, self.top)


class _Leaf(_Node):
    time: Time


@dataclass(eq=False)
class _Atom(_Leaf):
    atom: EventAtom
    admit: _Admit
    prefixes: Mapping[str, str]

    def match(self, event: Event) -> Bindings | None:
        if event.name != self.atom.name or len(event.args) != len(self.atom.args):
            return None
        env: dict[str, Any] = {}
        pairs = zip(self.atom.args, event.args, strict=True)
        if not all(unify(t, v, env, self.prefixes) for t, v in pairs):
            return None
        occ = (frozenset(env.items()), event.start, event.end)
        return occ[0] if self.admit(occ) else None


@dataclass(eq=False)
class _Point(_Leaf):
    time: Time


@dataclass(eq=False)
class _Admit:
    """Whether an occurrence of a sub-pattern may be formed: enclosing windows and the WHERE
    conjuncts decidable with its variables."""

    window: Time | None
    goals: tuple[Goal, ...]
    kb: Knowledge

    def __call__(self, occ: Match) -> bool:
        bindings, start, end = occ
        if self.window is not None and end - start > self.window:
            return False
        env = dict(bindings)
        return all(
            next(iter(g.solutions(dict(env), self.kb)), None) is not None for g in self.goals
        )


@dataclass(eq=False)
class _Join(_Node):
    """A binary interval operator (or NOT, with ``negated`` blockers) under a policy."""

    op: str
    alternative: float
    number: float
    shared: tuple[str, ...]
    admit: _Admit
    policy: str
    tie_break: str
    negation: bool = False
    stores: tuple[list[Match], list[Match]] = field(default_factory=lambda: ([], []))
    blockers: list[Match] = field(default_factory=list)

    def reads(self, side: int) -> Rank:
        return (self.alternative, self.number, side)

    def receive(self, side: int, occ: Match) -> None:
        if side == 2:
            self.blockers.append(occ)
            return
        if self.negation and side == 0:
            self.stores[0].append(occ)
            return
        key = _key(occ[0], self.shared)
        partners = [p for p in self.stores[1 - side] if _key(p[0], self.shared) == key]
        if self.policy == "recent" and partners:
            partners = [max(reversed(partners), key=self._recency)]
        matched = False
        for partner in partners:
            left, right = (partner, occ) if side else (occ, partner)
            combined = self._combine(left, right)
            if combined is None:
                continue
            if self.policy == "chronological":
                self.stores[1 - side].remove(partner)
                self.emit(combined)
                matched = True
                break
            self.emit(combined)
        if not (matched or (self.negation and side == 1)):
            self.stores[side].append(occ)

    def _recency(self, occ: Match) -> tuple[Time, Time]:
        """The latest has the latest end; between equal ends, the tie-break decides; between
        equal intervals, the later arrival (``max`` keeps the first of equals: the caller
        hands it the partners newest first)."""
        return (occ[2], -occ[1] if self.tie_break == "longer" else occ[1])

    def _combine(self, left: Match, right: Match) -> Match | None:
        (lb, ls, le), (rb, rs, re) = left, right
        if self.negation:
            interval = (ls, re) if le < rs else None
        else:
            interval = relate(self.op, ls, le, rs, re)
        if interval is None:
            return None
        combined = (join_bindings(lb, rb), *interval)
        if not self.admit(combined):
            return None
        if self.negation and any(
            _agrees(combined[0], nb) and le < ns and ne < rs for nb, ns, ne in self.blockers
        ):
            return None
        return combined


@dataclass(eq=False)
class _ForallSeq(_Node):
    """``p1 FORALL_SEQ p2``: ``waiting`` p1 occurrences in arrival order, and those ``taken``,
    each with the end of the p2 occurrence that took it."""

    alternative: float
    number: float
    shared: tuple[str, ...]
    admit: _Admit
    waiting: list[Match] = field(default_factory=list)
    taken: list[tuple[Time, Match]] = field(default_factory=list)

    def reads(self, side: int) -> Rank:
        return (self.alternative, self.number, side)

    def receive(self, side: int, occ: Match) -> None:
        if side == 0:
            self.waiting.append(occ)
            return
        bindings, rs, re = occ
        key = _key(bindings, self.shared)

        def fits(first: Match) -> bool:
            return _key(first[0], self.shared) == key and first[2] < rs

        self.taken.extend((re, first) for first in self.waiting if fits(first))
        self.waiting = [first for first in self.waiting if not fits(first)]
        for end, first in self.taken:
            if end == re and fits(first):
                combined = (join_bindings(first[0], bindings), first[1], re)
                if self.admit(combined):
                    self.emit(combined)


@dataclass(eq=False)
class _Guard(_Node):
    """``p CNOT n`` / ``p FNOT n`` (memory: the tightest enclosing window)."""

    op: str
    alternative: float
    number: float
    memory: Time | None
    blockers: list[Match] = field(default_factory=list)

    def reads(self, side: int) -> Rank | None:
        return (self.alternative, self.number, 2) if side else None

    def receive(self, side: int, occ: Match) -> None:
        if side:
            self.blockers.append(occ)
            return
        bindings, s, e = occ
        if not any(
            _agrees(bindings, nb) and blocks(self.op, s, e, ns, ne, self.memory)
            for nb, ns, ne in self.blockers
        ):
            self.emit(occ)


@dataclass(eq=False)
class _Pass(_Node):
    """OR (projected onto what both branches bind) and EVENT_MULTIPLY (one occurrence per
    solution of its goal)."""

    keep: frozenset[str] | None
    goal: Goal | None
    kb: Knowledge
    admit: _Admit

    def receive(self, side: int, occ: Match) -> None:
        bindings, s, e = occ
        if self.keep is not None:
            self.emit((frozenset(kv for kv in bindings if kv[0] in self.keep), s, e))
            return
        assert self.goal is not None
        for solution in list(self.goal.solutions(dict(bindings), self.kb)):
            out = (frozenset(solution.items()), s, e)
            if self.admit(out):
                self.emit(out)


def _key(bindings: Bindings, names: tuple[str, ...]) -> tuple[Any, ...]:
    values = dict(bindings)
    return tuple(values.get(n) for n in names)


def _agrees(a: Bindings, b: Bindings) -> bool:
    other = dict(b)
    return all(other.get(k, v) == v for k, v in a)


# -------------------------------------------------------------------- building


class _Builder:
    """Turns one (alternative) body into operators, numbering them in post-order."""

    def __init__(self, network: _Network, policy: str, alternative: float) -> None:
        self.network = network
        self.policy = policy
        self.alternative = alternative
        self.prefixes = network.program.prefixes

    def _admit(self, p: Pattern, scope: _Scope, top: bool) -> _Admit:
        bound = bound_variables(p)
        goals = tuple(g for g, names in scope.conjuncts if names <= bound)
        return _Admit(scope.window, goals + (scope.top if top else ()), self.network.kb)

    def _goal(self, term: Term) -> Goal:
        goal = compile_goal(term, self.prefixes)
        goal.check(self.network.kb)
        return goal

    def build(self, p: Pattern, scope: _Scope) -> _Node:
        match p:
            case Where(inner, condition) if binding := binding_condition(inner, condition):
                return self.build(binding, scope)
            case Where(inner, condition):
                bound = bound_variables(inner)
                decided = list(scope.conjuncts)
                top = list(scope.top)
                for part in conjuncts(condition):
                    names = frozenset(v.name for v in term_variables(part) if v.name != "_")
                    if names <= bound:
                        decided.append((self._goal(part), names))
                    else:
                        top.append(self._goal(part))
                return self.build(inner, _Scope(scope.window, tuple(decided), tuple(top)))
            case Window(inner, size):
                return self.build(inner, scope.within(size))
            case Binary("seq", first, Star(repeated)):
                return self.build(Binary("or", first, Binary("seq", first, repeated)), scope)
            case Binary("cnot", Binary("seq", first, second), negated):
                return self.build(Not(negated, first, second), scope)
            case Binary("or", left, right):
                keep = bound_variables(left) & bound_variables(right)
                return self._parent(
                    _Pass(keep, None, self.network.kb, self._admit(p, scope, False)),
                    [self.build(left, scope), self.build(right, scope)],
                )
            case Binary("cnot" | "fnot" as op, left, unless):
                kept = self.build(left, scope)
                # A CNOT blocker lies inside the occurrence, so within its windows; an FNOT
                # blocker only has to end inside the window's memory (blocks), however long.
                blocker = self.build(unless, _Scope(scope.window if op == "cnot" else None))
                guard = _Guard(op, self.alternative, self.network.number(), scope.window)
                return self._parent(guard, [kept, blocker])
            case Binary("forall_seq", left, right):
                # what p2 takes does not depend on conditions on it, nor on the pair
                children = [
                    self.build(left, _Scope(scope.window, scope.conjuncts)),
                    self.build(right, _Scope(scope.window)),
                ]
                shared = tuple(sorted(bound_variables(left) & bound_variables(right)))
                number = self.network.number()
                node = _ForallSeq(self.alternative, number, shared, self._admit(p, scope, True))
                return self._parent(node, children)
            case Binary(op, left, right):
                return self._join(op, p, None, left, right, scope)
            case Not(negated, left, right):
                return self._join("seq", p, negated, left, right, scope)
            case EventAtom():
                leaf = _Atom(p, self._admit(p, scope, True), self.prefixes)
                self.network.leaves.append(leaf)
                return leaf
            case TimePoint(q):
                point = _Point(q)
                self.network.leaves.append(point)
                return point
            case Multiply(inner, condition):
                child = self.build(inner, _Scope(scope.window))
                expand = _Pass(
                    None, self._goal(condition), self.network.kb, self._admit(p, scope, True)
                )
                return self._parent(expand, [child])
            case Aggregate() | Binary("seq", _, Aggregate()):
                raise EngineError("the operational reference does not cover aggregates")
        raise EngineError(f"{type(p).__name__} is only allowed as the right operand of SEQ")

    def _join(
        self,
        op: str,
        p: Pattern,
        negated: Pattern | None,
        left: Pattern,
        right: Pattern,
        scope: _Scope,
    ) -> _Node:
        """A binary operator, or NOT(negated).[left, right] (built in the engine's order:
        the negated pattern, the left operand, the right operand, the operator)."""
        blocker = None if negated is None else self.build(negated, _Scope(scope.window))
        inner = _Scope(scope.window, scope.conjuncts)
        children = [self.build(left, inner), self.build(right, inner)]
        if blocker is not None:
            children.append(blocker)
        join = _Join(
            op,
            self.alternative,
            self.network.number(),
            tuple(sorted(bound_variables(left) & bound_variables(right))),
            self._admit(p, scope, True),
            self.policy,
            self.network.tie_break,
            negation=negated is not None,
        )
        return self._parent(join, children)

    @staticmethod
    def _parent(node: _Node, children: list[_Node]) -> _Node:
        for side, child in enumerate(children):
            child.parent, child.side = node, side
        return node
