"""Detections published to the SPARQL endpoint and queried together with the knowledge.

Run: ``.venv/bin/python examples/sparql_endpoint_query.py``. A rule asks the weather ontology
(RDFS entailment makes a Diablo a wind observation) for strong winds during a fire; the
detections go into the endpoint's detections graph, and one SPARQL query over HTTP joins
them with what the knowledge says about each observation. Only 127.0.0.1 is used.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from pathlib import Path

from reasoner import (
    IRI,
    Engine,
    Event,
    KnowledgeBase,
    and_,
    compound,
    event,
    multiply,
    pname,
    prefix,
    program,
    rule,
    variables,
    where,
    within,
)
from reasoner.server import EndpointConfig, SparqlServer

ROOT = Path(__file__).resolve().parent.parent
WT = "http://etalis.example.org/ontology/weather#"
EX = "http://etalis.example.org/data/"
Area, Obs, Speed = variables("Area Obs Speed")

# windDuringFire(Area, Obs, Speed): a fire and, within 3 hours, a wind observation in its area
# blowing faster than 50 (EVENT_MULTIPLY binds Speed from the knowledge; WHERE only filters).
FIRE_AND_OBSERVATION = and_(event("activeFire", Area), event("weatherObservation", Area, Obs))
RULES = program(
    prefix("wt", WT),
    rule(
        event("windDuringFire", Area, Obs, Speed),
        where(
            multiply(within(FIRE_AND_OBSERVATION, 3, "h"), compound("wt:speed", Obs, Speed)),
            compound("rdf", Obs, pname("rdf:type"), pname("wt:WindObservation")),
            Speed > 50,
        ),
    ),
)
STREAM = [
    Event.at("activeFire", ("California",), 0),
    Event.at("weatherObservation", ("California", IRI(EX + "Observ_1")), 3600),  # Diablo, 60
    Event.at("weatherObservation", ("California", IRI(EX + "Observ_2")), 7200),  # Sundowner, 40
    Event.at("weatherObservation", ("California", IRI(EX + "Observ_3")), 9000),  # no wind
]
QUERY = """
PREFIX r: <urn:reasoner:vocab#>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX time: <http://www.w3.org/2006/time#>
PREFIX wt: <http://etalis.example.org/ontology/weather#>
SELECT ?obs ?speed ?at ?comment WHERE {
  ?d r:event "windDuringFire" ; rdf:_2 ?obs ; rdf:_3 ?speed ;
     time:hasTime/time:hasEnd/time:inXSDDateTimeStamp ?at .
  ?obs a ?kind . ?kind rdfs:subClassOf wt:WindObservation ; rdfs:comment ?comment .
}
"""


def sparql(url: str, query: str) -> list[dict[str, str]]:
    """Run a SELECT over HTTP (SPARQL 1.1 protocol, POST form) and return its rows."""
    body = urllib.parse.urlencode({"query": query}).encode()
    request = urllib.request.Request(url, body, {"Accept": "application/sparql-results+json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        rows = json.load(response)["results"]["bindings"]
    return [{name: cell["value"] for name, cell in row.items()} for row in rows]


def main() -> None:
    knowledge = KnowledgeBase(
        [
            ROOT / "ontologies" / "weather.ttl",
            ROOT / "ontologies" / "examples" / "enhanced_fire.ttl",
        ],
        entailment="rdfs",
    )
    engine = Engine(RULES, knowledge=knowledge.current())
    with SparqlServer(knowledge, EndpointConfig(port=0)).start() as server:
        for detection in engine.run(STREAM):
            args = ", ".join(str(arg) for arg in detection.args)
            print(f"detected {detection.name}({args}) at t={detection.end}")
            server.publish_detections([detection])
        for row in sparql(server.url, QUERY):
            print(f"{row['obs']} blew {row['speed']} at {row['at']}: {row['comment']}")


if __name__ == "__main__":
    main()
