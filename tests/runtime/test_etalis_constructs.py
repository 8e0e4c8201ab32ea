"""ETALIS's own spellings of patterns and goals (docs/language.md, docs/etalis.md)."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from connectors.cli import main
from reasoner.errors import RuleCompileError
from reasoner.language.parser import parse
from reasoner.language.printer import to_source
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event


def _found(
    rules: str, events: list[Event], policy: str = "unrestricted"
) -> list[tuple[object, ...]]:
    engine = Engine(rules, policy=policy)  # type: ignore[arg-type]
    return [(d.name, *d.args, d.start, d.end) for e in events for d in engine.push(e)]


def test_seq_prolog_goal_is_where_on_the_left_operand() -> None:
    rule = parse("m(M) <- m(T) SEQ a(X) SEQ prolog(min(X, T, M)).").event_rules[0]
    assert to_source(rule.body) == "m(T) SEQ a(X) WHERE min(X, T, M)"
    check = parse("d(X) <- a(X) SEQ b(X) SEQ check(X > 1).").event_rules[0]
    assert to_source(check.body) == "a(X) SEQ b(X) WHERE X > 1"


def test_infix_check_is_where() -> None:
    rule = parse("d(X) <- a(X) seq b(X) check (X > 1, X < 5).").event_rules[0]
    assert to_source(rule.body) == "a(X) SEQ b(X) WHERE X > 1, X < 5"


def test_running_minimum_with_prolog_min_under_recent() -> None:
    # ETALIS's aggregates_classic style: the running minimum, one step per a(X).
    rules = "m(100) <- s.\nm(M) <- m(T) seq a(X) seq prolog(min(X, T, M))."
    stream = [
        Event.at("s", (), 1),
        Event.at("a", (7,), 2),
        Event.at("a", (3,), 3),
        Event.at("a", (9,), 4),
    ]
    assert _found(rules, stream, "recent") == [
        ("m", 100, 1, 1),
        ("m", 7, 1, 2),
        ("m", 3, 1, 3),
        ("m", 3, 1, 4),
    ]


def test_max_of_two_numbers_and_a_non_number_gives_no_solution() -> None:
    rules = "big(M) <- a(X, Y) WHERE max(X, Y, M)."
    stream = [Event.at("a", (2, 5), 1), Event.at("a", (8, -1), 2), Event.at("a", ("none", 1), 3)]
    assert _found(rules, stream) == [("big", 5, 1, 1), ("big", 8, 2, 2)]


def test_do_in_the_head_and_in_the_pattern_prints_once_per_detection() -> None:
    out = io.StringIO()
    rules = (
        "c do write(hello) <- a SEQ b.\n"
        "d(X) <- (a(X) SEQ b(X) WHERE X > 1) do (write(got(X, [X])), nl).\n"
    )
    engine = Engine(rules, action_output=out)
    stream = [
        Event.at("a", (), 1),
        Event.at("a", (1,), 1),
        Event.at("a", (2,), 1),
        Event.at("b", (1,), 2),
        Event.at("b", (2,), 2),
        Event.at("b", (), 3),
    ]
    found = [(d.name, *d.args) for e in stream for d in engine.push(e)]
    assert found == [("d", 2), ("c",)]
    assert out.getvalue() == "got(2,[2])\nhello"


def test_registered_actions_run_with_the_values_only_for_what_passes_a_negation() -> None:
    calls: list[tuple[object, ...]] = []
    rules = "e(X) <- (f(X) CNOT g(X)) do note(X, done).\nh(X) <- (a(X) SEQ b(X)) do note(X)."
    engine = Engine(rules, actions={"note": lambda *args: calls.append(args)})
    stream = [
        Event.at("g", (1,), 2),
        Event("f", (1,), 1, 3),
        Event("f", (2,), 4, 6),
        Event.at("a", (5,), 7),
        Event.at("a", (6,), 8),
        Event.at("b", (6,), 9),
    ]
    found = [(d.name, *d.args) for e in stream for d in engine.push(e)]
    assert found == [("e", 2), ("h", 6)]
    assert calls == [(2, "done"), (6,)]


def test_an_unknown_action_or_an_unbound_one_is_refused_where_it_is_written() -> None:
    with pytest.raises(RuleCompileError) as info:
        Engine("c(X) <- a(X) do notify(X).")
    assert str(info.value).startswith("<rules>:1:17: unknown action 'notify/1'")
    with pytest.raises(RuleCompileError) as unbound:
        Engine("c(X) <- a(X) do write(Y).")
    assert str(unbound.value).startswith("<rules>:1:23: unbound variable 'Y' in WHERE")


def test_reasoner_run_prints_actions_on_standard_error(tmp_path: Path) -> None:
    rules = tmp_path / "do.event"
    rules.write_text("c(X) do (write(seen(X)), nl) <- a(X) SEQ b.\n", encoding="utf-8")
    events = tmp_path / "in.jsonl"
    events.write_text('{"name": "a", "args": [1], "time": 1}\n{"name": "b", "time": 2}\n')
    out = io.StringIO()
    err = io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        assert main(["run", str(rules), "--events", str(events)]) == 0
    assert out.getvalue() == '{"name":"c","args":[1],"start":1,"end":2}\n'
    assert err.getvalue().startswith("seen(1)\n")


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ("garbage_control(general). garbage_window(1).", [("d", 2, 3.0, 3.5)]),
        (
            ":- set_etalis_flag(garbage_control, general). :- set_etalis_flag(garbage_window, 2).",
            [("d", 1, 1, 3.0), ("d", 2, 3.0, 3.5)],
        ),
        ("garbage_control(general).", [("d", 1, 1, 3.0), ("d", 2, 3.0, 3.5)]),
        ("garbage_control(pattern). garbage_window(1).", [("d", 1, 1, 3.0), ("d", 2, 3.0, 3.5)]),
    ],
)
def test_general_garbage_collection_is_a_window_on_every_rule(
    flags: str, expected: list[tuple[object, ...]]
) -> None:
    # a(1) at 1 and b(1) at 3: the match lasts 2, more than a garbage window of 1.
    stream = [
        Event.at("a", (1,), 1),
        Event.at("b", (1,), 3.0),
        Event.at("a", (2,), 3.0),
        Event.at("b", (2,), 3.5),
    ]
    rules = flags + "\nd(X) <- a(X) SEQ b(X)."
    assert _found(rules, stream) == expected


def test_check_and_timestamp_read_the_interval_with_t1_and_t2() -> None:
    rules = (
        "d(X) <- a(X) SEQ b(X) check (t1(T1), t2(T2), datime_minus_datime(T2, T1, D), D < 2).\n"
        "e(X, S, E) <- (a(X) SEQ b(X) timestamp (t1(S), t2(E))) SEQ c(X).\n"
    )
    stream = [
        Event.at("a", (1,), 1),
        Event.at("b", (1,), 2),
        Event.at("a", (2,), 3),
        Event.at("b", (2,), 6),
        Event.at("c", (2,), 7),
    ]
    assert _found(rules, stream) == [
        ("d", 1, 1, 2),
        ("e", 2, 3, 6, 3, 7),
    ]


def test_timestamps_of_nested_patterns_reach_an_action() -> None:
    out = io.StringIO()
    rules = (
        "d(X) <- ((a(X) SEQ b(X) timestamp (t1(T1), t2(T2))) SEQ c(X) timestamp "
        "(t1(T3), t2(T4))) do (write(times(T1, T2, T3, T4)), nl)."
    )
    engine = Engine(rules, action_output=out)
    stream = [Event.at("a", (1,), 1), Event.at("b", (1,), 2), Event.at("c", (1,), 4)]
    assert [(d.name, *d.args, d.start, d.end) for e in stream for d in engine.push(e)] == [
        ("d", 1, 1, 4)
    ]
    assert out.getvalue() == "times(1,2,1,4)\n"


def test_printing_goals_in_a_condition_print_what_passes_the_tests_before_them() -> None:
    out = io.StringIO()
    rules = "d(X) <- a(X) SEQ b(X) WHERE (X > 1, write(x(X)), nl)."
    engine = Engine(rules, action_output=out)
    stream = [
        Event.at("a", (1,), 1),
        Event.at("a", (2,), 2),
        Event.at("b", (1,), 3),
        Event.at("b", (2,), 4),
    ]
    assert [(d.name, *d.args) for e in stream for d in engine.push(e)] == [("d", 2)]
    assert out.getvalue() == "x(2)\n"


def test_a_printing_goal_shows_a_variable_the_condition_binds_later_as_an_underscore() -> None:
    # ETALIS's ep_sparql_04 prints the knowledge goal it is about to ask.
    out = io.StringIO()
    rules = "ceo(1, ann).\nd(X, C) <- a(X) WHERE (write(ceo(X, [C])), nl, ceo(X, C))."
    engine = Engine(rules, action_output=out)
    stream = [Event.at("a", (1,), 1), Event.at("a", (2,), 2)]
    assert [(d.name, *d.args) for e in stream for d in engine.push(e)] == [("d", 1, "ann")]
    assert out.getvalue() == "ceo(1,[_])\nceo(2,[_])\n"
    with pytest.raises(RuleCompileError) as never:
        Engine("d(X) <- a(X) WHERE (write(ceo(X, C)), X > 0).")
    assert str(never.value).startswith("<rules>:1:34: unbound variable 'C' in WHERE")
