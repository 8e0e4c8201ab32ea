"""Knowledge-rich stream reasoning over RDF: the ETALIS Language for Events.

The public API: :class:`Engine` detects complex events in a stream of :class:`Event`;
:func:`load_rules` parses rule text and files; :class:`KnowledgeBase` holds the background
knowledge that WHERE conditions ask; the rule builders (:func:`rule`, :func:`seq`, ...),
:func:`handler` and :func:`detections` come from :mod:`reasoner.api`; :func:`why_not` says why
an expected detection did not occur. Names are imported on
first use so that ``import reasoner`` stays fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from reasoner.errors import (
    EngineError,
    EventError,
    KnowledgeError,
    ReasonerError,
    RuleCompileError,
    RuleSyntaxError,
)

if TYPE_CHECKING:
    from reasoner.api import (
        Expr,
        aggregate,
        and_,
        at,
        atom,
        clause,
        cnot,
        compound,
        conj,
        detections,
        directive,
        disj,
        during,
        equals,
        event,
        fact,
        facts,
        finishes,
        fnot,
        forall_seq,
        handler,
        iri,
        list_term,
        meets,
        multiply,
        not_,
        not_provable,
        or_,
        par,
        pattern,
        pname,
        prefix,
        program,
        rdf_event,
        rule,
        seq,
        star,
        starts,
        term,
        var,
        variables,
        where,
        within,
    )
    from reasoner.knowledge.versions import KnowledgeBase
    from reasoner.language.ast import Program
    from reasoner.language.loader import load_rules
    from reasoner.runtime.engine import Engine
    from reasoner.runtime.events import Event
    from reasoner.semantics.whynot import why_not
    from reasoner.values import IRI

_LAZY = {
    "Engine": "reasoner.runtime.engine",
    "load_rules": "reasoner.language.loader",
    "Event": "reasoner.runtime.events",
    "Program": "reasoner.language.ast",
    "KnowledgeBase": "reasoner.knowledge.versions",
    "IRI": "reasoner.values",
    "why_not": "reasoner.semantics.whynot",
}

__all__ = [
    "IRI",
    "Engine",
    "EngineError",
    "Event",
    "EventError",
    "KnowledgeBase",
    "KnowledgeError",
    "Program",
    "ReasonerError",
    "RuleCompileError",
    "RuleSyntaxError",
    "load_rules",
    "why_not",
    # the Python rule API, from reasoner.api
    "Expr",
    "aggregate",
    "and_",
    "at",
    "atom",
    "clause",
    "cnot",
    "compound",
    "conj",
    "detections",
    "directive",
    "disj",
    "during",
    "equals",
    "event",
    "fact",
    "facts",
    "finishes",
    "fnot",
    "forall_seq",
    "handler",
    "iri",
    "list_term",
    "meets",
    "multiply",
    "not_",
    "not_provable",
    "or_",
    "par",
    "pattern",
    "pname",
    "prefix",
    "program",
    "rdf_event",
    "rule",
    "seq",
    "star",
    "starts",
    "term",
    "var",
    "variables",
    "where",
    "within",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    if name in __all__:  # every other public name not defined here is the rule API's
        return getattr(import_module("reasoner.api"), name)
    raise AttributeError(f"module 'reasoner' has no attribute {name!r}")
