"""Warnings for rules that can never fire: hand-made rule files, each finding's place and words."""

from pathlib import Path

import pytest

from connectors.cli import main
from reasoner.language.ast import Program
from reasoner.language.check import check
from reasoner.language.loader import parse_file
from reasoner.language.never import minimum_duration
from reasoner.language.parser import parse

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


@pytest.mark.parametrize(
    ("read", "expected"),
    [("stockAlrt", "stockAlert"), ("stokcAlert", "stockAlert"), ("stockAlertz", "stockAlert")],
)
def test_one_or_two_edits_from_a_derived_name(read: str, expected: str) -> None:
    text = f"stockAlert(S) <- tick(S).\nalarm(S) <- {read}(S).\n"
    message = f"event '{read}' is read but no rule derives it: did you mean '{expected}'?"
    assert warnings(text) == [(2, 13, message)]


def test_a_longer_name_made_from_a_derived_one_is_not_a_typo() -> None:
    # three letters more than 'delivery': a name of its own (an input), not a slip
    assert (
        warnings("delivery(S) <- shipment(S).\nalert(S) <- deliveryBid(S) SEQ delivery(S).\n") == []
    )


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


# ------------------------------------------------------------ negations their bounds satisfy


def _fires(text: str, events: list[tuple[str, tuple[int, ...], int, int]]) -> int:
    from reasoner.runtime.events import Event
    from reasoner.semantics.reference import derive

    stream = [Event(name, args, start, end) for name, args, start, end in events]
    return len(derive(parse(text), stream, until=20))


@pytest.mark.parametrize(
    ("text", "column", "message", "events"),
    [
        (
            "c(X) <- a(X) SEQ b(X) FNOT a(X).\n",
            28,
            "FNOT a(X) blocks every occurrence: the a(X) at 1:9 inside it ends before it does",
            [("a", (1,), 1, 1), ("b", (1,), 2, 2)],
        ),
        (
            "c(X) <- (a(X) SEQ b(X)).5 FNOT a(_).\n",
            32,
            "FNOT a(_) blocks every occurrence: the a(X) at 1:10 inside it ends before it does",
            [("a", (1,), 1, 1), ("b", (1,), 2, 2)],
        ),
        (
            "c <- (a DURING b) CNOT a.\n",
            24,
            "CNOT a blocks every occurrence: the a at 1:7 inside it ends before it does",
            [("b", (), 1, 3), ("a", (), 2, 2)],
        ),
        (
            "c <- NOT(3).[0, 6 SEQ a].\n",
            10,
            "NOT(3) blocks every occurrence: the time point lies strictly between its bounds "
            "(the first ends by 0, the second starts at 6 or later)",
            [("a", (), 7, 7)],
        ),
        (
            "c <- (0 SEQ (5 STARTS (5 SEQ a))) CNOT 2.\n",
            40,
            "CNOT 2 blocks every occurrence: the time point lies strictly between its bounds "
            "(the first ends by 0, the second starts at 5 or later)",
            [("a", (), 7, 7)],
        ),
    ],
)
def test_negation_its_own_bounds_always_satisfy(
    text: str, column: int, message: str, events: list[tuple[str, tuple[int, ...], int, int]]
) -> None:
    assert warnings(text) == [(1, column, f"{message}: the pattern can never fire")]
    # the reference semantics agrees: even the stream made for it gives nothing
    assert _fires(text, events) == 0


@pytest.mark.parametrize(
    ("text", "events"),
    [
        # the bound's own a is not strictly between: "the last a before b"
        ("c <- NOT(a).[a, b].\n", [("a", (), 1, 1), ("b", (), 2, 2)]),
        ("c(X) <- (a(X) SEQ b(X)) CNOT a(X).\n", [("a", (1,), 1, 1), ("b", (1,), 2, 2)]),
        # only a(1) blocks, and X need not be 1
        ("c(X) <- a(X) SEQ b(X) FNOT a(1).\n", [("a", (2,), 1, 1), ("b", (2,), 2, 2)]),
        # the pattern's a is its last event: it does not end before the pattern does
        ("c(X) <- b(X) SEQ a(X) FNOT a(X).\n", [("b", (1,), 1, 1), ("a", (1,), 2, 2)]),
        ("c <- (a MEETS b) CNOT a.\n", [("a", (), 1, 1), ("b", (), 1, 1)]),
        ("c <- NOT(3).[a, 6].\n", [("a", (), 4, 4)]),
        ("c <- NOT(6).[0, a SEQ 6].\n", [("a", (), 1, 1)]),
    ],
)
def test_negations_that_can_let_a_match_through(
    text: str, events: list[tuple[str, tuple[int, ...], int, int]]
) -> None:
    assert warnings(text) == []
    assert _fires(text, events) == 1


# ----------------------------------------------------------------- files checked together


def test_names_span_the_files_checked_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alerts = tmp_path / "alerts.event"
    alerts.write_text("stockAlert(S) <- tick(S).\n", encoding="utf-8")
    alarms = tmp_path / "alarms.event"
    alarms.write_text("alarm(S) <- stockAlert(S) SEQ tick(S).\n", encoding="utf-8")
    assert main(["check", "--warnings-as-errors", str(alerts), str(alarms)]) == 0
    assert capsys.readouterr().err == ""
    alarms.write_text("alarm(S) <- stockalert(S) SEQ tick(S).\n", encoding="utf-8")
    assert main(["check", str(alerts), str(alarms)]) == 0
    assert capsys.readouterr().err.splitlines()[0] == (
        f"{alarms}:1:13: warning: event 'stockalert' is read but no rule derives it: "
        "did you mean 'stockAlert'?"
    )
    alarms.write_text("alarm(S) <- stockAlert(S) SEQ tick(S).\n", encoding="utf-8")
    assert main(["check", "--unread-heads", str(alerts), str(alarms)]) == 0
    # stockAlert is read by the other file: only alarm is unread
    assert [line for line in capsys.readouterr().err.splitlines() if "warning" in line] == [
        f"{alarms}:1:1: warning: no rule reads event 'alarm'"
    ]


def test_shipped_rule_files_checked_together_have_no_warnings() -> None:
    programs = [parse_file(path) for path in sorted((ROOT / "rules").glob("*.event"))]
    found = [
        d.render()
        for index, program in enumerate(programs)
        for d in check(program, others=sum(programs[:index] + programs[index + 1 :], Program()))
    ]
    assert found == []
