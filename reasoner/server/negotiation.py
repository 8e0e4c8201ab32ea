"""Content negotiation: pick a response media type from an HTTP ``Accept`` header.

Each result kind has an ordered list of *offers* (media type → format key); the client's
preferences (``q`` values, ``type/*`` and ``*/*`` wildcards) pick one, and ties go to the
server's order, so a bare ``*/*`` gets the first (canonical) offer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Offer:
    """One media type the endpoint can produce and the serializer it means."""

    media_type: str
    format: str


#: SELECT and ASK results; aliases after the canonical type keep generic clients working.
RESULT_OFFERS: tuple[Offer, ...] = (
    Offer("application/sparql-results+json", "json"),
    Offer("application/sparql-results+xml", "xml"),
    Offer("text/csv", "csv"),
    Offer("text/tab-separated-values", "tsv"),
    Offer("application/json", "json"),
    Offer("application/xml", "xml"),
    Offer("text/xml", "xml"),
)

#: CONSTRUCT and DESCRIBE results, and the service description.
GRAPH_OFFERS: tuple[Offer, ...] = (
    Offer("text/turtle", "turtle"),
    Offer("application/n-triples", "ntriples"),
    Offer("application/rdf+xml", "rdfxml"),
    Offer("application/ld+json", "jsonld"),
    Offer("application/x-turtle", "turtle"),
    Offer("text/plain", "ntriples"),
    Offer("application/xml", "rdfxml"),
    Offer("application/json", "jsonld"),
)


def parse_accept(header: str) -> list[tuple[str, float]]:
    """Split an ``Accept`` header into ``(media range, q)`` pairs (``q=0`` means "not this").

    Args:
        header: the raw header value.
    Returns:
        the ranges in header order, lower-cased, parameters other than ``q`` dropped.

    >>> parse_accept("text/csv;q=0.5, application/json")
    [('text/csv', 0.5), ('application/json', 1.0)]
    """
    ranges: list[tuple[str, float]] = []
    for part in header.split(","):
        media, *params = (p.strip() for p in part.split(";"))
        if not media:
            continue
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0  # an unreadable weight must not win over a readable one
        ranges.append((media.lower(), q))
    return ranges


def choose(accept: str | None, offers: Sequence[Offer]) -> Offer | None:
    """The offer the client prefers most, or None when it accepts none of them.

    Args:
        accept: the ``Accept`` header, or None (anything goes: the first offer).
        offers: what the endpoint can produce, in its own order of preference.
    Returns:
        the chosen offer; None means "answer 406".

    >>> choose("text/*;q=0.9, text/csv", RESULT_OFFERS).format
    'csv'
    """
    if not accept or not accept.strip():
        return offers[0]
    ranges = parse_accept(accept)
    best: Offer | None = None
    best_q = 0.0
    for offer in offers:
        q = _quality(offer.media_type, ranges)
        if q > best_q:  # strictly greater: ties keep the server's order
            best, best_q = offer, q
    return best


def _quality(media_type: str, ranges: list[tuple[str, float]]) -> float:
    # The most specific matching range sets the weight (RFC 9110 §12.5.1), so
    # "*/*, text/csv;q=0.1" ranks CSV below everything else.
    major = media_type.split("/")[0]
    specificity = -1
    q = 0.0
    for media, weight in ranges:
        if media == media_type:
            level = 2
        elif media == f"{major}/*":
            level = 1
        elif media == "*/*":
            level = 0
        else:
            continue
        if level > specificity:
            specificity, q = level, weight
    return q
