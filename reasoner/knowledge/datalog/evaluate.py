"""Bottom-up evaluation of stratified Datalog, and the knowledge view over its model.

:func:`evaluate` runs the strata in order. A materialised stratum is evaluated semi-naively
(datafrog's stable / recent / to-add scheme): round 0 applies every rule to what is known;
each later round re-applies a recursive rule once per body literal of the stratum, with that
literal reading only the tuples new in the previous round (*delta*) and placed first in the
join so that it drives the nested loops; the others read everything. :func:`evaluate_naive`
re-applies every rule to everything until nothing changes: slow and obviously right, it is
the oracle the tests compare with.

Body goals are compiled once with :func:`~reasoner.knowledge.goals.compile_goal`; each
literal is given the :class:`Knowledge` it must read (delta or full), which is how a single
compiled goal serves both roles. Relations of IRI-named predicates start with the store's
triples of that property, so rules extend RDF properties rather than shadow them.

:class:`DerivedKnowledge` answers queries over the result: materialised predicates from
their relations, on-demand predicates (not range-restricted, e.g. ``getDistance``-style
arithmetic) top-down from their rules when asked, everything else from the base knowledge.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from reasoner.errors import EngineError
from reasoner.knowledge.base import Knowledge, Procedure
from reasoner.knowledge.datalog.relation import Relation, Row
from reasoner.knowledge.datalog.rules import Rule
from reasoner.knowledge.datalog.stratify import Key, Strata, Stratum
from reasoner.knowledge.goals import Env, Goal, compile_goal, term_binder, term_value
from reasoner.language.ast import Atom, Compound, ListTerm, Term, Var
from reasoner.values import Struct, Value

Model = dict[Key, Relation]


@dataclass(frozen=True, slots=True)
class _Compiled:
    """A rule with its body goals compiled and a head builder."""

    rule: Rule
    key: Key
    goals: tuple[Goal, ...]
    head: Callable[[Env], Row]


def evaluate(strata: Strata, base: Knowledge, prefixes: Mapping[str, str]) -> Model:
    """The least model of the materialised strata, semi-naively.

    Args:
        strata: from :func:`~reasoner.knowledge.datalog.stratify.stratify`.
        base: the facts the rules read besides their own (the store's triples, ...).
        prefixes: the program's prefixes (for constants in rules).
    Returns:
        one :class:`Relation` per materialised predicate.

    >>> from reasoner.knowledge.facts import FactBase
    >>> evaluate(Strata(()), FactBase(), {})
    {}
    """
    return _run(strata, base, prefixes, naive=False)


def evaluate_naive(strata: Strata, base: Knowledge, prefixes: Mapping[str, str]) -> Model:
    """The same model by naive iteration (the test oracle).

    Args:
        strata: from :func:`~reasoner.knowledge.datalog.stratify.stratify`.
        base: as for :func:`evaluate`.
        prefixes: as for :func:`evaluate`.
    Returns:
        one :class:`Relation` per materialised predicate.

    >>> from reasoner.knowledge.facts import FactBase
    >>> evaluate_naive(Strata(()), FactBase(), {})
    {}
    """
    return _run(strata, base, prefixes, naive=True)


def _run(strata: Strata, base: Knowledge, prefixes: Mapping[str, str], *, naive: bool) -> Model:
    model: Model = {}
    view = DerivedKnowledge(base, model, strata, prefixes)
    for stratum in strata.strata:
        if not stratum.materialised:
            continue
        for key in stratum.predicates:
            name, arity = key
            seed = base.solve(name, (None,) * arity) if base.defines(name, arity) else ()
            model[key] = Relation(seed)
        compiled = tuple(_compile(rule, prefixes) for rule in stratum.rules)
        if naive:
            _naive(stratum, compiled, model, view)
        else:
            _semi_naive(stratum, compiled, model, view)
    return model


def _naive(stratum: Stratum, rules: tuple[_Compiled, ...], model: Model, view: Knowledge) -> None:
    while True:
        found = [(c.key, row) for c in rules for row in _fire(c, None, None, view)]
        added = [model[key].add(row) for key, row in found]
        if not any(added):
            return


def _semi_naive(
    stratum: Stratum, rules: tuple[_Compiled, ...], model: Model, view: DerivedKnowledge
) -> None:
    members = set(stratum.predicates)
    delta = _add(model, [(c.key, row) for c in rules for row in _fire(c, None, None, view)])
    if not stratum.recursive:
        return
    while delta:
        delta_view = _Overlay(view, delta)
        found: list[tuple[Key, Row]] = []
        for c in rules:
            for i, lit in enumerate(c.rule.body):
                if not (lit.positive and (lit.predicate, lit.arity) in members):
                    continue
                if (lit.predicate, lit.arity) not in delta:
                    continue
                order = [i, *(j for j in range(len(c.goals)) if j != i)]
                views: list[Knowledge] = [view] * len(c.goals)
                views[i] = delta_view
                found.extend((c.key, row) for row in _fire(c, order, views))
        delta = _add(model, found)


def _add(model: Model, found: list[tuple[Key, Row]]) -> dict[Key, Relation]:
    delta: dict[Key, Relation] = {}
    for key, row in found:
        if model[key].add(row):
            delta.setdefault(key, Relation()).add(row)
    return delta


def _fire(
    c: _Compiled,
    order: list[int] | None,
    views: list[Knowledge] | None,
    view: Knowledge | None = None,
) -> list[Row]:
    """Every head tuple of rule ``c`` joining its goals in ``order`` (default: as written),
    goal ``j`` reading ``views[j]`` (default: ``view`` for all)."""
    indices = range(len(c.goals)) if order is None else order
    envs: list[Env] = [{}]
    for j in indices:
        goal = c.goals[j]
        kb = view if views is None else views[j]
        envs = [e for env in envs for e in goal.solutions(env, kb)]  # type: ignore[arg-type]
        if not envs:
            return []
    return [c.head(env) for env in envs]


def _compile(rule: Rule, prefixes: Mapping[str, str]) -> _Compiled:
    goals = tuple(compile_goal(lit.term, prefixes) for lit in rule.body)
    builders = tuple(_builder(a, prefixes) for a in rule.head)
    return _Compiled(
        rule,
        (rule.predicate, rule.arity),
        goals,
        lambda env: tuple(b(env) for b in builders),
    )


def _builder(term: Term, prefixes: Mapping[str, str]) -> Callable[[Env], Value]:
    """A function building a head argument's value from bindings (no arithmetic: in a head,
    ``f(X + 1)`` is a structure, as in Prolog)."""
    match term:
        case Var(name):

            def lookup(env: Env) -> Value:
                try:
                    return env[name]
                except KeyError:
                    raise EngineError(f"head variable '{name}' is not bound by the body") from None

            return lookup
        case Compound(functor, args):
            parts = tuple(_builder(a, prefixes) for a in args)
            return lambda env: Struct(functor, tuple(p(env) for p in parts))
        case ListTerm(items, tail):
            elements = tuple(_builder(a, prefixes) for a in items)
            rest = None if tail is None else _builder(tail, prefixes)

            def build(env: Env) -> Value:
                head = tuple(p(env) for p in elements)
                if rest is None:
                    return head
                more = rest(env)
                return head + more if isinstance(more, tuple) else head

            return build
    value = term_value(term, prefixes)
    return lambda env: value  # type: ignore[return-value]


ANONYMOUS = Var("_")


class DerivedKnowledge:
    """The static knowledge after rules: a :class:`Knowledge` over base + model + on-demand.

    Args:
        base: the knowledge the rules read (store view, ...).
        model: materialised relations by ``(predicate, arity)``.
        strata: the program's strata (for the on-demand rules).
        prefixes: the program's prefixes.
    """

    __slots__ = ("base", "model", "strata", "prefixes", "_on_demand")

    def __init__(
        self, base: Knowledge, model: Model, strata: Strata, prefixes: Mapping[str, str]
    ) -> None:
        self.base = base
        self.model = model
        self.strata = strata
        self.prefixes = prefixes
        self._on_demand = {
            key: _top_down(
                tuple(_compile_top_down(r, prefixes) for r in rules),
                base.procedure(*key) if base.defines(*key) else None,
                self,
            )
            for key, rules in strata.on_demand.items()
        }

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (shipped to a Spark executor), it leaves its compiled on-demand rules
        behind (closures): the copy compiles them again from the strata."""
        return DerivedKnowledge, (self.base, self.model, self.strata, self.prefixes)

    def defines(self, predicate: str, arity: int) -> bool:
        """Whether the predicate is materialised, on demand, or known to the base."""
        key = (predicate, arity)
        return key in self.model or key in self._on_demand or self.base.defines(predicate, arity)

    def on_demand(self, predicate: str, arity: int) -> bool:
        """Whether the predicate is answered top-down per call (not materialised)."""
        return (predicate, arity) in self._on_demand

    def solve(self, predicate: str, pattern: tuple[Value | None, ...]) -> Iterator[Row]:
        """Tuples of the predicate agreeing with the bound positions of ``pattern``.

        Raises:
            EngineError: when an on-demand predicate is asked without the inputs it needs.
        """
        key = (predicate, len(pattern))
        relation = self.model.get(key)
        if relation is not None:
            return relation.match(pattern)
        on_demand = self._on_demand.get(key)
        if on_demand is not None:
            return on_demand.solve(pattern)
        return self.base.solve(predicate, pattern)

    def procedure(self, predicate: str, arity: int) -> Procedure:
        """A materialised predicate's relation, an on-demand one's rules (top-down, each
        head unified with the call), or the base's procedure."""
        key = (predicate, arity)
        relation = self.model.get(key)
        if relation is not None:
            return relation.procedure
        return self._on_demand.get(key) or self.base.procedure(predicate, arity)


