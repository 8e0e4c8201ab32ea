import threading
from pathlib import Path

import pytest

from reasoner.errors import KnowledgeError
from reasoner.knowledge import INFERRED_GRAPH, KnowledgeBase
from reasoner.knowledge.goals import compile_goal
from reasoner.knowledge.store import Store
from reasoner.language.ast import (
    Atom,
    Compound,
    Directive,
    Number,
    PName,
    Program,
    StaticRule,
    String,
    Term,
    Var,
)
from reasoner.values import IRI

ROOT = Path(__file__).parent.parent.parent
ONTOLOGY = ROOT / "ontologies" / "weather.ttl"
EXAMPLES = ROOT / "ontologies" / "examples"
WT = "http://etalis.example.org/ontology/weather#"
EX = "http://etalis.example.org/data/"
PREFIXES = {"wt": WT, "ex": EX}


def c(functor: str, *args: Term) -> Compound:
    return Compound(functor, args)


def program(*rules: StaticRule) -> Program:
    directives = tuple(Directive(c("prefix", Atom(p), String(iri))) for p, iri in PREFIXES.items())
    return Program(directives + rules)


def holds(kb: KnowledgeBase, goal: Term, **env: object) -> bool:
    compiled = compile_goal(goal, PREFIXES)
    compiled.check(kb.current())
    return compiled.holds(dict(env), kb.current())  # type: ignore[arg-type]


def test_enhanced_fire_wind_observations_through_subclass() -> None:
    kb = KnowledgeBase([ONTOLOGY, EXAMPLES / "enhanced_fire.ttl"])
    is_wind = c("rdf:type", Var("O"), PName("wt", "WindObservation"))
    assert holds(kb, is_wind, O=IRI(EX + "Observ_1"))  # Diablo
    assert holds(kb, is_wind, O=IRI(EX + "Observ_2"))  # Sundowner
    assert not holds(kb, is_wind, O=IRI(EX + "Observ_3"))  # a temperature observation
    speed = c(",", c("wt:speed", Var("O"), Var("S")), c(">", Var("S"), Number(50)))
    assert holds(kb, speed, O=IRI(EX + "Observ_1")) and not holds(kb, speed, O=IRI(EX + "Observ_2"))
    # rdf/3 and sub-properties: wt:speed is a wt:measure
    measure = c("rdf", Var("O"), PName("wt", "measure"), Number(60))
    assert holds(kb, measure, O=IRI(EX + "Observ_1"))


def test_jet_stream_transitive_closure_by_entailment_and_by_rules() -> None:
    ahead = c("wt:linked", Var("A"), Var("B"))
    p = lambda n: IRI(EX + n)  # noqa: E731
    owl = KnowledgeBase([ONTOLOGY, EXAMPLES / "jet_stream.ttl"], entailment="owl-rl")
    assert holds(owl, ahead, A=p("p1"), B=p("p5"))
    assert not holds(owl, ahead, A=p("p5"), B=p("p1"))
    assert not holds(owl, ahead, A=p("p1"), B=p("q2"))
    # seed 004's rules (32): connected(X, Y) as the transitive closure of linked
    rules = program(
        StaticRule(c("connected", Var("X"), Var("Y")), (c("wt:linked", Var("X"), Var("Y")),)),
        StaticRule(
            c("connected", Var("X"), Var("Z")),
            (c("wt:linked", Var("X"), Var("Y")), c("connected", Var("Y"), Var("Z"))),
        ),
    )
    kb = KnowledgeBase([EXAMPLES / "jet_stream.ttl"], entailment="none", program=rules)
    assert holds(kb, c("connected", Var("A"), Var("B")), A=p("p2"), B=p("p5"))
    assert not holds(kb, c("connected", Var("A"), Var("B")), A=p("q1"), B=p("p5"))
    # derived binary facts are visible to SPARQL in the inferred graph
    answer = kb.query(
        f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{INFERRED_GRAPH}> "
        "{ ?a <urn:reasoner:pred:connected> ?b } }"
    )
    assert answer.rows == ((10 + 1,),)


def _between(v: Term, lo: Term, hi: Term) -> tuple[Term, Term]:
    return c(">=", v, lo), c("<", v, hi)


