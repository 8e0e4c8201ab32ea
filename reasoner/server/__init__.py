"""The SPARQL 1.1 endpoint over the background knowledge and published detections.

>>> from reasoner.server import EndpointConfig, SparqlServer  # doctest: +SKIP
>>> with SparqlServer(store, EndpointConfig(port=0)).start() as server:  # doctest: +SKIP
...     server.publish_detections(detections)
"""

from reasoner.rdf.detections import DETECTIONS_GRAPH, detections_ntriples
from reasoner.server.app import SparqlServer
from reasoner.server.config import EndpointConfig
from reasoner.server.errors import EndpointError

__all__ = [
    "DETECTIONS_GRAPH",
    "EndpointConfig",
    "EndpointError",
    "SparqlServer",
    "detections_ntriples",
]