class _Overlay:
    """A view in which the stratum's predicates read only their delta relations."""

    __slots__ = ("view", "delta")

    def __init__(self, view: Knowledge, delta: dict[Key, Relation]) -> None:
        self.view = view
        self.delta = delta

    def defines(self, predicate: str, arity: int) -> bool:
        return (predicate, arity) in self.delta or self.view.defines(predicate, arity)

    def solve(self, predicate: str, pattern: tuple[Value | None, ...]) -> Iterator[Row]:
        relation = self.delta.get((predicate, len(pattern)))
        if relation is not None:
            return relation.match(pattern)
        return self.view.solve(predicate, pattern)

    def procedure(self, predicate: str, arity: int) -> Procedure:
        relation = self.delta.get((predicate, arity))
        if relation is not None:
            return relation.procedure
        return self.view.procedure(predicate, arity)


@dataclass(frozen=True, slots=True)
class _TopDown:
    """An on-demand rule compiled: its body goal, a function unifying its head with a call's
    pattern (None: unbound) into fresh bindings (None when they disagree), and per head
    argument a function building its value from the body's bindings."""

    rule: Rule
    body: Goal
    unify: Callable[[tuple[Value | None, ...]], Env | None]
    builders: tuple[Callable[[Env], Value], ...]
    #: The head's variables when it is distinct named variables (the common case: a ground
    #: call's bindings are then the call's values by name).
    variables: tuple[str, ...] | None


