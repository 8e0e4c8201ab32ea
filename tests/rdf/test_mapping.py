"""``rdf_event`` declarations compiled into graph → event mappings, and the triple view."""

import pytest

from reasoner.errors import RuleCompileError
from reasoner.language.ast import Program
from reasoner.language.parser import parse
from reasoner.rdf.mapping import TRIPLE, GraphMapping, MappingError
from reasoner.values import IRI

EX = "http://ex.org/"
PREFIX = f":- prefix(ex, '{EX}').\n"


def ex(name: str) -> IRI:
    return IRI(EX + name)


OBSERVATIONS = [
    (ex("o1"), ex("observedProperty"), ex("WindSpeed")),
    (ex("o1"), ex("result"), 41.5),
    (ex("o1"), ex("station"), "KSLC"),
    (ex("o2"), ex("observedProperty"), ex("Visibility")),
    (ex("o2"), ex("result"), 0.1),
    (ex("o2"), ex("station"), "KSLC"),
]


def test_without_declarations_every_triple_is_a_triple_event() -> None:
    mapping = GraphMapping(parse("a <- b."))
    assert mapping.events(OBSERVATIONS[:2], 5) == [
        (TRIPLE, OBSERVATIONS[0]),
        (TRIPLE, OBSERVATIONS[1]),
    ]


def test_a_declaration_joins_triples_and_fills_absent_values() -> None:
    mapping = GraphMapping(
        parse(
            PREFIX + "rdf_event reading(S, T, W, G) :- time(T), rdf(_, ex:station, S),\n"
            "  (rdf(O, ex:observedProperty, ex:WindSpeed), rdf(O, ex:result, W)\n"
            "   -> true ; W = none),\n"
            "  (rdf(P, ex:observedProperty, ex:WindGust), rdf(P, ex:result, G)\n"
            "   -> true ; G = none)."
        )
    )
    # Two observations name the station: one event all the same (a graph is a set).
    assert mapping.events(OBSERVATIONS, 60) == [("reading", ("KSLC", 60, 41.5, "none"))]


def test_every_declaration_and_every_solution_gives_an_event() -> None:
    mapping = GraphMapping(
        parse(
            PREFIX + "rdf_event observed(O, P) :- rdf(O, ex:observedProperty, P).\n"
            "rdf_event windy(V * 2) :- rdf(O, ex:observedProperty, ex:WindSpeed),\n"
            "    rdf(O, ex:result, V), V > 30."
        )
    )
    assert mapping.events(OBSERVATIONS, 0) == [
        ("observed", (ex("o1"), ex("WindSpeed"))),
        ("observed", (ex("o2"), ex("Visibility"))),
        ("windy", (83.0,)),
    ]
    assert mapping.events(OBSERVATIONS[3:], 0) == [("observed", (ex("o2"), ex("Visibility")))]
    assert mapping.events([], 0) == []


def test_a_mapping_cannot_ask_the_background_knowledge() -> None:
    program = parse("rdf_event a(X) :-\n    rdf(X, <urn:p>, _), known(X).")
    with pytest.raises(RuleCompileError) as error:
        GraphMapping(program)
    assert error.value.message == "unknown predicate 'known/1'"
    assert (error.value.line, error.value.column) == (2, 25)


def test_an_unknown_prefix_is_a_compile_error() -> None:
    with pytest.raises(RuleCompileError, match="unknown prefix 'nope'"):
        GraphMapping(parse("rdf_event a(X) :- rdf(X, nope:p, _)."))


def test_bad_arithmetic_gives_no_event() -> None:
    mapping = GraphMapping(parse("rdf_event half(H) :- rdf(_, <urn:p>, V), H is V / 2."))
    assert mapping.events([(IRI("urn:s"), IRI("urn:p"), 3)], 0) == [("half", (1.5,))]
    assert mapping.events([(IRI("urn:s"), IRI("urn:p"), "text")], 0) == []


def test_a_head_variable_left_unbound_rejects_the_graph() -> None:
    mapping = GraphMapping(
        parse("rdf_event half(H) :- rdf(_, <urn:p>, V), (V > 1 -> H is V / 2 ; true).")
    )
    assert mapping.events([(IRI("urn:s"), IRI("urn:p"), 3)], 0) == [("half", (1.5,))]
    with pytest.raises(MappingError, match=r"^rdf_event half \(<rules>:1:1\): unbound variable"):
        mapping.events([(IRI("urn:s"), IRI("urn:p"), 1)], 0)


def test_the_triple_view_without_declarations_is_the_declared_triple_view() -> None:
    declared = GraphMapping(parse("rdf_event triple(S, P, O) :- rdf(S, P, O)."))
    a, p, q = IRI("urn:a"), IRI("urn:p"), IRI("urn:q")
    triples = [(a, p, 1), (a, q, "x"), (a, p, 1), (a, p, 2.5)]
    expected = [("triple", (a, p, 1)), ("triple", (a, q, "x")), ("triple", (a, p, 2.5))]
    assert declared.events(triples, 3) == expected
    assert GraphMapping(Program()).events(triples, 3) == expected
