import pytest

from reasoner.errors import EngineError, RuleCompileError
from reasoner.knowledge.facts import FactBase
from reasoner.knowledge.goals import compile_goal, evaluate, term_value
from reasoner.language.ast import (
    Atom,
    Compound,
    Iri,
    ListTerm,
    Number,
    PName,
    Span,
    String,
    Var,
)
from reasoner.values import IRI, Struct

WT = "http://ex.org/wt#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
X, Y, Z, S, V = (Var(n) for n in "XYZSV")


def c(functor, *args):
    return Compound(functor, tuple(args))


def n(value):
    return Number(value)


KB = FactBase(
    [
        ("edge", ("a", "b")),
        ("edge", ("b", "c")),
        ("edge", ("c", "d")),
        ("station", ("s1", Struct("loc", (40.0, -111.0)))),
        (WT + "speed", ("s1", 40)),
        (WT + "speed", ("s2", 10)),
        (RDF_TYPE, (IRI(WT + "s1"), IRI(WT + "Station"))),
        ("rdf", (IRI(WT + "s1"), IRI(RDF_TYPE), IRI(WT + "Station"))),
    ]
)


def solutions(term, env=None, prefixes=None):
    return list(compile_goal(term, prefixes or {}).solutions(env or {}, KB))


def test_comparison_variable_variable_and_constant():
    g = compile_goal(c("<", X, Y), {})
    assert g.holds({"X": 1, "Y": 2}, KB) and not g.holds({"X": 2, "Y": 2}, KB)
    h = compile_goal(c(">=", X, n(3)), {})
    assert h.holds({"X": 3}, KB) and not h.holds({"X": 2.5}, KB)
    assert g.variables == frozenset({"X", "Y"})


def test_comparison_with_none_is_false_and_arithmetic_comparison_works():
    g = compile_goal(c(">", c("*", X, n(2)), n(5)), {})
    assert g.holds({"X": 3}, KB) and not g.holds({"X": 2}, KB)
    assert not g.holds({"X": "none"}, KB)
    assert not compile_goal(c("<", X, n(3)), {}).holds({"X": "none"}, KB)


def test_comparison_on_unbound_variable_is_an_engine_error():
    with pytest.raises(EngineError, match="'Y'"):
        compile_goal(c("<", X, Y), {}).holds({"X": 1}, KB)


def test_is_binds_and_checks():
    assert solutions(c("is", Y, c("+", X, n(1))), {"X": 1}) == [{"X": 1, "Y": 2}]
    assert solutions(c("is", n(3), c("+", X, n(1))), {"X": 2}) == [{"X": 2}]
    assert solutions(c("is", n(4), c("+", X, n(1))), {"X": 2}) == []
    assert solutions(c("is", Y, c("/", X, n(0))), {"X": 2}) == []  # fails, no crash
    assert solutions(c("is", Y, c("*", Atom("pi"), n(2))), {})[0]["Y"] == pytest.approx(
        6.2832, 1e-4
    )


def test_unknown_arithmetic_function_is_a_compile_error():
    with pytest.raises(RuleCompileError, match="unknown arithmetic function 'foo/1'"):
        compile_goal(c("is", Y, c("foo", X)), {})


def test_conjunction_joins_through_the_knowledge():
    found = solutions(c(",", c("edge", X, Y), c("edge", Y, Z)))
    assert found == [{"X": "a", "Y": "b", "Z": "c"}, {"X": "b", "Y": "c", "Z": "d"}]


def test_conjunction_of_tests_and_of_binding_goals_in_holds():
    g = compile_goal(c(",", c(">", X, n(0)), c("<", X, n(10))), {})
    assert g.holds({"X": 5}, KB) and not g.holds({"X": 11}, KB)
    path = compile_goal(c(",", c("edge", X, Y), c("edge", Y, Z)), {})
    assert path.holds({"X": "a"}, KB) and not path.holds({"X": "c"}, KB)


def test_disjunction_gives_both_branches():
    g = c(";", c("edge", Atom("a"), Y), c("edge", Atom("c"), Y))
    assert solutions(g) == [{"Y": "b"}, {"Y": "d"}]


def test_negation_as_failure():
    g = compile_goal(c("\\+", c("edge", X, Atom("a"))), {})
    assert g.holds({"X": "b"}, KB)
    assert not compile_goal(c("\\+", c("edge", X, Y)), {}).holds({"X": "a"}, KB)
    assert solutions(c(",", c("edge", X, Y), c("\\+", c("edge", Y, Z)))) == [{"X": "c", "Y": "d"}]


