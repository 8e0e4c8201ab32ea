"""A small, brute-force evaluator of the declarative semantics (``SEMANTICS.md``).

It exists to be obviously correct, not fast: the incremental engine is tested against it.
So it keeps its own plain definitions on purpose, written from the semantics rather than
shared with the engine: the interval operators (:func:`relate`, not the records of
:mod:`reasoner.language.operators`) and unification (:func:`unify`, not the Datalog
evaluator's), so that a mistake in the engine's cannot hide in the oracle too.
The operational semantics (:mod:`reasoner.semantics.operational`) and the why-not
explanations (:mod:`reasoner.semantics.whynot`, :mod:`reasoner.semantics.nearmiss`) reuse
these definitions (:class:`World`, :func:`relate`, :func:`blocks`, :func:`compatible`,
:func:`join_bindings`, :func:`unify`, :func:`conditions`), so all three read one meaning.
For every rule it enumerates all matches of the body bottom-up from the current
interpretation (input events plus everything derived so far), adds the head events, and
repeats until nothing new appears — the minimal model. Rules are evaluated stratum by
stratum so that a negated pattern (``NOT``, ``cnot``, ``fnot``) only ever looks at events
that are already complete. Nothing here is shared with the engine except the AST, the
goal compiler for WHERE/``event_multiply`` conditions and head arithmetic.

ETALIS's own constructs follow ``docs/language.md``:

* ``(p1 SEQ p2) CNOT n`` is ``NOT(n).[p1, p2]``; otherwise ``p CNOT n`` keeps [s, e] of p
  unless some n has s <= sn and en < e.
* ``p FNOT n`` keeps [s, e] of p unless some n ended before (en < e); under a window w (an
  enclosing ``(...).w`` or the rule's ``event_rule_window``) only n with en >= e - w count.
* ``p EVENT_MULTIPLY g``: one occurrence per solution of g, binding g's variables.
* ``p1 SEQ p2 STAR_TIMES`` and ``p1 SEQ aggregate(F, p2, R[, W])`` as defined there.
* ``p1 FORALL_SEQ p2``: [s1, e2] for p1 [s1, e1] and p2 [s2, e2] with e1 < s2 when no p2
  ending before e2 came after that p1 (p2's of one end time all take it). Whether one did is
  a negation over p2: rules reading p2 there come in a later stratum, as for NOT.
* An alarm rule ``exceptionAlarm(h, D) <- p`` derives ``h`` at [s, e + D] for each [s, e] of
  p (``exceptionAlarmAbsoluteDatime(h, T)``: at [s, T]) when that end is a number later
  than e and not after the horizon.

Variables that occur only in a negated or aggregated pattern are local to it. A rule
property ``event_rule_window`` bounds the body's interval like ``(body).w``. Consumption
policies are ignored: this is the *unrestricted* semantics.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction

from reasoner.errors import EngineError
from reasoner.knowledge.base import Knowledge
from reasoner.knowledge.builtins import apply_function
from reasoner.knowledge.facts import FactBase
from reasoner.knowledge.goals import Expression, Goal, compile_expression, compile_goal, term_value
from reasoner.language.aggregates import aggregate_function, group_variables
from reasoner.language.ast import (
    Aggregate,
    Binary,
    Compound,
    EventAtom,
    EventRule,
    ListTerm,
    Multiply,
    Not,
    Number,
    Pattern,
    Program,
    Star,
    Term,
    TimePoint,
    Var,
    Where,
    Window,
    walk,
)
from reasoner.language.check import bound_variables, event_dependencies
from reasoner.runtime.events import Event
from reasoner.values import Struct, Time, Value

#: Derived events, and rounds of one stratum, allowed before the evaluation is declared
#: runaway (e.g. ``n(X + 1) <- n(X)``); far above what streams of ~30 events need.
MAX_DERIVED = 20_000
MAX_ROUNDS = 300

Bindings = frozenset[tuple[str, Value]]
#: One way a pattern matches: the variable bindings and the interval [start, end].
Match = tuple[Bindings, Time, Time]


def derive(
    program: Program,
    stream: Iterable[Event],
    *,
    until: Time | None = None,
    knowledge: Knowledge | None = None,
) -> set[Event]:
    """Every event the program's event rules derive from ``stream`` (unrestricted policy).

    Args:
        program: the rules; its ground facts form the knowledge when none is given.
        stream: input events (duplicates count once).
        until: the horizon: inputs ending later are ignored and time points ``q`` count only
            when ``q <= until``; defaults to the last input's end time.
        knowledge: the static knowledge for WHERE and ``event_multiply`` goals.
    Returns:
        The derived events (inputs only when a rule derives them too).
        :class:`EngineError` when negation is recursive or derivation runs away;
        :class:`RuleCompileError` when a goal asks for an unknown predicate.

    >>> from reasoner.language.ast import EventRule, EventAtom, Binary, Var
    >>> rule = EventRule(EventAtom("c", (Var("X"),)),
    ...                  Binary("seq", EventAtom("a", (Var("X"),)), EventAtom("b", (Var("X"),))))
    >>> sorted(derive(Program((rule,)), [Event.at("a", (1,), 1), Event.at("b", (1,), 2)]))
    [Event(name='c', args=(1,), start=1, end=2)]
    """
    inputs = set(stream)
    if until is not None:
        inputs = {e for e in inputs if e.end <= until}
    horizon = until if until is not None else max((e.end for e in inputs), default=None)
    kb = knowledge if knowledge is not None else FactBase.from_program(program)
    prefixes = program.prefixes
    rules = [_Rule.compile(rule, prefixes, kb) for rule in program.event_rules]

    interpretation = set(inputs)
    derived: set[Event] = set()
    for stratum in _strata(rules):
        for _ in range(MAX_ROUNDS):
            world = World(interpretation, horizon, kb, prefixes)
            fired = {e for rule in stratum for e in rule.fire(world)}
            # Kept even when it equals an input: a rule derived it.
            derived |= fired
            new = fired - interpretation
            if not new:
                break
            interpretation |= new
            if len(derived) > MAX_DERIVED:
                raise _runaway(stratum, f"more than {MAX_DERIVED} events")
        else:
            raise _runaway(stratum, f"more than {MAX_ROUNDS} rounds")
    return derived


def _runaway(stratum: list[_Rule], what: str) -> EngineError:
    names = ", ".join(sorted({r.name for r in stratum}))
    return EngineError(f"runaway derivation: {what} from the rules for {names}")


# ------------------------------------------------------------------------- rules


@dataclass(frozen=True, slots=True)
class _Rule:
    rule: EventRule
    head: tuple[Expression, ...]
    goals: Mapping[Term, Goal]
    window: int | float | Fraction | None
    alarm: Expression | None  # ETALIS's alarm: the time (or delay) of the head

    @property
    def name(self) -> str:
        return self.rule.head.name

    @classmethod
    def compile(cls, rule: EventRule, prefixes: Mapping[str, str], kb: Knowledge) -> _Rule:
        goals = {}
        for condition in conditions(rule.body):
            goal = compile_goal(condition, prefixes)
            goal.check(kb)
            goals[condition] = goal
        window = None
        for name, value in rule.properties:
            if name == "event_rule_window" and isinstance(value, Number):
                window = value.value
        head = tuple(compile_expression(a, prefixes) for a in rule.head.args)
        alarm = None if rule.alarm is None else compile_expression(rule.alarm.time, prefixes)
        return cls(rule, head, goals, window, alarm)

    def fire(self, world: World) -> Iterator[Event]:
        for bindings, start, end in world.matches(self.rule.body, self.goals, self.window):
            if self.window is not None and end - start > self.window:
                continue
            env = dict(bindings)
            try:
                args = tuple(f(env) for f in self.head)
            except EngineError as exc:
                raise EngineError(f"rule for '{self.name}': {exc}") from exc
            if self.alarm is not None:  # the head at the alarm's time, if the stream gets there
                time = self.alarm(env)
                if not isinstance(time, int | float | Fraction) or isinstance(time, bool):
                    continue
                ring = time if self.rule.alarm.absolute else end + time  # type: ignore[union-attr]
                if not (ring > end and world.horizon is not None and ring <= world.horizon):
                    continue
                end = ring
            yield Event(self.name, args, start, end)


def conditions(pattern: Pattern) -> Iterator[Term]:
    """The goals a pattern asks of the knowledge: its WHERE conditions and
    ``event_multiply`` goals, outermost first.

    Args:
        pattern: a rule body or part of one.
    Returns:
        each condition term (the key of its compiled goal).

    >>> from reasoner.language.ast import Atom
    >>> list(conditions(Where(EventAtom("a", ()), Atom("true"))))
    [Atom(name='true')]
    """
    for p in walk(pattern):
        if isinstance(p, Where | Multiply):
            yield p.condition if isinstance(p, Where) else p.goal


def _strata(rules: list[_Rule]) -> list[list[_Rule]]:
    """Group rules so that every negated name is complete before it is read."""
    level: dict[str, int] = defaultdict(int)
    limit = len({r.name for r in rules}) + 1
    changed = True
    while changed:
        changed = False
        for rule in rules:
            for name, how in event_dependencies(rule.rule.body):
                needed = level[name] + (0 if how is None else 1)
                if needed > level[rule.name]:
                    level[rule.name] = needed
                    changed = True
                    if needed > limit:
                        raise EngineError(
                            f"{how} through recursion: '{rule.name}' depends on itself "
                            f"(via '{name}')"
                        )
    grouped: dict[int, list[_Rule]] = defaultdict(list)
    for rule in rules:
        grouped[level[rule.name]].append(rule)
    return [grouped[k] for k in sorted(grouped)]


# ---------------------------------------------------------------------- patterns


class World:
    """One interpretation (a set of events) and how patterns match in it.

    Args:
        events: the interpretation.
        horizon: the last time point of the stream (time points after it never occur).
        kb: the static knowledge WHERE conditions ask.
        prefixes: the program's prefixes, for IRIs in patterns.

    >>> from reasoner.knowledge.facts import FactBase
    >>> world = World({Event.at("a", (1,), 5)}, 5, FactBase.from_program(Program()), {})
    >>> world.matches(EventAtom("a", (Var("X"),)), {})
    {(frozenset({('X', 1)}), 5, 5)}
    """

    def __init__(
        self,
        events: set[Event],
        horizon: Time | None,
        kb: Knowledge,
        prefixes: Mapping[str, str],
    ) -> None:
        self.by_name: dict[tuple[str, int], list[Event]] = defaultdict(list)
        for e in events:
            self.by_name[(e.name, len(e.args))].append(e)
        self.horizon = horizon
        self.kb = kb
        self.prefixes = prefixes

    def matches(
        self, pattern: Pattern, goals: Mapping[Term, Goal], window: Time | None = None
    ) -> set[Match]:
        """I(pattern) for every assignment: the set of (bindings, start, end).

        ``window`` is the tightest enclosing window (or rule window): it bounds how far back
        an FNOT remembers the negated pattern.
        """

        def sub(p: Pattern) -> set[Match]:
            return self.matches(p, goals, window)

        match pattern:
            case EventAtom(name, args):
                return self.occurrences(name, args)
            case TimePoint(q):
                ok = self.horizon is not None and q <= self.horizon
                return {(frozenset(), q, q)} if ok else set()
            case Binary("or", left, right):
                return sub(left) | sub(right)
            case Binary("cnot", Binary("seq", first, second), negated):
                return sub(Not(negated, first, second))
            case Binary("cnot" | "fnot" as op, left, negated):
                return _unblocked(op, left, negated, window, sub)
            case Binary("seq", left, Star(right)):
                firsts = sub(left)
                return firsts | {
                    (b1, s1, e2)
                    for b1, s1, e1 in firsts
                    for b2, s2, e2 in sub(right)
                    if e1 < s2 and compatible(b1, b2)
                }
            case Binary("seq", left, Aggregate() as aggregate):
                return self.aggregate(sub(left), aggregate, sub(aggregate.pattern))
            case Binary("forall_seq", left, right):
                return _forall_seq(left, right, sub)
            case Binary(op, left, right):
                return {
                    (join_bindings(b1, b2), *interval)
                    for b1, s1, e1 in sub(left)
                    for b2, s2, e2 in sub(right)
                    if compatible(b1, b2) and (interval := relate(op, s1, e1, s2, e2)) is not None
                }
            case Not(negated, left, right):
                return _not_between(negated, left, right, sub)
            case Where(p, condition) | Multiply(p, condition):
                return self.solved(sub(p), goals[condition])
            case Window(p, size):
                tighter = size if window is None else min(window, size)
                inner = self.matches(p, goals, tighter)
                return {(b, s, e) for b, s, e in inner if e - s <= size}
            case Aggregate() as aggregate:
                return self.sliding(aggregate, sub(aggregate.pattern))
        raise EngineError(f"{type(pattern).__name__} is only allowed as the right operand of SEQ")

    def occurrences(self, name: str, args: tuple[Term, ...]) -> set[Match]:
        """I(``name(args)``): every event of that name and arity whose arguments unify with
        ``args``, with the bindings that makes."""
        out: set[Match] = set()
        for e in self.by_name.get((name, len(args)), ()):
            env: dict[str, Value] = {}
            pairs = zip(args, e.args, strict=True)
            if all(unify(t, v, env, self.prefixes) for t, v in pairs):
                out.add((frozenset(env.items()), e.start, e.end))
        return out

    def solved(self, found: set[Match], goal: Goal) -> set[Match]:
        """I(``p WHERE g``) and I(``p EVENT_MULTIPLY g``) from ``found``, I(p): each match of p
        once per solution of the goal, with the goal's bindings added."""
        # t1/1, t2/1 and current_datime/1 read the occurrence's interval
        hidden = {"$start", "$end"}
        return {
            (frozenset(i for i in solution.items() if i[0] not in hidden), s, e)
            for b, s, e in found
            for solution in goal.solutions({**dict(b), "$start": s, "$end": e}, self.kb)
        }

    def aggregate(self, firsts: set[Match], spec: Aggregate, items: set[Match]) -> set[Match]:
        """``p1 SEQ aggregate(F, p2, R)`` as docs/language.md defines it."""
        function, argument = aggregate_function(spec.function)
        result = spec.result.name
        out: set[Match] = set()
        for b1, s1, e1 in firsts:
            if function in ("count", "sum"):
                out.add((b1 | {(result, 0)}, s1, e1))
            after = [m for m in items if e1 < m[1] and compatible(b1, m[0])]
            for b2, s2, e2 in after:
                window = [m for m in after if m[2] < e2]
                if spec.window is not None and spec.window[0] == "time":
                    window = [m for m in window if m[2] > e2 - spec.window[1]]
                if spec.window is not None and spec.window[0] == "count":
                    keep = int(spec.window[1]) - 1
                    window = sorted(window, key=lambda m: m[2])[-keep:] if keep > 0 else []
                values = [_value_of(argument, b) for b, _, _ in [*window, (b2, s2, e2)]]
                out.add((b1 | {(result, _fold(function, values))}, s1, e2))
        return out

    def sliding(self, spec: Aggregate, items: set[Match]) -> set[Match]:
        """A sliding ``aggregate(F, p, R[, W])`` as docs/language.md defines it: at every
        occurrence, and (time windows) whenever an occurrence leaves the window."""
        function, argument = aggregate_function(spec.function)
        group = set(group_variables(spec, bound_variables(spec.pattern)))
        result = spec.result.name
        members: dict[Bindings, list[Match]] = defaultdict(list)
        for match in items:
            members[frozenset(kv for kv in match[0] if kv[0] in group)].append(match)

        def fold(key: Bindings, contents: list[Match], end: Time) -> Match | None:
            if not contents:
                if function not in ("count", "sum"):
                    return None
                return (key | {(result, 0)}, end, end)
            values = [_value_of(argument, b) for b, _, _ in contents]
            start = min(m[1] for m in contents)
            return (key | {(result, _fold(function, values))}, start, end)

        kind, size = spec.window if spec.window is not None else (None, 0)
        out: set[Match] = set()
        for key, group_items in members.items():
            for item in group_items:
                end = item[2]
                earlier = sorted((m for m in group_items if m[2] < end), key=lambda m: m[2])
                if kind == "time":
                    earlier = [m for m in earlier if m[2] > end - size]
                elif kind == "count":
                    earlier = earlier[-(int(size) - 1) :] if size > 1 else []
                found = fold(key, [*earlier, item], end)
                leaves = end + size
                if kind == "time" and self.horizon is not None and leaves <= self.horizon:
                    left = [m for m in group_items if leaves - size < m[2] < leaves]
                    out.add(fold(key, left, leaves) or found)  # type: ignore[arg-type]
                out.add(found)  # type: ignore[arg-type]
        return out


