"""Partition analysis: which rules can run apart, one partition key value at a time.

A *partition key* gives each event type an argument position. A rule is *keyed* when every
operator of its body only ever combines occurrences whose keys are equal and its head carries
that key: then the occurrences of one key value never meet another's, and the rule can run
on each key's events separately (docs/scale-out.md). Static knowledge is read-only, so every
partition may consult it; a time point is the same in every partition, so it may join keyed
occurrences under the unrestricted policy (the other policies would consume or replace it in
one partition only).

The rules that are not keyed form the *global remainder*: they run after the keyed stage, on
the events it derives (and on the input events they read themselves), in one engine's order
(:mod:`reasoner.runtime.stages` places every derived event in its input event's derivation
tree). When a global rule reads in arrival order (``recent``, ``chronological``, an
aggregate, ``FORALL_SEQ``), two kinds of keyed rules run in the global stage too, where that
placing cannot be exact: a rule that may derive when a timer fires (a time point, an
aggregate's time window: its events have no input event), if it feeds such a rule; and a rule
sharing a network node (other than a source) with a global rule (one dispatch would then derive for
both stages). A rule may declare its
key, ``[property(partition_key, K)]``, where the analysis cannot see that its occurrences
share it (e.g. a WHERE condition equating two variables): its operators are then trusted.
A program whose actions change rules while the stream runs (``ins_event_rule``,
``del_event_rule``, ``ins_static_rule``, ``del_static_rule``) is not partitioned: every
partition would need each change, so all of it runs in the global stage, in one engine.

The analysis tries every candidate position of every input event type (a position holding a
variable some rule passes on to its head) and keeps the assignment keying the most rules.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import product
from typing import cast

from reasoner.compiler.compile import Options, apply_properties, compile_program
from reasoner.compiler.network import Clock, Source
from reasoner.language.aggregates import group_variables
from reasoner.language.ast import (
    Aggregate,
    Binary,
    EventAtom,
    EventRule,
    Multiply,
    Not,
    Pattern,
    Program,
    Span,
    Star,
    TimePoint,
    Var,
    Where,
    Window,
    rule_changes,
    walk,
)
from reasoner.language.check import bound_variables
from reasoner.language.operators import OPERATORS
from reasoner.language.printer import to_source
from reasoner.modes import Policy

#: The property declaring a rule's key variable.
KEY_PROPERTY = "partition_key"

#: At most this many assignments of input key positions are tried (then one type at a time).
_SEARCH_LIMIT = 4096

EventType = tuple[str, int]  # (name, arity)


@dataclass(frozen=True, slots=True)
class Blocker:
    """Why a rule is not keyed: the operator (and where it is) that prevents it."""

    rule: str
    operator: str
    reason: str
    span: Span | None = None

    def __str__(self) -> str:
        return f"{self.span or '<rules>'}: rule {self.rule}: {self.operator}: {self.reason}"


@dataclass(frozen=True, slots=True)
class Partitioning:
    """The result of :func:`analyse`.

    ``keys`` gives each keyed event type (input or derived by keyed rules) its key position;
    ``keyed`` and ``remainder`` index ``program.event_rules``; ``blockers`` says, per rule of
    the remainder, why it is not keyed; ``reads`` lists the event types the remainder reads
    (it receives those the keyed stage derives, and input events of those types).
    """

    keys: tuple[tuple[EventType, int], ...]
    keyed: tuple[int, ...]
    remainder: tuple[int, ...]
    blockers: tuple[Blocker, ...]
    reads: tuple[EventType, ...]  # the event types the remainder reads

    @property
    def partitioned(self) -> bool:
        """Whether any rule runs keyed."""
        return bool(self.keyed)

    def key_positions(self) -> dict[EventType, int]:
        return dict(self.keys)

    def keyed_types(self, program: Program) -> set[EventType]:
        """The event types the keyed rules derive (what the keyed stage may send the global
        stage)."""
        rules = program.event_rules
        return {(rules[i].head.name, len(rules[i].head.args)) for i in self.keyed}

    def stages(self, program: Program) -> tuple[Program, Program]:
        """The keyed stage's program and the global remainder's (both keep the static rules
        and directives)."""
        rules = program.event_rules
        keyed = {id(rules[i]) for i in self.keyed}
        rest = tuple(s for s in program.statements if not isinstance(s, EventRule))
        return (
            Program(rest + tuple(r for r in rules if id(r) in keyed)),
            Program(rest + tuple(r for r in rules if id(r) not in keyed)),
        )

    def dump(self, program: Program) -> str:
        """The text ``reasoner check --emit partitioning`` prints."""
        rules = program.event_rules
        lines = []
        for (name, arity), position in self.keys:
            lines.append(f"key {name}/{arity}: argument {position + 1}")
        if not self.keys:
            lines.append("key: none (nothing runs partitioned)")
        for i in self.keyed:
            lines.append(f"keyed {_label(rules[i], i)}: {to_source(rules[i].head)}")
        for i in self.remainder:
            lines.append(f"global {_label(rules[i], i)}: {to_source(rules[i].head)}")
        for name, arity in self.reads:
            lines.append(f"global reads {name}/{arity}")
        lines.extend(f"blocked {b}" for b in self.blockers)
        return "\n".join(lines) + "\n"


def analyse(program: Program, policy: str = "unrestricted") -> Partitioning:
    """Find the partition key keying the most rules of ``program`` (``policy``: the default
    consumption policy of rules without their own).

    >>> from reasoner.language.parser import parse
    >>> p = analyse(parse("c(X) <- a(X, Y) SEQ b(X). d <- c(X) AND e."))
    >>> p.keys, p.keyed, p.remainder
    (((('a', 2), 0), (('b', 1), 0), (('c', 1), 0)), (0,), (1,))
    >>> print(p.blockers[0])
    <rules>:1:41: rule 1: event e: event type e/0 has no partition key
    """
    rules = program.event_rules
    changing = _rule_change_blockers(rules)
    if changing:
        reads = tuple(sorted({t for r in rules for t in _atom_types(r.body)}))
        return Partitioning((), (), tuple(range(len(rules))), changing, reads)
    derived = {(r.head.name, len(r.head.args)) for r in rules}
    inputs = sorted({t for r in rules for t in _atom_types(r.body)} - derived)
    candidates = [sorted(_candidates(rules, t)) + [None] for t in inputs]
    users = _Users(program, policy)
    best: _Result | None = None
    for choice in _assignments(candidates, rules, inputs, policy, users):
        result = _evaluate(rules, dict(zip(inputs, choice, strict=True)), policy, users)
        if best is None or len(result.keyed) > len(best.keyed):
            best = result
    assert best is not None
    keyed = tuple(sorted(best.keyed))
    remainder = tuple(i for i in range(len(rules)) if i not in best.keyed)
    return Partitioning(
        keys=tuple(sorted(best.keys)) if keyed else (),
        keyed=keyed,
        remainder=remainder,
        blockers=tuple(best.blockers[i] for i in remainder),
        reads=tuple(sorted({t for i in remainder for t in _atom_types(rules[i].body)})),
    )


def _rule_change_blockers(rules: tuple[EventRule, ...]) -> tuple[Blocker, ...]:
    """A blocker per rule when some rule's action changes rules (none when none does)."""
    for i, rule in enumerate(rules):
        for q in walk(rule.body):
            action = next(rule_changes(q.condition), None) if isinstance(q, Where) else None
            if action is not None:
                reason = (
                    f"{_label(rule, i)} runs {action.functor}, which changes the rules while "
                    "the stream runs: every partition would need the change, so nothing runs "
                    "partitioned"
                )
                return tuple(
                    Blocker(_name(r, j), "action", reason, action.span or q.span)
                    for j, r in enumerate(rules)
                )
    return ()