def test_heat_index_classification_and_area_mapping() -> None:
    hi = Var("HI")
    shades = [
        StaticRule(c("shade", hi, Atom("caution")), _between(hi, Number(80), Number(90))),
        StaticRule(c("shade", hi, Atom("extremeCaution")), _between(hi, Number(90), Number(105))),
        StaticRule(c("shade", hi, Atom("danger")), _between(hi, Number(105), Number(130))),
        StaticRule(c("shade", hi, Atom("extremeDanger")), (c(">=", hi, Number(130)),)),
    ]
    lat, lon, area = Var("Lat"), Var("Long"), Var("A")
    bounds = [Var(n) for n in ("MinLat", "MaxLat", "MinLong", "MaxLong")]
    area_rule = StaticRule(
        c("area", lat, lon, area),
        (
            c("rdf:type", area, PName("wt", "MonitoringArea")),
            c("wt:minLat", area, bounds[0]),
            c("wt:maxLat", area, bounds[1]),
            c("wt:minLong", area, bounds[2]),
            c("wt:maxLong", area, bounds[3]),
            *_between(lat, bounds[0], bounds[1]),
            *_between(lon, bounds[2], bounds[3]),
        ),
    )
    kb = KnowledgeBase([EXAMPLES / "heat_index.ttl"], program=program(*shades, area_rule))
    version = kb.current()
    assert [s for _, s in version.solve("shade", (79, None))] == []
    assert [s for _, s in version.solve("shade", (85, None))] == ["caution"]
    assert [s for _, s in version.solve("shade", (90, None))] == ["extremeCaution"]
    assert [s for _, s in version.solve("shade", (120, None))] == ["danger"]
    assert [s for _, s in version.solve("shade", (130, None))] == ["extremeDanger"]
    assert [a for *_, a in version.solve("area", (33.45, -112.07, None))] == [IRI(EX + "Phoenix")]
    assert list(version.solve("area", (40.0, -112.0, None))) == []


def test_supply_chain_in_both_variants() -> None:
    n = 60
    facts = [StaticRule(c("supplies", Atom(f"c{i}"), Atom(f"c{i + 1}"))) for i in range(n)]
    s, m, t = Var("S"), Var("M"), Var("T")
    right = [
        StaticRule(c("inSupChain", s, t), (c("supplies", s, t),)),
        StaticRule(c("inSupChain", s, t), (c("supplies", s, m), c("inSupChain", m, t))),
    ]
    left = [
        StaticRule(c("inSupChain", s, t), (c("supplies", s, t),)),
        StaticRule(c("inSupChain", s, t), (c("inSupChain", s, m), c("supplies", m, t))),
    ]
    for rules in (right, left):
        kb = KnowledgeBase(entailment="none", program=Program(tuple(facts + rules)))
        chain = kb.current().knowledge.model[("inSupChain", 2)]
        assert len(chain) == n * (n + 1) // 2
        assert ("c0", f"c{n}") in chain and (f"c{n}", "c0") not in chain


def test_refresh_swaps_atomically_and_failure_keeps_the_old_version(tmp_path: Path) -> None:
    data = tmp_path / "obs.ttl"
    data.write_text(f"<{EX}o> a <{WT}Diablo> .")
    kb = KnowledgeBase([ONTOLOGY, data])
    before = kb.current()
    wind = c("rdf:type", Var("O"), PName("wt", "WindObservation"))
    assert before.version == 1 and holds(kb, wind, O=IRI(EX + "o"))
    data.write_text(f"<{EX}o> a <{WT}TemperatureObservation> .")
    after = kb.refresh()
    assert kb.version == 2 and after is kb.current()
    assert not holds(kb, wind, O=IRI(EX + "o"))
    # the old version is immutable: an event still holding it sees the old knowledge
    assert next(before.solve("rdf", (IRI(EX + "o"), None, IRI(WT + "WindObservation"))), None)
    data.write_text("<broken")
    with pytest.raises(
        KnowledgeError, match=r"refresh failed, version 2 stays in use: .*obs\.ttl:1"
    ):
        kb.refresh()
    assert kb.current() is after and kb.version == 2
    negation_cycle = Program(
        (
            StaticRule(c("p", Var("X")), (c("q", Var("X")),)),
            StaticRule(c("q", Var("X")), (c("r", Var("X")), c("\\+", c("p", Var("X"))))),
        )
    )
    with pytest.raises(KnowledgeError, match="cycle through negation"):
        kb.refresh([ONTOLOGY], program=negation_cycle)
    assert kb.current() is after


def test_readers_during_refresh_always_see_one_whole_version(tmp_path: Path) -> None:
    data = tmp_path / "v.ttl"
    data.write_text(f"<{EX}s> <{EX}v> 1 .")
    kb = KnowledgeBase([data], entailment="none")
    seen: list[tuple[int, list]] = []
    read = threading.Condition()
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            version = kb.current()
            values = [o for _, o in version.solve(EX + "v", (None, None))]
            with read:
                seen.append((version.version, values))
                read.notify_all()

    def saw(version: int) -> bool:
        return any(v == version for v, _ in seen)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for i in range(2, 6):
            # Each refresh waits until the reader has read the version before it, so the
            # reader sees every version, some of them while a refresh runs.
            with read:
                assert read.wait_for(lambda i=i: saw(i - 1), timeout=60)
            data.write_text(f"<{EX}s> <{EX}v> {i} .")
            kb.refresh()
        with read:
            assert read.wait_for(lambda: saw(5), timeout=60)
    finally:
        stop.set()
        thread.join()
    assert {version for version, _ in seen} == {1, 2, 3, 4, 5}
    assert all(values == [version] for version, values in seen)


