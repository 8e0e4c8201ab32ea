"""Binding modes of calls to on-demand predicates from materialised rules.

A rule is materialisable when its body, read left to right, binds its head (``rules.py``),
counting each call as binding its arguments. That holds for a relation, facts and the store,
but an on-demand predicate is answered top-down with the call's bound arguments as its only
inputs: it binds the others only when, given those, each of its rules' bodies runs (every
built-in and call finds what it needs) and binds the rest of its head. A materialised rule
whose body calls one before binding what it needs is refused when the rules load: evaluated
bottom-up, the call would be asked without its inputs (an engine error, or no answers where
there are some). So is an event rule's ``WHERE`` condition (or ``EVENT_MULTIPLY`` goal) that
calls one before binding what it needs, read as ``condition_bindings`` reads it (starting with
what its pattern binds): it would run per event without its inputs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set

from reasoner.errors import Diagnostic, RuleCompileError
from reasoner.knowledge.datalog.rules import Rule, anonymous, binds, predicate_name
from reasoner.knowledge.datalog.stratify import Key, Strata
from reasoner.language.ast import (
    Atom,
    Compound,
    EventRule,
    Multiply,
    Term,
    Where,
    variable_names,
    walk,
)
from reasoner.language.check import bound_variables, condition_bindings


class _Modes:
    """Whether on-demand predicates answer calls with given arguments bound (memoised)."""

    def __init__(self, on_demand: Mapping[Key, tuple[Rule, ...]], prefixes: Mapping[str, str]):
        self.on_demand = on_demand
        self.prefixes = prefixes
        self.answers: dict[tuple[Key, tuple[bool, ...]], bool] = {}

    def callee(self, goal: Term) -> tuple[Key, tuple[Term, ...]] | None:
        """The on-demand predicate ``goal`` calls, and its arguments; None for another."""
        match goal:
            case Atom(name):
                key: Key = (name, 0)
                args: tuple[Term, ...] = ()
            case Compound(functor, args):
                key = (predicate_name(functor, self.prefixes, goal.span), len(args))
            case _:
                return None
        return (key, args) if key in self.on_demand else None

    def ready(self, goal: Term, bound: Set[str]) -> bool:
        """Whether ``goal`` can be called with the variables ``bound``."""
        called = self.callee(goal)
        if called is None:
            return True
        key, args = called
        given = tuple(set(variable_names(a)) <= bound for a in args)
        if (key, given) not in self.answers:
            self.answers[key, given] = all(self._runs(r, given) for r in self.on_demand[key])
        return self.answers[key, given]

    def _runs(self, rule: Rule, given: tuple[bool, ...]) -> bool:
        bound = {v for a, g in zip(rule.head, given, strict=True) if g for v in variable_names(a)}
        for lit in rule.body:
            more = binds(lit.term, bound, self.ready)
            if more is None:
                return False
            bound |= more
        return all(
            set(variable_names(a)) <= bound and not anonymous(a)
            for a, g in zip(rule.head, given, strict=True)
            if not g
        )


def check_calls(
    strata: Strata, prefixes: Mapping[str, str], event_rules: Iterable[EventRule] = ()
) -> None:
    """Refuse a materialised rule, or an event rule's ``WHERE`` condition or
    ``EVENT_MULTIPLY`` goal, that calls an on-demand predicate before binding the arguments
    that predicate's rules need (a condition starts with what its pattern binds).

    Args:
        strata: the program's strata.
        prefixes: the program's prefixes.
        event_rules: the program's event rules.
    Raises:
        RuleCompileError: at the first such call, naming a variable it needs bound.

    >>> check_calls(Strata(()), {})
    """
    modes = _Modes(strata.on_demand, prefixes)
    refused: list[tuple[Term, Set[str]]] = []

    def ready(goal: Term, bound: Set[str]) -> bool:
        if modes.ready(goal, bound):
            return True
        refused.append((goal, bound))
        return False

    for stratum in strata.strata:
        if not stratum.materialised:
            continue
        for rule in stratum.rules:
            bound: set[str] = set()
            for lit in rule.body:
                more = binds(lit.term, bound, ready)
                if more is None:
                    break
                bound |= more
            if refused:
                raise RuleCompileError([_refusal(*refused[0])])
    if not strata.on_demand:
        return
    for event_rule in event_rules:
        for pattern in walk(event_rule.body):
            match pattern:
                case Where(inner, goal) | Multiply(inner, goal):
                    condition_bindings(goal, bound_variables(inner), ready)
                    if refused:
                        raise RuleCompileError([_refusal(*refused[0])])


def _refusal(goal: Term, bound: Set[str]) -> Diagnostic:
    match goal:
        case Compound(functor, args):
            name = f"{functor}/{len(args)}"
        case Atom(atom):
            name, args = f"{atom}/0", ()
    unbound = [v for v in variable_names(*args) if v not in bound]
    if not unbound:
        message = (
            f"{name} is answered per call (top-down) and its rules need a variable they do not "
            "bind, even when it is called with every argument bound"
        )
    else:
        message = (
            f"variable '{unbound[0]}' is not bound when {name} is called: {name} is answered "
            "per call (top-down) and needs it bound (bind it by an earlier goal)"
        )
    return Diagnostic(message, goal.span if isinstance(goal, Compound | Atom) else None)