# ----------------------------------------------------------------------------- search


@dataclass(slots=True)
class _Result:
    keys: set[tuple[EventType, int]]
    keyed: set[int]
    blockers: dict[int, Blocker]


def _assignments(
    candidates: list[list[int | None]],
    rules: tuple[EventRule, ...],
    inputs: list[EventType],
    policy: str,
    users: _Users,
) -> Iterator[tuple[int | None, ...]]:
    """Every assignment of candidate positions, or, when there are too many, one: each type
    in turn takes its best position given the others'."""
    total = 1
    for options in candidates:
        total *= len(options)
    if total <= _SEARCH_LIMIT:
        yield from product(*candidates)
        return
    choice = [options[0] for options in candidates]
    for k, options in enumerate(candidates):
        scores = []
        for option in options:
            choice[k] = option
            keys = dict(zip(inputs, choice, strict=True))
            scores.append(len(_evaluate(rules, keys, policy, users).keyed))
        choice[k] = options[scores.index(max(scores))]
    yield tuple(choice)


def _candidates(rules: tuple[EventRule, ...], event_type: EventType) -> set[int]:
    """Positions of ``event_type`` holding a variable that some rule's head carries (any
    named variable, in a rule declaring its key)."""
    found: set[int] = set()
    for rule in rules:
        declared = KEY_PROPERTY in dict(rule.properties)
        head = {v.name for v in rule.head.args if isinstance(v, Var)}
        for atom in _atoms(rule.body):
            if (atom.name, len(atom.args)) == event_type:
                found.update(
                    i
                    for i, a in enumerate(atom.args)
                    if isinstance(a, Var) and (a.name in head or (declared and a.name != "_"))
                )
    return found


