"""Load test of the SPARQL endpoint beside a bare ``oxigraph serve-read-only``.

Both servers answer the same small SELECT over the same on-disk store, one after the other,
bound to 127.0.0.1. Clients are separate processes, each running keep-alive HTTP/1.1
connections with asyncio, so the load generator is not limited by one GIL. Prints
requests/s, p50/p99 latency and failed requests per server.

    .venv/bin/python benchmarks/bench_sparql_endpoint.py            # 16 clients, 5 s each
    .venv/bin/python benchmarks/bench_sparql_endpoint.py --quick    # 8 clients, 1 s each
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from reasoner.knowledge.store import Store
from reasoner.server import EndpointConfig, SparqlServer

PROCESSES = 1  # load-generating processes (this benchmark ran on 2 CPUs)

QUERY = (
    "SELECT ?station ?temp WHERE { ?station <http://ex.org/temperature> ?temp . "
    "FILTER(?temp < -5) } LIMIT 10"
)


def build_store(path: Path, stations: int) -> None:
    """Write a small weather-station store (one temperature per station) to ``path``."""
    store = Store(path, create=True)
    rows = "".join(
        f"<http://ex.org/station/{i}> <http://ex.org/temperature> {i % 40 - 20} .\n"
        for i in range(stations)
    )
    store.load_text(rows, "turtle")
    store.flush()


async def _client(host: str, port: int, target: str, until: float, out: list[float]) -> int:
    reader, writer = await asyncio.open_connection(host, port)
    request = (
        f"GET {target} HTTP/1.1\r\nHost: {host}\r\nAccept: application/sparql-results+json\r\n\r\n"
    )
    failures = 0
    try:
        while time.perf_counter() < until:
            t0 = time.perf_counter()
            writer.write(request.encode())
            status = await reader.readline()
            headers = {}
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode().partition(":")
                headers[name.strip().lower()] = value.strip()
            if headers.get("transfer-encoding") == "chunked":  # how Oxigraph answers
                while size := int(await reader.readline(), 16):
                    await reader.readexactly(size + 2)
                await reader.readline()
            else:
                await reader.readexactly(int(headers.get("content-length", 0)))
            if b" 200 " not in status:
                failures += 1
            out.append(time.perf_counter() - t0)
    finally:
        writer.close()
        await writer.wait_closed()
    return failures


def _worker(host: str, port: int, target: str, clients: int, seconds: float, queue: object) -> None:
    async def main() -> tuple[list[float], int]:
        latencies: list[float] = []
        until = time.perf_counter() + seconds
        tasks = [_client(host, port, target, until, latencies) for _ in range(clients)]
        results = await asyncio.gather(*tasks, return_exceptions=True)
        failures = sum(r if isinstance(r, int) else 1 for r in results)
        return latencies, failures

    queue.put(asyncio.run(main()))  # type: ignore[attr-defined]


def load(host: str, port: int, target: str, clients: int, seconds: float) -> dict[str, float]:
    """Run ``clients`` keep-alive connections for ``seconds``; return the measurements."""
    processes = min(clients, PROCESSES)
    queue: multiprocessing.Queue[tuple[list[float], int]] = multiprocessing.Queue()
    shares = [clients // processes + (i < clients % processes) for i in range(processes)]
    workers = [
        multiprocessing.Process(target=_worker, args=(host, port, target, n, seconds, queue))
        for n in shares
    ]
    for w in workers:
        w.start()
    latencies: list[float] = []
    failures = 0
    for _ in workers:
        got, failed = queue.get(timeout=seconds + 30)
        latencies += got
        failures += failed
    for w in workers:
        w.join()
    latencies.sort()
    n = len(latencies)
    return {
        "requests": n,
        "requests_per_s": n / seconds,
        "p50_ms": 1000 * latencies[n // 2] if n else float("nan"),
        "p99_ms": 1000 * latencies[min(n - 1, int(n * 0.99))] if n else float("nan"),
        "failed": failures,
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_listening(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


@contextmanager
def oxigraph_server(location: Path) -> Iterator[int]:
    """Run ``oxigraph serve-read-only`` on a free loopback port; yield the port."""
    binary = shutil.which("oxigraph") or str(Path(sys.executable).with_name("oxigraph"))
    port = _free_port()
    process = subprocess.Popen(
        [binary, "serve-read-only", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_listening(port)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)


def main(argv: list[str] | None = None) -> None:
    """Measure both servers and print one line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 clients, 1 s per server")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--stations", type=int, default=10_000)
    args = parser.parse_args(argv)
    clients, seconds = (8, 1.0) if args.quick else (args.clients, args.seconds)
    target = "?query=" + quote(QUERY)
    with tempfile.TemporaryDirectory() as tmp:
        location = Path(tmp) / "store"
        build_store(location, args.stations)
        results = {}
        with oxigraph_server(location) as port:
            results["oxigraph serve-read-only"] = load(
                "127.0.0.1", port, "/query" + target, clients, seconds
            )
        with SparqlServer(Store(location), EndpointConfig(port=0)).start() as server:
            results["reasoner serve"] = load(
                "127.0.0.1", server.port, "/sparql" + target, clients, seconds
            )
    print(f"{clients} clients x {seconds:g} s, {args.stations} triples, query: {QUERY}")
    for name, r in results.items():
        print(
            f"{name:26} {r['requests_per_s']:9.0f} req/s  p50 {r['p50_ms']:6.2f} ms  "
            f"p99 {r['p99_ms']:6.2f} ms  failed {r['failed']:.0f} of {r['requests']:.0f}"
        )


if __name__ == "__main__":
    main()
