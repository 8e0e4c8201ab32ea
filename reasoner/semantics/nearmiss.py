"""The near misses of one rule for one expected detection, found by relaxing its body one
constraint at a time over the reference semantics' world (:mod:`reasoner.semantics.whynot`
explains the method and the reasons); the records of an answer and how they print.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from reasoner.errors import EngineError
from reasoner.knowledge.base import Knowledge
from reasoner.knowledge.goals import Expression, Goal, compile_expression, compile_goal, term_value
from reasoner.language.ast import (
    Aggregate,
    Binary,
    Compound,
    EventAtom,
    EventRule,
    Multiply,
    Not,
    Pattern,
    Program,
    Star,
    Term,
    TimePoint,
    Var,
    Where,
    Window,
    conjunction,
    conjuncts,
    dump,
    term_variables,
    walk,
)
from reasoner.language.check import TESTS, bound_variables, condition_bindings
from reasoner.language.operators import OPERATORS
from reasoner.language.rewrite import (
    positive,
    positive_nodes,
    replace_at,
    substitute,
    substitute_term,
    without,
)
from reasoner.runtime.events import Event
from reasoner.semantics.operational import body_and_policy
from reasoner.semantics.reference import World, blocks, compatible, conditions, relate, unify
from reasoner.values import IRI, Struct, Time, Value, json_value

#: The kinds of reasons, in the order near misses with as many events are listed.
KINDS = (
    "consumed",
    "alarm",
    "rejected",
    "where",
    "window",
    "blocked",
    "order",
    "join",
    "missing",
)

#: What each interval operator needs of its operands' intervals (for *order* reasons).
_NEEDS = {
    "seq": "the first to end before the second starts",
    "forall_seq": "the first to end before the second starts",
    "par": "them to overlap",
    "equals": "the same interval",
    "meets": "the first to end when the second starts",
    "during": "the first to lie strictly inside the second",
    "starts": "the same start, the first ending first",
    "finishes": "the same end, the first starting later",
}

Env = dict[str, Any]
Judge = Callable[[Env], "Reason | None"]
#: Atom (by ``id``) -> variables to read under another name in it (old name -> new name).
Renames = Mapping[int, Mapping[str, str]]
TimeText = Callable[[Time], str]


@dataclass(frozen=True, slots=True)
class Rejection:
    """An input the replay did not use: where it was (``file:line``), why, and its event when
    it was read (the engine refused it) or None (the line did not parse)."""

    where: str
    reason: str
    event: Event | None = None

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


@dataclass(frozen=True)
class Reason:
    """What stopped a near miss: its ``kind`` (one of :data:`KINDS`), a sentence, and the same
    as data (``details``: values seen, the window and the excess, the blocking events ...)."""

    kind: str
    message: str
    details: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class NearMiss:
    """A partial match of ``rule``'s body: the events it matched (of ``needed``), its interval
    (None when it matched nothing) and the reasons it is no detection: one, or two when no
    match breaks a single constraint."""

    rule: EventRule
    events: tuple[Event, ...]
    needed: int
    reasons: tuple[Reason, ...]
    start: Time | None = None
    end: Time | None = None

    @property
    def reason(self) -> Reason:
        """The (first) reason."""
        return self.reasons[0]


# ----------------------------------------------------------------------------- the inquiry


class TracedWorld(World):
    """The reference's world, where an event atom's match also binds a hidden key (``@n``, one
    per atom of the pattern) to the event itself: a match names the events it is made of."""

    def __init__(
        self, events: set[Event], horizon: Time | None, kb: Knowledge, prefixes: Any
    ) -> None:
        super().__init__(events, horizon, kb, prefixes)
        self.keys: dict[int, str] = {}
        self.kept: list[Pattern] = []  # keeps traced patterns alive: their ids stay theirs
        self.renames: Renames = {}

    def trace(self, pattern: Pattern) -> None:
        self.kept.append(pattern)
        for p in walk(pattern):
            if isinstance(p, EventAtom):
                self.keys.setdefault(id(p), f"@{len(self.keys)}")

    def matches(
        self, pattern: Pattern, goals: Mapping[Term, Goal], window: Time | None = None
    ) -> set[tuple[frozenset[tuple[str, Value]], Time, Time]]:
        if not isinstance(pattern, EventAtom):
            return super().matches(pattern, goals, window)
        key = self.keys[id(pattern)]
        args = pattern.args
        if renamed := self.renames.get(id(pattern)):
            args = tuple(
                substitute_term(a, {old: Var(new) for old, new in renamed.items()}) for a in args
            )
        out = set()
        for e in self.by_name.get((pattern.name, len(args)), ()):
            env: Env = {}
            if all(unify(t, v, env, self.prefixes) for t, v in zip(args, e.args, strict=True)):
                env[key] = e
                out.add((frozenset(env.items()), e.start, e.end))
        return out


@dataclass(frozen=True)
class _Relaxed:
    """A body with constraints taken away: the tests of those constraints, and the renamed
    variables of a split join."""

    body: Pattern
    judges: tuple[Judge, ...] = ()
    renames: Renames = field(default_factory=dict)


@dataclass
class Context:
    """What every inquiry of one answer shares: the world (accepted inputs and the engine's
    detections), the knowledge, the run's policy and detections, the inputs it refused, how
    times are written, and the goals compiled so far."""

    world: TracedWorld
    kb: Knowledge
    prefixes: Mapping[str, str]
    program: Program
    policy: str
    detections: tuple[Event, ...]
    refused: list[Rejection]
    time: TimeText
    goals: dict[Term, Goal] = field(default_factory=dict)

    def goal(self, term: Term) -> Goal:
        """``term`` compiled (once) and checked against the knowledge."""
        if term not in self.goals:
            goal = compile_goal(term, self.prefixes)
            goal.check(self.kb)
            self.goals[term] = goal
        return self.goals[term]


class Inquiry:
    """One rule examined for one expected detection."""

    def __init__(
        self,
        context: Context,
        rule: EventRule,
        expected: EventAtom,
        between: tuple[Time, Time] | None,
        depth: int = 0,
    ) -> None:
        self.context = context
        self.depth = depth
        self.rule = rule
        self.expected = expected
        self.between = between
        body, self.policy = body_and_policy(rule, context.policy)
        self.head: tuple[Expression, ...] = tuple(
            compile_expression(a, context.prefixes) for a in rule.head.args
        )
        self.body, given = _instantiate(body, rule.head, expected)
        # the values put for head variables, so that the head and the judges still see them
        self.given: Env = {n: term_value(t, context.prefixes) for n, t in given.items()}
        self.needed = sum(1 for p in positive(self.body) if isinstance(p, EventAtom))

    def near_misses(self) -> list[NearMiss]:
        """Every near miss of the rule, unranked (:func:`ranked` orders them)."""
        found = list(self._rejected())
        missing = [p for p in positive(self.body) if isinstance(p, EventAtom) and not self._some(p)]
        if missing:
            return found + [m for atom in missing for m in self._missing(atom)]
        exact = self._matches(self.body)
        if exact:
            return found + [
                self._unrung(env, s, e) or self._consumed(env, s, e) for env, s, e in exact
            ]
        singles = list(self._relaxations(_Relaxed(self.body)))
        near = [m for relaxed in singles for m in self._judged(relaxed)]
        if not near:  # no match breaks a single constraint: try two (each pair once)
            pairs: dict[tuple[str, frozenset[Any]], _Relaxed] = {}
            for relaxed in singles:
                for pair in self._relaxations(relaxed):
                    renamed = frozenset((a, frozenset(n.items())) for a, n in pair.renames.items())
                    pairs.setdefault((dump(pair.body), renamed), pair)
            near = [m for relaxed in pairs.values() for m in self._judged(relaxed)]
        return found + near

    def _judged(self, relaxed: _Relaxed) -> Iterator[NearMiss]:
        """The matches of a relaxed body that break every constraint taken away."""
        world = self.context.world
        world.renames = relaxed.renames
        try:
            matches = self._matches(relaxed.body)
        finally:
            world.renames = {}
        for env, s, e in matches:
            judged = [judge(env) for judge in relaxed.judges]
            reasons = [r for r in judged if r is not None]
            if len(reasons) == len(judged):
                yield self._miss(env, s, e, *reasons)

    # -- matching

    def _some(self, atom: EventAtom) -> bool:
        self.context.world.trace(atom)
        return bool(self.context.world.matches(atom, {}))

    def _matches(self, body: Pattern, partial: bool = False) -> list[tuple[Env, Time, Time]]:
        world = self.context.world
        world.trace(body)
        goals = {c: self.context.goal(c) for c in conditions(body)}
        out = []
        for bindings, s, e in world.matches(body, goals):
            env = {**self.given, **dict(bindings)}
            if self._fits(env, e, partial):
                out.append((env, s, e))
        return sorted(out, key=lambda m: (m[2], m[1]))

    def _fits(self, env: Env, end: Time, partial: bool) -> bool:
        """Whether a match can give the expected head (arguments it cannot compute, in a
        relaxed or partial match, count as fitting) and ends in the time range (a partial
        match is not over yet)."""
        if self.between is not None and not (partial or self.between[0] <= end):
            return False
        unified: Env = {}
        for f, want in zip(self.head, self.expected.args, strict=False):
            try:
                value = f(env)
            except EngineError:
                continue
            if not unify(want, value, unified, self.context.prefixes):
                return False
        return True

    def _miss(self, env: Env, s: Time | None, e: Time | None, *reasons: Reason) -> NearMiss:
        ordered = tuple(sorted(reasons, key=lambda r: (KINDS.index(r.kind), r.message)))
        return NearMiss(self.rule, _events(env), self.needed, ordered, s, e)

    # -- the reasons

    def _missing(self, atom: EventAtom) -> list[NearMiss]:
        context = self.context
        same = sorted(context.world.by_name.get((atom.name, len(atom.args)), ()), key=_end)
        text = f"no event matches {show(atom)}"
        details: dict[str, Any] = {"event": show(atom)}
        derived = any(r.head.name == atom.name for r in context.program.event_rules)
        if same:
            text += f": the '{atom.name}' events ({len(same)}) have other arguments "
            text += f"(the last: {event_text(same[-1], context.time)})"
        else:
            arities = {
                n for (name, n), es in context.world.by_name.items() if name == atom.name and es
            }
            refused = [
                r for r in context.refused if r.event is not None and r.event.name == atom.name
            ]
            if arities:
                counts = " or ".join(map(str, sorted(arities)))
                text += f": '{atom.name}' events have {counts} arguments"
            elif refused:
                text += f": those of the input were rejected, the first at {refused[0]}"
            elif derived:
                text += ": no rule deriving it fired"
            else:
                text += ": the input has none"
        why = self._deeper(atom) if derived else None
        if why is not None:
            seen = ", ".join(event_text(e, context.time) for e in why.events)
            text += f" (why not {show(atom)}: {seen + ': ' if seen else ''}"
            text += f"{'; and '.join(r.message for r in why.reasons)})"
            details["why"] = [reason_json(r) for r in why.reasons]
        reason = Reason("missing", text, details)
        rest = without(self.body, atom)
        matched = [] if rest is None else self._matches(rest, partial=True)
        if not matched:
            return [NearMiss(self.rule, (), self.needed, (reason,))]
        return [self._miss(env, s, e, reason) for env, s, e in matched]

    def _deeper(self, atom: EventAtom) -> NearMiss | None:
        """Why a derived event the body needs did not occur: the best near miss of the rules
        deriving it (three levels down at most; it may end before the time range)."""
        if self.depth >= 3:
            return None
        misses = [
            m
            for r in self.context.program.event_rules
            if (r.head.name, len(r.head.args)) == (atom.name, len(atom.args))
            for m in Inquiry(self.context, r, atom, None, self.depth + 1).near_misses()
        ]
        return ranked(misses)[0] if misses else None

    def _unrung(self, env: Env, s: Time, e: Time) -> NearMiss | None:
        """An alarm rule's body matched, but its alarm never rings or had not rung when the
        stream ended (None: it rang, or the rule has no alarm)."""
        alarm = self.rule.alarm
        if alarm is None:
            return None
        value = compile_expression(alarm.time, self.context.prefixes)(env)
        ring: Time | None = None
        if isinstance(value, int | float | Fraction) and not isinstance(value, bool):
            ring = value if alarm.absolute else e + value
        horizon = self.context.world.horizon
        if ring is not None and ring > e and horizon is not None and ring <= horizon:
            return None
        time = self.context.time
        if ring is None or ring <= e:
            text = f"its alarm's time {value} is not later than the detection at {time(e)}: "
            text += "it never rings"
        else:
            text = f"its alarm rings at {time(ring)}, after the stream's end"
            text += " (reasoner run --until moves the clock on)"
        details = {"ring": None if ring is None else str(ring)}
        return self._miss(env, s, e, Reason("alarm", text, details))

    def _consumed(self, env: Env, s: Time, e: Time) -> NearMiss:
        """A match the semantics has and the engine did not derive: the policy's doing."""
        events = _events(env)
        inputs = {source for ev in events for source in (ev.sources or (ev,))}
        for d in self.context.detections:
            shared = [x for x in d.sources if x in inputs]
            if d.name == self.rule.head.name and shared:
                time = self.context.time
                text = (
                    f"under the {self.policy} policy, {event_text(shared[0], time)} went to "
                    f"the detection {event_text(d, time)} instead"
                )
                details = {
                    "policy": self.policy,
                    "event": event_json(shared[0]),
                    "by": event_json(d),
                }
                return self._miss(env, s, e, Reason("consumed", text, details))
        text = f"the {self.policy} policy did not combine these events (the rule's pattern does)"
        return self._miss(env, s, e, Reason("consumed", text, {"policy": self.policy}))

    def _rejected(self) -> Iterator[NearMiss]:
        late = [r for r in self.context.refused if r.event is not None]
        if not late:
            return
        world = self.context.world
        extra = TracedWorld(
            {e for events in world.by_name.values() for e in events}
            | {r.event for r in late if r.event},
            world.horizon,
            self.context.kb,
            self.context.prefixes,
        )
        saved, self.context.world = self.context.world, extra
        try:
            matches = self._matches(self.body)
        finally:
            self.context.world = saved
        for env, s, e in matches:
            used = set(_events(env))
            for r in late:
                if r.event in used:
                    event = event_text(r.event, self.context.time)
                    text = f"the input event {event} ({r.where}) was rejected: {r.reason}"
                    details = {"where": r.where, "why": r.reason, "event": event_json(r.event)}
                    yield self._miss(env, s, e, Reason("rejected", text, details))
                    break

    def _relaxations(self, relaxed: _Relaxed) -> Iterator[_Relaxed]:
        """``relaxed`` with one more constraint taken away, in every way."""
        for path, node, window in positive_nodes(relaxed.body):
            for replacement, judge, renames in self._relax(node, window):
                merged = dict(relaxed.renames)
                for atom, names in renames.items():
                    merged[atom] = {**merged.get(atom, {}), **names}
                body = replace_at(relaxed.body, path, replacement)
                yield _Relaxed(body, (*relaxed.judges, judge), merged)

    def _relax(
        self, node: Pattern, window: Time | None
    ) -> Iterator[tuple[Pattern, Judge, Renames]]:
        """The ways to take one constraint of ``node`` away: the node without it, the test of
        it, and the variables to rename in which atoms (a shared variable split in two)."""
        for replacement, judge in self._loosen(node, window):
            yield replacement, judge, {}
        if isinstance(node, Binary | Not) and not (
            isinstance(node, Binary)
            and (
                node.op == "or"
                or OPERATORS[node.op].negation
                or isinstance(node.right, Aggregate | Star)  # (SEQ's own forms)
            )
        ):
            left, right = (node.left, node.right)
            atoms = [p for p in walk(right) if isinstance(p, EventAtom)]
            for name in sorted(bound_variables(left) & bound_variables(right)):
                split = f"{name}'"
                renames = {id(atom): {name: split} for atom in atoms}
                yield node, self._join(name, split, left, right), renames

    def _loosen(self, node: Pattern, window: Time | None) -> Iterator[tuple[Pattern, Judge]]:
        match node:
            case Window(inner, size):
                yield inner, lambda env: _window(env, inner, size, self.context.world)
            case Where(inner, condition):
                yield from self.rule_place(inner, condition)
            case Multiply(inner, goal):
                yield inner, self._goal_judge(goal, "EVENT_MULTIPLY")
            case Not(negated, left, right) | Binary("cnot", Binary("seq", left, right), negated):
                yield (
                    Binary("seq", left, right, node.span),
                    self._between(negated, left, right, window),
                )
            case Binary("cnot" | "fnot" as op, kept, negated):
                yield kept, self._guard(op, kept, negated, window)
            case Binary("or" | "and"):
                pass
            case Binary(op, left, right) if not isinstance(right, Aggregate | Star):
                yield Binary("and", left, right, node.span), self._order(op, left, right)

    def rule_place(self, inner: Pattern, condition: Term) -> Iterator[tuple[Pattern, Judge]]:
        parts = conjuncts(condition)
        bound = bound_variables(inner)
        for i, part in enumerate(parts):
            rest = parts[:i] + parts[i + 1 :]
            if rest and condition_bindings(conjunction(rest), bound)[1]:
                rest = parts[:i]  # a later goal needs what this one binds
            relaxed = Where(inner, conjunction(rest)) if rest else inner
            yield relaxed, self._goal_judge(part)

    def _goal_judge(self, part: Term, operator: str = "WHERE") -> Judge:
        goal = self.context.goal(part)

        def judge(env: Env) -> Reason | None:
            try:
                if next(iter(goal.solutions(dict(env), self.context.kb)), None) is not None:
                    return None
            except EngineError:
                return None
            names = [v.name for v in term_variables(part) if v.name in env]
            seen = {n: env[n] for n in dict.fromkeys(names)}
            values = ", ".join(f"{n} = {value_text(v)}" for n, v in seen.items())
            false = "is false" if isinstance(part, Compound) and part.functor in TESTS else "fails"
            text = f"{operator} {show(part)} {false}" + (f" with {values}" if values else "")
            details = {"goal": show(part), "values": {n: json_value(v) for n, v in seen.items()}}
            return Reason("where", text, details)

        return judge

    def _blockers(self, negated: Pattern, window: Time | None) -> list[tuple[Env, Time, Time]]:
        world = self.context.world
        world.trace(negated)
        goals = {c: self.context.goal(c) for c in conditions(negated)}
        found = [(dict(b), s, e) for b, s, e in world.matches(negated, goals, window)]
        return sorted(found, key=lambda m: (m[2], m[1]))

    def _between(
        self, negated: Pattern, left: Pattern, right: Pattern, window: Time | None
    ) -> Judge:
        blockers = self._blockers(negated, window)
        world, time = self.context.world, self.context.time

        def judge(env: Env) -> Reason | None:
            first, second = _hull(env, left, world), _hull(env, right, world)
            if first is None or second is None:
                return None
            for nb, ns, ne in blockers:
                if compatible(frozenset(env.items()), frozenset(nb.items())) and (
                    first[1] < ns and ne < second[0]
                ):
                    return _blocked(f"NOT({show(negated)})", nb, ns, "between its bounds", time)
            return None

        return judge

    def _guard(self, op: str, kept: Pattern, negated: Pattern, window: Time | None) -> Judge:
        blockers = self._blockers(negated, window)
        world, time = self.context.world, self.context.time
        where = "inside it" if op == "cnot" else "before it"

        def judge(env: Env) -> Reason | None:
            hull = _hull(env, kept, world)
            if hull is None:
                return None
            for nb, ns, ne in blockers:
                if compatible(frozenset(env.items()), frozenset(nb.items())) and blocks(
                    op, hull[0], hull[1], ns, ne, window
                ):
                    return _blocked(f"{op.upper()} {show(negated)}", nb, ns, where, time)
            return None

        return judge

    def _order(self, op: str, left: Pattern, right: Pattern) -> Judge:
        world, time = self.context.world, self.context.time

        def judge(env: Env) -> Reason | None:
            first, second = _hull(env, left, world), _hull(env, right, world)
            if first is None or second is None or relate(op, *first, *second) is not None:
                return None
            text = (
                f"{op.upper()} needs {_NEEDS[op]}: {show(left)} is {_interval(*first, time)}, "
                f"{show(right)} is {_interval(*second, time)}"
            )
            return Reason("order", text, {"operator": op, "first": first, "second": second})

        return judge

    def _join(self, name: str, split: str, left: Pattern, right: Pattern) -> Judge:
        def judge(env: Env) -> Reason | None:
            if name not in env or split not in env or env[name] == env[split]:
                return None
            a, b = env[name], env[split]
            text = (
                f"{name} differs: {value_text(a)} in {show(left)}, {value_text(b)} in {show(right)}"
            )
            return Reason(
                "join", text, {"variable": name, "values": [json_value(a), json_value(b)]}
            )

        return judge


