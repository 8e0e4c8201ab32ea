"""Static rules as Datalog IR: resolved predicate names, body literals and safety.

A predicate is named as :class:`~reasoner.knowledge.base.Knowledge` names it: the functor
as written (``inSupChain``) or, for a prefixed functor (``wt:near``), the full IRI.

A rule is *safe* (range-restricted, materialisable bottom-up) when, reading its body left to
right as Prolog does, every built-in finds the variables it needs already bound and every
head variable ends up bound. Function-like rules (``dist(A, B, D) :- D is A - B``) are not:
their predicate is answered top-down, on demand, when asked with its inputs bound.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from reasoner.errors import Diagnostic, RuleCompileError
from reasoner.knowledge.builtins import COMPARISONS, NEEDS, RELATIONS, TERM_ORDER
from reasoner.knowledge.goals import DEFAULT_PREFIXES
from reasoner.language.ast import (
    Atom,
    Compound,
    ListTerm,
    Span,
    StaticRule,
    Term,
    Var,
    variable_names,
)

log = logging.getLogger(__name__)

#: Control constructs and built-ins that are not predicates of the knowledge.
_CONTROL = frozenset({",", ";", "->", "\\+", "not", "is", "=", "\\=", "==", "\\=="})
#: Two-argument tests: they bind nothing and need every variable bound.
_TESTS = frozenset({*COMPARISONS, *TERM_ORDER, "\\=", "==", "\\=="})


@dataclass(frozen=True, slots=True)
class Literal:
    """One body goal. ``predicate`` is set for a call of a knowledge predicate (positive
    or, with ``negated``, under ``\\+``); None for a built-in or a control construct."""

    term: Term
    predicate: str | None = None
    arity: int = 0
    negated: bool = False

    @property
    def positive(self) -> bool:
        return self.predicate is not None and not self.negated


@dataclass(frozen=True, slots=True)
class Rule:
    """A static rule in IR form (a fact has an empty body)."""

    predicate: str
    head: tuple[Term, ...]
    body: tuple[Literal, ...]
    safe: bool
    span: Span | None = None

    @property
    def arity(self) -> int:
        return len(self.head)

    def dump(self) -> str:
        """``pred/2 <- [q/2, \\+r/1, builtin] safe`` — one line, no spans."""
        parts = []
        for lit in self.body:
            if lit.predicate is None:
                parts.append("builtin")
            else:
                parts.append(("\\+" if lit.negated else "") + f"{lit.predicate}/{lit.arity}")
        kind = "safe" if self.safe else "on-demand"
        return f"{self.predicate}/{self.arity} <- [{', '.join(parts)}] {kind}"


def predicate_name(functor: str, prefixes: Mapping[str, str], span: Span | None = None) -> str:
    """The knowledge name of a functor: prefixed functors resolve to their full IRI.

    Args:
        functor: e.g. ``"inSupChain"`` or ``"wt:near"``.
        prefixes: prefix -> namespace (defaults ``rdf``, ``rdfs``, ``owl``, ``xsd`` added).
        span: where the functor was written, for the error.
    Returns:
        the name.
    Raises:
        RuleCompileError: for an undeclared prefix.

    >>> predicate_name("wt:near", {"wt": "http://ex.org/wt#"})
    'http://ex.org/wt#near'
    """
    prefix, sep, local = functor.partition(":")
    if not sep or not prefix:
        return functor
    names = {**DEFAULT_PREFIXES, **prefixes}
    if prefix not in names:
        raise RuleCompileError([Diagnostic(f"unknown prefix '{prefix}'", span)])
    return names[prefix] + local


def compile_rules(rules: Iterable[StaticRule], prefixes: Mapping[str, str]) -> tuple[Rule, ...]:
    """Translate static rules to IR (rules redefining a built-in relation are skipped).

    Args:
        rules: the program's static rules and facts.
        prefixes: the program's prefixes.
    Returns:
        the rules in IR form, in program order.
    Raises:
        RuleCompileError: for a head that is not a predicate or an unknown prefix.

    >>> compile_rules([StaticRule(Compound("p", (Atom("a"),)))], {})[0].dump()
    'p/1 <- [] safe'
    """
    out = []
    for rule in rules:
        args: tuple[Term, ...]
        match rule.head:
            case Atom(name):
                functor, args = name, ()
            case Compound(functor, args) if functor not in _CONTROL:
                pass
            case _:
                raise RuleCompileError(
                    [Diagnostic("a static rule's head must be a predicate", rule.span)]
                )
        if (functor, len(args)) in RELATIONS:
            # The built-in answers every call of this name (goals dispatch built-ins first).
            log.info("rule for built-in %s/%d ignored: the built-in is used", functor, len(args))
            continue
        name = predicate_name(functor, prefixes, rule.span)
        body = tuple(_literal(goal, prefixes) for goal in rule.body)
        out.append(Rule(name, tuple(args), body, _safe(args, rule.body), rule.span))
    return tuple(out)


def _literal(goal: Term, prefixes: Mapping[str, str]) -> Literal:
    match goal:
        case Compound("\\+" | "not", (inner,)):
            lit = _literal(inner, prefixes)
            if lit.positive:
                return Literal(goal, lit.predicate, lit.arity, negated=True)
            return Literal(goal)
        case Atom(name) if name not in ("true", "fail", "false", "!"):
            return Literal(goal, name, 0)
        case Compound(functor, args) if _is_call(functor, len(args)):
            return Literal(goal, predicate_name(functor, prefixes, goal.span), len(args))
    return Literal(goal)


def _is_call(functor: str, arity: int) -> bool:
    return (
        functor not in _CONTROL
        and not (functor in _TESTS and arity == 2)
        and (functor, arity) not in RELATIONS
    )


def _safe(head: tuple[Term, ...], body: tuple[Term, ...]) -> bool:
    bound: set[str] = set()
    for goal in body:
        result = binds(goal, bound)
        if result is None:
            return False
        bound |= result
    # An anonymous `_` in the head (`limit(_, 20).`) stands for any value: never materialised.
    return all(set(variable_names(a)) <= bound and not anonymous(a) for a in head)


def anonymous(term: Term) -> bool:
    match term:
        case Var(name):
            return name == "_"
        case Compound(_, args):
            return any(anonymous(a) for a in args)
        case ListTerm(items, tail):
            return any(anonymous(a) for a in items) or (tail is not None and anonymous(tail))
    return False


#: Whether a call of a knowledge predicate can be made with the variables bound so far
#: (a predicate answered top-down needs some of its arguments bound); the default: always.
Ready = Callable[[Term, set[str]], bool]


def _any_call(goal: Term, bound: set[str]) -> bool:
    return True


def binds(goal: Term, bound: set[str], ready: Ready = _any_call) -> set[str] | None:
    """The variables ``goal`` binds given ``bound``; None if it needs an unbound one (a
    built-in's input, or a call that ``ready`` says cannot be made yet).

    >>> binds(Compound("p", (Var("X"),)), set())
    {'X'}
    >>> binds(Compound("p", (Var("X"),)), set(), lambda goal, bound: False) is None
    True
    >>> binds(Compound("atom_length", (Var("X"), Var("N"))), set()) is None
    True
    """
    match goal:
        case Compound(",", (a, b)):
            first = binds(a, bound, ready)
            if first is None:
                return None
            second = binds(b, bound | first, ready)
            return None if second is None else first | second
        case Compound(";", (a, b)):
            left, right = binds(a, bound, ready), binds(b, bound, ready)
            return None if left is None or right is None else left & right
        case Compound("\\+" | "not", (inner,)):
            # Negation as failure is only sound on ground calls: every variable bound.
            if not set(variable_names(inner)) <= bound:
                return None
            return None if binds(inner, bound, ready) is None else set()
        case Compound("is", (left, right)):
            return set(variable_names(left)) if set(variable_names(right)) <= bound else None
        case Compound("=", (left, right)):
            if set(variable_names(left)) <= bound or set(variable_names(right)) <= bound:
                return set(variable_names(left, right))
            return None
        case Compound(op, (left, right)) if op in _TESTS:
            return set() if set(variable_names(left, right)) <= bound else None
        case Compound(functor, args) if (functor, len(args)) in RELATIONS:
            # A built-in relation runs once one of its modes' inputs are bound (see NEEDS).
            given = [set(variable_names(a)) <= bound for a in args]
            if any(all(given[i] for i in need) for need in NEEDS[functor, len(args)]):
                return set(variable_names(goal))
            return None
        case Compound(_, _) | Atom(_):
            return set(variable_names(goal)) if ready(goal, bound) else None
    return None
