"""Provenance: with ``Engine(provenance=True)`` every detection names the input events it was
built from, and those events alone are enough to detect it again."""

from __future__ import annotations

from hypothesis import HealthCheck, given, reject, settings
from strategies import programs, streams

from reasoner.errors import RuleCompileError
from reasoner.language.ast import Program
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event

TICKER_PAIRS = """
rise(S) <- (stock(S, P1) SEQ stock(S, P2)) WHERE P2 > P1.
double(S) <- rise(S) SEQ rise(S).
"""


def _detect(
    program: Program | str, stream: list[Event], until: int = 0, **options: object
) -> list[Event]:
    """Detections of ``stream``, with the clock moved on to ``until`` (for time points)."""
    engine = Engine(program, provenance=True, **options)  # type: ignore[arg-type]
    found = [d for event in stream for d in engine.push(event)]
    return found + engine.advance(until) if until else found


def test_a_detection_lists_its_input_events_in_time_order() -> None:
    a, b, c = Event.at("a", (1,), 1), Event.at("b", (1,), 2), Event.at("c", (1,), 3)
    (detection,) = _detect("d(X) <- (a(X) SEQ b(X)) SEQ c(X).", [a, b, c])
    assert detection == Event("d", (1,), 1, 3)
    assert detection.sources == (a, b, c)


def test_derived_events_stand_for_their_own_inputs() -> None:
    stream = [Event.at("stock", ("GO", p), t) for t, p in enumerate([10, 11, 9, 12, 13], 1)]
    detections = _detect(TICKER_PAIRS, stream, policy="chronological")
    doubles = [d for d in detections if d.name == "double"]
    # chronological: rise [1,2] (10 -> 11), rise [2,4] (11 -> 12, the oldest left), rise
    # [3,5] (9 -> 13); double takes [1,2] and the first rise after it, [3,5]: 12 is not in it
    assert doubles == [Event("double", ("GO",), 1, 5)]
    assert doubles[0].sources == (stream[0], stream[1], stream[2], stream[4])


def test_negation_names_the_two_ends_not_the_absent_event() -> None:
    a, c = Event.at("a", (), 1), Event.at("c", (), 5)
    (detection,) = _detect("d <- NOT(b).[a, c].", [a, Event.at("x", (), 3), c])
    assert detection.sources == (a, c)


def test_without_provenance_detections_have_no_sources() -> None:
    engine = Engine("d <- a SEQ b.")
    engine.push(Event.at("a", (), 1))
    (detection,) = engine.push(Event.at("b", (), 2))
    assert detection.sources == ()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), streams())
def test_the_sources_alone_detect_the_event_again(program: Program, stream: list[Event]) -> None:
    # Every operator is monotone in its inputs and a negation only loses blockers when
    # events are left out, so (unrestricted policy) the sources suffice once the clock
    # reaches the detection's end (time points are not inputs); and each lies within the
    # detection's interval.
    try:
        detections = _detect(program, stream)
    except RuleCompileError:
        reject()
    for detection in detections:
        assert detection.sources, detection
        assert set(detection.sources) <= set(stream)
        assert all(detection.start <= s.start and s.end <= detection.end for s in detection.sources)
        again = _detect(program, list(detection.sources), until=detection.end)
        assert detection in again
