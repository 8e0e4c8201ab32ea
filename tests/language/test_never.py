"""Warnings for rules that can never fire: hand-made rule files, each finding's place and words."""

from pathlib import Path

import pytest

from connectors.cli import main
from reasoner.language.check import check
from reasoner.language.never import minimum_duration
from reasoner.language.parser import parse, parse_file

ROOT = Path(__file__).resolve().parents[2]


def warnings(text: str, unread_heads: bool = False) -> list[tuple[int, int, str]]:
    found = check(parse(text), unread_heads)
    assert {d.severity for d in found} <= {"warning"}
    return [(d.span.line, d.span.column, d.message) for d in found if d.span is not None]


# ------------------------------------------------------------------------------ typos


def test_event_differing_only_in_case_from_a_derived_one() -> None:
    text = "stockAlert(S) <- tick(S).\nalarm(S) <- stockalert(S) SEQ tick(S).\n"
    assert warnings(text) == [
        (2, 13, "event 'stockalert' is read but no rule derives it: did you mean 'stockAlert'?")
    ]


def test_event_close_to_a_derived_one() -> None:
    text = "overheat(S) <- temp(S).\nalarm(S) <- overheta(S).\n"
    assert warnings(text) == [
        (2, 13, "event 'overheta' is read but no rule derives it: did you mean 'overheat'?")
    ]


def test_case_variant_of_another_input_is_reported_once() -> None:
    text = "a(S) <- priceUp(S) SEQ priceup(S).\nb(S) <- priceup(S).\n"
    # both are inputs; each is a case variant of the other, so both are named, each once
    assert [m for _, _, m in warnings(text)] == [
        "event 'priceUp' is read but no rule derives it: did you mean 'priceup'?",
        "event 'priceup' is read but no rule derives it: did you mean 'priceUp'?",
    ]


def test_unrelated_input_names_are_not_typos() -> None:
    assert warnings("a <- e1 SEQ e2.\nb <- temperature AND humidity.\nc <- a SEQ b.\n") == []


def test_similar_input_names_are_not_typos_of_each_other() -> None:
    # neither is derived: difflib matches are only sought among derived names
    assert warnings("c <- reading SEQ readings.\n") == []


def test_an_rdf_event_mapping_derives_its_head() -> None:
    text = "rdf_event(obs(S)) :- triple(S, a, b).\nalert(S) <- obs(S).\n"
    assert warnings(text) == []


# ------------------------------------------------------------------------------ WHERE


@pytest.mark.parametrize(
    ("condition", "conflict", "culprit"),
    [
        ("T > 40, T < 30", "T > 40 and T < 30", "T < 30"),
        ("T >= 30, T < 30", "T >= 30 and T < 30", "T < 30"),
        ("T > 30, T =< 30", "T > 30 and T =< 30", "T =< 30"),
        ("30 < T, 20 >= T", "30 < T and 20 >= T", "20 >= T"),
        ("T = 5, T > 6", "T = 5 and T > 6", "T > 6"),
        ("T =:= 5, T =\\= 5", "T =:= 5 and T =\\= 5", "T =\\= 5"),
        ("T > 1, region(S, R), T < 1.5, T > 2", "T < 1.5 and T > 2", "T > 2"),
        ("3 > 4", "3 > 4 and 3 > 4", "3 > 4"),
    ],
)
def test_contradictory_where(condition: str, conflict: str, culprit: str) -> None:
    text = f"hot(S) <- t(S, T) WHERE ({condition}).\n"
    column = text.index(culprit) + 1  # the caret is on the goal that makes it impossible
    assert warnings(text) == [(1, column, f"WHERE can never hold: {conflict} contradict")]


@pytest.mark.parametrize(
    "condition",
    [
        "T >= 30, T =< 30",
        "T > 30, T < 31",
        "T > 40 ; T < 30",
        "T > 40, U < 30",
        "T =\\= 5, T > 4, T < 6",
        "T > 40, \\+ T < 50",
        "T > X, T < 30",
    ],
)
def test_satisfiable_where(condition: str) -> None:
    assert warnings(f"hot(S) <- t(S, T, X, U) WHERE ({condition}).\n") == []


