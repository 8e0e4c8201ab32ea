"""RDF event streams: events/s for SOSA observation graphs (TriG, N-Quads) beside JSON and CSV.

One generated MesoWest data set (winter weather with a blizzard) is written four ways: the
MesoWest CSV exports, JSON lines of ``sensor_reading`` events, and the SOSA observation stream
of ``reasoner mesowest to-rdf`` in TriG and in N-Quads (one graph per reading, mapped back by
``rules/mesowest_sosa.event``). For each input it measures reading alone (file → events) and a
replay through a small storm rule set (file → events → engine), and the triple view of the TriG
stream (every triple an event). Every input must give the same events and detections: the
counts are printed and written with ``--json``; ``--quick`` is a small smoke run of the harness.

Then a TriG stream of small graphs (2–5 triples each, the triple view) through a ``reasoner
run`` process, end to end (parsed, mapped, detected, detections written): graphs/s with the
command's start-up subtracted, beside the engine's in-process rate on the same events (CPU
time both, as ``bench_stock_ticker.py`` measures).

    python benchmarks/bench_rdf_input.py              # 12 stations x 10 days, 20 min readings
    python benchmarks/bench_rdf_input.py --quick
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench_stock_ticker import run_command

from connectors.events.jsonl import JsonLinesWriter, read_jsonl
from connectors.mesowest.generator import DEFAULT_START, Storm, generate
from connectors.mesowest.reader import read_mesowest
from connectors.mesowest.sosa import write_sosa
from connectors.mesowest.station import load_stations
from connectors.rdf.reader import read_rdf
from reasoner.language.loader import parse_file
from reasoner.language.parser import parse
from reasoner.rdf.mapping import GraphMapping
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event

ROOT = Path(__file__).resolve().parent.parent
MAPPING = ROOT / "rules" / "mesowest_sosa.event"
RULES = """
stormy(S, T, Wind, Visibility) <- sensor_reading(S, T, _, _, Wind, _, Visibility, C, _)
    WHERE Wind >= 30, Visibility < 1, (C = snow ; C = 'heavy snow').