#: How a pattern's operands are matched: the enclosing call with its goals and window.
Sub = Callable[[Pattern], set[Match]]


def _unblocked(
    op: str, left: Pattern, negated: Pattern, window: Time | None, sub: Sub
) -> set[Match]:
    """I(``left CNOT negated``) or I(``left FNOT negated``): the matches of ``left`` that no
    compatible match of ``negated`` :func:`blocks`."""
    blockers = sub(negated)
    return {
        (b, s, e)
        for b, s, e in sub(left)
        if not any(
            compatible(b, nb) and blocks(op, s, e, ns, ne, window) for nb, ns, ne in blockers
        )
    }


def _forall_seq(left: Pattern, right: Pattern, sub: Sub) -> set[Match]:
    """I(``left FORALL_SEQ right``): p1 [s1, e1] with every p2 [s2, e2], e1 < s2, unless an
    earlier p2 (ending before e2) took it: it combines with the first p2 after it only."""
    seconds = sub(right)
    return {
        (join_bindings(b1, b2), s1, e2)
        for b1, s1, e1 in sub(left)
        for b2, s2, e2 in seconds
        if e1 < s2
        and compatible(b1, b2)
        and not any(e1 < s3 and e3 < e2 and compatible(b1, b3) for b3, s3, e3 in seconds)
    }