def test_on_disk_store_and_unknown_regime(tmp_path: Path) -> None:
    Store(tmp_path / "db", create=True).flush()
    kb = KnowledgeBase([EXAMPLES / "enhanced_fire.ttl"], store_path=tmp_path / "db")
    assert kb.store.path == tmp_path / "db" and kb.current().stats["triples"] > 0
    with pytest.raises(KnowledgeError, match="unknown entailment"):
        KnowledgeBase(entailment="rdfs+")


def test_on_demand_answers_are_kept_per_version_and_a_refresh_starts_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # excess/3 needs its Limit as input, so it is answered top-down per call (on demand).
    excess = StaticRule(
        c("excess", Var("O"), Var("Limit"), Var("D")),
        (c("wt:speed", Var("O"), Var("S")), c("is", Var("D"), c("-", Var("S"), Var("Limit")))),
    )
    data = tmp_path / "obs.ttl"
    data.write_text(f'<{EX}o> <{WT}speed> "60"^^<http://www.w3.org/2001/XMLSchema#int> .')
    kb = KnowledgeBase([ONTOLOGY, data], program=program(excess))
    first = kb.current()
    o = IRI(EX + "o")
    assert list(first.solve("excess", (o, 50, None))) == [(o, 50, 10)]
    assert first.answers == {("excess", (o, 50, None)): ((o, 50, 10),)}
    assert list(first.solve("excess", (o, 50, None))) == [(o, 50, 10)]  # from the cache
    assert list(first.solve("wt:speed", (o, None))) == []  # not a predicate of the program
    assert list(first.solve(WT + "speed", (o, None))) == [(o, 60)]
    assert len(first.answers) == 1  # materialised and store relations are not kept here
    data.write_text(f'<{EX}o> <{WT}speed> "75"^^<http://www.w3.org/2001/XMLSchema#int> .')
    second = kb.refresh()
    assert second.answers == {}
    assert list(second.solve("excess", (o, 50, None))) == [(o, 50, 25)]
    assert list(first.solve("excess", (o, 50, None))) == [(o, 50, 10)]  # the old version's
    # Bounded: past MAX_ANSWERS patterns the cache starts over, answers stay right.
    monkeypatch.setattr("reasoner.knowledge.versions.MAX_ANSWERS", 2)
    for limit, expected in ((10, 65), (20, 55), (30, 45)):
        assert list(second.solve("excess", (o, limit, None))) == [(o, limit, expected)]
    # (50, 10) filled it; 20 found it full and started over; 30 joined 20.
    assert second.answers == {
        ("excess", (o, 20, None)): ((o, 20, 55),),
        ("excess", (o, 30, None)): ((o, 30, 45),),
    }
    # A ground call (a WHERE test) keeps whether it holds, per version, bounded the same way.
    test = compile_goal(c("excess", Var("O"), Var("Limit"), Var("D")), {}).holds
    assert [test({"O": o, "Limit": 50, "D": d}, second) for d in (25, 24)] == [True, False]
    assert second.held == {("excess", (o, 50, 25)): True, ("excess", (o, 50, 24)): False}
    assert test({"O": o, "Limit": 50, "D": 25}, first) is False and first.held == {
        ("excess", (o, 50, 25)): False
    }
    for d in (25, 24, 35):  # 25 found it full (of the 50s), 24 joined it, 35 started over
        assert test({"O": o, "Limit": 40, "D": d}, second) is (d == 35)
    assert second.held == {("excess", (o, 40, 35)): True}


@pytest.mark.parametrize("order", [(1.0, 1), (1, 1.0)])
def test_kept_calls_tell_apart_numbers_the_standard_order_tells_apart(
    order: tuple[float | int, ...],
) -> None:
    # 1 == 1.0 in Python, but 1.0 @< 1 holds and 1 @< 1 does not (a float comes first when
    # equal): p(1) and p(1.0) are two calls, whatever order they come in.
    from reasoner.language.parser import parse
    from reasoner.runtime.engine import Engine
    from reasoner.runtime.events import Event
    from reasoner.values import Struct

    text = "p(X) :- X @< 1.\nq(X) :- X @< f(1).\nh(X) <- a(X) WHERE p(X).\n"
    program = parse(text)
    engine = Engine(program, knowledge=KnowledgeBase([], program=program).current())
    found = [d.args for t, v in enumerate(order) for d in engine.push(Event("a", (v,), t, t))]
    assert found == [(1.0,)]  # as the engine's own knowledge answers (1.0 @< 1 only)
    version = KnowledgeBase([], program=program).current()
    holds = version.procedure("q", 1).holds
    compounds = [Struct("f", (v,)) for v in order]  # f(1.0) @< f(1), f(1) @< f(1) is not
    assert [holds((c,)) for c in compounds] == [isinstance(v, float) for v in order]
    p = version.procedure("p", 1)
    assert [list(p.solve((v,))) for v in order] == [
        [(v,)] if isinstance(v, float) else [] for v in order
    ]
