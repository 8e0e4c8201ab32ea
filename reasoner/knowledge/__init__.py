"""Background knowledge: the RDF store, entailment, Horn rules and versioned snapshots.

The engine and the SPARQL endpoint use :class:`KnowledgeBase`; everything else here is its
parts, exported for the Spark connector (:class:`Store` bulk loads) and for tests.
"""

from reasoner.knowledge.base import Knowledge
from reasoner.knowledge.entailment import REGIMES, Closure, entail, is_trivial, owlrl_closure
from reasoner.knowledge.snapshot import KnowledgeBase, Snapshot, TripleIndex
from reasoner.knowledge.store import INFERRED_GRAPH, SparqlError, SparqlResult, Store

__all__ = [
    "INFERRED_GRAPH",
    "REGIMES",
    "Closure",
    "Knowledge",
    "KnowledgeBase",
    "Snapshot",
    "SparqlError",
    "SparqlResult",
    "Store",
    "TripleIndex",
    "entail",
    "is_trivial",
    "owlrl_closure",
]
