"""Benchmark: preparing 100k instance triples, and the cost of a WHERE with one knowledge lookup.

Run: ``.venv/bin/python benchmarks/bench_knowledge_where.py [instance_triples]``.

It generates weather observations typed with the leaf classes of ``ontologies/weather.ttl``
(Diablo, Sundowner, DewPoint, Snowfall ...) with a speed or temperature each, then times
loading, RDFS and OWL-RL materialisation (fast path) and evaluating a WHERE condition per
event against the knowledge version, the way the engine does: the goal is compiled once, the
version is read once per event. Then the lookups of the EnhancedFire and blizzard rules
(``rules/weather.event``, ``rules/blizzard.event``) per call: ``instanceOf/2`` (materialised),
``near_station/2`` (materialised, every solution) and ``becomes_blizzard/4`` (answered
on demand, its answers kept per knowledge version), with repeated and with distinct patterns.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reasoner.knowledge import KnowledgeBase
from reasoner.knowledge.base import Knowledge
from reasoner.knowledge.goals import compile_goal
from reasoner.language.ast import Compound, Number, PName, Var
from reasoner.language.parser import parse
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


OM = "http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#"
ER = "https://w3id.org/etalis-reasoner/ns#"
STATIC_RULES = f"""
:- prefix(om, '{OM}').
:- prefix(er, '{ER}').
instanceOf(A, X) :- rdf(A, rdf:type, X).
instanceOf(A, Y) :- rdf(X, rdfs:subClassOf, Y), instanceOf(A, X).
near_station(S1, S2) :- om:ID(I1, S1), er:nearStation(I1, I2), om:ID(I2, S2).
becomes_blizzard(C, T1, T2, T3) :- C1 is C + 1, lasting(C1, T1, T3), \\+ lasting(C, T1, T2).
lasting(C, T1, T2) :- C >= 4, T2 - T1 >= 10800.
"""


def stations(path: Path, count: int = 200) -> None:
    """Station ids, each station near the three before and after it."""
    with path.open("w") as out:
        for i in range(count):
            out.write(f'<{EX}s{i}> <{OM}ID> "S{i}" .\n')
            for j in range(max(0, i - 3), min(count, i + 4)):
                if j != i:
                    out.write(f"<{EX}s{i}> <{ER}nearStation> <{EX}s{j}> .\n")


def rule_lookups(triples: int = 30_000, calls: int = 20_000) -> None:
    """CPU µs per call of the EnhancedFire and blizzard rules' knowledge lookups."""
    with tempfile.TemporaryDirectory() as tmp:
        data, table = Path(tmp) / "obs.nt", Path(tmp) / "stations.nt"
        observations = generate(data, triples)
        stations(table)
        kb = KnowledgeBase(
            [ROOT / "ontologies" / "weather.ttl", data, table],
            entailment="none",
            program=parse(STATIC_RULES),
        )
    rng = random.Random(1)

    def goal(functor: str, *args: Var | PName) -> Callable[[Any, Knowledge], object]:
        compiled = compile_goal(Compound(functor, args), {"wt": WT})
        compiled.check(kb.current())
        return (
            compiled.holds
            if functor != "near_station"
            else (lambda env, k: sum(1 for _ in compiled.solutions(env, k)))
        )

    blizzard = goal("becomes_blizzard", Var("C"), Var("T1"), Var("T2"), Var("T3"))
    cases = (
        (
            "instanceOf(O, wt:WindObservation)",
            goal("instanceOf", Var("O"), PName("wt", "WindObservation")),
            [{"O": IRI(f"{EX}o{rng.randrange(observations)}")} for _ in range(calls)],
        ),
        (
            "near_station(S, A), every solution",
            goal("near_station", Var("S"), Var("A")),
            [{"S": f"S{rng.randrange(200)}"} for _ in range(calls)],
        ),
        (
            "becomes_blizzard, 15 patterns",
            blizzard,
            [
                {"C": 3 + i % 3, "T1": 0, "T2": 9000, "T3": 9000 + 1200 * (i % 5)}
                for i in range(calls)
            ],
        ),
        (
            "becomes_blizzard, every call new",
            blizzard,
            [
                {"C": 3 + i % 3, "T1": i, "T2": i + 9000, "T3": i + 9000 + 1200 * (i % 5)}
                for i in range(calls)
            ],
        ),
    )
    for name, call, envs in cases:
        best = float("inf")
        for _ in range(3):
            kb.current().answers.clear()  # each repetition starts with empty caches
            kb.current().held.clear()
            started = time.process_time()
            for env in envs:
                call(env, kb.current())
            best = min(best, time.process_time() - started)
        print(f"lookup {name:34s}: {best / calls * 1e6:6.2f} µs per call (CPU, best of 3)")


def main(triples: int = 100_000) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "obs.nt"
        observations = generate(data, triples)
        for regime in ("none", "rdfs", "owl-rl"):
            started = time.perf_counter()
            kb = KnowledgeBase([ROOT / "ontologies" / "weather.ttl", data], entailment=regime)
            total = time.perf_counter() - started
            s = kb.current().stats
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
            version = kb.current()  # once per event, as the engine does
            hits += goal.holds(env_of(o), version)
        elapsed = time.perf_counter() - started
        print(f"WHERE {name:34s}: {elapsed / len(events) * 1e6:6.2f} µs per event ({hits} true)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
    rule_lookups()
