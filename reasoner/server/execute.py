"""Evaluate one SPARQL query and serialize its answer within a time and a size limit.

This module imports pyoxigraph beside :mod:`reasoner.knowledge.store` on purpose: the
endpoint must stream pyoxigraph's own serializers (SPARQL JSON/XML/CSV/TSV, Turtle,
N-Triples, RDF/XML, JSON-LD) into a :class:`LimitedSink` that stops the evaluation as soon as
the answer grows past the size limit or the deadline passes. ``Store.query_serialized``
materializes the whole answer first and takes no protocol dataset, so it cannot do either.
Evaluation is lazy in pyoxigraph, so for most queries "stop writing" means "stop evaluating".
"""

from __future__ import annotations

import io
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyoxigraph as ox

from reasoner.knowledge.store import GRAPH_FORMATS, RESULT_FORMATS
from reasoner.server.errors import EndpointError
from reasoner.server.negotiation import GRAPH_OFFERS, RESULT_OFFERS, Offer, choose
from reasoner.server.protocol import QueryOperation

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer


@dataclass(frozen=True, slots=True)
class Answer:
    """A serialized answer ready to send: media type (with charset) and body."""

    content_type: str
    body: bytes


class LimitedSink(io.BytesIO):
    """A binary buffer that refuses to grow past ``max_bytes`` or to write after a deadline.

    pyoxigraph turns an exception raised by ``write`` into an ``OSError`` and stops, so the
    reason is kept in :attr:`error` and re-raised by the caller.

    Args:
        max_bytes: the result-size limit.
        deadline: a :func:`time.monotonic` instant after which writing fails.
        timeout_s: the configured limit, for the message.

    >>> sink = LimitedSink(4, time.monotonic() + 5, 5)
    >>> sink.write(b"abc"), sink.getvalue()
    (3, b'abc')
    """

    def __init__(self, max_bytes: int, deadline: float, timeout_s: float) -> None:
        super().__init__()
        self._size = 0
        self._max = max_bytes
        self._deadline = deadline
        self._timeout_s = timeout_s
        self.cancelled = threading.Event()
        self.error: EndpointError | None = None

    def write(self, data: ReadableBuffer, /) -> int:
        """Append ``data``; raise once a limit is broken (see the class doc)."""
        if self.cancelled.is_set() or time.monotonic() > self._deadline:
            self.error = timeout_error(self._timeout_s)
            raise self.error
        self._size += memoryview(data).nbytes
        if self._size > self._max:
            self.error = EndpointError(
                507,
                f"the answer exceeds the result-size limit of {self._max} bytes: "
                "add LIMIT or narrow the query",
            )
            raise self.error
        return super().write(data)


def timeout_error(timeout_s: float) -> EndpointError:
    """The 503 answer for a query that ran out of time.

    Args:
        timeout_s: the per-query time limit in seconds.
    Returns:
        the error to send.

    >>> timeout_error(2).status
    503
    """
    return EndpointError(
        503, f"the query exceeded the time limit of {timeout_s:g} s", {"Retry-After": "1"}
    )


def evaluate(
    store: ox.Store,
    operation: QueryOperation,
    accept: str | None,
    sink: LimitedSink,
    *,
    union_default_graph: bool,
) -> Answer:
    """Run a query and serialize its answer in the format the client accepts.

    Args:
        store: the pyoxigraph store of the current knowledge version.
        operation: the query and its protocol dataset.
        accept: the request's ``Accept`` header.
        sink: where the serialization goes; it enforces the limits.
        union_default_graph: without ``default-graph-uri``, query the union of all graphs
            (asserted, inferred and published detections) as the default graph.
    Returns:
        the :class:`Answer`.
    Raises:
        EndpointError: 400 for a malformed query or graph IRI, 406 when no offered format is
            acceptable, 503/507 for the limits, 500 when evaluation fails.

    >>> s = ox.Store()
    >>> sink = LimitedSink(1000, time.monotonic() + 5, 5)
    >>> evaluate(s, QueryOperation("ASK {}"), None, sink, union_default_graph=True).body
    b'{"head":{},"boolean":true}'
    """
    try:
        answer = store.query(
            operation.query,
            use_default_graph_as_union=union_default_graph and not operation.default_graphs,
            default_graph=list(_nodes(operation.default_graphs)) or None,
            named_graphs=list(_nodes(operation.named_graphs)) or None,
        )
    except SyntaxError as e:
        raise EndpointError(400, f"malformed SPARQL query: {e.msg}") from e
    except (ValueError, OSError) as e:
        raise EndpointError(500, f"the query failed: {e}") from e
    try:
        offers = GRAPH_OFFERS if isinstance(answer, ox.QueryTriples) else RESULT_OFFERS
        offer = _negotiate(accept, offers)
        try:
            if isinstance(answer, ox.QueryTriples):
                answer.serialize(sink, GRAPH_FORMATS[offer.format])
            else:
                answer.serialize(sink, RESULT_FORMATS[offer.format])
        except (OSError, ValueError) as e:
            if sink.error is not None:
                raise sink.error from e
            raise EndpointError(500, f"cannot serialize the answer: {e}") from e
    finally:
        # pyoxigraph results must be dropped on the thread that made them; a traceback
        # carried to the HTTP thread would otherwise keep this frame's reference alive.
        del answer
    return Answer(_content_type(offer), sink.getvalue())


def convert_turtle(turtle: str, accept: str | None) -> Answer:
    """Re-serialize a Turtle document (the service description) as the client asks.

    Args:
        turtle: a valid Turtle document made by the endpoint itself.
        accept: the request's ``Accept`` header.
    Returns:
        the :class:`Answer` in Turtle, N-Triples, RDF/XML or JSON-LD.
    Raises:
        EndpointError: 406 when no RDF format is acceptable.

    >>> convert_turtle("<urn:a> <urn:b> <urn:c> .", "application/n-triples").body
    b'<urn:a> <urn:b> <urn:c> .\\n'
    """
    offer = _negotiate(accept, GRAPH_OFFERS)
    if offer.format == "turtle":
        return Answer(_content_type(offer), turtle.encode())  # keep its prefixes and layout
    triples = [q.triple for q in ox.parse(turtle.encode(), ox.RdfFormat.TURTLE)]
    body = ox.serialize(triples, format=GRAPH_FORMATS[offer.format]) or b""
    return Answer(_content_type(offer), body)


def _nodes(iris: tuple[str, ...]) -> tuple[ox.NamedNode, ...]:
    try:
        return tuple(ox.NamedNode(iri) for iri in iris)
    except ValueError as e:
        raise EndpointError(400, f"invalid graph IRI in the protocol dataset: {e}") from e


def _negotiate(accept: str | None, offers: tuple[Offer, ...]) -> Offer:
    offer = choose(accept, offers)
    if offer is None:
        available = ", ".join(dict.fromkeys(o.media_type for o in offers))
        raise EndpointError(406, f"cannot answer in {accept!r}; available: {available}")
    return offer


def _content_type(offer: Offer) -> str:
    text = offer.media_type.startswith("text/") or offer.format in ("json", "jsonld")
    return f"{offer.media_type}; charset=utf-8" if text else offer.media_type
