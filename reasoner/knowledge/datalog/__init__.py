"""Stratified, semi-naive Datalog over static rules, facts and the RDF store.

``prepare(rules, prefixes)`` compiles and stratifies; ``evaluate`` computes the model
(``evaluate_naive`` is the test oracle); ``DerivedKnowledge`` answers queries over it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from reasoner.knowledge.datalog.evaluate import (
    DerivedKnowledge,
    Model,
    evaluate,
    evaluate_naive,
)
from reasoner.knowledge.datalog.modes import check_calls
from reasoner.knowledge.datalog.relation import Relation
from reasoner.knowledge.datalog.rules import Literal, Rule, compile_rules, predicate_name
from reasoner.knowledge.datalog.stratify import Strata, Stratum, stratify
from reasoner.language.ast import EventRule, StaticRule


def prepare(
    rules: Iterable[StaticRule],
    prefixes: Mapping[str, str],
    event_rules: Iterable[EventRule] = (),
) -> Strata:
    """Compile static rules to IR and stratify them.

    Args:
        rules: the program's static rules and facts.
        prefixes: the program's prefixes.
        event_rules: the program's event rules, whose conditions call them.
    Returns:
        the :class:`Strata`; :class:`~reasoner.errors.RuleCompileError` for a cycle through
        negation, a recursive predicate that is not range-restricted, or a materialised rule
        or an event rule's condition calling an on-demand predicate before binding the
        arguments it needs.

    >>> prepare([], {}).dump()
    ''
    """
    strata = stratify(compile_rules(rules, prefixes))
    check_calls(strata, prefixes, event_rules)
    return strata


__all__ = [
    "DerivedKnowledge",
    "Literal",
    "Model",
    "Relation",
    "Rule",
    "Strata",
    "Stratum",
    "compile_rules",
    "evaluate",
    "evaluate_naive",
    "predicate_name",
    "prepare",
    "stratify",
]
