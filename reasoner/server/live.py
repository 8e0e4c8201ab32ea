"""The live feed behind ``GET /live``: published detections as server-sent events.

The engine's thread only appends each published batch to a list (no formatting on the hot
path). Each ``/live/events`` connection runs in its own server thread: it sends every detection
published so far, then waits for more, formatting a detection the first time any connection
sends it (the text is kept for the others). A detection becomes one event::

    id: 7
    event: detection
    data: {"id": 7, "iri": "urn:reasoner:detection:...", "name": "blizzardWarning",
           "args": ["KSLC", ...], "start": 1610347200, "end": 1610358000, "dates": true,
           "sources": [{"name": "sensor_reading", "args": [...], "start": ..., "end": ...}],
           "places": [{"arg": "KSLC", "lat": 40.788393, "lon": -111.977773}]}

``places`` are the arguments (list elements included) that the knowledge locates with WGS84
coordinates: an IRI with ``wgs84:lat`` and ``wgs84:long``, or a string that is the value of
some property of such a resource (a station's ``om-owl:ID "KSLC"``); one query per distinct
argument, remembered per knowledge version. When the replay ends, ``event: done`` says how
many detections there were; a reconnecting browser sends ``Last-Event-ID`` and gets the rest.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from numbers import Real
from typing import Any

from reasoner.errors import ReasonerError
from reasoner.knowledge.store import Store
from reasoner.rdf.detections import DetectedEvent, detection_iri
from reasoner.rdf.ntriples import term
from reasoner.values import IRI, Value, json_value
from reasoner.vocab import WGS84

#: Seconds between comments on an idle stream: they find closed connections.
KEEPALIVE_S = 15.0


class LiveFeed:
    """Published detections for ``/live/events`` streams.

    Args:
        store: gives the knowledge version to locate arguments in (called per lookup).

    >>> feed = LiveFeed(Store)  # doctest: +SKIP
    >>> feed.add([detection], dates=True); feed.finish()  # doctest: +SKIP
    """

    def __init__(self, store: Callable[[], Store]) -> None:
        self._store = store
        self._changed = threading.Condition()
        self._events: list[tuple[DetectedEvent, bool]] = []
        self._texts: list[bytes] = []  # formatted events, a prefix of _events
        self._formatting = threading.Lock()
        self._finished = False
        self._closed = False
        self._places: dict[Value, tuple[float, float] | None] = {}
        self._places_of: Store | None = None

    def add(self, events: Sequence[DetectedEvent], *, dates: bool) -> None:
        """Append published detections (``dates``: whether their times are epoch seconds)."""
        with self._changed:
            self._events.extend((event, dates) for event in events)
            self._changed.notify_all()

    def finish(self) -> None:
        """Mark the replay as finished: streams send ``event: done``."""
        with self._changed:
            self._finished = True
            self._changed.notify_all()

    def close(self) -> None:
        """End every stream (the server stops)."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def stream(self, after: int = -1, keepalive_s: float = KEEPALIVE_S) -> Iterator[bytes]:
        """The event stream from detection ``after + 1`` on, until :meth:`close`.

        Args:
            after: the id of the last detection the client has (``Last-Event-ID``), or -1.
            keepalive_s: seconds of silence before a comment line is sent.
        Returns:
            chunks of ``text/event-stream``, each ending at an event boundary.
        """
        sent = max(after + 1, 0)
        done_sent = False
        yield b"retry: 2000\n\n"
        while True:
            with self._changed:
                if (
                    not self._closed
                    and sent >= len(self._events)
                    and (done_sent or not self._finished)
                ):
                    self._changed.wait(keepalive_s)
                if self._closed:
                    return
                available, finished = len(self._events), self._finished
            if sent < available:
                yield b"".join(self._text(index) for index in range(sent, available))
                sent = available
            elif finished and not done_sent:
                yield f"event: done\ndata: {json.dumps({'count': sent})}\n\n".encode()
                done_sent = True
            else:
                yield b": keepalive\n\n"

    def _text(self, index: int) -> bytes:
        with self._formatting:  # one stream formats, the others wait and reuse its text
            while len(self._texts) <= index:
                position = len(self._texts)
                event, dates = self._events[position]
                record = {"id": position, **_record(event), "dates": dates}
                record["iri"] = detection_iri(event)
                record["sources"] = [_record(source) for source in getattr(event, "sources", ())]
                record["places"] = self._located(event.args)
                data = json.dumps(record, separators=(",", ":"))
                self._texts.append(f"id: {position}\nevent: detection\ndata: {data}\n\n".encode())
        return self._texts[index]

    def _located(self, args: Sequence[Value]) -> list[dict[str, Any]]:
        store = self._store()
        if store is not self._places_of:  # a new knowledge version: look up again
            self._places, self._places_of = {}, store
        found = []
        for value in _flat(args):
            if value not in self._places:
                self._places[value] = _locate(store, value)
            place = self._places[value]
            if place is not None:
                found.append({"arg": json_value(value), "lat": place[0], "lon": place[1]})
        return found


def _record(event: DetectedEvent) -> dict[str, Any]:
    return {
        "name": event.name,
        "args": json_value(tuple(event.args)),
        "start": json_value(event.start),
        "end": json_value(event.end),
    }


def _flat(args: Sequence[Value]) -> Iterator[str | IRI]:
    """The strings and IRIs among the arguments and inside their lists, each once."""
    seen: set[Value] = set()
    stack = list(reversed(args))
    while stack:
        value = stack.pop()
        if isinstance(value, tuple):
            stack.extend(reversed(value))
        elif isinstance(value, str | IRI) and value not in seen:
            seen.add(value)
            yield value


def _locate(store: Store, value: str | IRI) -> tuple[float, float] | None:
    """WGS84 latitude and longitude of the resource ``value`` names, if the knowledge has them."""
    try:
        if isinstance(value, IRI):
            subject, pattern = term(value), ""
        else:
            subject, pattern = "?thing", f"?thing ?key {term(value)} ."
        rows = store.query(
            f"SELECT ?lat ?lon WHERE {{ {pattern} {subject} <{WGS84}lat> ?lat ; "
            f"<{WGS84}long> ?lon . }} LIMIT 1"
        ).rows
    except ReasonerError:  # e.g. an IRI that N-Triples cannot write: nothing to locate
        return None
    for lat, lon in rows:
        if isinstance(lat, Real) and isinstance(lon, Real):
            return float(lat), float(lon)
    return None
