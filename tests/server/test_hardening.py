"""What a careless or hostile client does to the endpoint: federated queries, expensive
queries, early disconnects, short bodies and unknown methods."""

from __future__ import annotations

import contextlib
import http.client
import http.server
import json
import logging
import os
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from test_endpoint import HUGE, curl

from reasoner.server import SparqlServer

RESULTS = (
    b'{"head":{"vars":["s"]},"results":{"bindings":'
    b'[{"s":{"type":"uri","value":"http://remote.example/a"}}]}}'
)


@pytest.fixture
def remote() -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server that records every request and answers one SPARQL row."""
    hits: list[str] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/sparql-results+json")
            self.send_header("Content-Length", str(len(RESULTS)))
            self.end_headers()
            self.wfile.write(RESULTS)

        do_POST = do_GET  # noqa: N815

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,))
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/sparql", hits
    httpd.shutdown()
    thread.join()
    httpd.server_close()


def test_federated_queries_are_refused_unless_enabled(
    serve: Callable[..., SparqlServer], remote: tuple[str, list[str]]
) -> None:
    url, hits = remote
    query = f"SELECT ?s WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}"
    status, content_type, body = curl(serve().url + "?query=" + quote(query))
    assert (status, content_type) == (400, "text/plain; charset=utf-8")
    assert body.startswith("federated queries (SERVICE) are disabled")
    assert "--allow-service" in body
    assert hits == []
    status, _, body = curl(serve(allow_service=True).url + "?query=" + quote(query))
    assert status == 200 and "http://remote.example/a" in body
    assert len(hits) == 1


def _request(server: SparqlServer, raw: bytes) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    client.sendall(raw)
    return client


def _get(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode()


def test_a_client_that_leaves_early_costs_one_log_line(
    serve: Callable[..., SparqlServer],
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    server = serve(query_timeout_s=0.3)
    caplog.set_level(logging.WARNING, logger="reasoner.server.app")
    for _ in range(5):
        # The request is sent, then the socket is reset long before the 503 can be written.
        client = _request(server, _get("/sparql?query=" + quote(HUGE)))
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()
    deadline = time.monotonic() + 30
    while len(caplog.records) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ruled_out_traceback(capfd.readouterr().err)
    assert len(caplog.records) == 5
    for record in caplog.records:
        assert record.getMessage().startswith("127.0.0.1:") and record.exc_info is None
        assert "\n" not in record.getMessage()


def ruled_out_traceback(stderr: str) -> bool:
    return "Traceback" not in stderr and "Exception occurred" not in stderr


def test_a_body_shorter_than_its_length_gets_408_after_the_read_timeout(
    serve: Callable[..., SparqlServer],
) -> None:
    server = serve(read_timeout_s=0.5)
    head = (
        "POST /sparql HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/sparql-query\r\n"
        "Content-Length: 100\r\n\r\nASK {}"
    )
    client = _request(server, head.encode())
    answer = b""
    while chunk := client.recv(4096):  # the server closes the connection after answering
        answer += chunk
    client.close()
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert answer.endswith(b"the body ended after 6 of its 100 bytes (Content-Length)\n")


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("PUT", "/sparql", "GET, POST"),
        ("DELETE", "/sparql", "GET, POST"),
        ("HEAD", "/sparql", "GET, POST"),
        ("PATCH", "/sparql", "GET, POST"),
        ("PUT", "/health", "GET"),
        ("HEAD", "/", "GET"),
    ],
)
def test_other_methods_get_405_with_allow(
    server: SparqlServer, method: str, path: str, allow: str
) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=20)
    connection.request(method, path)
    response = connection.getresponse()
    body = response.read()
    connection.close()
    assert (response.status, response.getheader("Allow")) == (405, allow)
    assert response.getheader("Content-Type") == "text/plain; charset=utf-8"
    assert body == b"" if method == "HEAD" else body.endswith(b"\n") and b"<html" not in body


# 40^5 rows counted: no output until the end, so nothing but ending the evaluation stops it.
COUNT_HUGE = HUGE.replace("SELECT *", "SELECT (COUNT(*) AS ?n)")


def _ask_in_background(server: SparqlServer, query: str) -> tuple[threading.Thread, list[int]]:
    statuses: list[int] = []

    def ask() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        connection.request("GET", "/sparql?query=" + quote(query))
        statuses.append(connection.getresponse().status)
        connection.close()

    thread = threading.Thread(target=ask)
    thread.start()
    return thread, statuses


def _evaluating_children() -> list[int]:
    """Child processes running this interpreter (the endpoint's query workers)."""
    me = os.readlink("/proc/self/exe")
    found = []
    for children in Path("/proc/self/task").glob("*/children"):
        for pid in children.read_text().split():
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/exe") == me:
                    found.append(int(pid))
    return found


def _wait_for(condition: Callable[[], object]) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.02)


def test_a_timed_out_query_is_ended_not_left_running(serve: Callable[..., SparqlServer]) -> None:
    server = serve(query_timeout_s=1.0, query_workers=1)
    thread, statuses = _ask_in_background(server, COUNT_HUGE)
    _wait_for(_evaluating_children)
    [worker] = _evaluating_children()
    thread.join()
    assert statuses == [503]
    assert not Path(f"/proc/{worker}").exists()  # killed and reaped before the 503 was sent
    assert _evaluating_children() == []
    assert curl(server.url + "?query=" + quote("ASK {}"))[0] == 200


def test_health_reports_saturation(serve: Callable[..., SparqlServer]) -> None:
    server = serve(query_timeout_s=5.0, query_workers=1)
    health = server.url.replace("/sparql", "/health")
    thread, statuses = _ask_in_background(server, COUNT_HUGE)
    answers: list[tuple[int, str, str]] = []
    _wait_for(lambda: answers.append(curl(health)) or answers[-1][0] == 503)
    status, _, body = answers[-1]
    assert json.loads(body) == {
        "status": "saturated",
        "updates": False,
        "detections": 0,
        "queries_running": 1,
        "workers": 1,
    }
    thread.join()
    assert statuses == [503]
    status, _, body = curl(health)
    assert status == 200 and json.loads(body)["status"] == "ok"
