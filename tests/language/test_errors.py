"""Error tests: each asserts the exception class, line, column and message."""

import pickle

import pytest

from reasoner.errors import ReasonerError, RuleCompileError, RuleSyntaxError
from reasoner.language.check import check_program
from reasoner.language.loader import parse_file
from reasoner.language.parser import parse

SYNTAX = [
    ("c(X) foo.", 1, 6, "expected '<-', ':-' or '.' after the rule head, found 'foo'"),
    (
        "c(X) <- a(X) b(X).",
        1,
        14,
        "expected a pattern operator (SEQ, AND, ...), WHERE or '.' after the pattern, found 'b'",
    ),
    (
        "c(X) <- .",
        1,
        9,
        "expected an event, a number, '(' or NOT to start a pattern, found '.'",
    ),
    (
        "% ok\nc(X) <- a(X)",
        2,
        13,
        "expected a pattern operator (SEQ, AND, ...), WHERE or '.' after the pattern, "
        "found the end of the file",
    ),
    ("c(X) <- (a(X) SEQ b(X).", 1, 23, "expected WHERE, EVENT_MULTIPLY, do or ')', found '.'"),
    ("foo(X :- a.", 1, 7, "expected ')' or ',', found ':-'"),
    (
        "c <- a SEQ.",
        1,
        11,
        "expected an event, a number, '(' or NOT to start a pattern, found '.'",
    ),
    (
        "c <- NOT(b)[a].",
        1,
        14,
        "expected a pattern operator (SEQ, AND, PAR, OR, ...) or ',', found ']'",
    ),
    (
        "c <- a WHERE X > 1 SEQ b.",
        1,
        20,
        "expected '.', WHERE, EVENT_MULTIPLY, do, ',' or an operator, found 'SEQ'",
    ),
    (
        "c(X) <- a(X) WHERE X > 1r0.",
        1,
        24,
        "expected a rational with a nonzero denominator, found '1r0'",
    ),
    ("e <- (a).1r0.", 1, 10, "expected a rational with a nonzero denominator, found '1r0'"),
    (
        "X <- a.",
        1,
        1,
        "expected an event such as name(Args) as the rule head, found the variable 'X'",
    ),
    (
        "c <- aggregate(sum(X), a(X), R, foo(3)).",
        1,
        33,
        "expected count(N) or time(D) as the aggregate window, found 'foo'",
    ),
    (
        'a("abc).',
        1,
        3,
        "unterminated quoted text: expected a closing quote before the end of the file",
    ),
    ("c <- (a).-3.", 1, 10, "expected a number or a duration such as 20s, found '-3'"),
    (
        "a. )",
        1,
        4,
        "expected a term, ':-', '(', '[', '!', rdf_event, the end of the file or an operator, "
        "found ')'",
    ),
    ("a :- b c.", 1, 8, "expected '.', '(', ',', ';', '->' or an operator, found 'c'"),
    (
        "5.",
        1,
        1,
        "expected an atom or a compound term as the clause head, found the number 5",
    ),
    (
        "r1(x) 'rule:' c <- a.",
        1,
        1,
        "expected a rule label such as r1 or r1([property(Name, Value)]) before 'rule:'",
    ),
]


@pytest.mark.parametrize(("text", "line", "column", "message"), SYNTAX)
def test_syntax_error(text: str, line: int, column: int, message: str) -> None:
    with pytest.raises(RuleSyntaxError) as info:
        parse(text, "bad.event")
    err = info.value
    assert (err.line, err.column, err.message) == (line, column, message)
    assert err.span is not None and err.span.file == "bad.event"
    assert str(err).startswith(f"bad.event:{line}:{column}: {message}")
    assert err.__cause__ is None or not isinstance(err.__cause__, RuleSyntaxError)


