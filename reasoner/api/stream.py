"""Reacting to detections: handler functions, and ``async for`` over a stream.

Both sit on the engine's public methods (``on``, ``push``, ``flush``), so they compose: handlers
registered with :func:`handler` run inside :func:`detections` as well, in detection order,
before the detection is yielded.

Provenance is asked for where the engine is built: with ``Engine(rules, provenance=True)``
every detection a handler receives or ``async for`` yields has ``sources``, the input events it
was built from, in time order (``()`` otherwise)::

    >>> engine = Engine("c(X) <- a(X) SEQ b(X).", provenance=True)
    >>> @handler(engine, "c")
    ... def explain(detection):
    ...     print(detection.name, "from", [(s.name, s.args, s.start) for s in detection.sources])
    >>> _ = engine.push(Event.at("a", (1,), 1)), engine.push(Event.at("b", (1,), 2))
    c from [('a', (1,), 1), ('b', (1,), 2)]
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from typing import TypeVar

from reasoner.errors import EventError
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event

__all__ = ["detections", "handler"]

Handler = TypeVar("Handler", bound=Callable[[Event], None])

#: Events pushed from a plain iterable between two returns to the event loop.
_YIELD_EVERY = 256


def handler(engine: Engine, name: str | None = None) -> Callable[[Handler], Handler]:
    """Register the decorated function for every detection of ``name`` (None: all of them).

    Args:
        engine: the engine whose detections to handle.
        name: the complex event's name.
    Returns:
        a decorator that registers the function and returns it unchanged.
    Raises:
        TypeError: for an ``async def`` function (the engine calls handlers synchronously;
            await inside ``async for event in detections(...)`` instead).

    >>> engine = Engine("c <- a SEQ b.")
    >>> @handler(engine, "c")
    ... def alert(event):
    ...     print("alert", event.start, event.end)
    >>> _ = engine.push(Event.at("a", (), 1)), engine.push(Event.at("b", (), 2))
    alert 1 2
    """

    def register(function: Handler) -> Handler:
        if inspect.iscoroutinefunction(function):
            raise TypeError(
                f"{function.__name__} is async: the engine calls handlers synchronously; "
                "use 'async for event in detections(engine, source)' to await per detection"
            )
        engine.on(name, function)
        return function

    return register


async def detections(
    engine: Engine,
    source: Iterable[Event] | AsyncIterable[Event],
    *,
    on_reject: Callable[[EventError], object] | None = None,
) -> AsyncIterator[Event]:
    """Push every event of ``source`` through ``engine`` and yield the detections as they
    happen; at the end of the source, flush the engine (its lateness buffer) and yield those.

    Args:
        engine: the engine (it keeps its state: iterate again to continue the stream).
        source: events in time order, from an iterable or an async iterable (a socket, a
            queue, an async generator ...).
        on_reject: called with the :class:`EventError` of an event the engine refuses (late,
            malformed), which is then skipped; by default the error is raised.
    Returns:
        an async iterator of detected events.

    >>> import asyncio
    >>> async def main():
    ...     engine = Engine("c <- a SEQ b.")
    ...     stream = [Event.at("a", (), 1), Event.at("b", (), 2)]
    ...     return [event async for event in detections(engine, stream)]
    >>> asyncio.run(main())
    [Event(name='c', args=(), start=1, end=2)]
    """
    if isinstance(source, AsyncIterable):
        async for event in source:
            for detection in _push(engine, event, on_reject):
                yield detection
    else:
        for count, event in enumerate(source, start=1):
            for detection in _push(engine, event, on_reject):
                yield detection
            if count % _YIELD_EVERY == 0:
                # A plain iterable never awaits: let other tasks run now and then.
                await asyncio.sleep(0)
    for detection in engine.flush():
        yield detection


def _push(
    engine: Engine, event: Event, on_reject: Callable[[EventError], object] | None
) -> list[Event]:
    try:
        return engine.push(event)
    except EventError as error:
        if on_reject is None:
            raise
        on_reject(error)
        return []
