"""Hypothesis strategies for random programs and streams, shared by the differential,
provenance, parallel and Spark tests."""

from __future__ import annotations

from hypothesis import strategies as st

from reasoner.language.ast import (
    Aggregate,
    Atom,
    Binary,
    Compound,
    EventAtom,
    EventRule,
    Not,
    Number,
    Pattern,
    Program,
    Star,
    TimePoint,
    Var,
    Where,
    Window,
)
from reasoner.language.check import bound_variables
from reasoner.language.operators import OPERATORS as OPERATOR_RECORDS
from reasoner.language.parser import parse
from reasoner.runtime.events import Event

# Every operator of the registry, so that a new one is tested against the reference at once.
OPERATORS = tuple(op for op, info in OPERATOR_RECORDS.items() if not info.negation)
NEGATIONS = tuple(op for op, info in OPERATOR_RECORDS.items() if info.negation)
INPUTS = ("a", "b", "c")

terms = st.sampled_from([Var("X"), Var("Y"), Number(1)])
atoms = st.builds(lambda name, arg: EventAtom(name, (arg,)), st.sampled_from(INPUTS), terms)


def _extend(children: st.SearchStrategy[Pattern]) -> st.SearchStrategy[Pattern]:
    binary = st.builds(Binary, st.sampled_from(OPERATORS), children, children)
    # (p SEQ q STAR_TIMES) CNOT n would read as NOT(n).[p, q STAR_TIMES], which puts
    # STAR_TIMES where the language does not allow it.
    guarded = st.builds(Binary, st.sampled_from(NEGATIONS), children, children).filter(
        lambda b: not (isinstance(b.left, Binary) and isinstance(b.left.right, Star))
    )
    starred = st.builds(lambda p, q: Binary("seq", p, Star(q)), children, children)
    negation = st.builds(Not, children, children, children)
    window = st.builds(lambda p, q: Window(p, q), children, st.integers(1, 6))
    where = children.flatmap(_where)
    during_points = st.builds(
        lambda p, q1, q2: Binary("during", p, Binary("seq", TimePoint(q1), TimePoint(q1 + q2))),
        children,
        st.integers(0, 4),
        st.integers(1, 4),
    )
    return st.one_of(binary, binary, negation, guarded, starred, window, where, during_points)


def _where(p: Pattern) -> st.SearchStrategy[Pattern]:
    bound = sorted(bound_variables(p))
    if not bound:
        return st.just(p)
    test = st.builds(
        lambda v, op, n: Where(p, Compound(op, (Var(v), Number(n)))),
        st.sampled_from(bound),
        st.sampled_from(["<", ">=", "=:=", "=\\=", "@<"]),
        st.integers(0, 2),
    )
    # Z = v + n, or Z = n (a test when p binds Z already)
    binding = st.builds(
        lambda v, n, arithmetic: Where(
            p,
            Compound("is", (Var("Z"), Compound("+", (Var(v), Number(n)))))
            if arithmetic
            else Compound("=", (Var("Z"), Number(n))),
        ),
        st.sampled_from(bound),
        st.integers(0, 1),
        st.booleans(),
    )
    return st.one_of(test, test, binding)


patterns = st.recursive(atoms, _extend, max_leaves=5)


@st.composite
def programs(draw: st.DrawFn) -> Program:
    rules = []
    for index in range(draw(st.integers(1, 3))):
        body = draw(patterns)
        if index and draw(st.booleans()):
            # use an earlier rule's head, so that rules build on rules
            earlier = EventAtom(f"d{draw(st.integers(0, index - 1))}", (Var("X"),))
            body = Binary(draw(st.sampled_from(OPERATORS)), body, earlier)
        bound = sorted(bound_variables(body))
        # Every head has arity 1 so that later rules may use it with one argument.
        head = EventAtom(f"d{index}", (Var(bound[0]),) if bound else (Number(0),))
        rules.append(EventRule(head, body))
    return Program(tuple(rules))


