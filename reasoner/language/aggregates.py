"""The aggregate functions of ``aggregate(F, p, R[, W])`` and what each reads."""

from __future__ import annotations

from reasoner.language.ast import Aggregate, Atom, Compound, Term, Var
from reasoner.language.printer import to_source

#: Functions over a variable; ``count`` takes none.
FUNCTIONS = ("count", "sum", "avg", "min", "max", "stddev")


def aggregate_function(term: Term) -> tuple[str, str | None]:
    """``count`` -> ("count", None); ``sum(X)`` -> ("sum", "X"); ValueError for anything else.

    >>> aggregate_function(Compound("avg", (Var("W"),)))
    ('avg', 'W')
    """
    match term:
        case Atom("count"):
            return "count", None
        case Compound(name, (Var(x),)) if name in FUNCTIONS[1:] and x != "_":
            return name, x
    raise ValueError(
        f"unknown aggregate function {to_source(term)}: use count, or sum, avg, min, max or "
        "stddev of a variable"
    )


def group_variables(aggregate: Aggregate, bound: frozenset[str]) -> tuple[str, ...]:
    """A sliding aggregate's group: the variables its pattern binds (``bound``) other than
    the aggregated one and those written ``_Name`` (don't-care, as in Prolog), in name
    order (an unknown function is the checker's to report)."""
    try:
        _, argument = aggregate_function(aggregate.function)
    except ValueError:
        argument = None
    return tuple(sorted(v for v in bound if v != argument and not v.startswith("_")))
