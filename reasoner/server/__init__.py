"""The SPARQL 1.1 endpoint over the background knowledge and published detections.

Names are imported on first use, so that reading :class:`EndpointConfig` (as the command line
does for its defaults) does not load the store.

>>> from reasoner.server import EndpointConfig, SparqlServer  # doctest: +SKIP
>>> with SparqlServer(store, EndpointConfig(port=0)).start() as server:  # doctest: +SKIP
...     server.publish_detections(detections)
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reasoner.rdf.detections import DETECTIONS_GRAPH, detections_ntriples
    from reasoner.server.app import SparqlServer
    from reasoner.server.config import EndpointConfig
    from reasoner.server.errors import EndpointError

_LAZY = {
    "DETECTIONS_GRAPH": "reasoner.rdf.detections",
    "detections_ntriples": "reasoner.rdf.detections",
    "SparqlServer": "reasoner.server.app",
    "EndpointConfig": "reasoner.server.config",
    "EndpointError": "reasoner.server.errors",
}

__all__ = [
    "DETECTIONS_GRAPH",
    "EndpointConfig",
    "EndpointError",
    "SparqlServer",
    "detections_ntriples",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'reasoner.server' has no attribute {name!r}")