# --------------------------------------------------------------------------- rule instances


def _instantiate(
    body: Pattern, head: EventAtom, expected: EventAtom
) -> tuple[Pattern, dict[str, Term]]:
    """The body with the expected head's ground arguments put for the head's variables (a
    rule instance: fewer matches to look at), and what was put. Bodies with aggregates are
    left whole."""
    if any(isinstance(p, Aggregate) for p in walk(body)):
        return body, {}
    mapping: dict[str, Term] = {}
    for arg, want in zip(head.args, expected.args, strict=False):
        if not isinstance(arg, Var) or arg.name.startswith("_") or list(term_variables(want)):
            continue
        if mapping.setdefault(arg.name, want) != want:
            return body, {}  # c(X, X) expected as c(1, 2): the head check says no
    return substitute(body, mapping), mapping


# ------------------------------------------------------------------------------ judging


def _end(event: Event) -> tuple[Time, Time]:
    return event.end, event.start


def _events(env: Env) -> tuple[Event, ...]:
    found = {v for k, v in env.items() if k.startswith("@")}
    return tuple(sorted(found, key=lambda e: (e.end, e.start, e.name)))


def _hull(env: Env, p: Pattern, world: TracedWorld) -> tuple[Time, Time] | None:
    """The interval of ``p``'s part of a match: from its events and time points."""
    times: list[Time] = []
    for q in positive(p):
        if isinstance(q, EventAtom) and (e := env.get(world.keys.get(id(q), ""))) is not None:
            times += [e.start, e.end]
        elif isinstance(q, TimePoint) and not _optional(p, q):
            times += [q.value, q.value]
    return (min(times), max(times)) if times else None


