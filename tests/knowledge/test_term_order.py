"""Prolog's standard order of terms (``@<``, ``@>``, ``@=<``, ``@>=``) on run-time values."""

from fractions import Fraction

import pytest

from reasoner.knowledge.builtins import TERM_ORDER, EvaluationError, order_key
from reasoner.values import IRI, Struct

LT, GT, LE, GE = (TERM_ORDER[op] for op in ("@<", "@>", "@=<", "@>="))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (1, 2),  # numbers by value
        (-3.5, 1),
        (Fraction(1, 3), 0.5),
        (1.0, 1),  # equal value: float before integer
        (0.5, Fraction(1, 2)),  # float before rational
        (float("nan"), float("-inf")),  # NaN first
        (99, "a"),  # numbers before atoms
        ("Z", "a"),  # atoms by character code
        ("ab", "abc"),
        ("zzz", IRI("http://a")),  # atoms before IRIs
        (IRI("http://a"), IRI("http://b")),
        (IRI("http://z"), Struct("a", ())),  # IRIs before compound terms
        ("z", Struct("f", (1,))),
        (Struct("z", (1,)), Struct("a", (1, 1))),  # arity first
        (Struct("f", (9,)), Struct("g", (1,))),  # then name
        (Struct("f", (1, "b")), Struct("f", (1, "c"))),  # then arguments, left to right
        ((), "a"),  # [] is the atom '[]': '[' is before 'a'
        ((), (1,)),  # [] before any non-empty list
        ((1, 2), (1, 2, 3)),  # a prefix first: its tail [] is before '.'(3, [])
        ((1, 9), (2,)),  # the heads decide first
        ((5,), Struct("g", (1, 1))),  # '.'/2 before g/2 ('.' < 'g')
        (Struct("f", (1,)), (1,)),  # f/1 before '.'/2: arity first
    ],
)
def test_each_operator_orders_a_before_b(a, b) -> None:
    assert (LT(a, b), GT(a, b), LE(a, b), GE(a, b)) == (True, False, True, False)
    assert (LT(b, a), GT(b, a), LE(b, a), GE(b, a)) == (False, True, False, True)


@pytest.mark.parametrize(
    "value", [3, 2.5, "a", IRI("http://a"), Struct("f", (1, (2,))), (), (1, "x")]
)
def test_a_value_is_neither_before_nor_after_itself(value) -> None:
    assert (LT(value, value), GT(value, value), LE(value, value), GE(value, value)) == (
        False,
        False,
        True,
        True,
    )


def test_a_sort_by_the_key_is_prologs_msort() -> None:
    # ISO order, by hand: numbers (1.0 before 1), atoms ('[' < 'a' < 'b'), then compounds
    # by arity (f/1, then '.'/2 before g/2 as '.' < 'g').
    values = [Struct("f", ("a",)), (1,), "b", 2, 1.0, "a", Struct("g", (1, 2)), (), 1]
    assert sorted(values, key=order_key) == [
        1.0,
        1,
        2,
        (),
        "a",
        "b",
        Struct("f", ("a",)),
        (1,),
        Struct("g", (1, 2)),
    ]


def test_a_boolean_is_not_a_term_value() -> None:
    with pytest.raises(EvaluationError, match="not a term value"):
        order_key(True)
