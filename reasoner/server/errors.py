"""The endpoint's error: a user-caused failure that maps to one HTTP status."""

from __future__ import annotations

from reasoner.errors import ReasonerError


class EndpointError(ReasonerError):
    """A request the endpoint refuses or cannot answer, with the HTTP status to send.

    Args:
        status: the HTTP status code (4xx for the client's fault, 5xx for limits and failures).
        message: the reason, sent verbatim as the ``text/plain`` response body.
        headers: extra response headers (``WWW-Authenticate``, ``Retry-After`` ...).

    >>> EndpointError(400, "malformed SPARQL query").status
    400
    """

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        self.status = status
        self.message = message
        self.headers = dict(headers or {})
        super().__init__(f"{status}: {message}")
