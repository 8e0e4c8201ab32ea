"""The SPARQL endpoint server: HTTP handling, limits, token-guarded update, live swaps.

Why a Python server and not the Oxigraph binary: see ``docs/endpoint.md`` for the numbers.
In short, everything the issue adds to plain query answering (the access token, atomic
knowledge swaps, published detections, result-size and request-size limits, ``/health``)
needs Python on the request path, and a Python proxy in front of ``oxigraph serve`` measured
no faster than this in-process server while adding a second process whose store cannot be
written by the engine (``serve-read-only`` must not be opened while another process writes).

Threads: one per connection (``ThreadingHTTPServer``) reads and writes HTTP. Each query is
evaluated in a forked child process (:mod:`reasoner.server.isolate`), at most ``--workers`` at
once: pyoxigraph cannot cancel an evaluation, but a child can be killed, so a query that runs
out of time stops consuming CPU when its 503 is sent. ``/health`` answers 503 ``saturated``
while every worker is busy.
"""

from __future__ import annotations

import hmac
import json
import logging
import sys
import threading
import time
from collections.abc import Generator, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Protocol
from urllib.parse import urlsplit

from reasoner.errors import ReasonerError
from reasoner.knowledge.store import INFERRED_GRAPH, SparqlError, Store
from reasoner.rdf.detections import DETECTIONS_GRAPH, DetectedEvent, detections_ntriples
from reasoner.server.config import EndpointConfig
from reasoner.server.errors import EndpointError
from reasoner.server.execute import Answer, LimitedSink, convert_turtle, evaluate, timeout_error
from reasoner.server.isolate import run_isolated
from reasoner.server.live import LiveFeed
from reasoner.server.pages import PAGES, asset, page_headers
from reasoner.server.protocol import (
    DescribeService,
    QueryOperation,
    UpdateOperation,
    parse_operation,
    uses_service,
)
from reasoner.server.service import service_description

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Response:
    """An HTTP response before it is written: status, headers and body, or a ``stream`` of
    chunks sent as they come (``/live/events``), after which the connection closes."""

    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    stream: Generator[bytes, None, None] | None = None


class KnowledgeSource(Protocol):
    """Anything with a current store, e.g. :class:`reasoner.knowledge.KnowledgeBase`."""

    @property
    def store(self) -> Store: ...


