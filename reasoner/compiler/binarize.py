"""Binarization: event patterns -> a shared network of two-input nodes.

Each rule body becomes a tree of :mod:`~reasoner.compiler.network` nodes, left-associative as
parsed. On the way down, WHERE conjuncts sink to the lowest node that binds all their
variables and windows fuse into the operator node they bound, so a candidate pair is checked
once, where it forms. Two sub-patterns that are equal up to variable names (and carry the
same conditions, window and policy) become one node, used by every rule that contains them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass, replace

from reasoner.compiler.network import (
    Clock,
    Expand,
    Filter,
    Fold,
    Guard,
    Join,
    Negation,
    NodeSpec,
    Source,
    Union,
)
from reasoner.errors import Diagnostic, RuleCompileError
from reasoner.language.aggregates import aggregate_function, group_variables
from reasoner.language.ast import (
    INTERVAL_GOALS,
    Aggregate,
    Atom,
    Binary,
    Compound,
    EventAtom,
    Multiply,
    Not,
    Pattern,
    Star,
    Term,
    TimePoint,
    Var,
    Where,
    Window,
    dump,
    variable_names,
)
from reasoner.language.check import bound_variables
from reasoner.language.operators import OPERATORS, Operator
from reasoner.values import Time


def conjuncts(condition: Term) -> tuple[Term, ...]:
    """Split ``A, B, C`` into its conjuncts."""
    if isinstance(condition, Compound) and condition.functor == "," and len(condition.args) == 2:
        return conjuncts(condition.args[0]) + conjuncts(condition.args[1])
    return (condition,)


def _rename(node: object, mapping: dict[str, str]) -> object:
    """The node with every named variable renamed through ``mapping`` (extended on the way)."""
    match node:
        case Var(name):
            if name == "_":
                return node
            return Var(mapping.setdefault(name, f"V{len(mapping)}"))
        case tuple():
            return tuple(_rename(x, mapping) for x in node)
        case _ if is_dataclass(node) and not isinstance(node, type):
            changes = {
                f.name: _rename(getattr(node, f.name), mapping)
                for f in fields(node)
                if f.name != "span"
            }
            return replace(node, **changes)
        case _:
            return node


def conjuncts_by_local(parts: tuple[Term, ...], bound: frozenset[str]) -> tuple[Term, ...]:
    """Conjuncts that share a variable the pattern does not bind (a value one conjunct finds
    for another, as in ``f(X, Y), Y > 1``) joined back into one condition, so they are tested
    together; the others stay apart, to be pushed down on their own."""
    groups: list[tuple[set[str], list[int]]] = []  # (local variables, conjunct indexes)
    for index, part in enumerate(parts):
        names, members = set(variable_names(part)) - bound, [index]
        for group in [g for g in groups if g[0] & names]:
            groups.remove(group)
            names |= group[0]
            members += group[1]
        groups.append((names, members))
    return tuple(
        conjunction([parts[i] for i in sorted(members)])
        for _, members in sorted(groups, key=lambda g: min(g[1]))
    )


def conjunction(parts: list[Term]) -> Term:
    """``A, B, C`` from its conjuncts (at least one)."""
    term = parts[-1]
    for part in reversed(parts[:-1]):
        term = Compound(",", (part, term))
    return term


def reads_interval(condition: Term) -> bool:
    """Whether a condition calls ETALIS's ``t1/1``, ``t2/1`` or ``current_datime/1`` (the
    occurrence's interval)."""
    match condition:
        case Compound(name, (_,)) if name in INTERVAL_GOALS:
            return True
        case Compound(_, args):
            return any(reads_interval(a) for a in args if isinstance(a, Compound))
    return False


def binding_condition(inner: Pattern, condition: Term) -> Multiply | None:
    """``inner WHERE condition`` as EVENT_MULTIPLY when the condition binds a variable the
    pattern does not (one occurrence per solution), else None. The conjuncts that only test
    the pattern's variables stay a WHERE below it, to be pushed down as usual; actions keep
    their place among the goals.

    >>> from reasoner.language.parser import parse
    >>> body = parse("c(Id, S) <- bid(Id, P) WHERE (P > 1, status(Id, S)).").event_rules[0].body
    >>> from reasoner.language.printer import to_source
    >>> print(to_source(binding_condition(body.pattern, body.condition)))
    bid(Id, P) WHERE P > 1 EVENT_MULTIPLY status(Id, S)
    """
    bound = bound_variables(inner)
    if bound_variables(Where(inner, condition)) == bound:
        return None
    parts = conjuncts(condition)
    tests = [c for c in parts if set(variable_names(c)) <= bound and not _is_action(c)]
    rest = [c for c in parts if c not in tests]
    if tests:
        inner = Where(inner, conjunction(tests))
    return Multiply(inner, conjunction(rest))


