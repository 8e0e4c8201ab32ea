"""The SPARQL 1.1 Protocol: turn an HTTP request into the operation it asks for.

Pure functions over the request line, headers and body (no sockets), so every protocol rule
is testable without a server:

* ``GET /sparql?query=...`` and ``POST`` form-encoded ``query=`` or ``update=``;
* ``POST`` with ``application/sparql-query`` or ``application/sparql-update`` bodies;
* ``default-graph-uri`` / ``named-graph-uri`` (repeatable) select the query dataset;
* ``GET /sparql`` with no query asks for the service description.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs

from reasoner.server.errors import EndpointError

_FORM = "application/x-www-form-urlencoded"
_QUERY = "application/sparql-query"
_UPDATE = "application/sparql-update"
# Tokens whose text is no keyword: strings (long and short), IRIs, comments.
_OPAQUE = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""'
    r"|'''(?:[^'\\]|\\.|'(?!''))*'''"
    r'|"(?:[^"\\\n\r]|\\.)*"'
    r"|'(?:[^'\\\n\r]|\\.)*'"
    r'|<[^<>"{}|^`\\\x00-\x20]*>'
    r"|#[^\n\r]*"
)
_SERVICE = re.compile(r"(?<![\w?$:-])SERVICE(?![\w:-])", re.IGNORECASE)
_CODEPOINT = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


@dataclass(frozen=True, slots=True)
class QueryOperation:
    """A SPARQL query and its protocol dataset (empty tuples: the store's default dataset)."""

    query: str
    default_graphs: tuple[str, ...] = ()
    named_graphs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class UpdateOperation:
    """A SPARQL update (only ever run with the access token)."""

    update: str


@dataclass(frozen=True, slots=True)
class DescribeService:
    """A request for the service description (``GET /sparql`` without a query)."""


Operation = QueryOperation | UpdateOperation | DescribeService


def parse_operation(
    method: str, query_string: str, content_type: str | None, body: bytes
) -> Operation:
    """Decode a request to the SPARQL endpoint.

    Args:
        method: ``GET`` or ``POST``.
        query_string: the URL part after ``?`` (still percent-encoded).
        content_type: the ``Content-Type`` header (POST only), parameters allowed.
        body: the request body (empty for GET).
    Returns:
        the :class:`QueryOperation`, :class:`UpdateOperation` or :class:`DescribeService`.
    Raises:
        EndpointError: 400 for contradictory or malformed parameters, 405 for an update by
            GET, 415 for an unknown body type.

    >>> parse_operation("GET", "query=ASK%7B%7D&default-graph-uri=urn%3Ag", None, b"")
    QueryOperation(query='ASK{}', default_graphs=('urn:g',), named_graphs=())
    """
    url_params = _params(query_string)
    if method == "GET":
        if "update" in url_params:
            raise EndpointError(405, "SPARQL updates must be sent with POST", {"Allow": "POST"})
        if "query" not in url_params:
            _no_stray_graphs(url_params)
            return DescribeService()
        return _query(url_params)
    if method != "POST":
        raise EndpointError(405, f"method {method} not allowed", {"Allow": "GET, POST"})
    media = (content_type or "").split(";")[0].strip().lower()
    if media == _FORM:
        form = _params(_text(body))
        if "query" in form and "update" in form:
            raise EndpointError(400, "give either 'query' or 'update', not both")
        if "update" in form:
            return _update(form)
        if "query" in form:
            return _query(form)
        raise EndpointError(400, "the form has neither a 'query' nor an 'update' parameter")
    if media == _QUERY:
        return _query({**url_params, "query": [_text(body)]})
    if media == _UPDATE:
        return _update({**url_params, "update": [_text(body)]})
    raise EndpointError(
        415,
        f"unsupported Content-Type {content_type!r}: use {_QUERY}, {_UPDATE} or {_FORM}",
    )


def _params(encoded: str) -> dict[str, list[str]]:
    try:
        return parse_qs(encoded, keep_blank_values=True, strict_parsing=False, errors="strict")
    except UnicodeDecodeError as e:
        raise EndpointError(400, f"parameters are not valid UTF-8: {e}") from e


def _text(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise EndpointError(400, f"the request body is not valid UTF-8: {e}") from e


def _single(params: dict[str, list[str]], name: str) -> str:
    values = params[name]
    if len(values) != 1:
        raise EndpointError(400, f"exactly one '{name}' parameter is allowed, got {len(values)}")
    return values[0]


def _query(params: dict[str, list[str]]) -> QueryOperation:
    text = _single(params, "query")
    if not text.strip():
        raise EndpointError(400, "the query is empty")
    return QueryOperation(
        text,
        tuple(params.get("default-graph-uri", ())),
        tuple(params.get("named-graph-uri", ())),
    )


def _update(params: dict[str, list[str]]) -> UpdateOperation:
    if "using-graph-uri" in params or "using-named-graph-uri" in params:
        # pyoxigraph's update API has no dataset argument; say so instead of ignoring it.
        raise EndpointError(400, "using-graph-uri and using-named-graph-uri are not supported")
    text = _single(params, "update")
    if not text.strip():
        raise EndpointError(400, "the update is empty")
    return UpdateOperation(text)


def _no_stray_graphs(params: dict[str, list[str]]) -> None:
    if "default-graph-uri" in params or "named-graph-uri" in params:
        raise EndpointError(400, "graph parameters were given without a 'query'")


def uses_service(text: str) -> bool:
    """Whether a query or update asks a remote endpoint (a ``SERVICE`` pattern).

    The keyword is looked for outside strings, IRIs and comments, after the codepoint
    escapes SPARQL allows anywhere; a prefixed name or variable spelled ``service`` is no
    keyword. In doubt it answers True: refusing a query is safe, a request sent on a
    client's behalf is not.

    Args:
        text: the SPARQL query or update.
    Returns:
        True when the text holds the ``SERVICE`` keyword.

    >>> uses_service("SELECT * { SERVICE <http://10.0.0.1/sparql> { ?s ?p ?o } }")
    True
    >>> uses_service('SELECT ?service { ?service ex:SERVICE "SERVICE" } # SERVICE')
    False
    """
    unescaped = _CODEPOINT.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), text)
    return _SERVICE.search(_OPAQUE.sub(" ", unescaped)) is not None
