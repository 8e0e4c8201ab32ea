"""The knowledge a program carries itself: its facts, and its Horn rules evaluated.

The engine answers WHERE conditions from this when it is given no other knowledge.
"""

from __future__ import annotations

from reasoner.knowledge.base import Knowledge
from reasoner.knowledge.facts import FactBase
from reasoner.language.ast import Program, term_variables


def program_knowledge(program: Program) -> Knowledge:
    """The static knowledge of a program alone: its facts, and its Horn rules evaluated
    (stratified, semi-naive; function-like rules answered on demand).

    >>> from reasoner.language.parser import parse
    >>> kb = program_knowledge(parse("p(1). q(X) :- p(X)."))
    >>> list(kb.solve("q", (None,)))
    [(1,)]
    """
    facts = FactBase.from_program(program)
    # Ground facts are the fact base's; rules and non-ground facts (`p(_X).`) the Datalog's.
    rules = [r for r in program.static_rules if r.body or any(term_variables(r.head))]
    if not rules:
        return facts
    from reasoner.knowledge.datalog import DerivedKnowledge, evaluate, prepare

    prefixes = program.prefixes
    strata = prepare(rules, prefixes, program.event_rules)
    return DerivedKnowledge(facts, evaluate(strata, facts, prefixes), strata, prefixes)