def _not_between(negated: Pattern, left: Pattern, right: Pattern, sub: Sub) -> set[Match]:
    """I(``NOT(negated).[left, right]``): ``left`` then ``right`` with no compatible match of
    ``negated`` strictly between them."""
    blockers = sub(negated)
    out = set()
    for b2, s2, e2 in sub(left):
        for b3, s3, e3 in sub(right):
            if e2 < s3 and compatible(b2, b3):
                joined = join_bindings(b2, b3)
                if not any(
                    compatible(joined, nb) and e2 < ns and ne < s3 for nb, ns, ne in blockers
                ):
                    out.add((joined, s2, e3))
    return out


def relate(op: str, s1: Time, e1: Time, s2: Time, e2: Time) -> tuple[Time, Time] | None:
    """The interval of ``left OP right`` per the semantics table, or None if they don't fit.

    Args:
        op: a binary operator's name (``seq``, ``and``, ``par``, ``during``...).
        s1: the left occurrence's start; ``e1`` its end.
        s2: the right occurrence's start; ``e2`` its end.
    Returns:
        the combined interval, or None.

    >>> relate("seq", 1, 2, 3, 4), relate("seq", 1, 3, 3, 4)
    ((1, 4), None)
    """
    match op:
        case "seq" | "forall_seq":
            return (s1, e2) if e1 < s2 else None
        case "and":
            return (min(s1, s2), max(e1, e2))
        case "par":
            return (min(s1, s2), max(e1, e2)) if max(s1, s2) < min(e1, e2) else None
        case "equals":
            return (s1, e1) if s1 == s2 and e1 == e2 else None
        case "meets":
            return (s1, e2) if e1 == s2 else None
        case "during":
            return (s2, e2) if s2 < s1 <= e1 < e2 else None
        case "starts":
            return (s1, e2) if s1 == s2 and e1 < e2 else None
        case "finishes":
            return (s2, e1) if e1 == e2 and s2 < s1 else None
    raise EngineError(f"unknown operator '{op}'")