class SparqlServer:
    """A SPARQL 1.1 endpoint over a store or a refreshing knowledge base.

    Args:
        knowledge: a :class:`~reasoner.knowledge.store.Store`, or an object whose ``store``
            property is the current version (a ``KnowledgeBase``: its refreshes become
            visible atomically, each request reading one version).
        config: where to listen and the limits; loopback, read-only by default.

    >>> with SparqlServer(Store(), EndpointConfig(port=0)).start() as server:  # doctest: +SKIP
    ...     print(server.url)
    http://127.0.0.1:43127/sparql
    """

    def __init__(
        self, knowledge: Store | KnowledgeSource, config: EndpointConfig | None = None
    ) -> None:
        self.config = config or EndpointConfig()
        self._source = knowledge
        self._served: Store | None = None  # the version that holds every published detection
        # Writers (swap, publish, update, first use of a new version) take this lock; readers
        # only compare one reference, which is atomic in Python.
        self._write_lock = threading.Lock()
        self._published: list[str] = []
        self._published_count = 0
        # Queries evaluated at once, each in a child process (reasoner.server.isolate).
        self._slots = threading.BoundedSemaphore(self.config.query_workers)
        self._running = 0
        self._running_lock = threading.Lock()
        #: Published detections for the ``/live`` page.
        self.live = LiveFeed(self._current)
        # Each live stream holds a connection thread: as many at once as queries evaluated.
        self._streams = threading.BoundedSemaphore(self.config.query_workers)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        # Requests between their request line and their answer's last byte: stop() waits
        # for them (within its grace), not for idle keep-alive connections.
        self._answering = 0
        self._answered = threading.Condition()

    # ------------------------------------------------------------------ lifecycle

    def bind(self) -> SparqlServer:
        """Open the listening socket (port 0 picks a free port).

        Returns:
            the server itself, for chaining.
        Raises:
            ReasonerError: when the address cannot be bound (in use, no permission ...).

        >>> SparqlServer(Store(), EndpointConfig(port=0)).bind().port > 0  # doctest: +SKIP
        True
        """
        self._listen()
        return self

    def _listen(self) -> ThreadingHTTPServer:
        if self._httpd is None:
            handler = type("Handler", (_Handler,), {"endpoint": self})
            try:
                self._httpd = _HTTPServer((self.config.host, self.config.port), handler)
            except OSError as e:
                where = f"{self.config.host}:{self.config.port}"
                raise ReasonerError(f"cannot listen on {where}: {e.strerror or e}") from e
        return self._httpd

    def start(self) -> SparqlServer:
        """Serve in a background thread (tests, ``reasoner run --serve``).

        Returns:
            the server itself; use it as a context manager to stop it.

        >>> server = SparqlServer(Store(), EndpointConfig(port=0)).start()  # doctest: +SKIP
        >>> server.stop()  # doctest: +SKIP
        """
        httpd = self._listen()
        # A short poll interval makes stop() quick (tests start and stop many servers).
        self._thread = threading.Thread(
            target=httpd.serve_forever, args=(0.05,), name="sparql-http"
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread until :meth:`stop` or KeyboardInterrupt."""
        httpd = self._listen()
        try:
            httpd.serve_forever()
        finally:
            self._close()

    def stop(self, grace_s: float = 0.0) -> int:
        """Stop serving: end the live streams, take no new connection, let the requests being
        answered finish for up to ``grace_s`` seconds, close the socket.

        Args:
            grace_s: how long to wait for requests in flight (0: not at all; a request still
                running is cut when the process ends).
        Returns:
            how many requests were still being answered when it stopped waiting.

        >>> SparqlServer(Store(), EndpointConfig(port=0)).start().stop(grace_s=5)  # doctest: +SKIP
        0
        """
        self.live.close()
        if self._httpd is None:
            return 0
        self._httpd.shutdown()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._answered:
            self._answered.wait_for(lambda: self._answering == 0, timeout=grace_s)
            left = self._answering
        self._close()
        return left

    @contextmanager
    def answering(self) -> Iterator[None]:
        """Count one request as in flight for the block (the handler's, from its request line
        to its answer): :meth:`stop` waits for these."""
        with self._answered:
            self._answering += 1
        try:
            yield
        finally:
            with self._answered:
                self._answering -= 1
                self._answered.notify_all()

    def _close(self) -> None:
        if self._httpd is not None:
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> SparqlServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound TCP port (after :meth:`bind` or :meth:`start`)."""
        if self._httpd is None:
            raise ReasonerError("the server is not bound yet: call bind() or start()")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The absolute URL of the SPARQL endpoint, ``http://HOST:PORT/sparql``."""
        return self.page_url("sparql")

    def page_url(self, path: str = "") -> str:
        """The absolute URL of a page: ``http://HOST:PORT/`` (the query page) and ``live``.

        >>> server.page_url("live")  # doctest: +SKIP
        'http://127.0.0.1:7878/live'
        """
        host = self.config.host
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}/{path}"

    # ------------------------------------------------------------------ live view

    def swap(self, knowledge: Store | KnowledgeSource) -> None:
        """Serve other knowledge from now on, atomically (a ``KnowledgeBase`` needs no swap:
        its refreshes are picked up by themselves).

        Published detections are copied into the new version before any query reads it;
        queries already running finish on the old version.

        Args:
            knowledge: a store or knowledge base, as for the constructor.

        >>> server.swap(new_store)  # doctest: +SKIP
        """
        self._source = knowledge
        self._current()

    def _current(self) -> Store:
        store = self._source if isinstance(self._source, Store) else self._source.store
        if store is not self._served:
            with self._write_lock:
                if store is not self._served:  # another request may have done it meanwhile
                    for text in self._published:
                        store.load_text(text, "ntriples", graph=DETECTIONS_GRAPH)
                    self._served = store
        return store

    def publish_detections(self, events: Iterable[DetectedEvent], *, dates: bool = True) -> int:
        """Write detected complex events into the ``urn:reasoner:graph:detections`` graph.

        Each becomes a ``r:Detection`` with its name, positional arguments and an OWL-Time
        interval, linked by ``prov:wasDerivedFrom`` to its ``sources`` when it has any (see
        :mod:`reasoner.rdf.detections`); they are visible to the next query.

        Args:
            events: objects with ``name``, ``args``, ``start`` and ``end`` (and ``sources``,
                from an engine built with ``provenance=True``).
            dates: whether instants carry their date-time besides their number (times are
                seconds since the epoch; plain counters are better without).
        Returns:
            how many events were published.
        Raises:
            KnowledgeError: for an argument or time stamp with no RDF form.

        >>> server.publish_detections(engine_detections)  # doctest: +SKIP
        2
        """
        batch = list(events)
        text = detections_ntriples(batch, dates=dates)
        store = self._current()
        with self._write_lock:
            # A version swapped in meanwhile replays self._published, this batch included.
            store.load_text(text, "ntriples", graph=DETECTIONS_GRAPH)
            self._published.append(text)
            self._published_count += len(batch)
        self.live.add(batch, dates=dates)
        return len(batch)

    def finish_replay(self) -> None:
        """Tell ``/live`` pages that no more detections will come (the replay ended).

        >>> server.finish_replay()  # doctest: +SKIP
        """
        self.live.finish()

    # ------------------------------------------------------------------ requests

    def respond(
        self, method: str, target: str, headers: Mapping[str, str] | Message, body: bytes
    ) -> Response:
        """Answer one HTTP request (the socket-free core of the handler).

        Args:
            method: the HTTP method.
            target: the request target (path and query string).
            headers: the request headers.
            body: the request body.
        Returns:
            the :class:`Response` to send.
        Raises:
            EndpointError: for every refused request, carrying its status.

        >>> server.respond("GET", "/health", {}, b"").status  # doctest: +SKIP
        200
        """
        url = urlsplit(target)
        if len(url.query) > self.config.max_request_bytes:
            raise EndpointError(414, f"the URL exceeds {self.config.max_request_bytes} bytes")
        if url.path == "/health":
            if method != "GET":
                raise EndpointError(405, "/health answers GET only", {"Allow": "GET"})
            return self._health()
        if url.path in PAGES or url.path.startswith("/static/") or url.path == "/live/events":
            if method != "GET":
                raise EndpointError(405, f"{url.path} answers GET only", {"Allow": "GET"})
            if url.path == "/live/events":
                return self._live_events(headers.get("Last-Event-ID"))
            body, content_type = asset(PAGES.get(url.path) or url.path.removeprefix("/static/"))
            return Response(200, body, page_headers(content_type))
        if url.path != "/sparql":
            raise EndpointError(
                404, f"no resource at {url.path}; the endpoint is /sparql, the pages / and /live"
            )
        operation = parse_operation(method, url.query, headers.get("Content-Type"), body)
        if not self.config.allow_service and uses_service(_text(operation)):
            raise EndpointError(
                400,
                "federated queries (SERVICE) are disabled: they would make this server send "
                "requests to any address; start it with --allow-service to enable them",
            )
        accept = headers.get("Accept")
        match operation:
            case QueryOperation():
                return _ok(self._query(operation, accept))
            case UpdateOperation():
                self._authorize(headers.get("Authorization"))
                self._update(operation)
                return Response(204)
            case DescribeService():
                sd = service_description(
                    self.url,
                    updates=self.config.access_token is not None,
                    named_graphs=[INFERRED_GRAPH, DETECTIONS_GRAPH],
                )
                return _ok(convert_turtle(sd, accept))

    def _query(self, operation: QueryOperation, accept: str | None) -> Answer:
        store = self._current().oxigraph  # one version for the whole request
        timeout = self.config.query_timeout_s
        deadline = time.monotonic() + timeout
        sink = LimitedSink(self.config.max_result_bytes, deadline, timeout)
        union = self.config.union_default_graph
        # Queries beyond --workers wait for a slot, within their own time limit.
        if not self._slots.acquire(timeout=timeout):
            raise timeout_error(timeout)
        with self._running_lock:
            self._running += 1
        try:
            return run_isolated(
                lambda: evaluate(store, operation, accept, sink, union_default_graph=union),
                deadline,
            )
        except TimeoutError:
            raise timeout_error(timeout) from None
        finally:
            with self._running_lock:
                self._running -= 1
            self._slots.release()

    def _authorize(self, authorization: str | None) -> None:
        token = self.config.access_token
        if token is None:
            raise EndpointError(
                403, "SPARQL Update is disabled: start the server with an access token"
            )
        scheme, _, given = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not given:
            raise EndpointError(
                401,
                "SPARQL Update needs 'Authorization: Bearer <access token>'",
                {"WWW-Authenticate": 'Bearer realm="reasoner"'},
            )
        if not hmac.compare_digest(given.strip().encode(), token.encode()):
            raise EndpointError(403, "invalid access token")

    def _update(self, operation: UpdateOperation) -> None:
        store = self._current()
        with self._write_lock:
            try:
                store.update(operation.update)
            except SparqlError as e:
                status = 400 if isinstance(e.__cause__, SyntaxError) else 500
                raise EndpointError(status, str(e)) from e

    def _live_events(self, last_event_id: str | None) -> Response:
        try:
            after = int(last_event_id) if last_event_id else -1
        except ValueError:
            raise EndpointError(400, f"invalid Last-Event-ID {last_event_id!r}") from None
        if not self._streams.acquire(blocking=False):
            limit = self.config.query_workers
            raise EndpointError(503, f"already {limit} live streams open", {"Retry-After": "5"})

        def stream() -> Generator[bytes, None, None]:
            try:
                yield from self.live.stream(after)
            finally:
                self._streams.release()

        headers = page_headers("text/event-stream; charset=utf-8")
        return Response(200, headers=headers, stream=stream())

    def _health(self) -> Response:
        workers = self.config.query_workers
        saturated = self._running >= workers
        report = {
            "status": "saturated" if saturated else "ok",
            "updates": self.config.access_token is not None,
            "detections": self._published_count,
            "queries_running": self._running,
            "workers": workers,
        }
        headers = {"Content-Type": "application/json"}
        return Response(503 if saturated else 200, json.dumps(report).encode(), headers)


