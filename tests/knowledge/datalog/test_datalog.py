import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasoner.errors import EngineError, RuleCompileError
from reasoner.knowledge.datalog import (
    DerivedKnowledge,
    Model,
    evaluate,
    evaluate_naive,
    prepare,
)
from reasoner.knowledge.facts import FactBase
from reasoner.language.ast import Atom, Compound, Number, StaticRule, Term, Var

X, Y, Z = Var("X"), Var("Y"), Var("Z")


def c(functor: str, *args: Term) -> Compound:
    return Compound(functor, args)


def fact(functor: str, *names: str) -> StaticRule:
    return StaticRule(c(functor, *(Atom(n) for n in names)))


def rows(model: Model) -> dict[tuple[str, int], set[tuple]]:
    return {k: set(r) for k, r in model.items()}


PATH = [
    StaticRule(c("path", X, Y), (c("edge", X, Y),)),
    StaticRule(c("path", X, Z), (c("path", X, Y), c("edge", Y, Z))),
]


def test_transitive_closure_and_strata_dump() -> None:
    program = [fact("edge", "a", "b"), fact("edge", "b", "c"), *PATH]
    strata = prepare(program, {})
    assert strata.dump() == (
        "stratum 0: edge/2 (materialised)\n"
        "  edge/2 <- [] safe\n"
        "  edge/2 <- [] safe\n"
        "stratum 1: path/2 (materialised, recursive)\n"
        "  path/2 <- [edge/2] safe\n"
        "  path/2 <- [path/2, edge/2] safe\n"
    )
    model = evaluate(strata, FactBase(), {})
    assert set(model[("path", 2)]) == {("a", "b"), ("b", "c"), ("a", "c")}


def test_stratified_negation_reads_complete_lower_stratum() -> None:
    program = [
        fact("edge", "a", "b"),
        fact("edge", "b", "c"),
        *PATH,
        StaticRule(c("node", X), (c("edge", X, Var("_")),)),
        StaticRule(c("node", X), (c("edge", Var("_"), X),)),
        StaticRule(c("cut", X, Y), (c("node", X), c("node", Y), c("\\+", c("path", X, Y)))),
    ]
    model = evaluate(prepare(program, {}), FactBase(), {})
    assert ("a", "c") not in model[("cut", 2)] and ("c", "a") in model[("cut", 2)]
    assert len(model[("cut", 2)]) == 9 - 3


def test_cycle_through_negation_is_named() -> None:
    program = [
        StaticRule(c("p", X), (c("q", X),)),
        StaticRule(c("q", X), (c("r", X), c("\\+", c("p", X)))),
    ]
    with pytest.raises(RuleCompileError, match=r"cycle through negation: q/1 -> p/1 -> q/1"):
        prepare(program, {})


def test_on_demand_function_like_rule() -> None:
    # getRad from seed 004's distance rule: not range-restricted, answered top-down.
    rad = StaticRule(
        c("getRad", Var("Deg"), Var("Rad")),
        (
            c("is", Var("T"), c("*", Var("Deg"), Atom("pi"))),
            c("is", Var("Rad"), c("/", Var("T"), Number(180))),
        ),
    )
    classify = [
        StaticRule(c("shade", X, Atom("caution")), (c(">=", X, Number(80)), c("<", X, Number(90)))),
        StaticRule(c("shade", X, Atom("danger")), (c(">=", X, Number(90)),)),
    ]
    strata = prepare([rad, *classify], {})
    assert "getRad/2 <- [builtin, builtin] on-demand" in strata.dump()
    kb = DerivedKnowledge(FactBase(), evaluate(strata, FactBase(), {}), strata, {})
    assert list(kb.solve("getRad", (180, None))) == [(180, pytest.approx(3.141592653589793))]
    assert list(kb.solve("shade", (85, None))) == [(85, "caution")]
    assert list(kb.solve("shade", (95, "danger"))) == [(95, "danger")]
    assert list(kb.solve("shade", (50, None))) == []
    with pytest.raises(EngineError, match="unbound variable 'Deg'"):
        list(kb.solve("getRad", (None, None)))


