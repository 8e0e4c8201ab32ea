"""ETALIS's own spellings of patterns and goals (docs/language.md, docs/etalis.md)."""

from __future__ import annotations

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