def _top_down(rules: tuple[_TopDown, ...], base: Procedure | None, kb: Knowledge) -> Procedure:
    """The procedure of an on-demand predicate: its rules' answers, then the base's."""

    def solve(pattern: tuple[Value | None, ...]) -> Iterator[Row]:
        seen: set[Row] = set()
        for rule in rules:
            env = rule.unify(pattern)
            if env is None:
                continue
            for solution in rule.body.solutions(env, kb):
                # an anonymous head argument takes the caller's value (it matches anything)
                row = tuple(
                    v if v is not None and t == ANONYMOUS else build(solution)
                    for t, v, build in zip(rule.rule.head, pattern, rule.builders, strict=True)
                )
                if row not in seen:
                    seen.add(row)
                    yield row
        if base is not None:
            for row in base.solve(pattern):
                if row not in seen:
                    seen.add(row)
                    yield row

    # A ground call: a rule whose head unifies with it and whose body holds answers it (its
    # answer is the call itself), so no answer is built.
    tests = tuple((rule.variables, rule.unify, rule.body.holds) for rule in rules)
    base_holds = None if base is None else base.holds

    def holds(row: Row) -> bool:
        for variables, unify, test in tests:
            env = unify(row) if variables is None else dict(zip(variables, row, strict=False))
            if env is not None and test(env, kb):
                return True
        return base_holds is not None and base_holds(row)

    return Procedure(solve, holds)


def body_term(rule: Rule) -> Term:
    """A rule's body as one goal term (a conjunction; ``true`` for a fact).

    >>> from reasoner.knowledge.datalog.rules import Literal
    >>> body_term(Rule("p", (), (Literal(Atom("a")), Literal(Atom("b"))), True))
    Compound(functor=',', args=(Atom(name='a'), Atom(name='b')))
    """
    goals = [lit.term for lit in rule.body]
    body: Term = goals[-1] if goals else Atom("true")
    for goal in reversed(goals[:-1]):
        body = Compound(",", (goal, body))
    return body


def _compile_top_down(rule: Rule, prefixes: Mapping[str, str]) -> _TopDown:
    binders = tuple(term_binder(t, prefixes) for t in rule.head)

    def unify(pattern: tuple[Value | None, ...]) -> Env | None:
        env: Env = {}
        for bind, value in zip(binders, pattern, strict=True):
            if value is not None and not bind(value, env):
                return None
        return env

    names = tuple(t.name for t in rule.head if isinstance(t, Var) and t != ANONYMOUS)
    plain = len(names) == len(rule.head) and len(set(names)) == len(names)
    return _TopDown(
        rule,
        compile_goal(body_term(rule), prefixes),
        unify,
        tuple(_builder(t, prefixes) for t in rule.head),
        names if plain else None,
    )