@dataclass(frozen=True, slots=True)
class Context:
    """What a sub-pattern's node depends on beyond its text: the consumption policy and the
    tightest window enclosing it (FNOT's memory depends on it), so both are in the sharing key."""

    policy: str
    enclosing: Time | None = None

    def within(self, window: Time | None) -> Context:
        if window is None or (self.enclosing is not None and self.enclosing <= window):
            return self
        return Context(self.policy, window)


class Binarizer:
    """Builds nodes for the patterns of one batch of rules, sharing equal sub-patterns.

    Args:
        first_id: the id of the first node created (networks grow when rules are added).
    """

    def __init__(self, first_id: int = 0) -> None:
        self.nodes: list[NodeSpec] = []
        self._next = first_id
        # sharing key -> (node id, node variables renamed canonically)
        self._shared: dict[str, tuple[int, tuple[str, ...]]] = {}

    @property
    def next_id(self) -> int:
        """The id the next node created gets."""
        return self._next

    def compile(self, pattern: Pattern, policy: str) -> tuple[int, tuple[str, ...]]:
        """Compile a rule body.

        Returns:
            The id of the node producing the body's occurrences and the names (in the
            caller's variables) of the values it produces, in order.
        """
        return self._pattern(pattern, (), None, Context(policy))

    # ----------------------------------------------------------------- sharing

    def _pattern(
        self, p: Pattern, conds: tuple[Term, ...], window: Time | None, ctx: Context
    ) -> tuple[int, tuple[str, ...]]:
        if ctx.policy != "unrestricted":
            # Only eligible occurrences are chosen: every enclosing window bounds every
            # sub-pattern's occurrences (docs/semantics.md, "Consumption policies").
            window = ctx.within(window).enclosing
        mapping: dict[str, str] = {}
        canon = _rename((p, conds), mapping)
        text = dump(canon)
        # Only FNOT's memory depends on the enclosing window; elsewhere it must not split
        # sharing (a source under a window is the same source).
        enclosing = ctx.enclosing if "op=fnot" in text else None
        key = f"{ctx.policy}|{enclosing}|{window}|{text}"
        if ctx.policy != "unrestricted" and not _bare_leaf(p, conds, window):
            # Under recent and chronological each operator occurs once per place it is
            # written: its place decides when it sees an event (docs/semantics.md).
            key += f"|{self._next}"
        if key not in self._shared:
            node_id, names = self._build(p, conds, window, ctx)
            self._shared[key] = (node_id, tuple(mapping[n] for n in names))
            return node_id, names
        node_id, canon_names = self._shared[key]
        inverse = {c: n for n, c in mapping.items()}
        return node_id, tuple(inverse[c] for c in canon_names)

    def _add(self, make: type, **kwargs: object) -> int:
        node_id = self._next
        self._next += 1
        self.nodes.append(make(id=node_id, **kwargs))
        return node_id

    # ---------------------------------------------------------------- building

    def _build(
        self, p: Pattern, conds: tuple[Term, ...], window: Time | None, ctx: Context
    ) -> tuple[int, tuple[str, ...]]:
        match p:
            case Where(inner, condition) if reads_interval(condition):
                # t1/t2 read the occurrence's interval, which the Expand node gives goals.
                return self._pattern(Multiply(inner, condition), conds, window, ctx)
            case Where(inner, condition):
                binding = binding_condition(inner, condition)
                if binding is not None:
                    return self._pattern(binding, conds, window, ctx)
                local = conjuncts_by_local(conjuncts(condition), bound_variables(inner))
                # The inner condition first: an enclosing one (an action) runs after it.
                return self._pattern(inner, local + conds, window, ctx)
            case Window(inner, size):
                tighter = size if window is None else min(window, size)
                return self._pattern(inner, conds, tighter, ctx)
            case Binary("or", left, right):
                return self._union(left, right, conds, window, ctx)
            case Binary("seq", first, Star(repeated)):
                # ETALIS's STAR_TIMES: zero repetitions (first alone) or first SEQ repeated,
                # the interval ending with the last repetition; binds what first binds.
                rewritten = Binary("or", first, Binary("seq", first, repeated))
                return self._pattern(rewritten, conds, window, ctx)
            case Binary("seq", first, Aggregate() as aggregate):
                return self._started_aggregate(first, aggregate, conds, window, ctx)
            case Binary("cnot", Binary("seq", first, second), negated):
                # ETALIS: a sequence guarded by cnot is NOT(negated).[first, second].
                return self._pattern(Not(negated, first, second), conds, window, ctx)
            case Binary(op, left, right) if OPERATORS[op].negation:
                return self._guard(op, left, right, conds, window, ctx)
            case Binary(op, left, right) if OPERATORS[op].interval is not None:
                return self._join(op, left, right, conds, window, ctx)
            case Not(negated, left, right):
                return self._negation(negated, left, right, conds, window, ctx)
        node_id, names = self._leaf(p, ctx.within(window))
        if conds or (window is not None and not isinstance(p, TimePoint)):
            node_id = self._add(
                Filter, input=node_id, variables=names, conditions=conds, window=window
            )
        return node_id, names

    def _union(
        self,
        left: Pattern,
        right: Pattern,
        conds: tuple[Term, ...],
        window: Time | None,
        ctx: Context,
    ) -> tuple[int, tuple[str, ...]]:
        lid, lvars = self._pattern(left, conds, window, ctx)
        rid, rvars = self._pattern(right, conds, window, ctx)
        out = tuple(v for v in lvars if v in rvars)
        return self._add(
            Union,
            left=lid,
            right=rid,
            variables=out,
            left_projection=tuple(lvars.index(v) for v in out),
            right_projection=tuple(rvars.index(v) for v in out),
        ), out

    def _started_aggregate(
        self,
        first: Pattern,
        aggregate: Aggregate,
        conds: tuple[Term, ...],
        window: Time | None,
        ctx: Context,
    ) -> tuple[int, tuple[str, ...]]:
        # ETALIS's aggregate since a start: one aggregate per occurrence of first, joined
        # with the items on the variables they share. Conditions on first alone go down;
        # the rest (on the result) and the window filter the output.
        inner_ctx = ctx.within(window)
        lbound = bound_variables(first)
        down = tuple(c for c in conds if set(variable_names(c)) <= lbound and not _is_action(c))
        here = tuple(c for c in conds if c not in down)
        sid, svars = self._pattern(first, down, None, inner_ctx)
        iid, ivars = self._pattern(aggregate.pattern, (), None, inner_ctx)
        name, argument = aggregate_function(aggregate.function)
        shared = [v for v in svars if v in ivars]
        out = svars + (aggregate.result.name,)
        node_id = self._add(
            Fold,
            input=iid,
            variables=out,
            function=name,
            value=None if argument is None else ivars.index(argument),
            group=tuple(ivars.index(v) for v in shared),
            window=aggregate.window,
            start=sid,
            start_key=tuple(svars.index(v) for v in shared),
            policy=ctx.policy,
        )
        if here or window is not None:
            node_id = self._add(
                Filter, input=node_id, variables=out, conditions=here, window=window
            )
        return node_id, out

    def _guard(
        self,
        op: Operator,
        left: Pattern,
        right: Pattern,
        conds: tuple[Term, ...],
        window: Time | None,
        ctx: Context,
    ) -> tuple[int, tuple[str, ...]]:
        # The output is the left occurrence itself, so conditions and the window apply to
        # the left side; actions run on what passes the guard.
        inner_ctx = ctx.within(window)
        acts = tuple(c for c in conds if _is_action(c))
        tests = tuple(c for c in conds if not _is_action(c))
        lid, lvars = self._pattern(left, tests, window, ctx)
        nid, nvars = self._pattern(right, (), None, inner_ctx)
        blocker = tuple((lvars.index(v), nvars.index(v)) for v in nvars if v in lvars)
        node_id = self._add(
            Guard,
            op=op,
            input=lid,
            negated=nid,
            variables=lvars,
            blocker_key=blocker,
            memory=inner_ctx.enclosing if op == "fnot" else None,
        )
        if acts:
            node_id = self._add(
                Filter, input=node_id, variables=lvars, conditions=acts, window=None
            )
        return node_id, lvars

    def _join(
        self,
        op: Operator,
        left: Pattern,
        right: Pattern,
        conds: tuple[Term, ...],
        window: Time | None,
        ctx: Context,
    ) -> tuple[int, tuple[str, ...]]:
        inner_ctx = ctx.within(window)
        here, lconds, rconds = _split(conds, left, right)
        above: tuple[Term, ...] = ()
        if op == "forall_seq":
            # ETALIS consumes before it checks the rule's conditions: only those on the
            # first operand alone (which decide whether it is stored) go below.
            above, here, rconds = tuple(c for c in conds if c not in lconds), (), ()
        lid, lvars = self._pattern(left, lconds, None, inner_ctx)
        rid, rvars = self._pattern(right, rconds, None, inner_ctx)
        out, lkey, rkey, rest = _join_layout(lvars, rvars)
        node_id = self._add(
            Join,
            op=op,
            left=lid,
            right=rid,
            variables=out,
            left_key=lkey,
            right_key=rkey,
            right_rest=rest,
            conditions=here,
            window=window,
            policy=ctx.policy,
        )
        if above:
            node_id = self._add(Filter, input=node_id, variables=out, conditions=above, window=None)
        return node_id, out

    def _negation(
        self,
        negated: Pattern,
        left: Pattern,
        right: Pattern,
        conds: tuple[Term, ...],
        window: Time | None,
        ctx: Context,
    ) -> tuple[int, tuple[str, ...]]:
        inner_ctx = ctx.within(window)
        here, lconds, rconds = _split(conds, left, right)
        nid, nvars = self._pattern(negated, (), None, inner_ctx)
        lid, lvars = self._pattern(left, lconds, None, inner_ctx)
        rid, rvars = self._pattern(right, rconds, None, inner_ctx)
        out, lkey, rkey, rest = _join_layout(lvars, rvars)
        blocker = tuple((out.index(v), nvars.index(v)) for v in nvars if v in out)
        return self._add(
            Negation,
            negated=nid,
            left=lid,
            right=rid,
            variables=out,
            left_key=lkey,
            right_key=rkey,
            right_rest=rest,
            blocker_key=blocker,
            conditions=here,
            window=window,
            policy=ctx.policy,
        ), out

    def _leaf(self, p: Pattern, ctx: Context) -> tuple[int, tuple[str, ...]]:
        match p:
            case EventAtom(name, args):
                names = tuple(variable_names(*args))
                return self._add(Source, name=name, args=args, variables=names), names
            case TimePoint(value):
                return self._add(Clock, time=value), ()
            case Multiply(inner, goal):
                iid, ivars = self._pattern(inner, (), None, ctx)
                names = ivars + tuple(v for v in variable_names(goal) if v not in ivars)
                return self._add(Expand, input=iid, variables=names, goal=goal), names
            case Aggregate(function, items, result, sliding):
                # A sliding aggregate per group: every variable of the items but the
                # aggregated one.
                iid, ivars = self._pattern(items, (), None, ctx)
                name, argument = aggregate_function(function)
                group = group_variables(p, frozenset(ivars))
                return self._add(
                    Fold,
                    input=iid,
                    variables=group + (result.name,),
                    function=name,
                    value=None if argument is None else ivars.index(argument),
                    group=tuple(ivars.index(v) for v in group),
                    window=sliding,
                ), group + (result.name,)
            case Binary(op):
                raise RuleCompileError(
                    [Diagnostic(f"operator '{op}' is not supported by the engine yet", p.span)]
                )
        raise TypeError(f"not a pattern: {p!r}")