def _optional(p: Pattern, point: TimePoint) -> bool:
    """Whether ``point`` is in an ``OR`` or ``STAR_TIMES`` of ``p`` (not in every match)."""
    return any(
        (isinstance(q, Star) or (isinstance(q, Binary) and q.op == "or"))
        and any(r is point for r in walk(q))
        for q in walk(p)
    )


def _window(env: Env, inner: Pattern, size: Time, world: TracedWorld) -> Reason | None:
    hull = _hull(env, inner, world)
    if hull is None or hull[1] - hull[0] <= size:
        return None
    lasted = hull[1] - hull[0]
    text = (
        f"the window of {_number(size)} was exceeded: it lasted {_number(lasted)}, "
        f"{_number(lasted - size)} too long"
    )
    return Reason("window", text, {"window": size, "lasted": lasted, "exceeded_by": lasted - size})


def _blocked(what: str, blocker: Env, start: Time, where: str, time: TimeText) -> Reason:
    events = _events(blocker)
    named = ", ".join(event_text(e, time) for e in events) or f"time point {time(start)}"
    text = f"{what} is violated: {named} happened {where}"
    return Reason("blocked", text, {"by": [event_json(e) for e in events]})


def ranked(misses: list[NearMiss]) -> list[NearMiss]:
    seen: set[tuple[Any, ...]] = set()
    unique = []
    for m in misses:
        key = (id(m.rule), m.events, tuple(r.message for r in m.reasons))
        if key not in seen:
            seen.add(key)
            unique.append(m)

    def rank(m: NearMiss) -> tuple[Any, ...]:
        excess = m.reason.details.get("exceeded_by", 0)
        return (-len(m.events), len(m.reasons), KINDS.index(m.reason.kind), excess, -(m.end or 0))

    return sorted(unique, key=rank)


