"""The SPARQL 1.1 Service Description of the endpoint (served at ``GET /sparql``)."""

from __future__ import annotations

from reasoner.server.negotiation import GRAPH_OFFERS, RESULT_OFFERS

_FORMATS_NS = "http://www.w3.org/ns/formats/"
#: W3C format IRIs for every serializer the endpoint offers (keys: negotiation formats).
_FORMAT_IRIS = {
    "json": "SPARQL_Results_JSON",
    "xml": "SPARQL_Results_XML",
    "csv": "SPARQL_Results_CSV",
    "tsv": "SPARQL_Results_TSV",
    "turtle": "Turtle",
    "ntriples": "N-Triples",
    "rdfxml": "RDF_XML",
    "jsonld": "JSON-LD",
}


def service_description(endpoint_url: str, *, updates: bool, named_graphs: list[str]) -> str:
    """Describe the endpoint in Turtle with the SPARQL Service Description vocabulary.

    Args:
        endpoint_url: the absolute URL of ``/sparql``.
        updates: whether SPARQL Update is enabled (an access token was configured).
        named_graphs: the IRIs of the graphs the project names (inferred, detections).
    Returns:
        the Turtle document.

    >>> "sd:SPARQL11Query" in service_description("http://127.0.0.1:7878/sparql",
    ...                                           updates=False, named_graphs=[])
    True
    """
    languages = ["sd:SPARQL11Query"] + (["sd:SPARQL11Update"] if updates else [])
    formats = dict.fromkeys(o.format for o in RESULT_OFFERS + GRAPH_OFFERS)
    result_formats = ", ".join(f"<{_FORMATS_NS}{_FORMAT_IRIS[f]}>" for f in formats)
    graphs = "".join(
        f" ;\n        sd:namedGraph [ a sd:NamedGraph ; sd:name <{iri}> ]" for iri in named_graphs
    )
    return (
        "@prefix sd: <http://www.w3.org/ns/sparql-service-description#> .\n"
        f"<{endpoint_url}> a sd:Service ;\n"
        f"    sd:endpoint <{endpoint_url}> ;\n"
        f"    sd:supportedLanguage {', '.join(languages)} ;\n"
        f"    sd:resultFormat {result_formats} ;\n"
        "    sd:feature sd:UnionDefaultGraph ;\n"
        f"    sd:defaultDataset [ a sd:Dataset ; sd:defaultGraph [ a sd:Graph ]{graphs} ] .\n"
    )
