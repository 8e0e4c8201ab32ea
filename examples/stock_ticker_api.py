"""The stock ticker rules ce1-ce6 (rules/stock_ticker.event) built with the Python rule API.

Run: ``.venv/bin/python examples/stock_ticker_api.py``. Prints the program as rule text, each
ce6 as a handler sees it, and how many of each complex event the bundled stream gives.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from connectors.events.jsonl import read_jsonl
from reasoner import (
    Engine,
    Event,
    and_,
    event,
    handler,
    not_,
    or_,
    par,
    program,
    rule,
    seq,
    variables,
    where,
    within,
)
from reasoner.language.ast import Where
from reasoner.language.printer import to_source

EVENTS = Path(__file__).parent / "data" / "stock_ticker.jsonl"
Pr1, Pr2, Vol1, Vol2 = variables("Pr1 Pr2 Vol1 Vol2")


def increase(symbol: str) -> Where:
    """Two prices of ``symbol``, the first below 1.2 times the second (as in the seed)."""
    first, second = event("stock", symbol, Pr1, Vol1), event("stock", symbol, Pr2, Vol2)
    return where(seq(first, second), Pr1 < 1.20 * Pr2)


def main() -> None:
    rules = program(
        rule("ce1", increase("GO")),
        rule("ce2", increase("MS")),
        rule("ce3", or_("ce1", "ce2")),
        rule("ce4", within(and_("ce1", "ce2"), 20)),
        rule("ce5", par("ce1", "ce2")),
        rule("ce6", not_("ce2", "ce1", "ce1")),
    )
    print(to_source(rules), end="")
    engine = Engine(rules, policy="chronological")

    @handler(engine, "ce6")
    def two_google_increases(detection: Event) -> None:
        if detection.end <= 20:
            print(f"ce6 from {detection.start} to {detection.end}")

    counts = Counter(d.name for d in engine.run(read_jsonl(EVENTS)))
    for name, count in sorted(counts.items()):
        print(f"{name}: {count}")


if __name__ == "__main__":
    main()