def test_if_then_else_commits_to_the_first_condition_solution():
    ite = c(";", c("->", c("edge", X, Y), c("=", Z, Atom("yes"))), c("=", Z, Atom("no")))
    assert solutions(ite, {"X": "a"}) == [{"X": "a", "Y": "b", "Z": "yes"}]
    assert solutions(ite, {"X": "z"}) == [{"X": "z", "Z": "no"}]
    assert solutions(c("->", c("edge", Atom("z"), Y), Atom("true"))) == []


def test_true_and_fail():
    assert compile_goal(Atom("true"), {}).holds({}, KB)
    assert not compile_goal(Atom("fail"), {}).holds({}, KB)


def test_unification_and_identity():
    assert solutions(c("=", X, c("f", n(1))), {}) == [{"X": Struct("f", (1,))}]
    assert solutions(c("=", c("f", X, Atom("b")), c("f", Atom("a"), Y))) == [{"X": "a", "Y": "b"}]
    assert solutions(c("=", ListTerm((X,), Y), ListTerm((n(1), n(2), n(3))))) == [
        {"X": 1, "Y": (2, 3)}
    ]
    assert compile_goal(c("\\=", X, Atom("a")), {}).holds({"X": "b"}, KB)
    assert compile_goal(c("==", X, n(1)), {}).holds({"X": 1}, KB)
    assert compile_goal(c("\\==", X, Y), {}).holds({"X": 1}, KB)  # unbound Y: not identical
    with pytest.raises(EngineError, match="one side bound"):
        solutions(c("=", X, Y))


def test_structured_argument_matches_stored_struct():
    assert solutions(c("station", S, c("loc", X, Y))) == [{"S": "s1", "X": 40.0, "Y": -111.0}]


def test_prefixed_predicate_resolves_to_the_iri():
    g = c(",", c("wt:speed", S, V), c(">", V, n(30)))
    assert solutions(g, prefixes={"wt": WT}) == [{"S": "s1", "V": 40}]


def test_rdf_type_and_rdf_triple_use_default_prefixes():
    assert solutions(c("rdf:type", X, PName("wt", "Station")), prefixes={"wt": WT}) == [
        {"X": IRI(WT + "s1")}
    ]
    triple = c("rdf", X, PName("rdf", "type"), Iri(WT + "Station"))
    assert solutions(triple) == [{"X": IRI(WT + "s1")}]


def test_unknown_prefix_is_a_compile_error():
    with pytest.raises(RuleCompileError, match="unknown prefix 'zz'"):
        compile_goal(c("zz:p", X), {})


def test_unknown_predicate_is_reported_by_check_with_its_place():
    span = Span("rules.event", 3, 9)
    g = compile_goal(c(",", c("edge", X, Y), Compound("nowhere", (X,), span)), {})
    with pytest.raises(RuleCompileError, match="unknown predicate 'nowhere/1'") as info:
        g.check(KB)
    assert (info.value.line, info.value.column) == (3, 9)
    compile_goal(c("edge", X, Y), {}).check(KB)  # known: no error
    compile_goal(c("atom_length", X, Y), {}).check(KB)  # built-in: no error


def test_builtin_relations_are_callable_goals():
    g = c(",", c("atom_concat", X, Atom("_x"), Y), c("atom_length", Y, Z))
    assert solutions(g, {"X": "ab"}) == [{"X": "ab", "Y": "ab_x", "Z": 4}]
    dist = c(",", c("geo_distance", n(0), n(0), n(0), n(1), V), c("<", V, n(300)))
    assert compile_goal(dist, {}).holds({}, KB)


def test_non_callable_goal_is_a_compile_error():
    with pytest.raises(RuleCompileError, match="not a callable goal"):
        compile_goal(n(3), {})


def test_evaluate_head_terms():
    assert evaluate(c("+", X, Y), {"X": 1, "Y": 2.5}) == 3.5
    assert evaluate(c("f", c("-", X), String("s")), {"X": 1}) == Struct("f", (-1, "s"))
    assert evaluate(ListTerm((X, n(2))), {"X": 1}) == (1, 2)
    assert evaluate(PName("wt", "a"), {}, {"wt": WT}) == IRI(WT + "a")
    with pytest.raises(EngineError, match="unbound variable 'Q'"):
        evaluate(Var("Q"), {})


def test_term_value_of_ground_and_non_ground_terms():
    assert term_value(c("f", Atom("a"), n(1)), {}) == Struct("f", ("a", 1))
    assert term_value(c("f", X), {}) is None
    assert term_value(Atom("[]"), {}) == ()
