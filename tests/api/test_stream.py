"""Handlers and ``async for`` over detections, on the engine's public methods."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from pathlib import Path

import pytest

from connectors.events.jsonl import read_jsonl
from reasoner import Engine, Event, EventError
from reasoner.api import detections, event, handler, program, rule, seq, var, where

ROOT = Path(__file__).resolve().parents[2]
STOCK_RULES = ROOT / "rules" / "stock_ticker.event"
STOCK_EVENTS = ROOT / "examples" / "data" / "stock_ticker.jsonl"


def _collect(engine: Engine, source: Iterable[Event] | AsyncIterator[Event]) -> list[Event]:
    async def main() -> list[Event]:
        return [d async for d in detections(engine, source)]

    return asyncio.run(main())


async def _slowly(events: Iterable[Event]) -> AsyncIterator[Event]:
    for e in events:
        await asyncio.sleep(0)
        yield e


def test_async_iteration_equals_engine_run_for_plain_and_async_sources() -> None:
    events = list(read_jsonl(STOCK_EVENTS))
    expected = list(Engine(STOCK_RULES, policy="chronological").run(events))
    assert len({d.name for d in expected}) == 6  # every rule of the file detects something
    assert _collect(Engine(STOCK_RULES, policy="chronological"), events) == expected
    assert _collect(Engine(STOCK_RULES, policy="chronological"), _slowly(events)) == expected


def test_async_iteration_yields_the_hand_worked_chronological_example() -> None:
    # docs/semantics.md: a1 a2 a3 b4 b5 c6 under chronological gives ie[1,4], ie[2,5], e[1,6],
    # in the order they are detected.
    rules = "ie <- a SEQ b.\ne <- ie SEQ c."
    stream = [Event.at(name, (), t) for name, t in zip("aaabbc", range(1, 7), strict=True)]
    expected = [Event("ie", (), 1, 4), Event("ie", (), 2, 5), Event("e", (), 1, 6)]
    assert _collect(Engine(rules, policy="chronological"), stream) == expected
    assert _collect(Engine(rules, policy="chronological"), _slowly(stream)) == expected


def test_handlers_run_before_the_detection_is_yielded() -> None:
    X = var("X")
    engine = Engine(program(rule(event("c", X), where(seq(event("a", X), "b"), X > 1))))
    seen: list[str] = []

    @handler(engine, "c")
    def on_c(detection: Event) -> None:
        seen.append(f"handler c{detection.args}")

    @handler(engine)
    def on_any(detection: Event) -> None:
        seen.append(f"any {detection.name}")

    async def main() -> None:
        stream = [Event.at("a", (1,), 1), Event.at("a", (2,), 2), Event.at("b", (), 3)]
        async for detection in detections(engine, stream):
            seen.append(f"yield {detection.name}{detection.args}")

    asyncio.run(main())
    assert seen == ["handler c(2,)", "any c", "yield c(2,)"]
    assert on_c.__name__ == "on_c"  # the decorator returns the function itself


def test_async_handlers_are_refused() -> None:
    engine = Engine("c <- a.")

    async def on_c(detection: Event) -> None:
        pass

    with pytest.raises(TypeError, match="on_c is async"):
        handler(engine, "c")(on_c)


def test_the_lateness_buffer_is_flushed_at_the_end_of_the_source() -> None:
    engine = Engine("c <- a SEQ b.", lateness=10)
    stream = [Event.at("b", (), 5), Event.at("a", (), 3)]  # out of order, within the bound
    assert _collect(engine, _slowly(stream)) == [Event("c", (), 3, 5)]


def test_rejected_events_raise_or_go_to_on_reject() -> None:
    stream = [Event.at("a", (), 5), Event.at("a", (), 1), Event.at("b", (), 6)]
    with pytest.raises(EventError, match="late"):
        _collect(Engine("c <- a SEQ b."), stream)

    rejected: list[EventError] = []

    async def main() -> list[Event]:
        engine = Engine("c <- a SEQ b.")
        return [d async for d in detections(engine, stream, on_reject=rejected.append)]

    assert asyncio.run(main()) == [Event("c", (), 5, 6)]
    assert [e.event for e in rejected] == [Event.at("a", (), 1)]


def test_a_long_plain_source_lets_other_tasks_run() -> None:
    async def main() -> tuple[int | None, int]:
        count = 0
        other_ran_at: int | None = None

        async def other() -> None:
            nonlocal other_ran_at
            other_ran_at = count

        task = asyncio.create_task(other())
        stream = (Event.at("a", (i,), i) for i in range(1000))
        async for _ in detections(Engine("c(X) <- a(X)."), stream):
            count += 1
        await task
        return other_ran_at, count

    other_ran_at, total = asyncio.run(main())
    assert total == 1000
    assert other_ran_at is not None and other_ran_at < total


def test_an_engine_built_with_provenance_gives_sources_to_handlers_and_async_for() -> None:
    X = var("X")
    built = program(rule(event("c", X), where(seq(event("a", X), event("b", X)), X > 1)))
    engine = Engine(built, provenance=True, lateness=10)
    handled: list[tuple[Event, ...]] = []
    handler(engine, "c")(lambda detection: handled.append(detection.sources))
    a1, a2, b2 = Event.at("a", (1,), 1), Event.at("a", (2,), 2), Event.at("b", (2,), 4)
    # b2 and a2 arrive out of order: the detection comes from the flush at the end
    found = _collect(engine, _slowly([a1, b2, a2]))
    assert found == [Event("c", (2,), 2, 4)]
    assert found[0].sources == (a2, b2)
    assert handled == [(a2, b2)]


def test_detections_have_no_sources_unless_asked_for() -> None:
    found = _collect(Engine("c <- a SEQ b."), [Event.at("a", (), 1), Event.at("b", (), 2)])
    assert found == [Event("c", (), 1, 2)] and found[0].sources == ()
