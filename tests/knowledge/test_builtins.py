import math
from fractions import Fraction

import pytest

from reasoner.errors import EngineError
from reasoner.knowledge.builtins import (
    COMPARISONS,
    NEEDS,
    RELATIONS,
    EvaluationError,
    apply_function,
    geo_distance_km,
    parse_number,
)


def f(name, *args):
    return apply_function(name, args)


def solve(name, *pattern):
    return list(RELATIONS[(name, len(pattern))](pattern))


def test_integer_arithmetic_stays_integer():
    assert f("+", 2, 3) == 5 and isinstance(f("+", 2, 3), int)
    assert f("*", 4, 5) == 20 and isinstance(f("*", 4, 5), int)
    assert f("-", 7) == -7
    assert f("min", 3, 2) == 2 and f("max", 3, 2.5) == 3


def test_division_is_exact_on_integers():
    assert f("/", 6, 3) == 2 and isinstance(f("/", 6, 3), int)
    assert f("/", 7, 2) == 3.5
    assert f("/", Fraction(1, 3), 2) == Fraction(1, 6)


def test_division_by_zero_is_an_evaluation_error():
    with pytest.raises(EvaluationError, match="division by zero"):
        f("/", 1, 0)
    with pytest.raises(EvaluationError):
        f("//", 1, 0)


def test_integer_division_mod_and_rem_follow_prolog_signs():
    assert f("//", 7, 2) == 3 and f("//", -7, 2) == -3
    assert f("mod", -7, 2) == 1 and f("rem", -7, 2) == -1
    with pytest.raises(EvaluationError, match="integers"):
        f("mod", 7.5, 2)


def test_powers():
    assert f("^", 2, 10) == 1024 and isinstance(f("^", 2, 10), int)
    assert f("**", 2, 3) == 8 and f("**", 2, -1) == 0.5
    assert f("^", -1, -3) == -1
    with pytest.raises(EvaluationError, match="negative"):
        f("^", 2, -1)


def test_float_functions():
    assert f("sqrt", 16) == 4.0
    assert f("exp", 0) == 1.0 and f("log", math.e) == pytest.approx(1.0)
    assert f("sin", 0) == 0.0 and f("cos", 0) == 1.0 and f("tan", 0) == 0.0
    assert f("atan", 1) == pytest.approx(math.pi / 4)
    assert f("atan2", 1, 1) == pytest.approx(math.pi / 4)
    with pytest.raises(EvaluationError, match="undefined"):
        f("sqrt", -1)
    with pytest.raises(EvaluationError):
        f("log", 0)


def test_rounding_functions_give_integers():
    assert f("floor", 2.7) == 2 and f("ceiling", 2.1) == 3
    assert f("round", 2.5) == 3 and f("round", -2.5) == -3  # half away from zero
    assert f("truncate", -2.7) == -2
    assert f("abs", -3) == 3 and f("sign", -4.0) == -1.0 and f("sign", 0) == 0
    with pytest.raises(EvaluationError):
        f("floor", math.inf)


def test_arithmetic_on_non_number_and_unknown_function():
    with pytest.raises(EvaluationError, match="non-number"):
        f("+", "none", 1)
    with pytest.raises(EvaluationError, match="unknown arithmetic function"):
        f("frobnicate", 1)


def test_comparisons_on_numbers():
    assert COMPARISONS["<"](1, 2) and not COMPARISONS["<"](2, 2)
    assert COMPARISONS["=<"](2, 2) and COMPARISONS[">="](2.0, 2)
    assert COMPARISONS["=:="](1, 1.0) and COMPARISONS["=\\="](1, 2)
    assert COMPARISONS[">"](Fraction(1, 2), 0.25)


def test_comparison_with_a_non_number_is_false_not_an_error():
    for op in ("<", ">", "=<", ">=", "=:=", "=\\="):
        assert COMPARISONS[op]("none", 3) is False
        assert COMPARISONS[op](3, "none") is False


def test_member_enumerates_a_list_or_tests_membership():
    assert solve("member", None, (1, "a", 1)) == [
        (1, (1, "a", 1)),
        ("a", (1, "a", 1)),
        (1, (1, "a", 1)),
    ]
    assert solve("member", "a", (1, "a")) == [("a", (1, "a"))]
    assert solve("member", 2, (1, "a")) == []
    assert solve("member", 1, "not a list") == []
    with pytest.raises(EngineError, match="instantiated"):
        solve("member", 1, None)


def test_atom_length_and_concat():
    assert solve("atom_length", "abc", None) == [("abc", 3)]
    assert solve("atom_length", "abc", 2) == []
    assert solve("atom_concat", "ab", "cd", None) == [("ab", "cd", "abcd")]
    assert solve("atom_concat", None, "cd", "abcd") == [("ab", "cd", "abcd")]
    assert len(solve("atom_concat", None, None, "ab")) == 3
    assert solve("string_concat", "x", 1, None) == [("x", "1", "x1")]
    with pytest.raises(EngineError, match="instantiated"):
        solve("atom_length", None, 3)


