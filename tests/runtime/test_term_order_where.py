"""WHERE conditions with the standard order of terms: the engine and the reference agree."""

from __future__ import annotations

import pytest

from reasoner.errors import RuleCompileError
from reasoner.language.parser import parse
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.semantics.reference import derive
from reasoner.values import Struct


def _both(rules: str, stream: list[Event]) -> list[tuple[object, ...]]:
    """The engine's detections, after checking the reference evaluator finds the same."""
    engine = Engine(rules)
    found = [(d.name, *d.args, d.start, d.end) for e in stream for d in engine.push(e)]
    reference = {(d.name, *d.args, d.start, d.end) for d in derive(parse(rules), stream)}
    assert set(found) == reference
    return found


def _pairs(op: str, values: list[object]) -> list[tuple[object, ...]]:
    stream = [Event.at("a", (v,), t) for t, v in enumerate(values, 1)]
    return _both(f"c(X, Y) <- a(X) SEQ a(Y) WHERE X {op} Y.", stream)


def test_the_reported_rule_finds_its_pair() -> None:
    assert _pairs("@<", [1, 2]) == [("c", 1, 2, 1, 2)]


@pytest.mark.parametrize(
    ("op", "expected"),
    [
        # stream a(2)@1, a(1.0)@2, a(1)@3; by hand: 1.0 @< 1 @< 2 (equal values: float first)
        ("@<", [("c", 1.0, 1, 2, 3)]),
        ("@>", [("c", 2, 1.0, 1, 2), ("c", 2, 1, 1, 3)]),
        ("@=<", [("c", 1.0, 1, 2, 3)]),
        ("@>=", [("c", 2, 1.0, 1, 2), ("c", 2, 1, 1, 3)]),
    ],
)
def test_each_operator_on_numbers(op: str, expected: list[tuple[object, ...]]) -> None:
    assert _pairs(op, [2, 1.0, 1]) == expected


def test_atoms_alphabetically_and_after_numbers() -> None:
    # a(b)@1, a(7)@2, a(a)@3: pairs (earlier, later) with earlier @> later are
    # (b, 7) (atom after number) and (b, a).
    assert _pairs("@>", ["b", 7, "a"]) == [("c", "b", 7, 1, 2), ("c", "b", "a", 1, 3)]


def test_lists_and_compound_terms() -> None:
    # [1, 2] @< [1, 2, 0] (a prefix first), and any list (a '.'/2 term) @< g(0, 0)
    # ('.' < 'g'), but f(9) @< [1, 2] (arity 1 before 2).
    rules = "c(X, Y) <- a(X) SEQ b(Y) WHERE X @< Y."
    stream = [
        Event.at("a", ((1, 2),), 1),
        Event.at("b", ((1, 2, 0),), 2),
        Event.at("b", (Struct("g", (0, 0)),), 3),
        Event.at("b", (Struct("f", (9,)),), 4),
    ]
    assert _both(rules, stream) == [
        ("c", (1, 2), (1, 2, 0), 1, 2),
        ("c", (1, 2), Struct("g", (0, 0)), 1, 3),
    ]


def test_terms_in_the_rule_are_compared_unevaluated() -> None:
    # 1 + 1 is the compound +(1, 1), after every number; as arithmetic it would be 2.
    stream = [Event.at("a", (5,), 1)]
    assert _both("c(X) <- a(X) WHERE X @< 1 + 1.", stream) == [("c", 5, 1, 1)]
    assert _both("c(X) <- a(X) WHERE X @> 1 + 1.", stream) == []


def test_in_static_rules() -> None:
    rules = "q(b). q(1). q(f(a)). p(X, Y) :- q(X), q(Y), X @< Y. c(X, Y) <- a WHERE p(X, Y)."
    found = [(d.name, *d.args, d.start, d.end) for d in Engine(rules).push(Event.at("a", (), 1))]
    assert sorted(found, key=repr) == sorted(
        [
            ("c", 1, "b", 1, 1),
            ("c", 1, Struct("f", ("a",)), 1, 1),
            ("c", "b", Struct("f", ("a",)), 1, 1),
        ],
        key=repr,
    )


def test_an_unbound_operand_is_refused_at_load() -> None:
    with pytest.raises(RuleCompileError, match=r"<rules>:1:25: unbound variable 'Y' in WHERE"):
        Engine("c(X) <- a(X) WHERE X @< Y.")
