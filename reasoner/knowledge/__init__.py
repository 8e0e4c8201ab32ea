"""Background knowledge: the RDF store, entailment, Horn rules and knowledge versions.

The engine and the SPARQL endpoint use :class:`KnowledgeBase`; everything else here is its
parts, exported for the Spark connector (:class:`Store` bulk loads) and for tests. Names are
imported on first use: the engine needs only ``goals`` and ``facts``, and should not pay for
rdflib, owlrl and pyoxigraph when it runs without an RDF store.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reasoner.knowledge.base import Knowledge
    from reasoner.knowledge.entailment import Closure, entail, is_trivial, owlrl_closure
    from reasoner.knowledge.store import INFERRED_GRAPH, SparqlError, SparqlResult, Store
    from reasoner.knowledge.versions import KnowledgeBase, KnowledgeVersion, TripleIndex
    from reasoner.modes import REGIMES

_LAZY = {
    "Knowledge": "reasoner.knowledge.base",
    "REGIMES": "reasoner.modes",
    "Closure": "reasoner.knowledge.entailment",
    "entail": "reasoner.knowledge.entailment",
    "is_trivial": "reasoner.knowledge.entailment",
    "owlrl_closure": "reasoner.knowledge.entailment",
    "KnowledgeBase": "reasoner.knowledge.versions",
    "KnowledgeVersion": "reasoner.knowledge.versions",
    "TripleIndex": "reasoner.knowledge.versions",
    "INFERRED_GRAPH": "reasoner.knowledge.store",
    "SparqlError": "reasoner.knowledge.store",
    "SparqlResult": "reasoner.knowledge.store",
    "Store": "reasoner.knowledge.store",
}

__all__ = [
    "INFERRED_GRAPH",
    "REGIMES",
    "Closure",
    "Knowledge",
    "KnowledgeBase",
    "KnowledgeVersion",
    "SparqlError",
    "SparqlResult",
    "Store",
    "TripleIndex",
    "entail",
    "is_trivial",
    "owlrl_closure",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'reasoner.knowledge' has no attribute {name!r}")
