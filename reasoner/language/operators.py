"""The binary pattern operators: one record each, read by every pass.

The parser takes its keywords from here, the printer and the Python rule builder their
spelling, the binarizer tells interval operators (joins) from the others, the compiler and
the runtime take an interval operator's retention, start sides, time condition, result
interval and past-use tests. The conditions are Python source: the runtime inlines them into
the join probes it generates when rules are compiled, so nothing here is read per event.

``semantics/reference.py`` does not read this table: it is the independent oracle the engine
is tested against, so it keeps its own plain definition of every operator.

Adding an interval operator is one :class:`Interval` record in :data:`OPERATORS` (plus its
clause in the reference evaluator, and tests); see docs/architecture.md.

>>> OPERATORS["seq"].spelling, OPERATORS["seq"].interval.condition
('SEQ', 'le < rs')
>>> keyword_operator("NOT")
'cnot'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: An operator as the AST stores it: its keyword, lower case.
Operator = Literal[
    "seq",
    "forall_seq",
    "and",
    "par",
    "or",
    "equals",
    "meets",
    "during",
    "starts",
    "finishes",
    "cnot",
    "fnot",
]

#: Which occurrences of a join side wait for later partners:
#: ``keep``: until expired (by a window, or when no future partner can match);
#: ``now``: only while the clock stays at the occurrence's end;
#: ``point``: like ``now``, and only zero-length occurrences;
#: ``none``: never stored, no future partner can satisfy the time condition.
Retention = Literal["keep", "now", "point", "none"]
KEEP: Retention = "keep"
NOW: Retention = "now"
POINT: Retention = "point"
NONE: Retention = "none"


@dataclass(frozen=True, slots=True)
class Interval:
    """How an interval operator pairs a left occurrence [ls, le] with a right one [rs, re].

    Attributes:
        condition: the time condition, a Python expression over ``ls, le, rs, re`` ("" when
            every pair qualifies).
        start, end: the output interval, Python expressions over the same names.
        retention: (left, right): what each side stores for later partners.
        start_sides: the sides (0 left, 1 right) whose start becomes the output's start;
            garbage collection bounds the start of a node's future output by them.
        past_use: per side, None or a Python expression over a stored occurrence's ``s, e``
            and ``floor``: true when no partner starting at ``floor`` or later can still
            match it (PAR needs the partner to start before the occurrence ends, MEETS at its
            end, DURING before its start, STARTS at its start).
    """

    condition: str
    start: str
    end: str
    retention: tuple[Retention, Retention]
    start_sides: tuple[int, ...]
    past_use: tuple[str | None, str | None] = (None, None)


@dataclass(frozen=True, slots=True)
class OperatorInfo:
    """One binary pattern operator.

    Attributes:
        keyword: its keyword, lower case (written in any case in rules).
        meaning: one line for documentation (the builder's docstrings).
        builder: the name of its function in :mod:`reasoner.api.builder`.
        interval: for an interval operator (a join node), its time semantics; None for the
            operators with nodes of their own (OR: a union, CNOT and FNOT: guards).
        negation: whether the right operand is a negated pattern (CNOT, FNOT).
        aliases: other keywords parsed as this operator (ETALIS's infix ``not``).
    """

    keyword: Operator
    meaning: str
    builder: str
    interval: Interval | None = None
    negation: bool = False
    aliases: tuple[str, ...] = ()

    @property
    def spelling(self) -> str:
        """How the printer writes it."""
        return self.keyword.upper()


_MAX = "le if le > re else re"
_MIN = "ls if ls < rs else rs"

#: Every binary pattern operator, in the order documentation lists them.
OPERATORS: dict[str, OperatorInfo] = {
    info.keyword: info
    for info in (
        OperatorInfo(
            "seq",
            "each ends before the next starts.",
            "seq",
            Interval("le < rs", "ls", "re", (KEEP, NONE), (0,)),
        ),
        OperatorInfo(
            "forall_seq",
            "ETALIS's sequence that takes all: each occurrence of the second combines with "
            "every occurrence of the first ending before it that no earlier one took, and "
            "takes (consumes) them, under every policy.",
            "forall_seq",
            Interval("le < rs", "ls", "re", (KEEP, NONE), (0,)),
        ),
        OperatorInfo(
            "and",
            "all of them, in any order.",
            "and_",
            Interval("", _MIN, _MAX, (KEEP, KEEP), (0, 1)),
        ),
        OperatorInfo(
            "par",
            "overlapping by a non-zero length.",
            "par",
            Interval(
                "(ls if ls > rs else rs) < (le if le < re else re)",
                _MIN,
                _MAX,
                (KEEP, KEEP),
                (0, 1),
                ("e <= floor", "e <= floor"),
            ),
        ),
        OperatorInfo("or", "any of them.", "or_"),
        OperatorInfo(
            "equals",
            "same start and end.",
            "equals",
            Interval("ls == rs and le == re", "ls", "le", (NOW, NOW), (0,)),
        ),
        OperatorInfo(
            "meets",
            "each ends where the next starts.",
            "meets",
            Interval("le == rs", "ls", "re", (KEEP, POINT), (0,), ("e < floor", None)),
        ),
        OperatorInfo(
            "during",
            "the first strictly inside the second.",
            "during",
            Interval("rs < ls and le < re", "rs", "re", (KEEP, NONE), (1,), ("s <= floor", None)),
        ),
        OperatorInfo(
            "starts",
            "same start, the first ends first.",
            "starts",
            Interval("ls == rs and le < re", "ls", "re", (KEEP, NONE), (0,), ("s < floor", None)),
        ),
        OperatorInfo(
            "finishes",
            "same end, the first starts later.",
            "finishes",
            Interval("le == re and rs < ls", "rs", "le", (NOW, NOW), (1,)),
        ),
        OperatorInfo(
            "cnot",
            "ETALIS's negation: the first with no occurrence of the second inside it.",
            "cnot",
            negation=True,
            aliases=("not",),
        ),
        OperatorInfo(
            "fnot",
            "the first, unless an occurrence of the second ended before it completes.",
            "fnot",
            negation=True,
        ),
    )
}


def join_interval(op: Operator) -> Interval:
    """The time semantics of an interval operator (one that compiles to a join node).

    Raises:
        ValueError: ``op`` is OR, CNOT or FNOT, which have nodes of their own.
    """
    interval = OPERATORS[op].interval
    if interval is None:
        raise ValueError(f"{op} is not an interval operator")
    return interval


def keyword_operator(word: str) -> Operator:
    """The operator a keyword (or alias) written in rules stands for, in any case.

    Raises:
        KeyError: ``word`` is not an operator keyword.
    """
    return _KEYWORDS[word.lower()]


def keywords() -> tuple[str, ...]:
    """Every keyword and alias the parser accepts as a binary operator, lower case."""
    return tuple(_KEYWORDS)


_KEYWORDS: dict[str, Operator] = {
    word: info.keyword for info in OPERATORS.values() for word in (info.keyword, *info.aliases)
}