def test_on_demand_rule_with_an_anonymous_head_argument_matches_any_value() -> None:
    # big(X, _) :- X > 1: the second argument is whatever the caller asks about.
    rule = StaticRule(c("big", X, Var("_")), (c(">", X, Number(1)),))
    strata = prepare([rule], {})
    kb = DerivedKnowledge(FactBase(), evaluate(strata, FactBase(), {}), strata, {})
    assert list(kb.solve("big", (2, "anything"))) == [(2, "anything")]
    assert list(kb.solve("big", (0, "anything"))) == []


def test_materialised_rule_calls_on_demand_rule() -> None:
    program = [
        StaticRule(c("double", X, Y), (c("is", Y, c("*", X, Number(2))),)),
        StaticRule(c("reading", Atom("s1"), Number(21))),
        StaticRule(c("doubled", X, Y), (c("reading", X, Z), c("double", Z, Y))),
    ]
    model = evaluate(prepare(program, {}), FactBase(), {})
    assert set(model[("doubled", 2)]) == {("s1", 42)}


def test_recursive_rule_must_be_range_restricted() -> None:
    program = [StaticRule(c("p", X), (c("p", Y), c("<", X, Y)))]
    with pytest.raises(RuleCompileError, match="not range-restricted"):
        prepare(program, {})


def test_prefixed_heads_resolve_and_unknown_prefix_fails() -> None:
    program = [StaticRule(c("wt:near", Atom("a"), Atom("b")))]
    model = evaluate(prepare(program, {"wt": "http://w/"}), FactBase(), {})
    assert set(model) == {("http://w/near", 2)}
    with pytest.raises(RuleCompileError, match="unknown prefix 'zz'"):
        prepare([StaticRule(c("zz:p", Atom("a")))], {})


# ----------------------------------------------------------- semi-naive == naive (oracle)

NAMES = ["a", "b", "c", "d"]
PREDICATES = [("e", 2), ("f", 1), ("p", 2), ("q", 2), ("r", 1)]
IDB = ["p", "q", "r"]
VARS = [X, Y, Z]


@st.composite
def programs(draw: st.DrawFn) -> list[StaticRule]:
    rules = [fact("e", draw(st.sampled_from(NAMES)), draw(st.sampled_from(NAMES)))]
    rules += [
        fact("e", a, b)
        for a, b in draw(st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(NAMES))))
    ]
    rules += [fact("f", a) for a in draw(st.lists(st.sampled_from(NAMES), max_size=3))]
    for _ in range(draw(st.integers(1, 5))):
        head_name = draw(st.sampled_from(IDB))
        arity = 1 if head_name == "r" else 2
        body: list[Term] = []
        for _ in range(draw(st.integers(1, 3))):
            name, n = draw(st.sampled_from(PREDICATES))
            body.append(c(name, *(draw(st.sampled_from(VARS)) for _ in range(n))))
        bound = sorted({v.name for g in body for v in g.args}, reverse=True)  # type: ignore[union-attr]
        head = c(head_name, *(Var(draw(st.sampled_from(bound))) for _ in range(arity)))
        if draw(st.booleans()):
            # negation on a lower predicate only (EDB), so every program is stratifiable
            name, n = draw(st.sampled_from([("e", 2), ("f", 1)]))
            body.append(c("\\+", c(name, *(Var(draw(st.sampled_from(bound))) for _ in range(n)))))
        rules.append(StaticRule(head, tuple(body)))
    return rules


@settings(max_examples=150, deadline=None)
@given(programs())
def test_semi_naive_equals_naive(program: list[StaticRule]) -> None:
    strata = prepare(program, {})
    assert rows(evaluate(strata, FactBase(), {})) == rows(evaluate_naive(strata, FactBase(), {}))
