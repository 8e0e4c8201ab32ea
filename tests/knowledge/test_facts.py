import pytest

from reasoner.errors import RuleCompileError
from reasoner.knowledge.facts import FactBase
from reasoner.language.ast import (
    Atom,
    Compound,
    Directive,
    Iri,
    Number,
    PName,
    Program,
    StaticRule,
    String,
    Var,
)
from reasoner.values import IRI, Struct

WT = "http://ex.org/wt#"


def test_solve_by_bound_positions():
    kb = FactBase([("p", (1, "a")), ("p", (2, "a")), ("p", (2, "b")), ("q", (1,))])
    assert list(kb.solve("p", (None, "a"))) == [(1, "a"), (2, "a")]
    assert list(kb.solve("p", (2, None))) == [(2, "a"), (2, "b")]
    assert list(kb.solve("p", (2, "b"))) == [(2, "b")]
    assert list(kb.solve("p", (None, None))) == [(1, "a"), (2, "a"), (2, "b")]
    assert list(kb.solve("p", (3, None))) == []
    assert list(kb.solve("missing", (None,))) == []


def test_duplicates_are_stored_once_and_numbers_compare_by_value():
    kb = FactBase([("p", (1,)), ("p", (1,)), ("p", (2.0,))])
    assert len(kb) == 2
    assert list(kb.solve("p", (2,))) == [(2.0,)]


def test_defines_by_predicate_and_arity_and_declared_empty():
    kb = FactBase([("p", (1, 2))], declared=[("empty", 1)])
    assert kb.defines("p", 2) and not kb.defines("p", 1)
    assert kb.defines("empty", 1) and list(kb.solve("empty", (None,))) == []
    assert kb.predicates == frozenset({("p", 2), ("empty", 1)})


def test_index_is_built_once_per_mask_and_reused():
    kb = FactBase([("p", (i, i % 3)) for i in range(30)])
    assert len(list(kb.solve("p", (None, 0)))) == 10
    index = kb._indexes[(("p", 2), (1,))]
    assert len(list(kb.solve("p", (None, 1)))) == 10
    assert kb._indexes[(("p", 2), (1,))] is index


def test_from_program_takes_ground_facts_only():
    program = Program(
        (
            Directive(Compound("prefix", (Atom("wt"), Atom(WT)))),
            StaticRule(Compound("edge", (Atom("a"), Number(1)))),
            StaticRule(Compound("name", (String("x"), Iri(WT + "s1")))),
            StaticRule(Compound("wt:speed", (PName("wt", "s1"), Number(40)))),
            StaticRule(Compound("loc", (Compound("p", (Number(1), Number(2))),))),
            StaticRule(Atom("sunny")),
            StaticRule(Compound("any", (Var("X"),))),  # not ground: a rule, not a fact
            StaticRule(Compound("r", (Var("X"),)), (Compound("edge", (Var("X"), Number(1))),)),
        )
    )
    kb = FactBase.from_program(program)
    assert list(kb.solve("edge", (None, None))) == [("a", 1)]
    assert list(kb.solve("name", ("x", None))) == [("x", IRI(WT + "s1"))]
    assert list(kb.solve(WT + "speed", (None, None))) == [(IRI(WT + "s1"), 40)]
    assert list(kb.solve("loc", (None,))) == [(Struct("p", (1, 2)),)]
    assert kb.defines("sunny", 0)
    assert not kb.defines("any", 1) and not kb.defines("r", 1)


def test_from_program_rejects_unknown_prefix():
    program = Program((StaticRule(Compound("zz:p", (Number(1),))),))
    with pytest.raises(RuleCompileError, match="unknown prefix 'zz'"):
        FactBase.from_program(program)


# ------------------------------------------------------------------------ fact tables


def _facts(n: int, extra: str = "") -> str:
    lines = [f"near('S{i}', {i}, \"s{i}\", <http://e.org/{i}>, wt:n{i}{extra})." for i in range(n)]
    return ":- prefix(wt, 'http://ex.org/wt#').\n" + "\n".join(lines) + "\n"


def test_a_fact_table_fills_the_fact_base_as_its_facts_would():
    from reasoner.language.ast import Facts
    from reasoner.language.parser import parse

    text = _facts(20) + "near('S1', 1, \"s1\", <http://e.org/1>, wt:n1).\nq(a, b).\n" + _facts(20)
    program = parse(text)
    assert any(isinstance(s, Facts) for s in program.statements)
    expected = FactBase.from_program(Program(program.written))  # (one statement per fact)
    kb = FactBase.from_program(program)
    assert kb.tuples("near", 5) == expected.tuples("near", 5)
    assert kb.tuples("near", 5)[1] == ("S1", 1, "s1", IRI("http://e.org/1"), IRI(WT + "n1"))
    assert len(kb) == len(expected) == 21


def test_an_unknown_prefix_in_a_table_is_reported_at_its_fact():
    from reasoner.language.parser import parse

    text = "\n".join(f"p(a{i}, zz:x{i})." for i in range(20)) + "\nzz:q(1, 2).\n" * 20
    program = parse(text, "f.event")
    with pytest.raises(RuleCompileError) as error:
        FactBase.from_program(program)
    assert str(error.value).startswith("f.event:1:")
    assert "unknown prefix 'zz'" in str(error.value)


def test_facts_given_from_python_are_one_table():
    from reasoner.api import facts, program
    from reasoner.api.terms import atom, pname

    table = facts("near", [("KSLC", "KPVU"), ("KPVU", 3), (atom("a"), pname("wt:x"))])
    kb = FactBase.from_program(
        program(table, Directive(Compound("prefix", (Atom("wt"), Atom(WT)))))
    )
    assert kb.tuples("near", 2) == (("KSLC", "KPVU"), ("KPVU", 3), ("a", IRI(WT + "x")))
    assert table.rules[2] == StaticRule(Compound("near", (Atom("a"), PName("wt", "x"))))
    with pytest.raises(TypeError):
        facts("near", [(Var("X"),)])
