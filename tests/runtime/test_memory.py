"""Bounded memory: with a window, the recent policy or the chronological one, the number of
stored occurrences stays under a constant on a long stock stream (checked on stats(), never
on time)."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

from connectors.generators.stock import stock_stream
from reasoner.runtime.engine import Engine

TICKER = (Path(__file__).resolve().parents[2] / "rules" / "stock_ticker.event").read_text()


def _peak_stored(engine: Engine, count: int, every: int = 10_000) -> int:
    peak = 0
    events = stock_stream(count, seed=3)
    while chunk := list(islice(events, every)):
        for event in chunk:
            engine.push(event)
        peak = max(peak, engine.stats().stored)
    return peak


def test_recent_policy_keeps_the_ticker_bounded_over_a_million_events() -> None:
    # Recent keeps one occurrence per node side and join key, and NOT frees blockers that
    # no stored occurrence can use: ce1–ce6 never hold more than a few dozen.
    engine = Engine(TICKER, policy="recent")
    assert _peak_stored(engine, 1_000_000) <= 64
    assert engine.stats().events_in == 1_000_000


def test_chronological_policy_keeps_the_ticker_bounded_over_a_million_events() -> None:
    # Chronological consumes matched pairs; what never matches (a PAR partner that can no
    # longer overlap, a NOT goal blocked for good) is freed once the engine knows inputs are
    # instantaneous (max_span=0). Sweeps wait until enough events passed to pay for them
    # (4 per node plus what is stored): measured at most 101 stored over 1M events.
    engine = Engine(TICKER, policy="chronological", max_span=0)
    assert _peak_stored(engine, 1_000_000, every=1_000) <= 150
    assert engine.stats().events_in == 1_000_000


def test_without_max_span_chronological_par_goals_stay() -> None:
    # The bound above comes from max_span: without it a PAR goal might still meet a long
    # input event that started in the past, so it is kept.
    engine = Engine(TICKER, policy="chronological")
    assert _peak_stored(engine, 20_000) > 10_000


def test_a_window_keeps_unrestricted_matching_bounded() -> None:
    # Every rise within 10 time units: at most ~10 stored stock events per company, plus what
    # accumulates between two sweeps (every half window).
    rules = "rise(S) <- (stock(S, P1, V1) SEQ stock(S, P2, V2)).10 WHERE P2 > P1."
    engine = Engine(rules)
    assert _peak_stored(engine, 300_000) <= 40
    assert engine.stats().expired > 290_000
