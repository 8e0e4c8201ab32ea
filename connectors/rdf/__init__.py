"""RDF event streams: timestamped graphs (N-Quads, TriG) in, detections out as named graphs.

See ``docs/rdf-streams.md``: :mod:`connectors.rdf.reader` (graphs → events),
:mod:`connectors.rdf.statements` (cutting a stream into statements), :mod:`connectors.rdf.writer`
(detections → RDF).
"""
