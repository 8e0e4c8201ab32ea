from collections.abc import Sequence

from reasoner.server.negotiation import GRAPH_OFFERS, RESULT_OFFERS, Offer, choose, parse_accept


def pick(accept: str | None, offers: Sequence[Offer]) -> Offer:
    offer = choose(accept, offers)
    assert offer is not None, f"nothing chosen for {accept!r}"
    return offer


def test_no_accept_header_gets_the_canonical_format() -> None:
    assert pick(None, RESULT_OFFERS).media_type == "application/sparql-results+json"
    assert pick("", GRAPH_OFFERS).media_type == "text/turtle"


def test_quality_values_decide() -> None:
    accept = "application/sparql-results+json;q=0.5, text/tab-separated-values"
    assert pick(accept, RESULT_OFFERS).format == "tsv"


def test_the_most_specific_range_sets_the_weight() -> None:
    offer = pick("*/*, application/sparql-results+json;q=0.1", RESULT_OFFERS)
    assert offer.format == "xml"


def test_q_zero_excludes_and_unmatched_gives_none() -> None:
    assert choose("text/csv;q=0", RESULT_OFFERS) is None
    assert choose("image/png", GRAPH_OFFERS) is None
    assert parse_accept("text/csv;q=abc") == [("text/csv", 0.0)]


def test_generic_json_means_jsonld_for_graphs() -> None:
    assert pick("application/json", GRAPH_OFFERS).format == "jsonld"
    assert pick("application/json", RESULT_OFFERS).format == "json"