@st.composite
def streams(draw: st.DrawFn, ties: bool | None = False) -> list[Event]:
    """Up to 9 events ending at 0 to 8, or with ``ties`` 3 to 9, each ending with the one
    before it or just after: where the order of simultaneous events must not matter (None:
    one draw in three)."""
    events = []
    if ties is None:
        ties = draw(st.sampled_from([False, False, True]))
    end = 0
    for _ in range(draw(st.integers(3 if ties else 0, 9))):
        end = end + draw(st.sampled_from([0, 0, 1])) if ties else draw(st.integers(0, 8))
        start = end - draw(st.sampled_from([0, 0, 0, 1, 2]))
        events.append(
            Event(
                draw(st.sampled_from(INPUTS)), (draw(st.sampled_from([1, 2])),), max(start, 0), end
            )
        )
    return sorted(events, key=lambda e: e.end)


def _single_rule(body: Pattern) -> Program:
    bound = sorted(bound_variables(body))
    head = EventAtom("d0", (Var(bound[0]),) if bound else (Number(0),))
    return Program((EventRule(head, body),))


_operands = st.one_of(atoms, atoms, patterns)
#: Programs whose top operator is one interval operator or NOT over small operands (where
#: a goal freed a tick early shows most often), and sometimes any random program.
edge_programs = st.one_of(
    st.builds(
        lambda op, p, q: _single_rule(Binary(op, p, q)),
        st.sampled_from(OPERATORS),
        _operands,
        _operands,
    ),
    st.builds(lambda n, p, q: _single_rule(Not(n, p, q)), atoms, _operands, _operands),
    programs(),
)


@st.composite
def forall_programs(draw: st.DrawFn) -> Program:
    """One rule whose top operator is FORALL_SEQ over small operands: with :func:`streams`,
    occurrences of its second operand end together, and must all take the waiting first ones."""
    body = Binary("forall_seq", draw(_operands), draw(_operands))
    # the head shows the second operand's own values, when it has some: that is where
    # occurrences ending together differ
    own = sorted(bound_variables(body.right) - bound_variables(body.left))
    if own:
        return Program((EventRule(EventAtom("d0", (Var(draw(st.sampled_from(own))),)), body),))
    return _single_rule(body)


@st.composite
def edge_streams(draw: st.DrawFn) -> tuple[int, list[Event]]:
    """A longest input span and a stream where most interval events last exactly that long:
    the partners at the edge of what garbage collection may free (``now - max_span``)."""
    max_span = draw(st.integers(1, 3))
    events = []
    for _ in range(draw(st.integers(0, 9))):
        end = draw(st.integers(0, 8))
        span = draw(st.sampled_from([0, max_span, max_span, max_span - 1]))
        name = draw(st.sampled_from(INPUTS))
        events.append(Event(name, (draw(st.sampled_from([1, 1, 2])),), max(end - span, 0), end))
    return max_span, sorted(events, key=lambda e: e.end)


# Partitionable programs (keyed by K) and their streams: the parallel and Spark tests.
KEY = Var("K")
keyed_atoms = st.builds(
    lambda name, arg: EventAtom(name, (KEY, arg)),
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from([Var("X"), Var("Y"), Number(1)]),
)


def _extend_keyed(children: st.SearchStrategy[Pattern]) -> st.SearchStrategy[Pattern]:
    return st.one_of(
        st.builds(Binary, st.sampled_from(OPERATORS), children, children),
        st.builds(Binary, st.sampled_from(NEGATIONS), children, children),
        st.builds(Not, children, children, children),
        st.builds(Window, children, st.integers(1, 6)),
        children.flatmap(_where),
        st.builds(
            lambda p, q: Binary("during", p, Binary("seq", TimePoint(q), TimePoint(q + 3))),
            children,
            st.integers(0, 4),
        ),
    )


keyed_patterns = st.recursive(keyed_atoms, _extend_keyed, max_leaves=4)