def _evaluate(
    rules: tuple[EventRule, ...],
    inputs: Mapping[EventType, int | None],
    policy: str,
    users: _Users,
) -> _Result:
    """Which rules are keyed when the input types have these key positions: derived types
    take the position their producers' heads give the key (a greatest fixpoint: a rule
    reading a type some unkeyed rule derives is unkeyed)."""
    keys: dict[EventType, int | None] = dict(inputs)
    heads = [(r.head.name, len(r.head.args)) for r in rules]
    # Derived types first get the position their first keyable producer gives them.
    pending = set(heads)
    for _ in range(len(rules) + 1):
        for i, rule in enumerate(rules):
            if heads[i] in pending and all(
                t in keys or t == heads[i] for t in _atom_types(rule.body)
            ):
                position = _rule_key(rule, i, keys, policy, head_guess=True)
                if isinstance(position, int):
                    keys[heads[i]] = position
                    pending.discard(heads[i])
    for head in pending:
        keys[head] = None
    blockers: dict[int, Blocker] = {}
    keyed = set(range(len(rules)))
    changed = True
    while changed or (demoted := _ordered_feeders(rules, keyed, policy, users)):
        if not changed:  # keyed rules feeding a global rule that reads in arrival order
            for i, blocked in demoted.items():
                blockers[i] = blocked
                keyed.discard(i)
                keys[heads[i]] = None
        changed = False
        for i in sorted(keyed):
            position = _rule_key(rules[i], i, keys, policy)
            if isinstance(position, Blocker):
                blocked = position
            elif position != keys[heads[i]]:
                blocked = Blocker(
                    _name(rules[i], i),
                    "head",
                    f"carries the key at argument {position + 1}, but other rules deriving "
                    f"{heads[i][0]}/{heads[i][1]} do not",
                    rules[i].head.span or rules[i].span,
                )
            else:
                continue
            blockers[i] = blocked
            keyed.discard(i)
            keys[heads[i]] = None
            changed = True
    final = {(t, p) for t, p in keys.items() if p is not None}
    return _Result(final, keyed, blockers)


class _Users:
    """Which rules use each network node other than a source or a time point (computed on
    first use: compiling costs more than the analysis)."""

    def __init__(self, program: Program, policy: str) -> None:
        self._program, self._policy = program, policy
        self._nodes: list[set[int]] | None = None

    def nodes(self, rule: int) -> set[int]:
        if self._nodes is None:
            network = compile_program(self._program, Options(cast(Policy, self._policy)))
            specs = {spec.id: spec for spec in network.nodes}
            self._nodes = [set() for _ in self._program.event_rules]
            for out in network.outputs:
                used = self._nodes[out.rule]
                stack = [out.input]
                while stack:
                    spec = specs[stack.pop()]
                    if spec.id not in used and not isinstance(spec, Source | Clock):
                        used.add(spec.id)
                        stack.extend(spec.inputs)
        return self._nodes[rule]


