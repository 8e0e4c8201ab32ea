"""The operator records: complete, and read by the parser, the printer and the builder."""

from itertools import product
from typing import get_args

import pytest

from reasoner.api import builder
from reasoner.language.ast import Binary, EventAtom
from reasoner.language.operators import (
    OPERATORS,
    Operator,
    join_interval,
    keyword_operator,
    keywords,
)
from reasoner.language.parser import parse
from reasoner.language.printer import to_source


def test_every_operator_has_one_record_under_its_keyword() -> None:
    assert list(OPERATORS) == list(get_args(Operator))
    assert all(key == info.keyword for key, info in OPERATORS.items())


def test_the_interval_operators_are_the_joins() -> None:
    joins = [op for op, info in OPERATORS.items() if info.interval is not None]
    assert joins == [
        "seq",
        "forall_seq",
        "and",
        "par",
        "equals",
        "meets",
        "during",
        "starts",
        "finishes",
    ]
    assert [op for op, info in OPERATORS.items() if info.negation] == ["cnot", "fnot"]
    with pytest.raises(ValueError, match="or is not an interval operator"):
        join_interval("or")


def test_interval_expressions_agree_with_allen_on_small_intervals() -> None:
    # Independent definitions of the time conditions (docs/language.md), on every pair of
    # intervals with ends in 0..3.
    allen = {
        "seq": lambda ls, le, rs, re: le < rs,
        "forall_seq": lambda ls, le, rs, re: le < rs,  # (its consumption is its own)
        "and": lambda ls, le, rs, re: True,
        "par": lambda ls, le, rs, re: max(ls, rs) < min(le, re),
        "equals": lambda ls, le, rs, re: (ls, le) == (rs, re),
        "meets": lambda ls, le, rs, re: le == rs,
        "during": lambda ls, le, rs, re: rs < ls and le < re,
        "starts": lambda ls, le, rs, re: ls == rs and le < re,
        "finishes": lambda ls, le, rs, re: le == re and rs < ls,
    }
    assert set(allen) == {op for op, info in OPERATORS.items() if info.interval is not None}
    intervals = [(s, e) for s in range(4) for e in range(s, 4)]
    for op, holds in allen.items():
        interval = join_interval(op)  # type: ignore[arg-type]
        for (ls, le), (rs, re) in product(intervals, intervals):
            names = {"ls": ls, "le": le, "rs": rs, "re": re}
            assert bool(eval(interval.condition or "True", {}, names)) == holds(ls, le, rs, re)
            if holds(ls, le, rs, re):
                # every operator's output is the hull of the pair
                start, end = eval(interval.start, {}, names), eval(interval.end, {}, names)
                assert (start, end) == (min(ls, rs), max(le, re))


@pytest.mark.parametrize("word", keywords())
def test_the_parser_reads_every_keyword_in_any_case(word: str) -> None:
    for written in (word, word.upper(), word.capitalize()):
        body = parse(f"c <- a {written} b.").event_rules[0].body
        assert body == Binary(keyword_operator(word), EventAtom("a"), EventAtom("b"))


def test_not_is_read_as_cnot() -> None:
    assert keyword_operator("Not") == "cnot"


@pytest.mark.parametrize("op", list(OPERATORS))
def test_builder_and_printer_follow_the_record(op: Operator) -> None:
    info = OPERATORS[op]
    build = getattr(builder, info.builder)
    assert build.__name__ == info.builder
    assert info.builder in builder.__all__
    built = build("a", "b", "c")
    assert built == Binary(op, Binary(op, EventAtom("a"), EventAtom("b")), EventAtom("c"))
    assert to_source(built) == f"a {info.spelling} b {info.spelling} c"
    with pytest.raises(TypeError, match=f"{info.spelling} needs at least two patterns, got 1"):
        build("a")
