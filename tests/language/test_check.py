"""Semantic checks and the binding rules."""

import pytest

from reasoner.errors import RuleCompileError
from reasoner.language.check import bound_variables, check, check_program
from reasoner.language.parser import parse


def body(text: str):  # type: ignore[no-untyped-def]
    return parse(f"h <- {text}.").event_rules[0].body


@pytest.mark.parametrize(
    ("pattern", "bound"),
    [
        ("a(X, Y, _)", {"X", "Y"}),
        ("a(X, Y) OR b(X)", {"X"}),
        ("a(X) SEQ b(Y)", {"X", "Y"}),
        ("a(X) CNOT b(Y)", {"X"}),
        ("a(X) FNOT b(Y)", {"X"}),
        ("NOT(c(Z)).[a(X), b(Y)]", {"X", "Y"}),
        ("a(X) WHERE X > Y", {"X"}),
        ("a(X) WHERE (region(X, R), T is R * 2, T > 1, _L = 1)", {"X", "R", "T"}),
        ("a(X) WHERE (Y = f(X) ; Y = X)", {"X", "Y"}),
        ("a(X) WHERE (Y = X ; Z = X)", {"X"}),
        ("a(X) WHERE \\+ p(X, Y)", {"X"}),
        ("(a(X)).5", {"X"}),
        ("a(X) EVENT_MULTIPLY p(X, Y)", {"X", "Y"}),
        ("s SEQ aggregate(sum(V), a(V), R)", {"R"}),
        ("a(X) SEQ b(Y) STAR_TIMES", {"X"}),
        ("3 SEQ a(f(X, [Y | T]))", {"X", "Y", "T"}),
    ],
)
def test_bound_variables(pattern: str, bound: set[str]) -> None:
    assert bound_variables(body(pattern)) == frozenset(bound)


def test_valid_program_has_no_diagnostics() -> None:
    program = parse("c(X, Y) <- (a(X) SEQ b(Y)).10 WHERE X < Y, _Z = 1.")
    assert check(program) == []
    assert check_program(program) is program


def test_anonymous_head_variable_is_unbound() -> None:
    (d,) = check(parse("c(_) <- a(X)."))
    assert d.message == "unbound variable '_' in the rule head"


def test_negation_through_longer_recursion_names_the_cycle() -> None:
    program = parse("a <- b FNOT c.\nc <- d.\nd <- a SEQ e.\n")
    with pytest.raises(RuleCompileError) as info:
        check_program(program)
    assert info.value.message == "negation through recursion: a -> c -> d -> a"


def test_positive_recursion_is_allowed() -> None:
    assert check(parse("p(X, Y) <- e(X, Y).\np(X, Z) <- p(X, Y) SEQ e(Y, Z).")) == []


def test_aggregate_through_recursion_is_rejected() -> None:
    messages = [d.message for d in check(parse("t(R) <- s SEQ aggregate(count, t(X), R)."))]
    assert messages == ["negation through recursion: t -> t"]


def test_warnings_do_not_fail_check_program() -> None:
    program = parse("c <- a(X) SEQ a.\nevent_rule_property(r9, event_rule_window, 2).")
    diagnostics = check(program)
    assert [(d.severity, d.message) for d in diagnostics] == [
        ("warning", "event 'a' is used with 1 and with 0 arguments"),
        ("warning", "event_rule_property names rule 'r9', but no rule has that label"),
    ]
    assert check_program(program) is program


def test_errors_keep_warnings_after_them() -> None:
    with pytest.raises(RuleCompileError) as info:
        check_program(parse("c(Y) <- a(X) SEQ a."))
    assert [d.severity for d in info.value.diagnostics] == ["error", "warning"]
