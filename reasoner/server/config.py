"""The endpoint's settings: where it listens and the limits it enforces."""

from __future__ import annotations

from dataclasses import dataclass

from reasoner.errors import ReasonerError

#: The interface bound unless another is asked for: loopback, so nothing is exposed by accident.
LOOPBACK = "127.0.0.1"


@dataclass(frozen=True, slots=True)
class EndpointConfig:
    """How the SPARQL endpoint listens and what it allows.

    Args:
        host: the interface to bind; loopback by default so nothing is exposed by accident.
        port: the TCP port (0 picks a free one; read it back from ``SparqlServer.port``).
        access_token: enables SPARQL Update for requests bearing exactly this token
            (``Authorization: Bearer <token>``); None keeps the endpoint read-only.
        query_timeout_s: the per-query time limit.
        max_result_bytes: the largest serialized answer sent.
        max_request_bytes: the largest request body (and query string) accepted.
        query_workers: queries evaluated at once; more wait their turn (within their time).
        union_default_graph: without ``default-graph-uri`` the default graph is the union of
            all graphs, so plain patterns see inferred triples and detections.
        read_timeout_s: how long a client may send nothing, inside a request (a body shorter
            than its Content-Length: 408) or between keep-alive requests, before it is dropped.
        allow_service: evaluate ``SERVICE`` patterns (federated queries). Off by default: they
            make the server send requests to any address a client names.

    >>> EndpointConfig(port=0).host
    '127.0.0.1'
    """

    host: str = LOOPBACK
    port: int = 7878
    access_token: str | None = None
    query_timeout_s: float = 30.0
    max_result_bytes: int = 64 * 1024 * 1024
    max_request_bytes: int = 1024 * 1024
    query_workers: int = 8
    union_default_graph: bool = True
    read_timeout_s: float = 10.0
    allow_service: bool = False

    def __post_init__(self) -> None:
        # Checked here so that a bad CLI flag fails before any socket is opened.
        if not 0 <= self.port <= 65535:
            raise ReasonerError(f"port {self.port} is outside 0..65535")
        if self.access_token is not None and len(self.access_token) < 16:
            raise ReasonerError("the access token must be at least 16 characters long")
        limits = ("query_timeout_s", "max_result_bytes", "max_request_bytes", "query_workers")
        for name in (*limits, "read_timeout_s"):
            if getattr(self, name) <= 0:
                raise ReasonerError(f"{name} must be positive, got {getattr(self, name)}")
