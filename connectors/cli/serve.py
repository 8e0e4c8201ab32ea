"""``reasoner serve``: the SPARQL endpoint from the command line.

Serves an on-disk store or files loaded into memory until stopped by SIGINT (Ctrl-C) or
SIGTERM: the requests in flight are answered, then it exits 0
(:mod:`connectors.events.stopping`).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reasoner.errors import ReasonerError
from reasoner.modes import REGIMES
from reasoner.server.config import EndpointConfig

if TYPE_CHECKING:
    from reasoner.server.app import SparqlServer

#: The environment variable that may hold the access token (keeps it out of ``ps``).
TOKEN_ENV = "REASONER_ACCESS_TOKEN"


def register(subparsers: Any) -> None:
    """Add the ``serve`` sub-command.

    Args:
        subparsers: what ``ArgumentParser.add_subparsers()`` returned.

    >>> parser = argparse.ArgumentParser()
    >>> register(parser.add_subparsers())
    >>> parser.parse_args(["serve", "--port", "0"]).port
    0
    """
    defaults = EndpointConfig()
    p = subparsers.add_parser(
        "serve",
        help="serve the background knowledge over SPARQL 1.1",
        description="Serve a SPARQL 1.1 endpoint at http://HOST:PORT/sparql (and /health), "
        "with a query page at http://HOST:PORT/. "
        f"Read-only unless an access token is given (--access-token-file or ${TOKEN_ENV}).",
    )
    source = p.add_mutually_exclusive_group()
    source.add_argument("--store", metavar="DIR", type=Path, help="an on-disk store to serve")
    source.add_argument(
        "--knowledge",
        metavar="PATH",
        type=Path,
        nargs="+",
        help="RDF files or folders loaded into an in-memory store",
    )
    p.add_argument(
        "--entailment",
        choices=REGIMES,
        default="rdfs",
        help="entailment applied to the knowledge, as by reasoner run (default: rdfs)",
    )
    p.add_argument("--host", default=defaults.host, help="interface to bind (default loopback)")
    p.add_argument("--port", type=int, default=defaults.port, help="TCP port (0: any free one)")
    p.add_argument(
        "--access-token-file",
        type=Path,
        metavar="FILE",
        help="a file holding the token that enables SPARQL Update (Authorization: Bearer)",
    )
    p.add_argument(
        "--timeout", type=float, default=defaults.query_timeout_s, help="per-query seconds"
    )
    p.add_argument("--max-result-bytes", type=int, default=defaults.max_result_bytes, metavar="N")
    p.add_argument("--max-request-bytes", type=int, default=defaults.max_request_bytes, metavar="N")
    p.add_argument(
        "--workers", type=int, default=defaults.query_workers, help="queries evaluated at once"
    )
    p.add_argument(
        "--read-timeout",
        type=float,
        default=defaults.read_timeout_s,
        metavar="SECONDS",
        help="drop a client that sends nothing for this long (a short body gets 408)",
    )
    p.add_argument(
        "--allow-service",
        action="store_true",
        help="evaluate SERVICE patterns (federated queries send requests to other servers)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Open the knowledge, then serve until SIGINT (Ctrl-C) or SIGTERM.

    Args:
        args: the parsed ``serve`` options.
    Returns:
        0 once stopped by a signal (the requests in flight are answered first, within the
        query time limit); a user error raises :class:`ReasonerError` (exit status 1), a
        signal while the knowledge loads raises ``Interrupted`` (130 or 143).

    >>> parser = argparse.ArgumentParser()
    >>> register(parser.add_subparsers())
    >>> run(parser.parse_args(["serve", "--store", "kb"]))  # doctest: +SKIP
    0
    """
    from connectors.events.stopping import graceful_stop

    config = EndpointConfig(
        host=args.host,
        port=args.port,
        access_token=_token(args.access_token_file),
        query_timeout_s=args.timeout,
        max_result_bytes=args.max_result_bytes,
        max_request_bytes=args.max_request_bytes,
        query_workers=args.workers,
        read_timeout_s=args.read_timeout,
        allow_service=args.allow_service,
    )
    with graceful_stop() as stop:
        server = _server(args, config)
        try:
            mode = "read-write with the access token" if config.access_token else "read-only"
            # Serving is this command's life: a signal is its normal end.
            stop.wait(
                f"SPARQL endpoint at {server.url} ({mode}), query page {server.page_url()}; "
                "Ctrl-C stops it"
            )
        finally:
            # A query in flight is answered by its time limit (with a 503 past it).
            cut = server.stop(grace_s=config.query_timeout_s + 1)
    if cut:
        print(f"reasoner: {cut} requests were still being answered, cut", file=sys.stderr)
    return 0


def _server(args: argparse.Namespace, config: EndpointConfig) -> SparqlServer:
    """The endpoint over the knowledge, serving in a background thread (the main thread
    waits for the stop signals)."""
    from reasoner.knowledge.versions import KnowledgeBase
    from reasoner.server.app import SparqlServer

    # What `reasoner run` reads, so plain patterns see the same inferred triples.
    knowledge = KnowledgeBase(
        args.knowledge or (), store_path=args.store, entailment=args.entailment
    )
    return SparqlServer(knowledge, config).start()


def _token(path: Path | None) -> str | None:
    if path is None:
        return os.environ.get(TOKEN_ENV) or None
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError as e:
        raise ReasonerError(f"cannot read the access token file {path}: {e.strerror}") from e