def _bare_leaf(p: Pattern, conds: tuple[Term, ...], window: Time | None) -> bool:
    """Whether ``p`` is an event or a time point with nothing to check (a stateless source)."""
    return isinstance(p, EventAtom | TimePoint) and not conds and window is None


def _split(
    conds: tuple[Term, ...], left: Pattern, right: Pattern
) -> tuple[tuple[Term, ...], tuple[Term, ...], tuple[Term, ...]]:
    """Send each conjunct to the side that binds all its variables, if one does; an action
    (``do(Action)``) stays here: it runs when this pattern is detected, not a part of it."""
    lbound, rbound = bound_variables(left), bound_variables(right)
    here: list[Term] = []
    lconds: list[Term] = []
    rconds: list[Term] = []
    for c in conds:
        vs = set(variable_names(c))
        if _is_action(c):
            here.append(c)
        elif vs <= lbound:
            lconds.append(c)
        elif vs <= rbound:
            rconds.append(c)
        else:
            here.append(c)
    return tuple(here), tuple(lconds), tuple(rconds)


def _is_action(condition: Term) -> bool:
    """``do(Action)`` or a printing goal (``write/1``, ``print/1``, ``writeln/1``, ``nl``)."""
    if isinstance(condition, Atom):
        return condition.name == "nl"
    return isinstance(condition, Compound) and (condition.functor, len(condition.args)) in {
        ("do", 1),
        ("write", 1),
        ("print", 1),
        ("writeln", 1),
    }


def _join_layout(
    lvars: tuple[str, ...], rvars: tuple[str, ...]
) -> tuple[tuple[str, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Output variables (left's, then right's new ones), key positions, right's rest."""
    shared = [v for v in lvars if v in rvars]
    rest = tuple(i for i, v in enumerate(rvars) if v not in lvars)
    out = lvars + tuple(rvars[i] for i in rest)
    return (
        out,
        tuple(lvars.index(v) for v in shared),
        tuple(rvars.index(v) for v in shared),
        rest,
    )
