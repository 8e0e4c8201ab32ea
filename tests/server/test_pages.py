"""The pages and the live feed over real HTTP: routes, headers, limits, the event stream."""

from __future__ import annotations

import http.client
import json
import threading
import tomllib
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from types import SimpleNamespace as E
from typing import Any

import pytest

from reasoner.knowledge.store import Store
from reasoner.rdf.detections import detection_iri
from reasoner.server import SparqlServer
from reasoner.server.pages import CONTENT_SECURITY_POLICY
from reasoner.values import IRI

PLACES = """
@prefix geo: <http://www.w3.org/2003/01/geo/wgs84_pos#> .
<http://ex.org/s/KSLC> <http://ex.org/id> "KSLC" ; geo:lat 40.78 ; geo:long -111.97 .
<http://ex.org/s/KOGD> geo:lat 41.19 ; geo:long -112.01 .
"""


def _get(url: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


@pytest.mark.parametrize(
    ("path", "media_type"),
    [
        ("", "text/html; charset=utf-8"),
        ("live", "text/html; charset=utf-8"),
        ("static/live.js", "text/javascript; charset=utf-8"),
        ("static/vendor/yasgui.min.css", "text/css; charset=utf-8"),
        ("static/vendor/us-states.geojson", "application/geo+json"),
    ],
)
def test_pages_and_files_are_served_with_the_policy(
    server: SparqlServer, path: str, media_type: str
) -> None:
    status, headers, body = _get(server.page_url(path))
    assert (status, headers["Content-Type"]) == (200, media_type)
    assert headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert len(body) == int(headers["Content-Length"])


@pytest.mark.parametrize(
    "path",
    ["static/../app.py", "static/vendor/README.md", "static/.hidden.js", "static/nope.js"],
)
def test_only_shipped_files_of_served_types(server: SparqlServer, path: str) -> None:
    assert _get(server.page_url(path))[0] == 404


def test_pages_answer_get_only(server: SparqlServer) -> None:
    status, headers, _ = _get(server.page_url("live"), method="POST")
    assert (status, headers["Allow"]) == (405, "GET")


def test_state_borders_are_the_fifty_states_and_more() -> None:
    from reasoner.server.pages import asset

    states = json.loads(asset("vendor/us-states.geojson")[0])
    names = {feature["properties"]["name"] for feature in states["features"]}
    assert {"Utah", "Wyoming", "Colorado", "Idaho", "Montana", "Alaska", "Hawaii"} <= names
    assert len(names) == 56  # 50 states, DC and 5 territories (us-atlas 3)


def _events(server: SparqlServer, last_id: str | None = None) -> list[tuple[str, Any]]:
    """Read the live stream until its ``done`` event: (event type, data) pairs."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    headers = {} if last_id is None else {"Last-Event-ID": last_id}
    connection.request("GET", "/live/events", headers=headers)
    response = connection.getresponse()
    assert response.status == 200
    assert response.headers["Content-Type"] == "text/event-stream; charset=utf-8"
    found: list[tuple[str, Any]] = []
    kind = None
    while True:
        line = response.readline().decode().rstrip("\n")
        if line.startswith("event: "):
            kind = line[len("event: ") :]
        elif line.startswith("data: "):
            found.append((kind or "message", json.loads(line[len("data: ") :])))
            if kind == "done":
                response.close()
                connection.close()
                return found


def test_live_stream_sends_detections_with_places_and_sources(
    serve: Callable[..., SparqlServer],
) -> None:
    store = Store()
    store.load_text(PLACES, "turtle")
    server = serve(store)
    reading = E(name="reading", args=("KSLC", 50), start=10, end=10)
    first = E(name="warning", args=("KSLC", 1.5), start=10, end=20, sources=(reading,))
    kogd = IRI("http://ex.org/s/KOGD")  # located by its own coordinates
    area = E(name="area", args=((("KSLC", 3), kogd), "Nowhere"), start=10, end=30)
    server.publish_detections([first], dates=False)
    server.publish_detections([area], dates=False)
    server.finish_replay()
    events = _events(server)
    assert events == [
        (
            "detection",
            {
                "id": 0,
                "name": "warning",
                "args": ["KSLC", 1.5],
                "start": 10,
                "end": 20,
                "dates": False,
                "iri": detection_iri(first),
                "sources": [{"name": "reading", "args": ["KSLC", 50], "start": 10, "end": 10}],
                "places": [{"arg": "KSLC", "lat": 40.78, "lon": -111.97}],
            },
        ),
        (
            "detection",
            {
                "id": 1,
                "name": "area",
                "args": [[["KSLC", 3], {"iri": "http://ex.org/s/KOGD"}], "Nowhere"],
                "start": 10,
                "end": 30,
                "dates": False,
                "iri": detection_iri(area),
                "sources": [],
                "places": [
                    {"arg": "KSLC", "lat": 40.78, "lon": -111.97},
                    {"arg": {"iri": "http://ex.org/s/KOGD"}, "lat": 41.19, "lon": -112.01},
                ],
            },
        ),
        ("done", {"count": 2}),
    ]
    # A browser reconnecting after detection 0 gets the rest only.
    assert [data["id"] for kind, data in _events(server, "0") if kind == "detection"] == [1]


def test_live_streams_are_limited_like_queries(serve: Callable[..., SparqlServer]) -> None:
    server = serve(query_workers=1)
    first = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    first.request("GET", "/live/events")
    streaming = first.getresponse()
    assert streaming.status == 200
    status, headers, body = _get(server.page_url("live/events"))
    assert (status, headers["Retry-After"]) == (503, "5")
    assert body == b"already 1 live streams open\n"
    streaming.close()
    first.close()


def test_bad_last_event_id(server: SparqlServer) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request("GET", "/live/events", headers={"Last-Event-ID": "x"})
    response = connection.getresponse()
    assert (response.status, response.read()) == (400, b"invalid Last-Event-ID 'x'\n")
    connection.close()


def test_every_shipped_page_file_is_package_data() -> None:
    """A file the pages load must be in the wheel: matched by a package-data pattern."""
    root = Path(__file__).resolve().parents[2]
    with (root / "pyproject.toml").open("rb") as config:
        patterns = tomllib.load(config)["tool"]["setuptools"]["package-data"]["reasoner"]
    static = root / "reasoner" / "server" / "static"
    files = [f.relative_to(root / "reasoner") for f in static.rglob("*") if f.is_file()]
    assert len(files) == 9
    for file in files:
        path = PurePosixPath(file.as_posix())
        assert any(
            len(path.parts) == len(PurePosixPath(p).parts) and path.match(p) for p in patterns
        ), file


def test_concurrent_streams_see_the_same_detections(serve: Callable[..., SparqlServer]) -> None:
    server = serve(Store())
    batch = [E(name="tick", args=(i,), start=i, end=i) for i in range(300)]
    results: list[list[tuple[str, Any]]] = []

    def read() -> None:
        results.append(_events(server))

    readers = [threading.Thread(target=read) for _ in range(4)]
    for reader in readers:
        reader.start()
    for start in range(0, 300, 30):  # published while the streams read
        server.publish_detections(batch[start : start + 30], dates=False)
    server.finish_replay()
    for reader in readers:
        reader.join()
    expected = [data["args"][0] for kind, data in results[0] if kind == "detection"]
    assert expected == list(range(300))
    assert all(result == results[0] for result in results)
