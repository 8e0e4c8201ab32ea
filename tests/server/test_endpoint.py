"""The endpoint over real HTTP: SPARQLWrapper, rdflib's SPARQLStore and curl."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from rdflib import Graph, Literal, URIRef
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from SPARQLWrapper import JSON, TURTLE, XML, SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import QueryBadFormed

from reasoner.knowledge.store import Store
from reasoner.knowledge.versions import KnowledgeBase
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event as Occurrence
from reasoner.server import SparqlServer, app
from reasoner.server.protocol import QueryOperation
from reasoner.values import Value

TOKEN = "s3cret-token-of-the-tests"

EX = "http://ex.org/"
SELECT = f"SELECT ?name WHERE {{ ?s <{EX}name> ?name }} ORDER BY ?name"
CONSTRUCT = f"CONSTRUCT {{ ?s <{EX}label> ?n }} WHERE {{ ?s <{EX}name> ?n }}"
# A cross product of 40^5 rows: evaluated lazily and streamed, it would run for minutes.
_VALUES = " ".join(str(i) for i in range(40))
HUGE = "SELECT * WHERE { " + " ".join(f"VALUES ?{v} {{ {_VALUES} }}" for v in "abcde") + " }"


def curl(url: str, *args: str) -> tuple[int, str, str]:
    """Status, Content-Type and body of one curl request."""
    out = subprocess.run(
        ["curl", "-s", "-o", "-", "-w", "\n%{http_code} %{content_type}", *args, url],
        capture_output=True,
        timeout=20,
        check=True,
    ).stdout.decode()  # bytes first: text mode would turn CSV's CRLF into LF
    body, _, tail = out.rpartition("\n")
    status, _, content_type = tail.partition(" ")
    return int(status), content_type, body


def _json(client: SPARQLWrapper) -> Any:
    return client.queryAndConvert()


def test_select_with_sparqlwrapper_json_and_xml(server: SparqlServer) -> None:
    client = SPARQLWrapper(server.url)
    client.setQuery(SELECT)
    client.setReturnFormat(JSON)
    rows = _json(client)["results"]["bindings"]
    # The default graph is the union: Ogden lives in the named graph urn:g:extra.
    assert [r["name"]["value"] for r in rows] == ["Ogden", "Provo", "Salt Lake City"]
    client.setReturnFormat(XML)
    client.setMethod("POST")
    xml = client.queryAndConvert()
    assert [n.firstChild.data for n in xml.getElementsByTagName("literal")] == [  # type: ignore[union-attr]
        "Ogden",
        "Provo",
        "Salt Lake City",
    ]


def test_ask_and_construct_with_sparqlwrapper(server: SparqlServer) -> None:
    client = SPARQLWrapper(server.url)
    client.setQuery(f"ASK {{ <{EX}KSLC> a <{EX}Station> }}")
    client.setReturnFormat(JSON)
    assert _json(client)["boolean"] is True
    client.setQuery(CONSTRUCT)
    client.setReturnFormat(TURTLE)
    graph = Graph().parse(data=client.queryAndConvert(), format="turtle")  # type: ignore[arg-type]
    assert (URIRef(EX + "KPVU"), URIRef(EX + "label"), Literal("Provo")) in graph


def test_rdflib_sparqlstore(server: SparqlServer) -> None:
    graph = Graph(store=SPARQLStore(server.url))
    names = sorted(str(row[0]) for row in graph.query(SELECT))  # type: ignore[index]
    assert names == ["Ogden", "Provo", "Salt Lake City"]
    assert graph.query(f"ASK {{ <{EX}KPVU> <{EX}temperature> 2 }}").askAnswer is True
    built = graph.query(CONSTRUCT).graph
    assert built is not None and len(built) == 3
    graph.close()


@pytest.mark.parametrize(
    ("accept", "content_type", "expected"),
    [
        ("text/csv", "text/csv; charset=utf-8", "name\r\nOgden\r\nProvo\r\nSalt Lake City\r\n"),
        (
            "text/tab-separated-values",
            "text/tab-separated-values; charset=utf-8",
            '?name\n"Ogden"\n"Provo"\n"Salt Lake City"\n',
        ),
    ],
)
def test_select_as_csv_and_tsv(
    server: SparqlServer, accept: str, content_type: str, expected: str
) -> None:
    assert curl(
        server.url, "--get", "--data-urlencode", f"query={SELECT}", "-H", f"Accept: {accept}"
    ) == (200, content_type, expected)


@pytest.mark.parametrize(
    ("accept", "rdflib_format"),
    [
        ("text/turtle", "turtle"),
        ("application/n-triples", "nt"),
        ("application/rdf+xml", "xml"),
    ],
)
def test_construct_in_every_rdf_format(
    server: SparqlServer, accept: str, rdflib_format: str
) -> None:
    status, content_type, body = curl(
        server.url,
        "-H",
        "Content-Type: application/sparql-query",
        "-H",
        f"Accept: {accept}",
        "--data-binary",
        CONSTRUCT,
    )
    assert (status, content_type.split(";")[0]) == (200, accept)
    graph = Graph().parse(data=body, format=rdflib_format)
    assert (URIRef(EX + "KSLC"), URIRef(EX + "label"), Literal("Salt Lake City")) in graph


def test_construct_as_jsonld(server: SparqlServer) -> None:
    # Checked with json: rdflib's JSON-LD parser emits a DeprecationWarning of its own.
    status, content_type, body = curl(
        server.url + "?query=" + quote(CONSTRUCT), "-H", "Accept: application/ld+json"
    )
    assert (status, content_type) == (200, "application/ld+json; charset=utf-8")
    labels = {node["@id"]: node[EX + "label"][0]["@value"] for node in json.loads(body)}
    assert labels == {EX + "KSLC": "Salt Lake City", EX + "KPVU": "Provo", EX + "KOGD": "Ogden"}


def test_protocol_dataset_selects_graphs(server: SparqlServer) -> None:
    query = f"SELECT ?name WHERE {{ ?s <{EX}name> ?name }}"
    status, _, body = curl(
        server.url,
        "--get",
        "--data-urlencode",
        f"query={query}",
        "--data-urlencode",
        "default-graph-uri=urn:g:extra",
        "-H",
        "Accept: text/csv",
    )
    assert (status, body) == (200, "name\r\nOgden\r\n")


def test_malformed_query_gets_400_with_the_parser_message(server: SparqlServer) -> None:
    status, content_type, body = curl(server.url + "?query=" + quote("SELEKT * {}"))
    assert (status, content_type) == (400, "text/plain; charset=utf-8")
    assert body.startswith("malformed SPARQL query: error at 1:1")
    client = SPARQLWrapper(server.url)
    client.setQuery("SELECT * WHERE { ?s ?p }")
    with pytest.raises(QueryBadFormed, match="malformed SPARQL query"):
        client.query()


def test_service_description_and_health(serve: Callable[..., SparqlServer]) -> None:
    server = serve(access_token=TOKEN)
    status, content_type, body = curl(server.url)
    assert (status, content_type) == (200, "text/turtle; charset=utf-8")
    description = Graph().parse(data=body, format="turtle")
    sd = "http://www.w3.org/ns/sparql-service-description#"
    assert (
        URIRef(server.url),
        URIRef(sd + "supportedLanguage"),
        URIRef(sd + "SPARQL11Update"),
    ) in description
    status, _, body = curl(server.url.replace("/sparql", "/health"))
    assert status == 200 and json.loads(body) == {
        "status": "ok",
        "updates": True,
        "detections": 0,
        "queries_running": 0,
        "workers": 8,
    }


def test_unknown_path_and_unacceptable_format(server: SparqlServer) -> None:
    assert curl(server.url.replace("/sparql", "/nope"))[0] == 404
    status, _, body = curl(server.url + "?query=" + quote(SELECT), "-H", "Accept: image/png")
    assert status == 406 and "application/sparql-results+json" in body


def test_update_needs_the_token(serve: Callable[..., SparqlServer]) -> None:
    read_only, guarded = serve(), serve(access_token=TOKEN)
    update = [
        "-H",
        "Content-Type: application/sparql-update",
        "--data-binary",
        f'INSERT DATA {{ <{EX}x> <{EX}name> "X" }}',
    ]
    status, _, body = curl(read_only.url, *update, "-H", f"Authorization: Bearer {TOKEN}")
    assert status == 403 and "disabled" in body
    assert curl(guarded.url, *update)[0] == 401
    assert curl(guarded.url, *update, "-H", "Authorization: Bearer wrong-token-xxxxxxx")[0] == 403
    assert curl(guarded.url + "?query=" + quote('ASK { ?s ?p "X" }'))[2].endswith("false}")
    assert curl(guarded.url, *update, "-H", f"Authorization: Bearer {TOKEN}")[0] == 204
    assert curl(guarded.url + "?query=" + quote('ASK { ?s ?p "X" }'))[2].endswith("true}")
    bad = ["-H", "Content-Type: application/sparql-update", "--data-binary", "INSERT nonsense"]
    status, _, body = curl(guarded.url, *bad, "-H", f"Authorization: Bearer {TOKEN}")
    assert status == 400 and "malformed SPARQL update" in body


def test_time_limit_answers_503_and_frees_the_worker(serve: Callable[..., SparqlServer]) -> None:
    server = serve(query_timeout_s=0.3, query_workers=1)
    status, _, body = curl(server.url + "?query=" + quote(HUGE))
    assert status == 503 and body == "the query exceeded the time limit of 0.3 s\n"
    # The one worker stopped the streamed evaluation, so the next query is served at once.
    assert curl(server.url + "?query=" + quote("ASK {}"))[0] == 200


def test_result_and_request_size_limits(serve: Callable[..., SparqlServer]) -> None:
    server = serve(max_result_bytes=200, max_request_bytes=100)
    status, _, body = curl(server.url + "?query=" + quote("SELECT * { ?s ?p ?o }"))
    assert status == 507 and "result-size limit of 200 bytes" in body
    status, _, body = curl(
        server.url,
        "-H",
        "Content-Type: application/sparql-query",
        "--data-binary",
        "ASK {} #" + "x" * 200,
    )
    assert status == 413 and "limit of 100 bytes" in body
    assert curl(server.url + "?query=" + quote("ASK {} #" + "x" * 200))[0] == 414


def test_a_long_query_does_not_block_others(
    serve: Callable[..., SparqlServer], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The first query is held before its evaluation until the test releases it: another
    # query is answered meanwhile, then the held one answers in full. Queries are evaluated
    # in child processes, so the two sides signal each other with files.
    running, release = tmp_path / "running", tmp_path / "release"
    evaluate = app.evaluate

    def held(store: Any, operation: QueryOperation, *args: Any, **kwargs: Any) -> Any:
        if operation.query.endswith("# held"):
            running.touch()
            _wait_for(release.exists)
        return evaluate(store, operation, *args, **kwargs)

    monkeypatch.setattr(app, "evaluate", held)
    server = serve(query_timeout_s=600)
    answers: list[tuple[int, str, str]] = []
    url = server.url + "?query=" + quote(SELECT + " # held")
    first = threading.Thread(
        target=lambda: answers.append(curl(url, "-H", "Accept: application/sparql-results+json"))
    )
    first.start()
    try:
        _wait_for(running.exists)
        status, _, body = curl(server.url + "?query=" + quote("ASK {}"))
        assert (status, json.loads(body)["boolean"]) == (200, True)
        assert first.is_alive() and not answers  # the first is still held
    finally:
        release.touch()
        first.join()
    [(status, _, body)] = answers
    rows = json.loads(body)["results"]["bindings"]
    assert status == 200
    assert [r["name"]["value"] for r in rows] == ["Ogden", "Provo", "Salt Lake City"]


def _wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 120
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.01)


@dataclass(frozen=True)
class Event:
    name: str
    args: tuple[Value, ...]
    start: float
    end: float


def test_inferred_triples_refresh_and_detections(
    serve: Callable[..., SparqlServer], tmp_path: Path
) -> None:
    ontology = tmp_path / "kb.ttl"
    ontology.write_text(
        f"<{EX}Station> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <{EX}Place> .\n"
        f"<{EX}KSLC> a <{EX}Station> .\n"
    )
    kb = KnowledgeBase([ontology], entailment="rdfs")
    server = serve(kb)
    client = SPARQLWrapper(server.url)
    client.setReturnFormat(JSON)

    def ask(query: str) -> bool:
        client.setQuery(query)
        return bool(_json(client)["boolean"])

    assert ask(f"ASK {{ <{EX}KSLC> a <{EX}Place> }}")  # only in the inferred graph
    assert server.publish_detections([Event("blizzard", ("KSLC",), 100, 160)]) == 1
    detected = (
        "ASK { GRAPH <urn:reasoner:graph:detections> { ?d <urn:reasoner:vocab#event> "
        '"blizzard" ; <http://www.w3.org/1999/02/22-rdf-syntax-ns#_1> "KSLC" } }'
    )
    assert ask(detected)
    ontology.write_text(ontology.read_text() + f"<{EX}KPVU> a <{EX}Station> .\n")
    kb.refresh()
    assert ask(f"ASK {{ <{EX}KPVU> a <{EX}Place> }}")  # the new version ...
    assert ask(detected)  # ... still holds the published detections
    server.swap(Store())
    assert not ask(detected.replace("blizzard", "calm"))
    assert ask(detected)


def test_published_detections_of_a_provenance_engine_link_to_their_inputs(
    server: SparqlServer,
) -> None:
    engine = Engine("alarm(S) <- cold(S) SEQ windy(S).", provenance=True)
    stream = [Occurrence.at("cold", ("KSLC",), 100), Occurrence.at("windy", ("KSLC",), 160)]
    assert server.publish_detections([d for e in stream for d in engine.push(e)]) == 1
    client = SPARQLWrapper(server.url)
    client.setReturnFormat(JSON)
    client.setQuery(
        "PREFIX r: <urn:reasoner:vocab#> PREFIX prov: <http://www.w3.org/ns/prov#> "
        "PREFIX time: <http://www.w3.org/2006/time#> "
        "SELECT ?input ?stamp WHERE { GRAPH <urn:reasoner:graph:detections> { "
        '?d a r:Detection ; r:event "alarm" ; prov:wasDerivedFrom ?e . '
        "?e a r:InputEvent ; r:event ?input ; "
        "time:hasTime/time:hasBeginning/time:inXSDDateTimeStamp ?stamp } } ORDER BY ?stamp"
    )
    rows = [
        (r["input"]["value"], r["stamp"]["value"]) for r in _json(client)["results"]["bindings"]
    ]
    assert rows == [("cold", "1970-01-01T00:01:40Z"), ("windy", "1970-01-01T00:02:40Z")]