# ------------------------------------------------------------------------------ printing


def show(node: Any) -> str:
    from reasoner.language.printer import to_source  # the printer imports the parser

    return to_source(node)


def rule_place(rule: EventRule) -> str:
    return str(rule.span) if rule.span is not None else show(rule.head)


def _number(value: Time) -> str:
    if isinstance(value, Fraction):
        return str(value.numerator) if value.denominator == 1 else str(float(value))
    return str(value)


def value_text(value: Value) -> str:
    match value:
        case str():
            return json.dumps(value)
        case IRI(iri):
            return f"<{iri}>"
        case Struct(functor, args):
            return f"{functor}({', '.join(value_text(a) for a in args)})"
        case tuple():
            return f"[{', '.join(value_text(a) for a in value)}]"
    return _number(value)


def _interval(start: Time, end: Time, time: TimeText) -> str:
    return f"@{time(start)}" if start == end else f"@[{time(start)}, {time(end)}]"


def event_text(event: Event, time: TimeText) -> str:
    args = f"({', '.join(value_text(a) for a in event.args)})" if event.args else ""
    return f"{event.name}{args}{_interval(event.start, event.end, time)}"


def event_json(event: Event, time: Callable[[Time], Any] = lambda t: t) -> dict[str, Any]:
    return {
        "name": event.name,
        "args": [json_value(a) for a in event.args],
        "start": time(event.start),
        "end": time(event.end),
    }


def reason_json(reason: Reason) -> dict[str, Any]:
    return {"kind": reason.kind, "message": reason.message, **reason.details}
