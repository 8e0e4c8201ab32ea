"""Event atoms with lists and compounds as arguments: the engine takes the arguments apart
(``[H | T]``, ``p(X, 2)``), as the reference evaluator unifies them."""

from __future__ import annotations

from reasoner.language.parser import parse
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.semantics.reference import derive
from reasoner.values import Struct

RULES = """
d(X) <- a([X, 1]).
e([X]) <- b(X).
f(T) <- g([H | T], p(H, 2)).
same(X) <- h(X, [X]).
"""

STREAM = [
    Event.at("b", (1,), 1),
    Event.at("a", ((5, 1),), 2),
    Event.at("a", ((5, 2),), 3),  # second element is not 1
    Event.at("a", ((5, 1, 0),), 4),  # a longer list
    Event.at("g", ((7, 8, 9), Struct("p", (7, 2))), 5),
    Event.at("g", ((7, 8, 9), Struct("p", (6, 2))), 6),  # H differs
    Event.at("g", ("abc", Struct("p", (7, 2))), 7),  # not a list
    Event.at("g", ((7,), Struct("q", (7, 2))), 8),  # other functor
    Event.at("h", (3, (3,)), 9),
    Event.at("h", (3, (4,)), 10),
]


def test_lists_and_compounds_in_event_atoms_are_matched_structurally() -> None:
    engine = Engine(RULES)
    found = [d for event in STREAM for d in engine.push(event)]
    assert found == [
        Event("e", ((1,),), 1, 1),
        Event("d", (5,), 2, 2),
        Event("f", ((8, 9),), 5, 5),
        Event("same", (3,), 9, 9),
    ]
    assert set(found) == derive(parse(RULES), STREAM)
