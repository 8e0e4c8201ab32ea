"""Events and RDF: detections described as RDF, and RDF graphs mapped to events.

* :mod:`reasoner.rdf.ntriples` — values as N-Triples terms;
* :mod:`reasoner.rdf.detections` — a detection as RDF (OWL-Time interval), for the endpoint and
  the stream writers;
* :mod:`reasoner.rdf.mapping` — ``rdf_event`` declarations compiled into graph → event mappings.

Reading and writing RDF streams (N-Quads, TriG) is I/O and lives in :mod:`connectors.rdf`.
"""