def blocks(op: str, s: Time, e: Time, ns: Time, ne: Time, window: Time | None) -> bool:
    """Whether an occurrence [ns, ne] of the negated pattern cancels [s, e].

    Args:
        op: ``cnot`` or ``fnot``.
        s: the start of the occurrence that may be cancelled; ``e`` its end.
        ns: the start of the negated occurrence; ``ne`` its end.
        window: the enclosing window (how far back an FNOT remembers), or None.
    Returns:
        True when the negated occurrence cancels it.

    >>> blocks("cnot", 1, 5, 2, 3, None), blocks("fnot", 1, 5, 0, 1, 2)
    (True, False)
    """
    if op == "cnot":
        return s <= ns and ne < e  # inside the interval and over before it completes
    # fnot: over before the interval completes, and not forgotten by a window.
    return ne < e and (window is None or ne >= e - window)


def _value_of(variable: str | None, bindings: Bindings) -> Value:
    if variable is None:
        return 1
    for name, value in bindings:
        if name == variable:
            return value
    raise EngineError(f"aggregate variable '{variable}' is not bound by its pattern")


def _fold(function: str, values: list[Value]) -> Value:
    if function == "count":
        return len(values)
    if function == "min":
        return min(values)  # type: ignore[type-var]
    if function == "max":
        return max(values)  # type: ignore[type-var]
    total: Value = 0
    for v in values:
        total = apply_function("+", (total, v))
    if function == "sum":
        return total
    mean = apply_function("/", (total, len(values)))
    if function == "avg":
        return mean
    spread = sum((float(v) - float(mean)) ** 2 for v in values) / len(values)  # type: ignore[arg-type, misc]
    return math.sqrt(spread)  # stddev (population)


