"""EP-SPARQL queries against the hand-written rules they stand for, on the same triple stream.

A query is compiled into ordinary rules (docs/ep-sparql.md), so it should run as fast as the
rules a user would write by hand; this measures both on the stock generator's ticks as triples
``triple(ex:GO, ex:price, 512)`` at times 1..N, and checks that they detect the same.

    rise:  SELECT ?c ?p1 ?p2 WHERE { ?c ex:price ?p1 } SEQ { ?c ex:price ?p2 }
           FILTER (?p2 > ?p1 + 5 && getDURATION() <= 10)
    optional: SELECT ?c ?p ?q WHERE { ?c ex:price ?p FILTER (?p > 900) }
           OPTIONALSEQ { ?c ex:price ?q FILTER (?q < 880) } WITHIN 20

Measured in-process, CPU time, events built before timing, detections not written. Prints a
table and writes JSON (``--json``); ``--quick`` is a smoke run of the harness.

    python benchmarks/bench_epsparql.py            # 100,000 triples
    python benchmarks/bench_epsparql.py --quick    # 2,000
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from collections import Counter
from pathlib import Path

from bench_stock_ticker import replay

from connectors.generators.stock import stock_stream
from reasoner.language.epsparql import compile_query
from reasoner.language.epsparql.parser import parse_query
from reasoner.language.parser import parse
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.values import IRI

EX = "http://ex.org/"
PREFIX = f"PREFIX ex: <{EX}>\n"
DIRECTIVE = f":- prefix(ex, '{EX}').\n"

#: name -> (query, the same by hand: rules with the query's head names)
WORKLOADS = {
    "rise": (
        PREFIX + "SELECT ?c ?p1 ?p2 WHERE { ?c ex:price ?p1 } SEQ { ?c ex:price ?p2 }\n"
        "FILTER (?p2 > ?p1 + 5 && getDURATION() <= 10)",
        DIRECTIVE + "q(C, P1, P2) <- (triple(C, ex:price, P1) SEQ triple(C, ex:price, P2)\n"
        "    WHERE P2 > P1 + 5).10.\n",
    ),
    "optional": (
        PREFIX + "SELECT ?c ?p ?q WHERE { ?c ex:price ?p FILTER (?p > 900) }\n"
        "OPTIONALSEQ { ?c ex:price ?q FILTER (?q < 880) } WITHIN 20",
        DIRECTIVE + "q(C, P, Q) <- ((triple(C, ex:price, P) WHERE P > 900)\n"
        "    SEQ (triple(C, ex:price, Q) WHERE Q < 880)).20.\n"
        "q_2(C, P) <- (triple(C, ex:price, P) WHERE P > 900).20.\n",
    ),
}


def triples(count: int) -> list[Event]:
    """The stock generator's ticks as price triples."""
    price = IRI(EX + "price")
    return [
        Event("triple", (IRI(EX + e.args[0]), price, e.args[1]), e.start, e.end)
        for e in stock_stream(count, seed=42)
    ]


def measure(events: list[Event], repeats: int) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for name, (query, rules) in WORKLOADS.items():
        began = time.process_time()
        compiled = compile_query(parse_query(query), "q")
        translate_ms = (time.process_time() - began) * 1000
        best: dict[str, float] = {}
        found: dict[str, Counter[str]] = {}
        for kind, program in (("query", compiled.program), ("rules", parse(rules))):
            for _ in range(repeats):
                rate, counts, _ = replay(Engine(program), events)
                best[kind] = max(best.get(kind, 0.0), rate)
                found[kind] = counts
        rows.append(
            {
                "workload": name,
                "events": len(events),
                "translate_ms": round(translate_ms, 2),
                "query_events_per_s": round(best["query"]),
                "rules_events_per_s": round(best["rules"]),
                "query_detections": dict(found["query"]),
                "rules_detections": dict(found["rules"]),
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 triples, one run each")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    count, repeats = (2_000, 1) if args.quick else (100_000, 3)
    rows = measure(triples(count), repeats)
    print(f"{'workload':10s} {'query ev/s':>11s} {'rules ev/s':>11s} {'detections':>11s}  same")
    for row in rows:
        detections = sum(row["query_detections"].values())  # type: ignore[attr-defined]
        same = row["query_detections"] == row["rules_detections"]
        print(
            f"{row['workload']:10s} {row['query_events_per_s']:>11,} "
            f"{row['rules_events_per_s']:>11,} {detections:>11,}  {same}"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{count:,} triples, best of {repeats} (CPU time); peak RSS {peak:.0f} MB")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