def test_contradictory_where_inside_a_pattern() -> None:
    text = "c <- a SEQ (t(T) WHERE (T < 0, T > 0)).\n"
    assert warnings(text) == [(1, 32, "WHERE can never hold: T < 0 and T > 0 contradict")]


# ----------------------------------------------------------------------------- windows


@pytest.mark.parametrize(
    ("pattern", "least"),
    [
        ("0 SEQ a SEQ 3", 3),
        ("a DURING (0 SEQ 6)", 6),
        ("(a SEQ 2) SEQ (5 SEQ b)", 3),
        ("((0 SEQ 2) SEQ (10 SEQ 13)) AND (1 SEQ 20)", 20),
        ("(0 MEETS 4) SEQ (7 SEQ 9)", 9),
        ("(0 MEETS 4) SEQ (a SEQ 7 SEQ 9)", 9),
        ("(a MEETS (1 SEQ 4)) SEQ (b SEQ (2 SEQ 4))", 5),
        ("(0 SEQ 5) OR (0 SEQ 2)", 2),
        ("(0 SEQ 5) CNOT b", 5),
        ("a SEQ b", 0),
        ("NOT(c).[0 SEQ 1, 4 SEQ 6]", 6),
    ],
)
def test_minimum_duration(pattern: str, least: int) -> None:
    assert minimum_duration(parse(f"h <- {pattern}.").event_rules[0].body) == least


def test_window_shorter_than_time_points_apart() -> None:
    text = "h <- (0 SEQ a SEQ 10800).2h.\n"
    assert warnings(text) == [
        (
            1,
            6,
            "window 7200 is shorter than its pattern's minimum duration 10800: "
            "the pattern can never fire",
        )
    ]


def test_window_equal_to_the_minimum_is_fine() -> None:
    assert warnings("h <- (0 SEQ a SEQ 3).3.\n") == []


def test_outer_window_shorter_than_a_nested_pattern() -> None:
    text = "h <- ((0 SEQ 5).10 SEQ b).4.\n"
    assert warnings(text) == [
        (
            1,
            6,
            "window 4 is shorter than its pattern's minimum duration 5: the pattern can never fire",
        )
    ]


def test_rule_window_property_shorter_than_the_pattern() -> None:
    text = "r1([property(event_rule_window, 2)]) 'rule:' h <- 1 SEQ a SEQ 4.\n"
    assert warnings(text) == [
        (
            1,
            1,
            "window 2 is shorter than its pattern's minimum duration 3: the pattern can never fire",
        )
    ]


# -------------------------------------------------------------------------- unread heads


def test_unread_heads_only_on_request() -> None:
    text = "a <- e.\nb <- a SEQ e.\nb <- e SEQ e.\n"
    assert warnings(text) == []
    assert warnings(text, unread_heads=True) == [(2, 1, "no rule reads event 'b'")]


# ----------------------------------------------------------------------------- the CLI


def test_warnings_keep_exit_status_unless_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "hot.event"
    rules.write_text("hot(S) <- t(S, T) WHERE (T > 40, T < 30).\n", encoding="utf-8")
    assert main(["check", str(rules)]) == 0
    assert capsys.readouterr().err == (
        f"{rules}:1:34: warning: WHERE can never hold: T > 40 and T < 30 contradict\n"
        "    hot(S) <- t(S, T) WHERE (T > 40, T < 30).\n"
        "                                     ^\n"
    )
    assert main(["check", "--warnings-as-errors", str(rules)]) == 1


def test_unread_heads_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "out.event"
    rules.write_text("a <- e.\nb <- a.\n", encoding="utf-8")
    assert main(["check", "--unread-heads", str(rules)]) == 0
    assert (
        capsys.readouterr().err.splitlines()[0] == f"{rules}:2:1: warning: no rule reads event 'b'"
    )


@pytest.mark.parametrize("path", sorted((ROOT / "rules").glob("*.event")), ids=lambda p: p.name)
def test_shipped_rule_files_have_no_warnings(path: Path) -> None:
    assert [d.render() for d in check(parse_file(path))] == []
