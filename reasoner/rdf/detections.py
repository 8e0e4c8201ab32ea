"""Detected complex events as RDF: the one description shared by the endpoint and the writers.

Each detection is a resource ``urn:reasoner:detection:<hash>`` (the hash of name, arguments and
interval, so describing the same detection twice adds nothing)::

    <d> a r:Detection ; r:event "blizzard" ; r:arity 2 ;
        rdf:_1 "KSLC" ; rdf:_2 12.5 ;             # arguments by position
        time:hasTime <d:interval> .
    <d:interval> a time:Interval ; time:hasBeginning <d:start> ; time:hasEnd <d:end> .
    <d:start> a time:Instant ; time:inXSDDateTimeStamp "...Z"^^xsd:dateTime ;
        time:inTimePosition <d:start-position> .
    <d:start-position> a time:TimePosition ; time:numericPosition 1700000000 ;
        time:hasTRS <http://www.opengis.net/def/crs/OGC/0/UnixTime> .

with ``r:`` = ``urn:reasoner:vocab#`` and ``time:`` = OWL-Time. The date-time stamp is only
written when times are dates (``dates=True``, the endpoint's default; the stream writers pass
whether the input used ISO-8601 times). Its literal is typed ``xsd:dateTime`` in UTC, whose
value is an ``xsd:dateTimeStamp`` as OWL-Time's range asks, and which rdflib and SPARQL compare
as dates. The text is N-Triples built here (no RDF library): the SPARQL endpoint loads it into
:data:`DETECTIONS_GRAPH`, :mod:`connectors.rdf.writer` wraps it into one named graph per
detection.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import UTC, datetime
from decimal import Decimal
from fractions import Fraction
from typing import Protocol

from reasoner.errors import KnowledgeError
from reasoner.rdf.ntriples import RDF, VOCAB, XSD, literal, string, term
from reasoner.values import Time, Value

#: The endpoint's named graph that holds published detections.
DETECTIONS_GRAPH = "urn:reasoner:graph:detections"

_TIME = "http://www.w3.org/2006/time#"
_UNIX_TIME = "http://www.opengis.net/def/crs/OGC/0/UnixTime"


class DetectedEvent(Protocol):
    """What the engine emits (``reasoner.runtime.events.Event`` has these attributes)."""

    @property
    def name(self) -> str: ...
    @property
    def args(self) -> tuple[Value, ...]: ...
    @property
    def start(self) -> Time: ...
    @property
    def end(self) -> Time: ...


def detections_ntriples(events: Iterable[DetectedEvent], *, dates: bool = True) -> str:
    """Describe detections in N-Triples (see the module doc for the shape).

    Args:
        events: objects with ``name``, ``args``, ``start`` and ``end``.
        dates: whether to give each instant its UTC date-time as well as its number.
    Returns:
        the N-Triples document, one detection after another.
    Raises:
        KnowledgeError: for an argument IRI or a time stamp RDF cannot write.

    >>> from types import SimpleNamespace as E
    >>> text = detections_ntriples([E(name="alarm", args=("KSLC",), start=0, end=60)])
    >>> '<urn:reasoner:vocab#event> "alarm" .' in text
    True
    """
    return "".join(
        line + " .\n" for event in events for line in detection_triples(event, dates=dates)
    )


def detection_iri(event: DetectedEvent) -> str:
    """The detection's IRI: a hash of its name, arguments and interval.

    >>> from types import SimpleNamespace as E
    >>> detection_iri(E(name="a", args=(), start=1, end=2)).startswith("urn:reasoner:detection:")
    True
    """
    key = repr((event.name, tuple(event.args), event.start, event.end)).encode()
    return f"urn:reasoner:detection:{hashlib.sha256(key).hexdigest()[:32]}"


def detection_triples(event: DetectedEvent, *, dates: bool = True) -> list[str]:
    """The triples describing one detection, as N-Triples statements without the final dot.

    Args:
        event: an object with ``name``, ``args``, ``start`` and ``end``.
        dates: whether instants carry their UTC date-time (``time:inXSDDateTimeStamp``).
    Returns:
        the statements, subject first (see the module doc).
    Raises:
        KnowledgeError: for an argument IRI or a time stamp RDF cannot write.

    >>> from types import SimpleNamespace as E
    >>> len(detection_triples(E(name="a", args=(), start=1, end=2), dates=False))
    17
    """
    d = detection_iri(event)
    subject = f"<{d}>"
    interval = f"<{d}:interval>"
    lines = [
        f"{subject} <{RDF}type> <{VOCAB}Detection>",
        f"{subject} <{VOCAB}event> {string(event.name)}",
        f"{subject} <{VOCAB}arity> {literal(len(event.args))}",
        f"{subject} <{_TIME}hasTime> {interval}",
        f"{interval} <{RDF}type> <{_TIME}Interval>",
    ]
    for index, arg in enumerate(event.args, start=1):
        lines.append(f"{subject} <{RDF}_{index}> {term(arg)}")
    for role, name, t in (("hasBeginning", "start", event.start), ("hasEnd", "end", event.end)):
        instant, position = f"<{d}:{name}>", f"<{d}:{name}-position>"
        lines += [
            f"{interval} <{_TIME}{role}> {instant}",
            f"{instant} <{RDF}type> <{_TIME}Instant>",
            f"{instant} <{_TIME}inTimePosition> {position}",
            f"{position} <{RDF}type> <{_TIME}TimePosition>",
            f'{position} <{_TIME}numericPosition> "{_decimal(t)}"^^<{XSD}decimal>',
            f"{position} <{_TIME}hasTRS> <{_UNIX_TIME}>",
        ]
        if dates:
            lines.append(f"{instant} <{_TIME}inXSDDateTimeStamp> {_timestamp(t)}")
    return lines


def _timestamp(t: Time) -> str:
    try:
        moment = datetime.fromtimestamp(float(t), UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, ValueError, OSError) as e:
        raise KnowledgeError(f"cannot write the time stamp {t!r} as a date: {e}") from e
    return f'"{moment}"^^<{XSD}dateTime>'


def _decimal(t: Time) -> str:
    exact: Decimal
    if isinstance(t, Fraction):
        exact = Decimal(t.numerator) / Decimal(t.denominator)
    else:
        # repr() gives the shortest text that round-trips; Decimal(float) would not.
        exact = Decimal(repr(t)) if isinstance(t, float) else Decimal(t)
    return format(exact, "f")