def _ordered_feeders(
    rules: tuple[EventRule, ...], keyed: set[int], policy: str, users: _Users
) -> dict[int, Blocker]:
    """The keyed rules that must run in the global stage because a global rule reads in
    arrival order (under ``recent`` or ``chronological``, into an aggregate or through
    ``FORALL_SEQ``): those that
    may derive when a timer fires and feed it (directly or through other rules: such events
    have no input event whose derivation tree places them), and those sharing a network
    node with a global rule (one dispatch then derives for both stages)."""
    heads = [(r.head.name, len(r.head.args)) for r in rules]
    reasons: dict[int, tuple[int, str]] = {}
    for i, rule in enumerate(rules):
        reason = _order_reason(rule, policy)
        if i not in keyed and reason is not None:
            reasons[i] = (i, reason)
    if not reasons:
        return {}
    grown = True
    while grown:  # rules feeding an ordered global rule inherit its reason
        read = {t: why for j, why in reasons.items() for t in _atom_types(rules[j].body)}
        grown = False
        for i in range(len(rules)):
            if i not in reasons and heads[i] in read:
                reasons[i] = read[heads[i]]
                grown = True
    timed = _timed(rules, keyed)
    out: dict[int, Blocker] = {}
    for i in sorted(keyed):
        if i in reasons and i in timed:
            j, reason = reasons[i]
            out[i] = Blocker(
                _name(rules[i], i),
                "feeds",
                f"global {_label(rules[j], j)} reads its events {reason}, and it may derive "
                f"when a timer fires ({timed[i]}): such events cannot be placed in one "
                "engine's order, so it runs in the global stage too",
                rules[i].span,
            )
            continue
        for j in sorted(set(range(len(rules))) - keyed):
            if users.nodes(i) & users.nodes(j):
                out[i] = Blocker(
                    _name(rules[i], i),
                    "shares",
                    f"a network node with global {_label(rules[j], j)}: one dispatch would "
                    "derive for both stages, and a global rule reads in arrival order, so it "
                    "runs in the global stage too",
                    rules[i].span,
                )
                break
    return out


def _timed(rules: tuple[EventRule, ...], keyed: set[int]) -> dict[int, str]:
    """The keyed rules that may derive when a timer fires, and why: alarm rules, a time
    point or an aggregate's time window in the body, or reading what such a rule derives."""
    timed: dict[int, str] = {}
    for i in keyed:
        alarm = rules[i].alarm
        if alarm is not None:
            timed[i] = f"an alarm rule, {alarm.functor}"
        for q in walk(rules[i].body):
            if isinstance(q, TimePoint):
                timed.setdefault(i, f"time point {to_source(q)}")
            elif isinstance(q, Aggregate) and q.window is not None and q.window[0] == "time":
                timed.setdefault(i, "an aggregate's time window")
    grown = True
    while grown:
        derived = {(rules[i].head.name, len(rules[i].head.args)): i for i in timed}
        grown = False
        for i in keyed - timed.keys():
            for t in _atom_types(rules[i].body):
                if t in derived:
                    j = derived[t]
                    timed[i] = f"it reads {t[0]}/{t[1]}, derived by rule {_name(rules[j], j)}"
                    grown = True
                    break
    return timed


def _order_reason(rule: EventRule, policy: str) -> str | None:
    """Why ``rule`` depends on the order its events arrive in within a time point (None: it
    does not)."""
    body, rule_policy = apply_properties(rule, policy)
    if rule_policy != "unrestricted":
        return f"under the {rule_policy} policy"
    if _aggregates(body):
        return "into an aggregate"
    if any(isinstance(q, Binary) and q.op == "forall_seq" for q in walk(body)):
        return "through FORALL_SEQ (it consumes what it combines, under every policy)"
    return None


# ------------------------------------------------------------------------ one rule


class _Blocked(Exception):
    def __init__(self, operator: str, reason: str, span: Span | None) -> None:
        self.operator, self.reason, self.span = operator, reason, span


def _rule_key(
    rule: EventRule,
    index: int,
    keys: Mapping[EventType, int | None],
    policy: str,
    *,
    head_guess: bool = False,
) -> int | Blocker:
    """The head position carrying the key of a keyed ``rule``, or why it is not keyed.
    With ``head_guess``, occurrences of the head's own type (recursion) may take any key
    the rest of the body agrees on."""
    body, rule_policy = apply_properties(rule, policy)
    declared = dict(rule.properties).get(KEY_PROPERTY)
    head_type = (rule.head.name, len(rule.head.args))
    try:
        if isinstance(declared, Var):
            for atom in _atoms(body):
                _atom_key(atom, keys)
            shared = frozenset({declared.name})
        else:
            shared = _shared(body, keys, rule_policy, head_type if head_guess else None)
    except _Blocked as blocked:
        return Blocker(_name(rule, index), blocked.operator, blocked.reason, blocked.span)
    for position, arg in enumerate(rule.head.args):
        if isinstance(arg, Var) and (shared is _ANY or arg.name in shared):
            return position
    what = "no key" if shared is _ANY else "the key " + " or ".join(sorted(shared))
    return Blocker(
        _name(rule, index),
        "head",
        f"{to_source(rule.head)} does not carry {what}",
        rule.head.span or rule.span,
    )