lasting(S, T1, T2) <- (stormy(S, T1, _, _) SEQ stormy(S, T2, _, _)).3h WHERE T2 - T1 >= 7200.
"""


def inputs(folder: Path, stations: int, days: float) -> dict[str, Callable[[], Iterator[Event]]]:
    """Generate the data set in ``folder`` and return a reader per input format."""
    table = load_stations()[:stations]
    storm = Storm(table[0].id, DEFAULT_START + timedelta(days=days / 2), hours=8)
    csv = generate(folder / "csv", table, days, 0, [storm])
    readings = list(read_mesowest(*csv))
    with open(folder / "readings.jsonl", "w", encoding="utf-8") as out:
        JsonLinesWriter(out).write_all(readings)
    for syntax in ("trig", "nquads"):
        with open(folder / f"readings.{syntax}", "w", encoding="utf-8") as out:
            write_sosa(out, readings, syntax)
    mapping = GraphMapping(parse_file(MAPPING))
    return {
        "mesowest csv": lambda: read_mesowest(*csv),
        "json lines": lambda: read_jsonl(folder / "readings.jsonl"),
        "trig (sosa)": lambda: read_rdf(folder / "readings.trig", mapping=mapping),
        "n-quads (sosa)": lambda: read_rdf(folder / "readings.nquads", mapping=mapping),
        "trig (triples)": lambda: read_rdf(folder / "readings.trig"),
    }


SMALL_RULES = "high(S, P, O) <- triple(S, P, O) WHERE O > 95.\n"


def small_graphs(path: Path, graphs: int, seed: int = 1) -> int:
    """Write ``graphs`` graphs of 2–5 triples each, with a time each; return the triples."""
    rng = random.Random(seed)
    triples = 0
    with open(path, "w", encoding="utf-8") as out:
        out.write("@prefix ex: <http://ex.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n")
        for i in range(graphs):
            size = rng.randint(2, 5)
            body = " .\n  ".join(
                f"ex:s{rng.randrange(50)} ex:p{j} {rng.randrange(101)}" for j in range(size)
            )
            out.write(f"ex:g{i} {{\n  {body}\n}}\nex:g{i} prov:generatedAtTime {i} .\n")
            triples += size
    return triples


def small_graph_rates(folder: Path, graphs: int, runs: int) -> dict[str, Any]:
    """End to end and in-process rates over a TriG stream of small graphs (medians)."""
    trig, empty, rules = folder / "small.trig", folder / "empty.trig", folder / "high.event"
    triples = small_graphs(trig, graphs)
    empty.write_text("", encoding="utf-8")
    rules.write_text(SMALL_RULES, encoding="utf-8")
    events = list(read_rdf(trig))
    detections = sum(1 for e in events if e.args[2] > 95)  # what the rule must detect
    rates, in_process = [], []
    for _ in range(runs):
        options = (str(rules), "--format", "trig", "--output", str(folder / "high.jsonl"))
        startup = run_command(*options, "--events", str(empty))
        elapsed = run_command(*options, "--events", str(trig))
        rates.append(graphs / max(elapsed - startup, 1e-9))
        engine = Engine(parse(SMALL_RULES))
        began = time.process_time()
        for event in events:
            engine.push(event)
        in_process.append(graphs / (time.process_time() - began))
    written = (folder / "high.jsonl").read_text(encoding="utf-8").count("\n")
    if written != detections:
        raise SystemExit(f"reasoner run wrote {written} detections, not {detections}")
    return {
        "input": "trig small graphs (triples)",
        "graphs": graphs,
        "events": triples,
        "detections": {"high": written},
        "startup_s": round(startup, 3),
        "end_to_end_graphs_per_s": round(statistics.median(rates)),
        "in_process_graphs_per_s": round(statistics.median(in_process)),
    }


def timed(run: Callable[[], Counter[str]], runs: int) -> tuple[float, Counter[str]]:
    """The median seconds of ``runs`` calls, and what the last call counted."""
    seconds, counts = [], Counter[str]()
    for _ in range(runs):
        began = time.perf_counter()
        counts = run()
        seconds.append(time.perf_counter() - began)
    return statistics.median(seconds), counts


def read_only(events: Iterable[Event]) -> Counter[str]:
    return Counter(event.name for event in events)


def replay(events: Iterable[Event]) -> Counter[str]:
    engine = Engine(parse(RULES))
    counts: Counter[str] = Counter()
    for event in events:
        for detection in engine.push(event):
            counts[detection.name] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    parser.add_argument("--stations", type=int, default=12)
    parser.add_argument("--days", type=float, default=10)
    parser.add_argument("--runs", type=int, default=3, help="timed runs per input (median)")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    stations, days, runs = (2, 1.0, 1) if args.quick else (args.stations, args.days, args.runs)

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        readers = inputs(Path(tmp), stations, days)
        print(f"{stations} stations x {days:g} days")
        print(f"{'input':>15} {'events':>8} {'read ev/s':>10} {'replay ev/s':>12}  detections")
        for name, read in readers.items():
            read_s, events = timed(lambda read=read: read_only(read()), runs)
            total = sum(events.values())
            row: dict[str, object] = {
                "input": name,
                "events": total,
                "read_events_per_s": round(total / read_s),
            }
            replay_rate = "-"
            if name != "trig (triples)":  # the rules ask for sensor_reading, not triples
                replay_s, detections = timed(lambda read=read: replay(read()), runs)
                row["replay_events_per_s"] = round(total / replay_s)
                row["detections"] = dict(sorted(detections.items()))
                replay_rate = f"{total / replay_s:,.0f}"
            results.append(row)
            detail = " ".join(f"{k}={v}" for k, v in sorted(row.get("detections", {}).items()))
            print(f"{name:>15} {total:>8} {total / read_s:>10,.0f} {replay_rate:>12}  {detail}")
        small = small_graph_rates(Path(tmp), 2_000 if args.quick else 50_000, runs)
        results.append(small)
        e2e, inner = small["end_to_end_graphs_per_s"], small["in_process_graphs_per_s"]
        print(
            f"\nTriG, {small['graphs']:,} graphs of 2-5 triples ({small['events']:,} triples), "
            f"triple view: end to end {e2e:,} graphs/s (start-up {small['startup_s']:.2f} s "
            f"subtracted), in-process {inner:,} graphs/s, ratio {e2e / inner:.2f}"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