@st.composite
def partitionable_programs(draw: st.DrawFn) -> Program:
    """Rules keyed by K (building on each other), and maybe a global rule over them."""
    rules = []
    for index in range(draw(st.integers(1, 3))):
        body = draw(keyed_patterns)
        if index and draw(st.booleans()):
            earlier = EventAtom(f"d{draw(st.integers(0, index - 1))}", (KEY, Var("X")))
            body = Binary(draw(st.sampled_from(OPERATORS)), body, earlier)
        rest = sorted(bound_variables(body) - {"K"})
        value = Var(rest[0]) if rest else Number(0)
        rules.append(EventRule(EventAtom(f"d{index}", (KEY, value)), body))
    derived = len(rules)
    if draw(st.booleans()):  # a global rule: joins different keys on the value
        first, second = (EventAtom("d0", (Var(k), Var("V"))) for k in ("K1", "K2"))
        rules.append(
            EventRule(
                EventAtom("g", (Var("V"),)), Binary("and", first, second), **draw(_ordering())
            )
        )
        if draw(st.booleans()):  # a global chain: meets keyed events derived with g's
            keyed = EventAtom(f"d{len(rules) - 2}", (Var("K"), Var("V")))
            operator = draw(st.sampled_from(["and", "seq", "equals"]))
            body = Binary(operator, EventAtom("g", (Var("V"),)), keyed)
            rules.append(EventRule(EventAtom("h", (Var("K"), Var("V"))), body, **draw(_ordering())))
    if draw(st.booleans()):  # a global aggregate over every key (reads in arrival order)
        last = EventAtom(f"d{draw(st.integers(0, derived - 1))}", (Var("_K"), Var("V")))
        function = draw(st.sampled_from([Atom("count"), Compound("max", (Var("V"),))]))
        window = draw(st.sampled_from([None, ("count", 2), ("time", 3)]))
        body = Aggregate(function, last, Var("R"), window)
        rules.append(EventRule(EventAtom("n", (Var("R"),)), body))
    return Program(tuple(rules))


@st.composite
def _ordering(draw: st.DrawFn) -> dict[str, object]:
    """A global rule's own consumption policy (recent and chronological read in arrival
    order), or the program's."""
    policy = draw(st.sampled_from([None, "recent", "chronological"]))
    return {} if policy is None else {"properties": (("consumption_policy", Atom(policy)),)}


@st.composite
def keyed_streams(draw: st.DrawFn) -> list[Event]:
    events = []
    for _ in range(draw(st.integers(0, 14))):
        end = draw(st.integers(0, 9))
        start = max(end - draw(st.sampled_from([0, 0, 0, 1, 2])), 0)
        name = draw(st.sampled_from(["a", "b", "c"]))
        args = (draw(st.integers(1, 4)), draw(st.sampled_from([1, 2])))
        events.append(Event(name, args, start, end))
    return sorted(events, key=lambda e: e.end)


#: Static rules for WHERE conditions: answered on demand (comparisons, negation, a
#: disjunction), materialised (recursion over facts), or both in one body.
STATIC_RULES = """
low(X) :- X < 2.
one(1).
notone(X) :- \\+ one(X).
lt(X, Y) :- X < Y.
step(0, 1). step(1, 2).
reach(X, Y) :- step(X, Y).
reach(X, Z) :- step(X, Y), reach(Y, Z).
mix(X, Y) :- reach(X, Y), \\+ low(Y) ; X =:= Y.
"""
#: The same predicates computed directly, over every value a stream's events and WHERE
#: bindings reach (the arguments are 1 and 2, bindings add 0 or 1, constants are 0 to 2).
_VALUES = range(-1, 6)
_REACH = {(0, 1), (1, 2), (0, 2)}
STATIC_ANSWERS: dict[str, set[tuple[int, ...]]] = {
    "low": {(x,) for x in _VALUES if x < 2},
    "notone": {(x,) for x in _VALUES if x != 1},
    "lt": {(x, y) for x in _VALUES for y in _VALUES if x < y},
    "reach": _REACH,
    "mix": {(x, y) for x in _VALUES for y in _VALUES if (x, y) in _REACH and y >= 2 or x == y},
}


@st.composite
def knowledge_programs(draw: st.DrawFn) -> Program:
    """:func:`programs` whose rules have a WHERE calling one of :data:`STATIC_RULES` (when
    their pattern binds a variable)."""
    rules = []
    for rule in draw(programs()).event_rules:
        bound = sorted(bound_variables(rule.body))
        if bound:
            name = draw(st.sampled_from(sorted(STATIC_ANSWERS)))
            arity = len(next(iter(STATIC_ANSWERS[name])))
            values = st.sampled_from([*map(Var, bound), Number(0), Number(2)])
            args = draw(st.lists(values, min_size=arity, max_size=arity))
            rule = EventRule(rule.head, Where(rule.body, Compound(name, tuple(args))))
        rules.append(rule)
    return Program((*rules, *parse(STATIC_RULES).statements))
