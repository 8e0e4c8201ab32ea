"""The ``rdf_event`` statement: parsing, printing, checking; ETALIS text keeps its meaning."""

import pytest

from reasoner.errors import RuleSyntaxError
from reasoner.language.ast import (
    Atom,
    Compound,
    EventAtom,
    PName,
    RdfEvent,
    StaticRule,
    Var,
    dump,
)
from reasoner.language.check import check
from reasoner.language.parser import parse
from reasoner.language.printer import to_source

S, W, OBS = Var("S"), Var("W"), Var("O")


def test_rdf_event_parses_into_head_and_goals() -> None:
    program = parse(
        "rdf_event reading(S, W) :-\n"
        "    rdf(O, sosa:madeBySensor, S),\n"
        "    (rdf(O, sosa:hasSimpleResult, W) -> true ; W = none)."
    )
    assert program.statements == (
        RdfEvent(
            EventAtom("reading", (S, W)),
            (
                Compound("rdf", (OBS, PName("sosa", "madeBySensor"), S)),
                Compound(
                    ";",
                    (
                        Compound(
                            "->",
                            (
                                Compound("rdf", (OBS, PName("sosa", "hasSimpleResult"), W)),
                                Atom("true"),
                            ),
                        ),
                        Compound("=", (W, Atom("none"))),
                    ),
                ),
            ),
        ),
    )
    assert program.rdf_events == program.statements and program.event_rules == ()
    mapping = program.rdf_events[0]
    assert mapping.span is not None and (mapping.span.line, mapping.span.column) == (1, 1)


def test_rdf_event_prints_back_to_itself() -> None:
    text = "rdf_event 'wind reading'(S, W) :- rdf(O, <http://ex.org/p>, W), rdf(O, p, S).\n"
    program = parse(text)
    assert to_source(program) == text
    assert parse(to_source(program)) == program
    assert dump(program).startswith("RdfEvent(head=EventAtom(name=wind reading")


@pytest.mark.parametrize(
    "text",
    [
        "rdf_event(foo).",  # a fact named rdf_event, as an ETALIS file may have
        "rdf_event :- true.",
        "rdf_events(x) :- true.",
    ],
)
def test_etalis_text_using_the_word_is_unchanged(text: str) -> None:
    (statement,) = parse(text).statements
    assert isinstance(statement, StaticRule)


def test_rdf_event_needs_a_body() -> None:
    with pytest.raises(RuleSyntaxError) as error:
        parse("rdf_event reading(S).")
    assert (error.value.line, error.value.column) == (1, 21)
    assert error.value.message == "expected ':-', found '.'"


def test_head_variable_missing_from_the_body_is_reported() -> None:
    program = parse("x <- a.\nrdf_event reading(S, W) :- rdf(S, p, o).")
    (diagnostic,) = check(program)
    assert diagnostic.message == "unbound variable 'W' in the rdf_event head"
    assert (diagnostic.severity, diagnostic.span.line, diagnostic.span.column) == ("error", 2, 22)


def test_arity_clash_between_mapping_and_rule_is_a_warning() -> None:
    program = parse("rdf_event reading(S) :- rdf(S, p, o).\nhigh(S) <- reading(S, _).")
    (diagnostic,) = check(program)
    assert diagnostic.severity == "warning"
    assert diagnostic.message == "event 'reading' is used with 1 and with 2 arguments"
    assert diagnostic.span is not None and diagnostic.span.line == 2
