"""Shared fixtures: small knowledge and real endpoint servers on free loopback ports."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from reasoner.knowledge.store import Store
from reasoner.server import EndpointConfig, SparqlServer
from reasoner.server.app import KnowledgeSource

DATA = """
@prefix ex: <http://ex.org/> .
ex:KSLC a ex:Station ; ex:name "Salt Lake City" ; ex:temperature -7 .
ex:KPVU a ex:Station ; ex:name "Provo" ; ex:temperature 2 .
"""
EXTRA = '<http://ex.org/KOGD> <http://ex.org/name> "Ogden" .'


def make_store() -> Store:
    """Two stations in the default graph, a third in the named graph ``urn:g:extra``."""
    store = Store()
    store.load_text(DATA, "turtle")
    store.load_text(EXTRA, "ntriples", graph="urn:g:extra")
    return store


@pytest.fixture
def serve() -> Iterator[Callable[..., SparqlServer]]:
    """Start servers on free loopback ports; every one is stopped after the test."""
    started: list[SparqlServer] = []

    def start(knowledge: Store | KnowledgeSource | None = None, **config: Any) -> SparqlServer:
        store = make_store() if knowledge is None else knowledge
        server = SparqlServer(store, EndpointConfig(port=0, **config)).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def server(serve: Callable[..., SparqlServer]) -> SparqlServer:
    """A read-only endpoint over :func:`make_store` with default limits."""
    return serve()
