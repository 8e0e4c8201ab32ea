"""The seeds' rule files under rules/ on hand-made streams: the detections each example is
about, and the engine equal to the reference evaluator on the same stream."""

from __future__ import annotations

from pathlib import Path

import pytest

from reasoner.knowledge.program import program_knowledge
from reasoner.language.loader import parse_file
from reasoner.language.parser import parse
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.semantics.reference import derive

RULES = Path(__file__).resolve().parents[2] / "rules"


def at(name: str, time: float, *args: object) -> Event:
    return Event.at(name, tuple(args), time)


def run(file: str, stream: list[Event], facts: str = "") -> set[tuple[object, ...]]:
    """Detections of the engine, checked against the reference evaluator (``facts``: more
    static knowledge for the file's WHERE conditions)."""
    program = parse_file(RULES / file) + parse(facts)
    engine = Engine(program)
    found = {d for e in stream for d in engine.push(e)}
    assert found == derive(program, stream, knowledge=program_knowledge(program))
    return {(d.name, d.args, d.start, d.end) for d in found}


def test_stock_market_examples_of_seed_000() -> None:
    found = run(
        "stock_market.event",
        [
            at("marketOpens", 1),
            at("bankrupt", 2, "lehman"),
            at("bankrupt", 3, "aig"),
            at("marketCloses", 4),
            at("buys", 5, "citi", "wachovia"),
            at("buys", 6, "bank", "citi"),
            at("prize", 7, "x", 10),
            at("prize", 9, "x", 16),
            at("prize", 20, "x", 30),
        ],
    )
    assert ("workingDay", (), 1, 4) in found
    assert ("dieTogether", ("lehman", "aig"), 1, 4) in found
    assert ("indirectlyAcquires", ("bank", "wachovia"), 5, 6) in found
    assert {f for f in found if f[0] == "remarkableIncrease"} == {
        ("remarkableIncrease", ("x",), 7, 9)  # 16 > 1.5 * 10 within 7; 30 comes too late
    }


def test_stock_ticker_ce1_to_ce6() -> None:
    prices = [("GO", 100), ("MS", 50), ("GO", 90), ("MS", 70), ("GO", 130), ("GO", 140)]
    found = run("stock_ticker.event", [at("stock", t, s, p, 1) for t, (s, p) in enumerate(prices)])
    names = {f[0] for f in found}
    assert names == {"ce1", "ce2", "ce3", "ce4", "ce5", "ce6"}
    assert ("ce2", (), 1, 3) in found and ("ce4", (), 0, 3) in found


def test_supply_chain_delivery_both_variants() -> None:
    sites = ["start", "site1", "site2", "site3"]
    found = run("supply_chain.event", [at("shipment", t, s) for t, s in enumerate(sites, 1)])
    for name in ("delivery", "delivery2"):
        assert (name, ("start", "site3"), 1, 4) in found


def test_income_and_iteration() -> None:
    found = run("income.event", [at("sell", 1, "book", 60000), at("sell", 2, "car", 50000)])
    assert ("income", (110000,), 1, 2) in found
    assert ("bigincome", (), 1, 2) in found
    assert not any(f[0] == "bigincome" and f[3] == 1 for f in found)


def test_weather_examples_of_seed_004() -> None:
    found = run(
        "weather.event",
        [
            at("fireStart", 1, "ridge"),
            at("windSpeed", 2, "ridge", 10),
            at("windSpeed", 3, "ridge", 15),
            at("cat", 4, "p3"),
            at("airplane", 5, "a1", "p1"),
            at("fireEnd", 6, "ridge"),
            at("temp", 7, "s1", 90),
            at("temp", 8, "s1", 101),
            at("edge", 9, "a", "b"),
            at("edge", 10, "b", "c"),
        ],
    )
    assert ("fire", ("ridge",), 1, 6) in found
    assert ("fireAlarm", ("ridge",), 1, 6) in found
    assert ("jetStreamWarning", ("a1", "p3"), 4, 5) in found
    assert ("tempAlarm", ("s1", 101), 7, 8) in found
    assert ("path", ("a", "c"), 9, 10) in found


def test_heat_index_classification() -> None:
    found = run("weather.event", [at("temperature", 0, "s1", 96), at("humidity", 600, "s1", 60)])
    notes = {f[1][2] for f in found if f[0] == "heatNote"}
    assert notes == {"danger"}  # 96 °F at 60 % is a heat index of about 116


# A rise 5 -> 6 and a fall to 3 (down(i, 5, 3) over [0, 2]), then, from that 3, a rise to
# above 5 (the next stock, at 3): tickShape(i) over [0, 3]. Ending at 5 instead is not above
# the start; a further fall to 2 extends the down to [0, 3], so the shape ends at 4.
@pytest.mark.parametrize(
    ("prices", "expected"),
    [
        ([5, 6, 3, 7], {("tickShape", ("i",), 0, 3)}),
        ([5, 6, 3, 5], set()),
        ([5, 6, 3, 2, 7], {("tickShape", ("i",), 0, 4)}),
        ([5, 4, 3, 4, 6, 7, 2], set()),
    ],
)
def test_tick_shape(prices: list[int], expected: set[tuple[object, ...]]) -> None:
    found = run("tick_shape.event", [at("stock", t, "i", p) for t, p in enumerate(prices)])
    assert {f for f in found if f[0] == "tickShape"} == expected


def test_flower_delivery_counts_assignments_since_the_day_started() -> None:
    stream = [
        at("dayStart", 0, "d1"),
        *(at("assignment", t, f"r{t}", "s1", "d1", 100 + t) for t in range(1, 8)),
        at("assignment", 8, "r8", "s1", "d2", 108),  # another driver: not counted for d1
    ]
    facts = (
        "storeRecord(s1, 1, fast). driverRecord(d1, 5). gpsToRegion(c1, north). "
        "deliveryCount20Window(d1)."
    )
    found = run("flower_delivery.event", stream, facts)
    counts = sorted(f[1][1] for f in found if f[0] == "assignmentsToday")
    assert counts == list(range(8))  # 0 at the start, then one more per assignment
    assert {f[3] for f in found if f[0] == "improvementNote"} == {6, 7}  # more than five
