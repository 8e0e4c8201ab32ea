"""The RDF namespaces the library and the connectors use, each spelled once.

>>> XSD + "integer"
'http://www.w3.org/2001/XMLSchema#integer'
"""

from __future__ import annotations

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
XSD = "http://www.w3.org/2001/XMLSchema#"
PROV = "http://www.w3.org/ns/prov#"
TIME = "http://www.w3.org/2006/time#"
WGS84 = "http://www.w3.org/2003/01/geo/wgs84_pos#"
SOSA = "http://www.w3.org/ns/sosa/"
#: The project's own terms (station neighbourhoods, nearness, states).
ER = "https://w3id.org/etalis-reasoner/ns#"