def test_sub_atom_with_bound_arguments():
    assert solve("sub_atom", "hello", 1, 3, None, None) == [("hello", 1, 3, 1, "ell")]
    assert solve("sub_atom", "abab", None, None, None, "ab") == [
        ("abab", 0, 2, 2, "ab"),
        ("abab", 2, 2, 0, "ab"),
    ]
    assert solve("sub_atom", "abc", None, 1, 0, None) == [("abc", 2, 1, 0, "c")]
    assert solve("sub_atom", "abc", None, None, None, "zz") == []


def test_case_conversion_and_string_length():
    assert solve("upcase_atom", "Go", None) == [("Go", "GO")]
    assert solve("downcase_atom", "Go", "go") == [("Go", "go")]
    assert solve("downcase_atom", "Go", "GO") == []
    assert solve("string_length", "", None) == [("", 0)]


def test_atom_number_both_directions():
    assert solve("atom_number", "42", None) == [("42", 42)]
    assert solve("atom_number", "-3.5", None) == [("-3.5", -3.5)]
    assert solve("atom_number", "abc", None) == []
    assert solve("atom_number", None, 7) == [("7", 7)]
    assert parse_number(" 1") is None and parse_number("inf") is None


def test_geo_distance_uses_the_geodesic():
    # One degree of longitude on the equator is 111.32 km on WGS-84.
    assert geo_distance_km(0, 0, 0, 1) == pytest.approx(111.3195, abs=1e-3)
    # San Francisco airport to Salt Lake City airport, roughly 960 km.
    ((*_, km),) = solve("geo_distance", 37.62, -122.37, 40.79, -111.98, None)
    assert 950 < km < 970


def test_get_distance_has_the_seed_argument_order():
    # Seed 004: getDistance(Lat1, Long1, Lat2, Long2, Distance), in kilometres.
    ((*_, km),) = solve("getDistance", 0, 0, 1, 0, None)
    assert km == pytest.approx(110.574, abs=1e-2)  # one degree of latitude


def test_geo_distance_with_missing_coordinate_fails_quietly():
    assert solve("geo_distance", "none", 0, 0, 1, None) == []
    with pytest.raises(EvaluationError):
        geo_distance_km(91, 0, 0, 0)


def test_relations_of_two_numbers_compute_check_or_fail() -> None:
    assert solve("min", 3, 2, None) == [(3, 2, 2)]
    assert solve("max", 3, 2.5, 3) == [(3, 2.5, 3)]
    assert solve("max", 3, 2.5, 2.5) == []  # the third given, and not the maximum
    assert solve("datime_minus_datime", 100, 40, None) == [(100, 40, 60)]
    assert solve("datime_plus_sec", 100, Fraction(1, 2), None) == [
        (100, Fraction(1, 2), Fraction(201, 2))
    ]
    assert solve("datime_plus_sec", 100, 5, 106) == []
    assert solve("datime_plus_sec", "noon", 5, None) == []  # not a time: no answer
    with pytest.raises(EvaluationError, match="datime_minus_datime/3 needs its first two"):
        solve("datime_minus_datime", None, 40, None)


def test_every_relation_declares_what_it_needs_bound() -> None:
    assert NEEDS.keys() == RELATIONS.keys()
    # called with none of a mode's inputs, each raises (what the load-time check prevents)
    for key, needs in NEEDS.items():
        with pytest.raises((EngineError, EvaluationError)):
            list(RELATIONS[key]((None,) * key[1]))
        assert all(need and max(need) < key[1] for need in needs)


@pytest.mark.parametrize("order", [(1.0, 1), (1, 1.0)])
def test_a_static_rule_calling_a_built_in_unbound_is_answered_per_call(
    order: tuple[float | int, ...],
) -> None:
    # p(X) :- atom_length(X, 3) cannot be materialised (atom_length needs X): it used to
    # raise "not sufficiently instantiated" when the knowledge was built; now p is answered
    # per call, with X bound by the condition
    from reasoner.knowledge import KnowledgeBase
    from reasoner.language.parser import parse
    from reasoner.runtime.engine import Engine
    from reasoner.runtime.events import Event

    program = parse("p(X) :- atom_length(X, 3).\nh(X) <- a(X) WHERE p(X).\n")
    version = KnowledgeBase([], program=program).current()
    assert version.knowledge.on_demand("p", 1)
    for knowledge in (version, None):
        engine = Engine(program, knowledge=knowledge)
        found = [d.args for t, v in enumerate(order) for d in engine.push(Event("a", (v,), t, t))]
        assert found == [(1.0,)]  # "1.0" has 3 characters, "1" has 1