def _text(operation: QueryOperation | UpdateOperation | DescribeService) -> str:
    match operation:
        case QueryOperation():
            return operation.query
        case UpdateOperation():
            return operation.update
    return ""


def _ok(answer: Answer) -> Response:
    return Response(200, answer.body, {"Content-Type": answer.content_type})


def _error(error: EndpointError) -> Response:
    body = (error.message + "\n").encode()
    headers = {"Content-Type": "text/plain; charset=utf-8", **error.headers}
    return Response(error.status, body, headers)


class _HTTPServer(ThreadingHTTPServer):
    """Connection errors are one log line each: a client that goes away is no server bug."""

    daemon_threads = True

    def handle_error(self, request: object, client_address: tuple[str, int]) -> None:
        error = sys.exc_info()[1]
        host, port = client_address[:2]
        if isinstance(error, OSError):  # reset, broken pipe, timeout
            log.warning("%s:%s: connection dropped: %s", host, port, error)
        else:
            log.exception("%s:%s: request failed", host, port)


class _Handler(BaseHTTPRequestHandler):
    """Socket I/O for :class:`SparqlServer` (one instance per connection)."""

    endpoint: SparqlServer
    protocol_version = "HTTP/1.1"  # keep-alive: benchmarks and SPARQL clients reuse sockets
    server_version = "reasoner-sparql"
    # Headers and body go out in two writes; with Nagle on, the body waits ~40 ms for the
    # client's delayed ACK (measured: 160 requests/s instead of thousands).
    disable_nagle_algorithm = True

    def setup(self) -> None:
        super().setup()
        # An idle or stalled client frees its thread after this many seconds.
        self.connection.settimeout(self.endpoint.config.read_timeout_s)

    def _dispatch(self) -> None:
        with self.endpoint.answering():
            self._serve(self.command)

    # Methods the endpoint knows get their 405 (with Allow) from respond(); others get 501.
    do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _dispatch

    def _serve(self, method: str) -> None:
        try:
            body = self._read_body()
            response = self.endpoint.respond(method, self.path, self.headers, body)
        except EndpointError as e:
            response = _error(e)
        try:
            self.send_response(response.status)
            for name, value in response.headers.items():
                self.send_header(name, value)
            if response.stream is not None:
                self._send_stream(response.stream)
                return
            self.send_header("Content-Length", str(len(response.body)))
            self.end_headers()
            if method != "HEAD":
                self.wfile.write(response.body)
        except OSError as e:  # the client went away before its answer
            self.close_connection = True
            host, port = self.client_address[:2]
            log.warning(
                "%s:%s: client gone before the answer (%s %s): %s", host, port, method, self.path, e
            )

    def _send_stream(self, chunks: Generator[bytes, None, None]) -> None:
        """Send chunks as they come, until the stream ends or the client goes away."""
        self.close_connection = True  # no length: the end of the body is the end of the socket
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            for chunk in chunks:
                self.wfile.write(chunk)
                self.wfile.flush()
        except OSError:  # the browser closed the page (broken pipe, reset, timeout)
            pass
        finally:
            chunks.close()

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = True
            raise EndpointError(411, "chunked bodies are not accepted: send Content-Length")
        raw = self.headers.get("Content-Length")
        if raw is None:
            return b""
        try:
            length = int(raw)
        except ValueError:
            self.close_connection = True
            raise EndpointError(400, f"invalid Content-Length {raw!r}") from None
        limit = self.endpoint.config.max_request_bytes
        if length > limit:
            self.close_connection = True  # the unread body would poison the connection
            raise EndpointError(413, f"the request body exceeds the limit of {limit} bytes")
        body = bytearray()
        try:
            while len(body) < length and (chunk := self.rfile.read1(length - len(body))):
                body += chunk
        except TimeoutError:  # the client stalled: answer what it sent so far
            pass
        if len(body) < length:
            self.close_connection = True
            raise EndpointError(
                408, f"the body ended after {len(body)} of its {length} bytes (Content-Length)"
            )
        return bytes(body)

    def log_message(self, format: str, *args: object) -> None:
        log.debug("%s " + format, self.address_string(), *args)