COMPILE = [
    ("c(X, Y) <- a(X).", 1, 6, "unbound variable 'Y' in the rule head"),
    ("d(X) <- a(X) WHERE Z > 1.", 1, 20, "unbound variable 'Z' in WHERE"),
    ("d <- a(X) OR b(Y) WHERE X =:= 1.", 1, 25, "unbound variable 'X' in WHERE"),
    ("d <- a(X) WHERE (Y < X, Y is X - 1).", 1, 18, "unbound variable 'Y' in WHERE"),
    (
        "d(X) <- prolog(X > 1) SEQ a(X).",
        1,
        9,
        "ETALIS's prolog(Goal) is supported only as the right operand of SEQ (p SEQ "
        "prolog(Goal) means p WHERE Goal): it would read as an event that never occurs",
    ),
    ("d(Y) <- a(X) CNOT b(Y).", 1, 3, "unbound variable 'Y' in the rule head"),
    (
        "exceptionAlarm(b(X), 0) <- a(X).",
        1,
        22,
        "exceptionAlarm's time must be a positive number of seconds, not 0",
    ),
    (
        "exceptionAlarmAbsoluteDatime(b(X), now) <- a(X).",
        1,
        36,
        "exceptionAlarmAbsoluteDatime's time must be a number, not now",
    ),
    ("exceptionAlarm(b(X), D) <- a(X).", 1, 22, "unbound variable 'D' in the rule head"),
    ("e <- (a(1)).0.", 1, 6, "window size must be positive, found 0"),
    ("f <- a STAR_TIMES.", 1, 6, "STAR_TIMES may only be the right operand of SEQ"),
    (
        "f(R) <- aggregate(median(X), a(X), R).",
        1,
        9,
        "unknown aggregate function median(X): use count, or sum, avg, min, max or stddev of a "
        "variable",
    ),
    (
        "a(X) <- NOT(b(X)).[c(X), d(X)].\nb(X) <- a(X).",
        1,
        1,
        "negation through recursion: a -> b -> a",
    ),
    (
        "e(X) <- b(X) OR (d(X) SEQ c(X)).\nd(X) <- a(X) FORALL_SEQ e(X).",
        2,
        1,
        "FORALL_SEQ's second operand through recursion: d -> e -> d",
    ),
    (
        "r1([property(event_rule_window, -2)]) 'rule:' c <- a.",
        1,
        1,
        "window size must be positive, found -2",
    ),
]


@pytest.mark.parametrize(("text", "line", "column", "message"), COMPILE)
def test_compile_error(text: str, line: int, column: int, message: str) -> None:
    with pytest.raises(RuleCompileError) as info:
        check_program(parse(text, "bad.event"))
    err = info.value
    assert (err.line, err.column, err.message) == (line, column, message)


def test_compile_errors_are_all_collected_with_source_lines() -> None:
    text = "c(X, Y) <- a(X).\nd(X) <- a(X) WHERE Z > 1.\n"
    with pytest.raises(RuleCompileError) as info:
        check_program(parse(text, "r.event"))
    rendered = str(info.value).splitlines()
    assert rendered == [
        "r.event:1:6: unbound variable 'Y' in the rule head",
        "    c(X, Y) <- a(X).",
        "         ^",
        "r.event:2:20: unbound variable 'Z' in WHERE",
        "    d(X) <- a(X) WHERE Z > 1.",
        "                       ^",
    ]


def test_diagnostics_errors_pickle_with_their_diagnostics() -> None:
    # (a worker process sends its errors to the router pickled)
    with pytest.raises(RuleCompileError) as info:
        check_program(parse("c(X, Y) <- a(X).", "r.event"))
    back = pickle.loads(pickle.dumps(info.value))
    assert (type(back), str(back), back.line, back.column) == (
        RuleCompileError,
        str(info.value),
        1,
        6,
    )


def test_missing_file_is_a_reasoner_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ReasonerError, match="cannot read rule file"):
        parse_file(tmp_path / "nope.event")


@pytest.mark.parametrize(
    ("text", "line", "column", "what"),
    [
        ("p(X) :- q(X), !.\nq(1).", 1, 15, "the cut '!'"),
        ("c(X) <- a(X) WHERE X =.. [f].", 1, 20, "'=..' (univ)"),
        ("c(Y) <- a(X) EVENT_MULTIPLY (q(X, Y), !).\nq(1, 2).", 1, 39, "the cut '!'"),
    ],
)
def test_prolog_only_goals_are_refused_where_written(
    text: str, line: int, column: int, what: str
) -> None:
    with pytest.raises(RuleCompileError) as info:
        check_program(parse(text, "p.event"))
    first = info.value.diagnostics[0]
    assert (first.span.line, first.span.column) == (line, column)  # type: ignore[union-attr]
    assert first.message == (
        f"{what} is not supported: rule files are not Prolog (conditions and static rules are "
        "Datalog with built-ins)"
    )