#: "Any key": a time point's (the identity of intersection).
_ANY: frozenset[str] = frozenset({"\0any"})


def _shared(
    p: Pattern, keys: Mapping[EventType, int | None], policy: str, guess: EventType | None
) -> frozenset[str]:
    """The variables equal to the partition key in every occurrence of ``p`` (raises
    _Blocked at the operator combining occurrences whose keys may differ)."""
    match p:
        case EventAtom(name, args):
            if guess == (name, len(args)):
                return _ANY
            return frozenset({_atom_key(p, keys)})
        case TimePoint():
            if policy != "unrestricted":
                raise _Blocked(
                    f"time point {to_source(p)}",
                    f"under the {policy} policy one partition would consume or replace it",
                    p.span,
                )
            return _ANY
        case Where(inner) | Window(inner) | Multiply(inner) | Star(inner):
            return _shared(inner, keys, policy, guess)
        case Binary(op, left, right):
            sides = (_shared(left, keys, policy, guess), _shared(right, keys, policy, guess))
            info = OPERATORS[op]
            if info.negation:
                _meet(info.spelling, sides, p)
                return sides[0]
            return _meet(info.spelling, sides, p)
        case Not(negated, left, right):
            parts = tuple(_shared(q, keys, policy, guess) for q in (negated, left, right))
            _meet("NOT", parts, p)
            return _meet("NOT", parts[1:], p)
        case Aggregate(pattern=inner) as aggregate:
            items = _shared(inner, keys, policy, guess)
            group = frozenset(group_variables(aggregate, bound_variables(inner)))
            kept = items if items is _ANY else items & group
            if not kept:
                raise _Blocked(
                    "aggregate",
                    "its groups do not include the key "
                    + " or ".join(sorted(items))
                    + " (aggregated or written _Name)",
                    p.span,
                )
            return kept
    raise TypeError(f"not a pattern: {p!r}")


def _meet(operator: str, sides: tuple[frozenset[str], ...], p: Pattern) -> frozenset[str]:
    known = [s for s in sides if s is not _ANY]
    if not known:
        return _ANY
    common = frozenset.intersection(*known)
    if not common:
        described = ", ".join(" or ".join(sorted(s)) for s in known)
        raise _Blocked(
            operator,
            f"combines occurrences whose keys may differ (keyed by {described})",
            p.span,
        )
    return common


def _atom_key(atom: EventAtom, keys: Mapping[EventType, int | None]) -> str:
    event_type = (atom.name, len(atom.args))
    position = keys.get(event_type)
    operator = f"event {to_source(atom)}"
    if position is None:
        raise _Blocked(
            operator, f"event type {atom.name}/{len(atom.args)} has no partition key", atom.span
        )
    arg = atom.args[position]
    if not isinstance(arg, Var) or arg.name == "_":
        raise _Blocked(
            operator, f"its key (argument {position + 1}) is not a named variable", atom.span
        )
    return arg.name


def _atoms(p: Pattern) -> Iterator[EventAtom]:
    return (q for q in walk(p) if isinstance(q, EventAtom))


def _aggregates(p: Pattern) -> bool:
    match p:
        case Aggregate():
            return True
        case Where(inner) | Window(inner) | Multiply(inner) | Star(inner):
            return _aggregates(inner)
        case Binary(_, left, right):
            return _aggregates(left) or _aggregates(right)
        case Not(negated, left, right):
            return any(_aggregates(q) for q in (negated, left, right))
    return False


def _atom_types(p: Pattern) -> set[EventType]:
    return {(a.name, len(a.args)) for a in _atoms(p)}


def _name(rule: EventRule, index: int) -> str:
    return rule.label or str(index)


def _label(rule: EventRule, index: int) -> str:
    return f"rule {_name(rule, index)} ({rule.span or '<rules>'})"