def compatible(a: Bindings, b: Bindings) -> bool:
    """Whether two bindings agree on every variable they share.

    Args:
        a: one match's bindings; ``b`` another's.
    Returns:
        True when they can be joined.

    >>> compatible(frozenset({("X", 1)}), frozenset({("X", 1), ("Y", 2)}))
    True
    """
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    other = dict(large)
    return all(other.get(k, v) == v for k, v in small)


def join_bindings(a: Bindings, b: Bindings) -> Bindings:
    """The union of two :func:`compatible` bindings.

    Args:
        a: one match's bindings; ``b`` another's.
    Returns:
        every variable bound by either.

    >>> sorted(join_bindings(frozenset({("X", 1)}), frozenset({("Y", 2)})))
    [('X', 1), ('Y', 2)]
    """
    return frozenset({**dict(a), **dict(b)}.items())


def unify(term: Term, value: Value, env: dict[str, Value], prefixes: Mapping[str, str]) -> bool:
    """Match an event-pattern argument against a value, binding variables in ``env``.

    Args:
        term: the argument as written in the pattern.
        value: the event's argument.
        env: the bindings so far; new ones are added to it (also when the match fails).
        prefixes: the program's prefixes, for prefixed names.
    Returns:
        whether they match.

    >>> env = {}
    >>> unify(Var("X"), 1, env, {}), unify(Var("X"), 2, env, {}), env
    (True, False, {'X': 1})
    """
    match term:
        case Var("_"):
            return True
        case Var(name):
            if name in env:
                return bool(env[name] == value)
            env[name] = value
            return True
        case Compound(functor, args):
            return (
                isinstance(value, Struct)
                and value.functor == functor
                and len(value.args) == len(args)
                and all(unify(t, v, env, prefixes) for t, v in zip(args, value.args, strict=True))
            )
        case ListTerm(items, tail):
            n = len(items)
            if not isinstance(value, tuple) or len(value) < n:
                return False
            if tail is None and len(value) != n:
                return False
            if not all(unify(t, v, env, prefixes) for t, v in zip(items, value[:n], strict=True)):
                return False
            return tail is None or unify(tail, value[n:], env, prefixes)
    return bool(term_value(term, prefixes) == value)
