"""Supply chain (seed 001, Fig. 3): the iterative ``delivery`` pattern over chains of linked
sites, both variants, throughput and memory versus the chain length.

    delivery(From, To) <- delivery(From, PrevTo) SEQ shipment(To) WHERE inSupChain(From, To).
    delivery2(From, To) <- delivery2(From, PrevTo) SEQ shipment(To) WHERE inSupChain(PrevTo, To).

``inSupChain`` is the transitive closure of ``linked/2`` (static Horn rules, materialised once
before the stream: N links give N(N+1)/2 facts). One shipment per site, in chain order, under
the recent policy (each shipment extends the latest delivery). Prints a table and writes JSON
(``--json``); ``--quick`` is a smoke run.

    python benchmarks/bench_supply_chain.py            # 100, 500, 1,000 and 5,000 links
    python benchmarks/bench_supply_chain.py --quick
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import time
from pathlib import Path

from reasoner.language.parser import parse
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event

RULES = Path(__file__).resolve().parent.parent / "rules" / "supply_chain.event"
VARIANTS = {"delivery": "inSupChain(From, To)", "delivery2": "inSupChain(PrevTo, To)"}


def site(i: int) -> str:
    return "start" if i == 0 else f"site{i}"


def program(links: int, variant: str) -> str:
    """One variant of the shipped rules over a chain of ``links`` links."""
    condition = VARIANTS[variant]
    facts = "".join(f"linked({site(i)}, {site(i + 1)}).\n" for i in range(links))
    return (
        f"{variant}(start, start) <- shipment(start).\n"
        f"{variant}(From, To) <- {variant}(From, PrevTo) SEQ shipment(To) WHERE {condition}.\n"
        "inSupChain(X, Y) :- linked(X, Y).\n"
        "inSupChain(X, Z) :- linked(X, Y), inSupChain(Y, Z).\n" + facts
    )


def run(links: int, variant: str) -> dict[str, object]:
    gc.collect()
    began = time.perf_counter()
    engine = Engine(parse(program(links, variant)), policy="recent", max_span=0)
    built = time.perf_counter() - began
    events = [Event.at("shipment", (site(i),), i + 1) for i in range(links + 1)]
    detections = 0
    began = time.perf_counter()
    for event in events:
        detections += len(engine.push(event))
    elapsed = time.perf_counter() - began
    return {
        "links": links,
        "variant": variant,
        "knowledge_s": round(built, 3),
        "events_per_s": round(len(events) / elapsed),
        "detections": detections,
        "stored_at_end": engine.stats().stored,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument("--links", type=int, nargs="*", default=[100, 500, 1_000, 5_000])
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    sizes = [20, 50] if args.quick else args.links

    results = []
    print(
        f"{'links':>6} {'variant':>9} {'knowledge s':>11} {'events/s':>9} {'detections':>10}"
        f" {'stored':>6} {'RSS MB':>7}"
    )
    for links in sizes:
        for variant in VARIANTS:
            row = run(links, variant)
            results.append(row)
            print(
                f"{links:>6} {variant:>9} {row['knowledge_s']:>11} {row['events_per_s']:>9,}"
                f" {row['detections']:>10} {row['stored_at_end']:>6} {row['peak_rss_mb']:>7}"
            )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
