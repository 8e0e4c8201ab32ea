"""Detected complex events as RDF, for the named graph ``urn:reasoner:graph:detections``.

Each detection becomes a resource ``urn:reasoner:detection:<hash>`` (the hash of name,
arguments and interval, so publishing the same detection twice adds nothing)::

    <d> a r:Detection ; r:event "blizzard" ; r:arity 2 ;
        rdf:_1 "KSLC" ; rdf:_2 12.5 ;             # arguments by position
        time:hasTime <d:interval> .
    <d:interval> a time:Interval ; time:hasBeginning <d:start> ; time:hasEnd <d:end> .
    <d:start> a time:Instant ; time:inXSDDateTimeStamp "...Z"^^xsd:dateTimeStamp ;
        time:inTimePosition <d:start-position> .
    <d:start-position> a time:TimePosition ; time:numericPosition 1700000000 ;
        time:hasTRS <http://www.opengis.net/def/crs/OGC/0/UnixTime> .

with ``r:`` = ``urn:reasoner:vocab#`` and ``time:`` = OWL-Time. The output is N-Triples text
built here (no RDF library), loaded by ``Store.load_text`` into the detections graph.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from datetime import UTC, datetime
from decimal import Decimal
from fractions import Fraction
from typing import Protocol

from reasoner.errors import KnowledgeError
from reasoner.values import IRI, Struct, Time, Value

#: The named graph that holds published detections.
DETECTIONS_GRAPH = "urn:reasoner:graph:detections"
#: The project's small vocabulary for detections.
VOCAB = "urn:reasoner:vocab#"

_RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
_XSD = "http://www.w3.org/2001/XMLSchema#"
_TIME = "http://www.w3.org/2006/time#"
_UNIX_TIME = "http://www.opengis.net/def/crs/OGC/0/UnixTime"
_BAD_IRI_CHARS = frozenset('<>"{}|^`\\ \n\r\t')


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


def detections_ntriples(events: Iterable[DetectedEvent]) -> str:
    """Describe detections in N-Triples (see the module doc for the shape).

    Args:
        events: objects with ``name``, ``args``, ``start`` and ``end``.
    Returns:
        the N-Triples document, one detection after another.
    Raises:
        KnowledgeError: for an argument IRI that N-Triples cannot write.

    >>> from types import SimpleNamespace as E
    >>> text = detections_ntriples([E(name="alarm", args=("KSLC",), start=0, end=60)])
    >>> '<urn:reasoner:vocab#event> "alarm" .' in text
    True
    """
    lines: list[str] = []
    for event in events:
        lines.extend(_describe(event))
    return "".join(line + " .\n" for line in lines)


def _describe(event: DetectedEvent) -> list[str]:
    key = repr((event.name, tuple(event.args), event.start, event.end)).encode()
    d = f"urn:reasoner:detection:{hashlib.sha256(key).hexdigest()[:32]}"
    subject = f"<{d}>"
    interval = f"<{d}:interval>"
    lines = [
        f"{subject} <{_RDF}type> <{VOCAB}Detection>",
        f"{subject} <{VOCAB}event> {_string(event.name)}",
        f"{subject} <{VOCAB}arity> {_literal(len(event.args))}",
        f"{subject} <{_TIME}hasTime> {interval}",
        f"{interval} <{_RDF}type> <{_TIME}Interval>",
    ]
    for index, arg in enumerate(event.args, start=1):
        lines.append(f"{subject} <{_RDF}_{index}> {_term(arg)}")
    for role, name, t in (("hasBeginning", "start", event.start), ("hasEnd", "end", event.end)):
        instant, position = f"<{d}:{name}>", f"<{d}:{name}-position>"
        lines += [
            f"{interval} <{_TIME}{role}> {instant}",
            f"{instant} <{_RDF}type> <{_TIME}Instant>",
            f"{instant} <{_TIME}inXSDDateTimeStamp> {_timestamp(t)}",
            f"{instant} <{_TIME}inTimePosition> {position}",
            f"{position} <{_RDF}type> <{_TIME}TimePosition>",
            f'{position} <{_TIME}numericPosition> "{_decimal(t)}"^^<{_XSD}decimal>',
            f"{position} <{_TIME}hasTRS> <{_UNIX_TIME}>",
        ]
    return lines


def _term(value: Value) -> str:
    if isinstance(value, IRI):
        if not value.value or any(c in _BAD_IRI_CHARS for c in value.value):
            raise KnowledgeError(f"cannot publish the IRI {value.value!r}: not a valid IRI")
        return f"<{value.value}>"
    return _literal(value)


def _literal(value: Value) -> str:
    match value:
        case bool():
            return f'"{str(value).lower()}"^^<{_XSD}boolean>'
        case int():
            return f'"{value}"^^<{_XSD}integer>'
        case float() if math.isnan(value):
            return f'"NaN"^^<{_XSD}double>'
        case float() if math.isinf(value):
            return f'"{"INF" if value > 0 else "-INF"}"^^<{_XSD}double>'
        case float() | Fraction():
            return f'"{float(value)!r}"^^<{_XSD}double>'
        case str():
            return _string(value)
    # Compound values and lists have no RDF counterpart: keep their rule-language text.
    return f"{_string(_text(value))}^^<{VOCAB}term>"


def _text(value: Value) -> str:
    match value:
        case Struct(functor=f, args=args):
            return f"{f}({', '.join(_text(a) for a in args)})"
        case tuple():
            return f"[{', '.join(_text(a) for a in value)}]"
        case IRI():
            return f"<{value.value}>"
        case str():
            return repr(value)
    return str(value)


def _string(text: str) -> str:
    escaped = (
        text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    )
    return f'"{escaped}"'


def _timestamp(t: Time) -> str:
    try:
        moment = datetime.fromtimestamp(float(t), UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, ValueError, OSError) as e:
        raise KnowledgeError(f"cannot publish the time stamp {t!r}: {e}") from e
    return f'"{moment}"^^<{_XSD}dateTimeStamp>'


def _decimal(t: Time) -> str:
    exact: Decimal
    if isinstance(t, Fraction):
        exact = Decimal(t.numerator) / Decimal(t.denominator)
    else:
        # repr() gives the shortest text that round-trips; Decimal(float) would not.
        exact = Decimal(repr(t)) if isinstance(t, float) else Decimal(t)
    return format(exact, "f")
