"""The knowledge a program carries itself: its facts, and its Horn rules evaluated.

The engine answers WHERE conditions from this when it is given no other knowledge.
"""

from __future__ import annotations

from reasoner.knowledge.base import Knowledge
from reasoner.knowledge.facts import FactBase
from reasoner.language.ast import Program, StaticRule, term_variables


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
    rules = [
        r
        for r in program.statements  # (a fact table holds ground facts only)
        if isinstance(r, StaticRule) and (r.body or any(term_variables(r.head)))
    ]
    if not rules:
        return facts
    from reasoner.knowledge.datalog import DerivedKnowledge, evaluate, prepare

    prefixes = program.prefixes
    strata = prepare(rules, prefixes, program.event_rules)
    return DerivedKnowledge(facts, evaluate(strata, facts, prefixes), strata, prefixes)


def check_conditions(knowledge: Knowledge, program: Program) -> None:
    """Refuse, as :func:`program_knowledge` refuses for its own knowledge, an event rule of
    ``program`` whose ``WHERE`` condition or ``EVENT_MULTIPLY`` goal calls a predicate that
    ``knowledge`` answers on demand (top-down) before binding the arguments it needs
    (:func:`~reasoner.knowledge.datalog.modes.check_calls`); for rules added to an engine
    reading ``knowledge``. Raises RuleCompileError.

    >>> from reasoner.language.parser import parse
    >>> knowledge = program_knowledge(parse("q(X, Y) :- Y is X + 1."))
    >>> check_conditions(knowledge, parse("h(X, Y) <- g(X) WHERE q(X, Y)."))
    >>> check_conditions(knowledge, parse("h(Y) <- g(Y) WHERE q(X, Y)."))
    Traceback (most recent call last):
    ...
    reasoner.errors.RuleCompileError: <rules>:1:20: variable 'X' is not bound when q/2 is \
called: q/2 is answered per call (top-down) and needs it bound (bind it by an earlier goal)
    """
    strata = getattr(knowledge, "strata", None)  # a DerivedKnowledge's or a KnowledgeVersion's
    if strata is None or not program.event_rules:
        return
    from reasoner.knowledge.datalog.modes import check_calls
    from reasoner.knowledge.goals import DEFAULT_PREFIXES

    check_calls(strata, {**DEFAULT_PREFIXES, **program.prefixes}, program.event_rules)
