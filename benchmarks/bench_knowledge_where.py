"""Benchmark: preparing 100k instance triples, and the cost of a WHERE with one knowledge lookup.

Run: ``.venv/bin/python benchmarks/bench_knowledge_where.py [instance_triples]``.

It generates weather observations typed with the leaf classes of ``ontologies/weather.ttl``
(Diablo, Sundowner, DewPoint, Snowfall ...) with a speed or temperature each, then times
loading, RDFS and OWL-RL materialisation (fast path) and evaluating a WHERE condition per
event against the snapshot, the way the engine does: the goal is compiled once, the snapshot
is read once per event.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

from reasoner.knowledge import KnowledgeBase
from reasoner.knowledge.goals import compile_goal
from reasoner.language.ast import Compound, Number, PName, Var
from reasoner.values import IRI

ROOT = Path(__file__).resolve().parent.parent
WT = "http://etalis.example.org/ontology/weather#"
EX = "http://etalis.example.org/data/"
LEAVES = [
    "Diablo",
    "Sundowner",
    "SantaAna",
    "DewPointObservation",
    "SnowfallObservation",
    "RainfallObservation",
    "VisibilityObservation",
    "HumidityObservation",
]


def generate(path: Path, triples: int) -> int:
    rng = random.Random(7)
    observations = triples // 3
    with path.open("w") as out:
        for i in range(observations):
            kind = rng.choice(LEAVES)
            prop = "speed" if kind in LEAVES[:3] else "temperature"
            out.write(
                f"<{EX}o{i}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{WT}{kind}> .\n"
            )
            value = f'"{rng.randint(0, 100)}"^^<http://www.w3.org/2001/XMLSchema#int>'
            out.write(f"<{EX}o{i}> <{WT}{prop}> {value} .\n")
            out.write(f"<{EX}o{i}> <{WT}madeAtStation> <{EX}station{i % 500}> .\n")
    return observations


def main(triples: int = 100_000) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "obs.nt"
        observations = generate(data, triples)
        for regime in ("none", "rdfs", "owl-rl"):
            started = time.perf_counter()
            kb = KnowledgeBase([ROOT / "ontologies" / "weather.ttl", data], entailment=regime)
            total = time.perf_counter() - started
            s = kb.snapshot().stats
            print(
                f"{regime:7s}: {s['triples']:.0f} triples ({s['inferred']:.0f} inferred) in "
                f"{total:.2f} s [load {s['load_s']:.2f} s, entail {s['entail_s']:.2f} s, "
                f"index+rules {s['rules_s']:.2f} s]"
            )
    events = [IRI(f"{EX}o{random.Random(i).randrange(observations)}") for i in range(50_000)]
    wind = compile_goal(
        Compound("rdf:type", (Var("O"), PName("wt", "WindObservation"))), {"wt": WT}
    )
    fast = compile_goal(
        Compound(
            ",", (Compound("wt:speed", (Var("O"), Var("S"))), Compound(">", (Var("S"), Number(50))))
        ),
        {"wt": WT},
    )
    baseline = compile_goal(Compound(">", (Var("S"), Number(50))), {})
    for name, goal, env_of in (
        ("no lookup: S > 50", baseline, lambda o: {"S": 60}),
        ("rdf:type(O, wt:WindObservation)", wind, lambda o: {"O": o}),
        ("wt:speed(O, S), S > 50", fast, lambda o: {"O": o}),
    ):
        hits = 0
        started = time.perf_counter()
        for o in events:
            snapshot = kb.snapshot()  # once per event, as the engine does
            hits += goal.holds(env_of(o), snapshot)
        elapsed = time.perf_counter() - started
        print(f"WHERE {name:34s}: {elapsed / len(events) * 1e6:6.2f} µs per event ({hits} true)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
