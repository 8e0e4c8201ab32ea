"""``reasoner run --serve PORT``: a SPARQL endpoint beside the replay.

While the engine replays, a :class:`~reasoner.server.SparqlServer` (on loopback unless
another host is given) serves the background knowledge and every detection, published into
the graph ``urn:reasoner:graph:detections`` as soon as the engine reports it, and shown as it
arrives on the ``/live`` page (which learns when the replay ends). The endpoint serves the
:class:`~reasoner.knowledge.versions.KnowledgeBase` itself, not one version, so a refresh
of it becomes visible atomically (with the published detections carried over).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from connectors.events.stopping import GracefulStop, graceful_stop
from connectors.events.times import TimeStyle
from reasoner.runtime.events import Event
from reasoner.server.config import LOOPBACK

if TYPE_CHECKING:
    from reasoner.knowledge.versions import KnowledgeBase

Publish = Callable[[Sequence[Event]], None]


@contextlib.contextmanager
def detections_endpoint(
    port: int | None,
    knowledge: KnowledgeBase | None,
    *,
    keep_serving: bool = False,
    style: TimeStyle | None = None,
    host: str = LOOPBACK,
    stop: GracefulStop | None = None,
) -> Iterator[Publish]:
    """Serve ``knowledge`` and published detections on ``host:port`` for the block.

    Args:
        port: the TCP port (0: any free one; the URL is printed on stderr), or None for no
            endpoint (``publish`` then does nothing).
        knowledge: what to serve besides the detections (None: detections only).
        keep_serving: when the block ends normally, keep serving until SIGINT (Ctrl-C) or
            SIGTERM; must then run in the main thread. Not when ``stop`` was requested
            during the block: the command is stopping.
        style: the readers' :class:`TimeStyle`: instants get their date-time only when the
            input used ISO-8601 times (default: always).
        host: the interface to listen on (default loopback: nothing exposed by accident).
        stop: the command's :class:`GracefulStop`, if it has one (else ``keep_serving``
            installs its own while it waits).
    Returns:
        a context manager giving ``publish(detections)``.
    Raises:
        ReasonerError: when the port cannot be bound.

    >>> with detections_endpoint(0, None) as publish:  # doctest: +SKIP
    ...     publish(engine.push(event))
    """
    if port is None:
        yield _discard
        return
    from reasoner.knowledge.store import Store
    from reasoner.server import EndpointConfig, SparqlServer

    served = knowledge if knowledge is not None else Store()
    server = SparqlServer(served, EndpointConfig(host=host, port=port)).start()
    try:
        print(
            f"SPARQL endpoint at {server.url} (query page {server.page_url()}, "
            f"live view {server.page_url('live')})",
            file=sys.stderr,
            flush=True,
        )

        def publish(detections: Sequence[Event]) -> None:
            if detections:
                server.publish_detections(detections, dates=style is None or style.iso)

        yield publish
        server.finish_replay()
        if keep_serving and not (stop is not None and stop.requested):
            sys.stdout.flush()  # detections written so far are complete before the wait
            _serve_until_stopped(
                stop, f"replay done; serving {server.url} until interrupted (Ctrl-C)"
            )
    finally:
        # The requests in flight are answered (a query by its time limit) before it closes.
        server.stop(grace_s=server.config.query_timeout_s + 1)


def _serve_until_stopped(stop: GracefulStop | None, announce: str) -> None:
    """Say ``announce`` on stderr, then block until SIGINT or SIGTERM (``stop``'s, or a
    :func:`graceful_stop` of its own): a process started in the background of a shell
    inherits an ignored SIGINT, and SIGTERM is how supervisors stop a server. The
    announcement comes after the handlers are set, so whoever reads it may signal at once."""
    with contextlib.nullcontext(stop) if stop is not None else graceful_stop() as waiting:
        waiting.wait(announce)


def _discard(detections: Sequence[Event]) -> None:
    """``publish`` without an endpoint."""
