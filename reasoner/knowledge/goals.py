"""Compile condition terms (WHERE conditions, ``event_multiply`` goals, static-rule bodies)
into closure trees, once.

``compile_goal`` resolves every name when the rule is compiled: control constructs,
built-ins, prefixed predicates and static-knowledge calls each become a closure, so a call
does no parsing and no dispatch on names. The engine calls :attr:`Goal.holds` once per
candidate match, so the common case — a comparison of two variables, or of a variable and a
constant — is one closure calling one comparison function.

Environments map variable names to run-time values (:mod:`reasoner.values`); a goal never
mutates the environment it is given, and callers must treat the environments it yields as
read-only (a goal that binds nothing yields the given environment itself).

Conventions:

* ``_`` is anonymous (each occurrence is a fresh variable); ``_X`` is an ordinary variable.
* Values compare as :mod:`reasoner.values` says (``1 == 1.0``), also for ``==`` and ``=``.
* Arithmetic over a non-number (e.g. the atom ``none`` of a missing reading) or a division by
  zero makes ``is`` or a comparison fail instead of stopping the stream; an unbound variable
  in arithmetic is a program error (:class:`~reasoner.errors.EngineError`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain

from reasoner.errors import Diagnostic, EngineError, RuleCompileError
from reasoner.knowledge.actions import FRESH, PRINTING, Action, Fresh
from reasoner.knowledge.actions import actions as action_table
from reasoner.knowledge.base import NOTHING, Knowledge, Procedure
from reasoner.knowledge.builtins import (
    COMPARISONS,
    CONSTANTS,
    FUNCTIONS,
    NUMERIC_TESTS,
    PLAIN_NUMBERS,
    RELATIONS,
    TERM_ORDER,
    EvaluationError,
    Relation,
)
from reasoner.language.ast import (
    INTERVAL_GOALS,
    Atom,
    Compound,
    Iri,
    ListTerm,
    Number,
    PName,
    Span,
    String,
    Term,
    Var,
    variable_names,
)
from reasoner.values import IRI, Struct, Value
from reasoner.vocab import OWL, RDF, RDFS, XSD

Env = dict[str, Value]
Solver = Callable[[Env, Knowledge], Iterator[Env]]
Tester = Callable[[Env, Knowledge], bool]
Expression = Callable[[Env], Value]

#: The key under which a traced goal's solutions carry the facts they used (no variable can
#: have this name).
FACTS = "$facts"

#: Prefixes every rule file may use without declaring them (a declaration overrides).
DEFAULT_PREFIXES: dict[str, str] = {
    "rdf": RDF,
    "rdfs": RDFS,
    "owl": OWL,
    "xsd": XSD,
}


@dataclass(frozen=True, slots=True)
class Goal:
    """A compiled condition.

    ``solutions(env, kb)`` yields every environment extending ``env`` that makes the goal
    true; ``holds(env, kb)`` says whether there is one. Both are plain closures (attributes,
    not methods) so that the engine's hot path is a single call.

    >>> from reasoner.knowledge.facts import FactBase
    >>> g = compile_goal(Compound(">", (Var("X"), Number(3))), {})
    >>> g.holds({"X": 5}, FactBase()), g.variables
    (True, frozenset({'X'}))
    """

    term: Term
    variables: frozenset[str]
    #: Static-knowledge predicates the goal asks: (name or IRI, arity, where written).
    calls: tuple[tuple[str, int, Span | None], ...]
    solutions: Solver = field(repr=False, compare=False)
    holds: Tester = field(repr=False, compare=False)
    #: For a static-knowledge call whose arguments are all named variables: those names,
    #: and whether the call holds for their values (in that order), without an environment.
    ground: tuple[tuple[str, ...], Callable[[tuple[Value, ...], Knowledge], bool]] | None = field(
        default=None, repr=False, compare=False
    )

    def check(self, kb: Knowledge) -> None:
        """Raise :class:`RuleCompileError` naming every predicate that ``kb`` does not define.

        Args:
            kb: the knowledge the goal will run against.
        Returns:
            None; raises on the first compile, never per call.
        """
        unknown = [
            Diagnostic(f"unknown predicate '{name}/{arity}'", span)
            for name, arity, span in self.calls
            if not kb.defines(name, arity)
        ]
        if unknown:
            raise RuleCompileError(unknown)


def compile_goal(
    term: Term,
    prefixes: Mapping[str, str],
    actions: Mapping[tuple[str, int] | str, Action] | None = None,
    *,
    trace: bool = False,
) -> Goal:
    """Compile a condition term into a :class:`Goal`.

    Args:
        term: the condition (conjunction ``,``, disjunction ``;``, ``->``, ``\\+``, built-ins,
            ``rdf/3``, prefixed predicates such as ``wt:speed(S, V)``, static predicates,
            ``do(Action)``).
        prefixes: prefix -> namespace IRI (the program's; :data:`DEFAULT_PREFIXES` are added).
        actions: what ``do(Action)`` may run (:func:`reasoner.knowledge.actions.actions`;
            the built-in ones, printing to standard output, when None).
        trace: record the knowledge each solution used: every environment a solution yields
            holds, under the key :data:`FACTS`, the ``(predicate, row)`` pairs its knowledge
            calls matched, in call order (facts under ``\\+`` are not used: they are absent).
            For explanations only; the engine compiles untraced goals.
    Returns:
        The compiled goal; :class:`RuleCompileError` for an unknown prefix, a non-callable
        goal or an unknown arithmetic function.

    >>> from reasoner.knowledge.facts import FactBase
    >>> g = compile_goal(Compound("is", (Var("Y"), Compound("*", (Var("X"), Number(2))))), {})
    >>> list(g.solutions({"X": 21}, FactBase()))
    [{'X': 21, 'Y': 42}]
    """
    compiler = _Compiler({**DEFAULT_PREFIXES, **prefixes}, actions, trace)
    node = compiler.goal(term)
    return Goal(
        term=term,
        variables=frozenset(variable_names(term)),
        calls=tuple(compiler.calls),
        solutions=node.solve,
        holds=node.test,
        ground=node.ground,
    )


def used_facts(solution: Env) -> tuple[tuple[str, tuple[Value, ...]], ...]:
    """The ``(predicate, row)`` facts a traced goal's solution used (see :func:`compile_goal`).

    >>> from reasoner.knowledge.facts import FactBase
    >>> goal = compile_goal(Compound("p", (Var("X"),)), {}, trace=True)
    >>> [used_facts(s) for s in goal.solutions({}, FactBase([("p", (1,))]))]
    [(('p', (1,)),)]
    """
    return solution.get(FACTS, ())  # type: ignore[return-value]


def compile_expression(term: Term, prefixes: Mapping[str, str]) -> Expression:
    """Compile an event-head argument: arithmetic compounds are evaluated, other compounds
    become :class:`Struct` values, variables are looked up.

    Args:
        term: the argument term.
        prefixes: prefix -> namespace IRI for prefixed names.
    Returns:
        A function from an environment to the value.

    >>> compile_expression(Compound("+", (Var("X"), Number(1))), {})({"X": 1})
    2
    """
    return _Compiler({**DEFAULT_PREFIXES, **prefixes}).expression(term)


def evaluate(term: Term, env: Env, prefixes: Mapping[str, str] | None = None) -> Value:
    """Evaluate ``term`` under ``env`` as an event-head argument (see :func:`compile_expression`).

    Args:
        term: the term, e.g. ``P1 + P2`` or ``coordinates(X, Y)``.
        env: variable bindings.
        prefixes: prefixes for prefixed names (defaults only when omitted).
    Returns:
        The value; :class:`EvaluationError` for bad arithmetic, :class:`EngineError` for an
        unbound variable.

    >>> evaluate(Compound("f", (Compound("/", (Var("X"), Number(2))),)), {"X": 7})
    Struct(functor='f', args=(3.5,))
    """
    return compile_expression(term, prefixes or {})(env)


def term_value(term: Term, prefixes: Mapping[str, str]) -> Value | None:
    """The value of a ground term without evaluating arithmetic, or None if it has variables.

    >>> term_value(ListTerm((Atom("a"), Number(1))), {})
    ('a', 1)
    """
    return _Compiler({**DEFAULT_PREFIXES, **prefixes}).arg(term).get({})


def term_binder(term: Term, prefixes: Mapping[str, str]) -> Callable[[Value, Env], bool]:
    """A function unifying ``term`` with a value: it writes the bindings it makes into the
    environment it is given and says whether they agree.

    >>> env = {}
    >>> term_binder(Compound("f", (Var("X"), Atom("b"))), {})(Struct("f", (1, "b")), env), env
    (True, {'X': 1})
    """
    return _Compiler({**DEFAULT_PREFIXES, **prefixes}).arg(term).bind


# ------------------------------------------------------------------------ internals


def _unbound(name: str) -> EngineError:
    return EngineError(f"unbound variable '{name}' where a value is needed")


@dataclass(frozen=True, slots=True)
class _Arg:
    """A compiled argument: ``get`` gives its value if ground under env (else None);
    ``bind`` unifies it with a value, writing new bindings into a scratch env."""

    get: Callable[[Env], Value | None]
    bind: Callable[[Value, Env], bool]
    #: The variable's name when the argument is a named variable.
    variable: str | None = None


@dataclass(frozen=True, slots=True)
class _Node:
    """A compiled goal: ``binds`` is False when it can never add bindings (a test)."""

    solve: Solver
    test: Tester
    binds: bool
    ground: tuple[tuple[str, ...], Callable[[tuple[Value, ...], Knowledge], bool]] | None = None


def _test_node(test: Tester) -> _Node:
    def solve(env: Env, kb: Knowledge) -> Iterator[Env]:
        if test(env, kb):
            yield env

    return _Node(solve, test, binds=False)


def _solve_node(solve: Solver) -> _Node:
    def test(env: Env, kb: Knowledge) -> bool:
        return next(solve(env, kb), None) is not None

    return _Node(solve, test, binds=True)


_TRUE = _test_node(lambda env, kb: True)
_FAIL = _test_node(lambda env, kb: False)


class _Compiler:
    """Turns terms into closures; collects the static-knowledge calls it meets."""

    def __init__(
        self,
        prefixes: dict[str, str],
        actions: Mapping[tuple[str, int] | str, Action] | None = None,
        trace: bool = False,
    ) -> None:
        self.prefixes = prefixes
        self.actions = actions
        self.trace = trace
        self.calls: list[tuple[str, int, Span | None]] = []

    def error(self, message: str, term: Term) -> RuleCompileError:
        return RuleCompileError([Diagnostic(message, getattr(term, "span", None))])

    def iri(self, prefix: str, local: str, term: Term) -> str:
        if prefix not in self.prefixes:
            raise self.error(f"unknown prefix '{prefix}'", term)
        return self.prefixes[prefix] + local

    # ------------------------------------------------------------------ goals

    def goal(self, term: Term) -> _Node:
        match term:
            case Atom("true"):
                return _TRUE
            case Atom("fail") | Atom("false"):
                return _FAIL
            case Atom("nl") | Compound("write" | "print" | "writeln", (_,)):
                return self.action(term)  # ETALIS's conditions print with Prolog's goals
            case Atom(name):
                return self.call(name, (), term)
            case Compound(",", (a, b)):
                return self.conjunction(self.goal(a), self.goal(b))
            case Compound(";", (Compound("->", (c, t)), e)):
                return self.if_then_else(self.goal(c), self.goal(t), self.goal(e))
            case Compound(";", (a, b)):
                return self.disjunction(self.goal(a), self.goal(b))
            case Compound("->", (c, t)):
                return self.if_then_else(self.goal(c), self.goal(t), _FAIL)
            case Compound("do", (action,)):
                return self.action(action)
            case Compound(which, (target,)) if which in INTERVAL_GOALS:
                return self.interval(INTERVAL_GOALS[which], target)
            case Compound("\\+" | "not", (g,)):
                inner = self.goal(g).test
                return _test_node(lambda env, kb: not inner(env, kb))
            case Compound(op, (left, right)) if op in COMPARISONS:
                return self.comparison(op, left, right)
            case Compound(op, (left, right)) if op in TERM_ORDER:
                return self.term_order(op, left, right)
            case Compound("is", (left, right)):
                return self.is_(left, right)
            case Compound("=", (left, right)):
                return self.unify(left, right)
            case Compound("\\=", (left, right)):
                inner = self.unify(left, right).test
                return _test_node(lambda env, kb: not inner(env, kb))
            case Compound("==" | "\\==" as op, (left, right)):
                return self.identical(left, right, negate=op == "\\==")
            case Compound(name, args):
                return self.call(name, args, term)
            case _:
                raise self.error(f"not a callable goal: {_describe(term)}", term)

    def interval(self, key: str, target: Term) -> _Node:
        """ETALIS's ``t1(T)`` / ``t2(T)``: the start / end of the occurrence the condition is
        on (put in the environment under ``key`` by the node that runs it)."""
        bind, get = self.arg(target).bind, self.arg(target).get

        def solve(env: Env, kb: Knowledge) -> Iterator[Env]:
            if key not in env:
                raise EngineError(
                    "t1/1, t2/1 and current_datime/1 are only known in a condition on a pattern"
                )
            current = get(env)
            if current is not None:
                if current == env[key]:
                    yield env
                return
            new = dict(env)
            if bind(env[key], new):
                yield new

        return _solve_node(solve)

    def action(self, term: Term) -> _Node:
        """``do(Action)``: run the action (a conjunction runs its parts in order), succeed once."""
        if self.trace:  # explaining a match: its actions ran when it was made, never again
            return _TRUE
        match term:
            case Compound(",", (first, second)):
                return self.conjunction(self.action(first), self.action(second))
            case Atom(name):
                args: tuple[Term, ...] = ()
            case Compound(name, args):
                pass
            case _:
                raise self.error(f"not an action: {_describe(term)}", term)
        table = self.actions if self.actions is not None else action_table()
        registered = table.get(name)
        run = registered or table.get((name, len(args)))
        if run is None:
            raise self.error(
                f"unknown action '{name}/{len(args)}': the built-in actions are write/1, "
                "print/1, writeln/1, nl/0, ins_event_rule/1, del_event_rule/1, "
                "ins_static_rule/1 and del_static_rule/1; register "
                "others by name with Engine(actions=...)",
                term,
            )
        if registered is None and (name, len(args)) in PRINTING:
            shown = tuple(self.shown(a) for a in args)

            def show(env: Env, kb: Knowledge) -> bool:
                run(*(s(env) for s in shown))
                return True

            return _test_node(show)
        getters = tuple(self.arg(a).get for a in args)

        def test(env: Env, kb: Knowledge) -> bool:
            values = [get(env) for get in getters]
            if None in values:
                raise EngineError(f"unbound variable in the action {_describe(term)}")
            run(*values)
            return True

        return _test_node(test)

    def shown(self, term: Term) -> Callable[[Env], Value | Fresh]:
        """A printed argument: its value, a variable not bound yet as ``_``."""
        match term:
            case Var(name):
                return lambda env: env.get(name, FRESH)
            case Compound(functor, args):
                parts = tuple(self.shown(a) for a in args)
                return lambda env: Struct(functor, tuple(p(env) for p in parts))  # type: ignore[misc]
            case ListTerm(items, None):
                shown = tuple(self.shown(a) for a in items)
                return lambda env: tuple(p(env) for p in shown)
        get = self.arg(term).get
        return lambda env: FRESH if (value := get(env)) is None else value

    def conjunction(self, a: _Node, b: _Node) -> _Node:
        a_solve, a_test, b_solve, b_test = a.solve, a.test, b.solve, b.test
        if not a.binds:
            # A test first: no need to enumerate, just guard the second goal.
            def solve(env: Env, kb: Knowledge) -> Iterator[Env]:
                return b_solve(env, kb) if a_test(env, kb) else iter(())

            return _Node(solve, lambda env, kb: a_test(env, kb) and b_test(env, kb), b.binds)

        def solve_both(env: Env, kb: Knowledge) -> Iterator[Env]:
            for e in a_solve(env, kb):
                yield from b_solve(e, kb)

        def test_both(env: Env, kb: Knowledge) -> bool:
            return any(b_test(e, kb) for e in a_solve(env, kb))

        return _Node(solve_both, test_both, binds=True)

    def disjunction(self, a: _Node, b: _Node) -> _Node:
        a_solve, a_test, b_solve, b_test = a.solve, a.test, b.solve, b.test
        return _Node(
            lambda env, kb: chain(a_solve(env, kb), b_solve(env, kb)),
            lambda env, kb: a_test(env, kb) or b_test(env, kb),
            a.binds or b.binds,
        )

    def if_then_else(self, c: _Node, t: _Node, e: _Node) -> _Node:
        c_solve, t_solve, e_solve = c.solve, t.solve, e.solve

        def solve(env: Env, kb: Knowledge) -> Iterator[Env]:
            # Prolog's ->: commit to the condition's first solution.
            first = next(c_solve(env, kb), None)
            return t_solve(first, kb) if first is not None else e_solve(env, kb)

        def test(env: Env, kb: Knowledge) -> bool:
            return next(solve(env, kb), None) is not None

        return _Node(solve, test, binds=c.binds or t.binds or e.binds)

    def comparison(self, op: str, left: Term, right: Term) -> _Node:
        compare = COMPARISONS[op]
        match left, right:
            case Var(x), Var(y) if x != "_" and y != "_":

                def var_var(env: Env, kb: Knowledge) -> bool:
                    try:
                        return compare(env[x], env[y])
                    except KeyError as exc:
                        raise _unbound(str(exc.args[0])) from None

                return _test_node(var_var)
            case Var(x), Number(c) if x != "_":
                test = NUMERIC_TESTS[op] if c.__class__ in PLAIN_NUMBERS else compare

                def var_const(env: Env, kb: Knowledge) -> bool:
                    try:
                        value = env[x]
                    except KeyError:
                        raise _unbound(x) from None
                    if value.__class__ in PLAIN_NUMBERS:  # then the comparison itself
                        return test(value, c)
                    return compare(value, c)

                return _test_node(var_const)
        lf, rf = self.arithmetic(left), self.arithmetic(right)

        def general(env: Env, kb: Knowledge) -> bool:
            try:
                return compare(lf(env), rf(env))
            except EvaluationError:
                return False

        return _test_node(general)

    def term_order(self, op: str, left: Term, right: Term) -> _Node:
        """``@<`` and the like: the two values in the standard order of terms (unevaluated)."""
        compare, lget, rget = TERM_ORDER[op], self.arg(left).get, self.arg(right).get

        def test(env: Env, kb: Knowledge) -> bool:
            lv, rv = lget(env), rget(env)
            if lv is None or rv is None:
                raise EngineError(f"{op}: argument is not sufficiently instantiated")
            return compare(lv, rv)

        return _test_node(test)

    def is_(self, left: Term, right: Term) -> _Node:
        target, expr = self.arg(left), self.arithmetic(right)
        get, bind = target.get, target.bind

        def solve(env: Env, kb: Knowledge) -> Iterator[Env]:
            try:
                value = expr(env)
            except EvaluationError:
                return
            current = get(env)
            if current is not None:
                if current == value:
                    yield env
                return
            new = dict(env)
            if bind(value, new):
                yield new

        return _solve_node(solve)

    def unify(self, left: Term, right: Term) -> _Node:
        if (
            isinstance(left, Compound)
            and isinstance(right, Compound)
            and (left.functor, len(left.args)) == (right.functor, len(right.args))
        ):
            # f(X, b) = f(a, Y): unify argument-wise, so neither side needs to be ground.
            node = _TRUE
            for a, b in zip(left.args, right.args, strict=True):
                node = self.conjunction(node, self.unify(a, b))
            return node
        la, ra = self.arg(left), self.arg(right)

        def solve(env: Env, kb: Knowledge) -> Iterator[Env]:
            lv, rv = la.get(env), ra.get(env)
            if lv is not None and rv is not None:
                if lv == rv:
                    yield env
                return
            if lv is None and rv is None:
                raise EngineError(
                    f"'=' needs one side bound: {_describe(left)} = {_describe(right)}"
                )
            new = dict(env)
            if ra.bind(lv, new) if lv is not None else la.bind(rv, new):  # type: ignore[arg-type]
                yield new

        return _solve_node(solve)

    def identical(self, left: Term, right: Term, *, negate: bool) -> _Node:
        lget, rget = self.arg(left).get, self.arg(right).get

        def test(env: Env, kb: Knowledge) -> bool:
            lv, rv = lget(env), rget(env)
            # An unbound side is identical only to itself.
            same = left == right if lv is None or rv is None else lv == rv
            return same != negate

        return _test_node(test)

    def call(self, name: str, args: tuple[Term, ...], term: Term) -> _Node:
        compiled = tuple(self.arg(a) for a in args)
        relation = RELATIONS.get((name, len(args)))
        if relation is not None:
            return self.relation_call(relation, compiled)
        if name == "!":
            raise self.error("the cut '!' is not supported in conditions", term)
        if ":" in name and not name.startswith(":"):
            prefix, local = name.split(":", 1)
            name = self.iri(prefix, local, term)
        self.calls.append((name, len(args), getattr(term, "span", None)))
        return self.knowledge_call(name, compiled)

    def relation_call(self, relation: Relation, args: tuple[_Arg, ...]) -> _Node:
        procedure = Procedure(relation, lambda row: next(relation(row), None) is not None)
        return _matcher(lambda kb: procedure, args)

    def knowledge_call(self, name: str, args: tuple[_Arg, ...]) -> _Node:
        """A static-knowledge call: it runs the knowledge's :class:`Procedure` for ``name``."""
        arity = len(args)
        if self.trace:
            return _solve_node(
                _traced(lambda pattern, kb: kb.procedure(name, arity).solve(pattern), args, name)
            )
        return _matcher(lambda kb: kb.procedure(name, arity), args)

    # -------------------------------------------------------------- arguments

    def arg(self, term: Term) -> _Arg:
        match term:
            case Var("_"):
                return _Arg(lambda env: None, lambda value, env: True)
            case Var(name):
                return _var_arg(name)
            case Compound(functor, args):
                return _struct_arg(functor, tuple(self.arg(a) for a in args))
            case ListTerm(items, tail):
                return _list_arg(
                    tuple(self.arg(a) for a in items), None if tail is None else self.arg(tail)
                )
            case _:
                return _const_arg(self.constant(term))

    def constant(self, term: Term) -> Value:
        match term:
            case Number(value):
                return value
            case Atom("[]"):
                return ()
            case Atom(name):
                return name
            case String(value):
                return value
            case Iri(value):
                return IRI(value)
            case PName(prefix, local):
                return IRI(self.iri(prefix, local, term))
        raise self.error(f"not a constant: {_describe(term)}", term)

    # ------------------------------------------------------------- arithmetic

    def arithmetic(self, term: Term) -> Expression:
        match term:
            case Var("_"):
                raise self.error("anonymous variable '_' in arithmetic", term)
            case Var(name):

                def lookup(env: Env) -> Value:
                    try:
                        return env[name]
                    except KeyError:
                        raise _unbound(name) from None

                return lookup
            case Atom(name) if name in CONSTANTS:
                value: Value = CONSTANTS[name]
                return lambda env: value
            case Compound(functor, args):
                fn = FUNCTIONS.get((functor, len(args)))
                if fn is None:
                    raise self.error(f"unknown arithmetic function '{functor}/{len(args)}'", term)
                parts = tuple(self.arithmetic(a) for a in args)
                if len(parts) == 2:
                    a, b = parts
                    return lambda env: fn(a(env), b(env))
                if len(parts) == 1:
                    (a,) = parts
                    return lambda env: fn(a(env))
                return lambda env: fn(*(p(env) for p in parts))
            case _:
                # Atoms such as `none` are values; arithmetic on them fails at run time.
                const = self.constant(term)
                return lambda env: const

    def expression(self, term: Term) -> Expression:
        match term:
            case Compound(functor, args) if (functor, len(args)) in FUNCTIONS:
                return self.arithmetic(term)
            case Compound(functor, args):
                parts = tuple(self.expression(a) for a in args)
                return lambda env: Struct(functor, tuple(p(env) for p in parts))
            case ListTerm(items, None):
                elements = tuple(self.expression(a) for a in items)
                return lambda env: tuple(p(env) for p in elements)
            case Var(_):
                return self.arithmetic(term)
        const = self.arg(term).get({})
        if const is None:
            raise self.error(f"cannot evaluate {_describe(term)}", term)
        return lambda env: const


def _matcher(resolve: Callable[[Knowledge], Procedure], args: tuple[_Arg, ...]) -> _Node:
    """A call running the procedure ``resolve(kb)``: one solution per row matching the
    arguments; when they are all bound, a test that binds nothing.

    The procedure is resolved once and kept while the call is given the same knowledge (a
    new version, or the delta of a rule evaluation round, is asked again), so a call does
    no dispatch on names."""
    binders = tuple(a.bind for a in args)
    pattern_of = _pattern(args)
    names = tuple(a.variable for a in args if a.variable is not None)
    last: list[tuple[Knowledge | None, Procedure]] = [(None, NOTHING)]

    def procedure(kb: Knowledge) -> Procedure:
        found = resolve(kb)
        last[0] = (kb, found)  # one assignment: a concurrent caller sees a consistent pair
        return found

    def solve(env: Env, kb: Knowledge) -> Iterator[Env]:
        pattern = pattern_of(env)
        known, found = last[0]
        if known is not kb:
            found = procedure(kb)
        if None not in pattern:
            if found.holds(pattern):  # type: ignore[arg-type]
                yield env
            return
        for row in found.solve(pattern):
            new = dict(env)
            if all(bind(v, new) for bind, v in zip(binders, row, strict=True)):
                yield new

    def test(env: Env, kb: Knowledge) -> bool:
        pattern = tuple(map(env.get, names)) if len(names) == len(args) else pattern_of(env)
        if None in pattern:
            return next(solve(env, kb), None) is not None
        known, found = last[0]
        if known is not kb:
            found = procedure(kb)
        return found.holds(pattern)  # type: ignore[arg-type]

    if len(names) != len(args):
        return _Node(solve, test, binds=True)

    def ground(values: tuple[Value, ...], kb: Knowledge) -> bool:
        if None in values:  # a variable the caller has not bound
            return test({n: v for n, v in zip(names, values, strict=True) if v is not None}, kb)
        known, found = last[0]
        if known is not kb:
            found = procedure(kb)
        return found.holds(values)

    return _Node(solve, test, True, (names, ground))


def _traced(
    source: Callable[[tuple[Value | None, ...], Knowledge], Iterator[tuple[Value, ...]]],
    args: tuple[_Arg, ...],
    traced: str,
) -> Solver:
    """Solutions of a call, each carrying the row it matched under :data:`FACTS`."""
    binders = tuple(a.bind for a in args)
    pattern_of = _pattern(args)

    def solve_traced(env: Env, kb: Knowledge) -> Iterator[Env]:
        pattern = pattern_of(env)
        for row in source(pattern, kb):
            new = dict(env)
            if all(bind(v, new) for bind, v in zip(binders, row, strict=True)):
                new[FACTS] = (*env.get(FACTS, ()), (traced, row))  # type: ignore[misc]
                yield new
                if None not in pattern:
                    return

    return solve_traced


def _pattern(args: tuple[_Arg, ...]) -> Callable[[Env], tuple[Value | None, ...]]:
    """A function giving a call's pattern: each argument's value, None where unbound."""
    names = tuple(a.variable for a in args if a.variable is not None)
    if len(names) == len(args):  # only named variables (the common case): one lookup each
        return lambda env: tuple(map(env.get, names))
    getters = tuple(a.get for a in args)
    return lambda env: tuple([g(env) for g in getters])


def _const_arg(value: Value) -> _Arg:
    return _Arg(lambda env: value, lambda other, env: other == value)


def _var_arg(name: str) -> _Arg:
    def bind(value: Value, env: Env) -> bool:
        current = env.get(name)
        if current is None:
            env[name] = value
            return True
        return bool(current == value)

    return _Arg(lambda env: env.get(name), bind, name)


def _struct_arg(functor: str, args: tuple[_Arg, ...]) -> _Arg:
    def get(env: Env) -> Value | None:
        values = tuple(a.get(env) for a in args)
        return None if None in values else Struct(functor, values)  # type: ignore[arg-type]

    def bind(value: Value, env: Env) -> bool:
        return (
            isinstance(value, Struct)
            and value.functor == functor
            and len(value.args) == len(args)
            and all(a.bind(v, env) for a, v in zip(args, value.args, strict=True))
        )

    return _Arg(get, bind)


def _list_arg(items: tuple[_Arg, ...], tail: _Arg | None) -> _Arg:
    n = len(items)

    def get(env: Env) -> Value | None:
        values = tuple(a.get(env) for a in items)
        if None in values:
            return None
        if tail is None:
            return values
        rest = tail.get(env)
        return values + rest if isinstance(rest, tuple) else None

    def bind(value: Value, env: Env) -> bool:
        if not isinstance(value, tuple) or len(value) < n or (tail is None and len(value) != n):
            return False
        if not all(a.bind(v, env) for a, v in zip(items, value[:n], strict=True)):
            return False
        return tail is None or tail.bind(value[n:], env)

    return _Arg(get, bind)


def _describe(term: Term) -> str:
    match term:
        case Var(name) | Atom(name):
            return name
        case Number(value):
            return str(value)
        case String(value):
            return f'"{value}"'
        case Compound(functor, args):
            return f"{functor}/{len(args)}"
        case _:
            return type(term).__name__
