"""Detections as an async stream: ``async for`` over an engine fed from an asyncio queue.

Run: ``.venv/bin/python examples/async_detections.py``. A producer task puts the bundled
stock ticks on a queue, as a network client would; the consumer reacts to each price jump as
soon as the engine detects it, and may await anything in between.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from connectors.events.jsonl import read_jsonl
from reasoner import (
    Engine,
    Event,
    detections,
    event,
    program,
    rule,
    seq,
    var,
    variables,
    where,
    within,
)

EVENTS = Path(__file__).parent / "data" / "stock_ticker.jsonl"
S, P1, P2 = variables("S P1 P2")
_ = var("_")

# jump(S, P1, P2): two prices of S at most 5 time units apart, the second 2 % higher.
JUMP = rule(
    event("jump", S, P1, P2),
    where(within(seq(event("stock", S, P1, _), event("stock", S, P2, _)), 5), P2 > P1 * 1.02),
)


async def produce(queue: asyncio.Queue[Event | None]) -> None:
    """Put every tick on the queue, then None for the end of the stream."""
    for tick in read_jsonl(EVENTS):
        await queue.put(tick)
    await queue.put(None)


async def ticks(queue: asyncio.Queue[Event | None]) -> AsyncIterator[Event]:
    """The queue as an async iterator (None ends it)."""
    while (tick := await queue.get()) is not None:
        yield tick


async def main() -> None:
    engine = Engine(program(JUMP), policy="recent")
    queue: asyncio.Queue[Event | None] = asyncio.Queue(maxsize=16)
    producer = asyncio.create_task(produce(queue))
    count = 0
    async for jump in detections(engine, ticks(queue)):
        count += 1
        symbol, low, high = jump.args
        print(f"jump of {symbol} from {low} to {high} between t={jump.start} and t={jump.end}")
    await producer
    print(f"{count} jumps")


if __name__ == "__main__":
    asyncio.run(main())
