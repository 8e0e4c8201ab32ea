"""Engines per key: the cost of one more key's engine under a compiled program (docs/benchmarks.md).

Spark streaming, Spark replay and ``--workers`` hold one engine per key group or partition, all
running one compiled program: each is ``Engine.of(compiled)``. Per rule set, this times
``--keys`` calls of it (the first engine of the program, which builds its template, made
before timing) in ``--rounds`` rounds, and ``Engine(rules)`` (parse, check, compile and build)
beside it; CPU time of this process, the median and range over the rounds. Prints a table
and writes JSON (``--json``); ``--quick`` is a small smoke run.

    python benchmarks/bench_keys.py              # 1,000 keys, 7 rounds
    python benchmarks/bench_keys.py --quick
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from reasoner.runtime.engine import Engine
from reasoner.runtime.program import compile_rules

ROOT = Path(__file__).resolve().parent.parent
RULE_SETS = {
    "stock ticker": [ROOT / "rules" / "stock_ticker.event"],
    "blizzard": [ROOT / "rules" / "blizzard.event"],
}


def per_key_us(rules: list[Path], keys: int) -> float:
    """CPU microseconds per ``Engine.of`` of ``rules`` compiled once."""
    compiled = compile_rules(rules)
    Engine.of(compiled)  # (the first engine builds the template)
    start = time.process_time()
    for _ in range(keys):
        Engine.of(compiled)
    return (time.process_time() - start) / keys * 1e6


def built_ms(rules: list[Path]) -> float:
    """CPU milliseconds of ``Engine(rules)`` (the rule files' parse cache warm)."""
    start = time.process_time()
    Engine(rules)
    return (time.process_time() - start) * 1e3


def measure(name: str, rules: list[Path], keys: int, rounds: int) -> dict:
    built_ms(rules)  # (parsed rules cached, modules imported)
    per_key = [per_key_us(rules, keys) for _ in range(rounds)]
    built = [built_ms(rules) for _ in range(rounds)]
    return {
        "rules": name,
        "nodes": len(compile_rules(rules).network.nodes),
        "keys": keys,
        "engine_of_us": statistics.median(per_key),
        "engine_of_us_range": [min(per_key), max(per_key)],
        "engine_rules_ms": statistics.median(built),
        "engine_rules_ms_range": [min(built), max(built)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument("--keys", type=int, default=1_000, help="Engine.of calls per round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    keys, rounds = (20, 2) if args.quick else (args.keys, args.rounds)
    print(f"load average {os.getloadavg()[0]:.1f}; CPU time, median (range) of {rounds} rounds")
    print("| rules | nodes | Engine.of per key | Engine(rules) |")
    print("| --- | ---: | ---: | ---: |")
    results = []
    for name, rules in RULE_SETS.items():
        row = measure(name, rules, keys, rounds)
        low, high = row["engine_of_us_range"]
        b_low, b_high = row["engine_rules_ms_range"]
        print(
            f"| {name} | {row['nodes']} | {row['engine_of_us']:,.0f} µs ({low:,.0f}–{high:,.0f}) "
            f"| {row['engine_rules_ms']:.1f} ms ({b_low:.1f}–{b_high:.1f}) |"
        )
        results.append(row)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
