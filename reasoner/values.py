"""Run-time values: what event arguments, variable bindings and facts hold.

* numbers are Python ``int``, ``float`` or ``Fraction`` (``1 == 1.0``, as in arithmetic);
* atoms and strings are Python ``str`` (``'GO'``, ``"GO"`` and the JSON ``"GO"`` are equal);
* IRIs are :class:`IRI`, never equal to a plain string;
* compound values are :class:`Struct`; lists are Python tuples.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any


@dataclass(frozen=True, slots=True)
class IRI:
    """An RDF IRI value (``{"iri": "http://..."}`` in JSON, ``<http://...>`` in rules)."""

    value: str

    def __str__(self) -> str:
        return self.value

    def __reduce__(self) -> tuple[type[IRI], tuple[str]]:
        """Pickled as a call ``IRI(value)``: about twice as fast both ways as a slotted
        dataclass's state (batches of events to workers, knowledge versions).

        >>> import pickle
        >>> pickle.loads(pickle.dumps(IRI("http://e/a")))
        IRI(value='http://e/a')
        """
        return IRI, (self.value,)


@dataclass(frozen=True, slots=True)
class Struct:
    """A compound value ``functor(args...)``."""

    functor: str
    args: tuple[Value, ...]


Value = int | float | Fraction | str | IRI | Struct | tuple  # tuple: a Prolog list

#: Time stamps: non-negative numbers (ISO-8601 input is converted to epoch seconds).
Time = int | float | Fraction
#: The exact types of number values, hence of times (``bool`` is not a number value).
NUMBER_TYPES = frozenset({int, float, Fraction})


def json_value(value: Value) -> Any:
    """A value as JSON data, the form event files use: ``{"iri": ...}`` for an IRI,
    ``{"functor": f, "args": [...]}`` for a compound value, a list for a list, and a whole
    ``Fraction`` as an integer (others as a float).

    >>> json_value((IRI("http://ex.org/a"), Struct("f", (1,)), Fraction(3, 2)))
    [{'iri': 'http://ex.org/a'}, {'functor': 'f', 'args': [1]}, 1.5]
    """
    match value:
        case IRI(iri):
            return {"iri": iri}
        case Struct(functor, args):
            return {"functor": functor, "args": [json_value(item) for item in args]}
        case tuple():
            return [json_value(item) for item in value]
        case Fraction():
            return value.numerator if value.denominator == 1 else float(value)
        case _:
            return value
