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
as dates.

A detection of an engine built with ``provenance=True`` also names the input events it was
built from (its ``sources``), each a resource ``urn:reasoner:event:<hash>`` (the same hash)
described with the same shape, typed ``r:InputEvent``::

    <d> prov:wasDerivedFrom <e1>, <e2> .
    <e1> a r:InputEvent ; r:event "reading" ; r:arity 3 ; rdf:_1 "KSLC" ; ...
        time:hasTime <e1:interval> .            # and so on, as above

with ``prov:`` = PROV-O. An input event behind several detections keeps one IRI, so the
descriptions merge in one graph (the endpoint's) and link across named graphs (the writers').
A detection of an engine built with ``explain=True`` also carries its derivation: the rule
applications and knowledge facts behind it, as :mod:`reasoner.rdf.prov` describes.

The text is N-Triples built here (no RDF library): the SPARQL endpoint loads it into
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
from reasoner.rdf.ntriples import VOCAB, literal, string, term
from reasoner.values import Time, Value
from reasoner.vocab import PROV, RDF, TIME, XSD

#: The endpoint's named graph that holds published detections.
DETECTIONS_GRAPH = "urn:reasoner:graph:detections"

#: The class of a detection's resource, and that of the input events it was built from.
DETECTION_CLASS = f"{VOCAB}Detection"
INPUT_EVENT_CLASS = f"{VOCAB}InputEvent"

_UNIXTIME = "http://www.opengis.net/def/crs/OGC/0/UnixTime"


class DetectedEvent(Protocol):
    """What the engine emits (``reasoner.runtime.events.Event`` has these attributes).

    A ``sources`` attribute (a tuple of such events, ``Event.sources``) is optional: it is read
    with ``getattr`` so that any record with the four fields can be described.
    """

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
        events: objects with ``name``, ``args``, ``start`` and ``end`` (and optionally
            ``sources``: see :func:`detection_triples`).
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
    return _hashed_iri("detection", event)


def event_iri(event: DetectedEvent) -> str:
    """An input event's IRI: the same hash as :func:`detection_iri`, under ``event``.

    >>> from types import SimpleNamespace as E
    >>> event_iri(E(name="a", args=(), start=1, end=2)).startswith("urn:reasoner:event:")
    True
    """
    return _hashed_iri("event", event)


def _hashed_iri(kind: str, event: DetectedEvent) -> str:
    key = repr((event.name, tuple(event.args), event.start, event.end)).encode()
    return f"urn:reasoner:{kind}:{hashlib.sha256(key).hexdigest()[:32]}"


def detection_triples(event: DetectedEvent, *, dates: bool = True) -> list[str]:
    """The triples describing one detection, as N-Triples statements without the final dot.

    A detection with ``sources`` (an engine built with ``provenance=True``) is linked to each
    of them by ``prov:wasDerivedFrom``, and each is described as an ``r:InputEvent``; one with
    a derivation (``explain=True``) gets it in PROV-O (:mod:`reasoner.rdf.prov`).

    Args:
        event: an object with ``name``, ``args``, ``start`` and ``end``, and optionally
            ``sources`` (the input events it was built from).
        dates: whether instants carry their UTC date-time (``time:inXSDDateTimeStamp``).
    Returns:
        the statements, subject first (see the module doc): the detection, its links to its
        sources, then the sources.
    Raises:
        KnowledgeError: for an argument IRI or a time stamp RDF cannot write.

    >>> from types import SimpleNamespace as E
    >>> len(detection_triples(E(name="a", args=(), start=1, end=2), dates=False))
    17
    >>> source = E(name="b", args=(), start=2, end=2)
    >>> len(detection_triples(E(name="a", args=(), start=1, end=2, sources=(source,)), dates=False))
    35
    """
    subject = detection_iri(event)
    lines = event_triples(event, subject, DETECTION_CLASS, dates=dates)
    # keyed by IRI: an input event that two operands of the rule matched is described once
    sources = {event_iri(source): source for source in getattr(event, "sources", ())}
    lines += [f"<{subject}> <{PROV}wasDerivedFrom> <{iri}>" for iri in sources]
    for iri, source in sources.items():
        lines += event_triples(source, iri, INPUT_EVENT_CLASS, dates=dates)
    if getattr(event, "derivation", None) is not None:
        from reasoner.rdf.prov import derivation_triples
        from reasoner.runtime.explain import explain

        lines += derivation_triples(explain(event), dates=dates)  # type: ignore[arg-type]
    return lines


def event_triples(
    event: DetectedEvent, subject: str, rdf_class: str, *, dates: bool = True
) -> list[str]:
    """The triples describing one event occurrence as the resource ``subject``.

    Args:
        event: an object with ``name``, ``args``, ``start`` and ``end``.
        subject: the resource's IRI (:func:`detection_iri`, :func:`event_iri`).
        rdf_class: its class: :data:`DETECTION_CLASS` or :data:`INPUT_EVENT_CLASS`.
        dates: whether instants carry their UTC date-time (``time:inXSDDateTimeStamp``).
    Returns:
        the statements, subject first: class, name, arity, arguments by position, and the
        OWL-Time interval ``<subject:interval>`` with its two instants.
    Raises:
        KnowledgeError: for an argument IRI or a time stamp RDF cannot write.

    >>> from types import SimpleNamespace as E
    >>> event_triples(E(name="a", args=(), start=1, end=1), "urn:e", INPUT_EVENT_CLASS)[0]
    '<urn:e> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <urn:reasoner:vocab#InputEvent>'
    """
    node = f"<{subject}>"
    interval = f"<{subject}:interval>"
    lines = [
        f"{node} <{RDF}type> <{rdf_class}>",
        f"{node} <{VOCAB}event> {string(event.name)}",
        f"{node} <{VOCAB}arity> {literal(len(event.args))}",
        f"{node} <{TIME}hasTime> {interval}",
        f"{interval} <{RDF}type> <{TIME}Interval>",
    ]
    for index, arg in enumerate(event.args, start=1):
        lines.append(f"{node} <{RDF}_{index}> {term(arg)}")
    for role, name, t in (("hasBeginning", "start", event.start), ("hasEnd", "end", event.end)):
        instant, position = f"<{subject}:{name}>", f"<{subject}:{name}-position>"
        lines += [
            f"{interval} <{TIME}{role}> {instant}",
            f"{instant} <{RDF}type> <{TIME}Instant>",
            f"{instant} <{TIME}inTimePosition> {position}",
            f"{position} <{RDF}type> <{TIME}TimePosition>",
            f'{position} <{TIME}numericPosition> "{_decimal(t)}"^^<{XSD}decimal>',
            f"{position} <{TIME}hasTRS> <{_UNIXTIME}>",
        ]
        if dates:
            lines.append(f"{instant} <{TIME}inXSDDateTimeStamp> {_timestamp(t)}")
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
