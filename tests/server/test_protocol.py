import pytest

from reasoner.server.errors import EndpointError
from reasoner.server.protocol import (
    DescribeService,
    QueryOperation,
    UpdateOperation,
    parse_operation,
)

FORM = "application/x-www-form-urlencoded"


def test_get_query_with_dataset() -> None:
    op = parse_operation(
        "GET",
        "query=SELECT%20*%20%7B%7D&default-graph-uri=urn:a&named-graph-uri=urn:b&named-graph-uri=urn:c",
        None,
        b"",
    )
    assert op == QueryOperation("SELECT * {}", ("urn:a",), ("urn:b", "urn:c"))


def test_post_bodies() -> None:
    assert parse_operation("POST", "", FORM, b"query=ASK+%7B%7D") == QueryOperation("ASK {}")
    direct = parse_operation(
        "POST", "default-graph-uri=urn:a", "application/sparql-query; charset=utf-8", b"ASK {}"
    )
    assert direct == QueryOperation("ASK {}", ("urn:a",))
    update = parse_operation("POST", "", "application/sparql-update", b"CLEAR ALL")
    assert update == UpdateOperation("CLEAR ALL")
    assert parse_operation("POST", "", FORM, b"update=CLEAR+ALL") == update


def test_get_without_query_asks_for_the_service_description() -> None:
    assert parse_operation("GET", "", None, b"") == DescribeService()


@pytest.mark.parametrize(
    ("method", "query_string", "content_type", "body", "status", "words"),
    [
        ("GET", "update=CLEAR+ALL", None, b"", 405, "POST"),
        ("GET", "query=ASK{}&query=ASK{}", None, b"", 400, "exactly one 'query'"),
        ("GET", "query=%20", None, b"", 400, "empty"),
        ("GET", "default-graph-uri=urn:a", None, b"", 400, "without a 'query'"),
        ("POST", "", "text/plain", b"ASK {}", 415, "unsupported Content-Type"),
        ("POST", "", FORM, b"query=ASK{}&update=CLEAR+ALL", 400, "not both"),
        ("POST", "", FORM, b"x=1", 400, "neither"),
        ("POST", "", "application/sparql-query", b"\xff", 400, "UTF-8"),
        ("POST", "", FORM, b"update=CLEAR+ALL&using-graph-uri=urn:a", 400, "not supported"),
        ("PUT", "", None, b"", 405, "PUT"),
    ],
)
def test_protocol_errors(
    method: str, query_string: str, content_type: str | None, body: bytes, status: int, words: str
) -> None:
    with pytest.raises(EndpointError) as info:
        parse_operation(method, query_string, content_type, body)
    assert info.value.status == status
    assert words in info.value.message
