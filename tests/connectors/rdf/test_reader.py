"""Reading timestamped RDF graphs as events: times, the triple view, mappings, bad input."""

import io
import random
from pathlib import Path

import pytest

from connectors.events.rejects import InputFormatError, Rejected
from connectors.events.times import TimeStyle
from connectors.rdf.reader import GraphCounts, property_iri, read_rdf
from reasoner.language.parser import parse
from reasoner.rdf.mapping import GraphMapping
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.values import IRI

EX = "http://ex.org/"
HEAD = (
    "@prefix ex: <http://ex.org/> .\n"
    "@prefix prov: <http://www.w3.org/ns/prov#> .\n"
    "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
)


def ex(name: str) -> IRI:
    return IRI(EX + name)


def _read(text: str, **options):  # type: ignore[no-untyped-def]
    rejected: list[Rejected] = []
    events = list(read_rdf(io.StringIO(text), on_reject=rejected.append, **options))
    return events, [(r.line, r.reason) for r in rejected]


def test_every_triple_is_an_event_at_its_graphs_time() -> None:
    style = TimeStyle()
    events, rejected = _read(
        HEAD + 'ex:g1 prov:generatedAtTime "2021-01-11T06:00:00Z"^^xsd:dateTime .\n'
        'ex:g1 { ex:s ex:p ex:o . ex:s ex:n 2.5 . ex:s ex:label "x"@en }\n'
        "ex:g2 { ex:s ex:p _:b } ex:g2 prov:generatedAtTime 1610344860 .\n",
        style=style,
    )
    t = 1610344800
    assert events[:3] == [
        Event("triple", (ex("s"), ex("p"), ex("o")), t, t),
        Event("triple", (ex("s"), ex("n"), 2.5), t, t),
        Event("triple", (ex("s"), ex("label"), "x"), t, t),
    ]
    (blank,) = events[3:]
    assert blank.start == t + 60 and blank.args[:2] == (ex("s"), ex("p"))
    assert isinstance(blank.args[2], IRI) and blank.args[2].value.startswith("_:")
    assert rejected == [] and style.iso


def test_numeric_times_and_times_stated_inside_the_graph() -> None:
    style = TimeStyle()
    events, rejected = _read(
        HEAD + "ex:g1 { ex:g1 prov:generatedAtTime 7 . ex:s ex:p ex:o }\n",
        style=style,
    )
    assert [e.start for e in events] == [7, 7] and not style.iso
    assert events[0].args == (ex("g1"), IRI("http://www.w3.org/ns/prov#generatedAtTime"), 7)


def test_a_configured_property_inside_the_graph_gives_the_time() -> None:
    text = HEAD + (
        "ex:g1 { ex:o1 ex:resultTime 30 . ex:o2 ex:resultTime 30 }\n"
        "ex:g2 { ex:o1 ex:resultTime 40 . ex:o2 ex:resultTime 41 }\n"
        "ex:g3 { ex:o1 ex:other 50 }\n"
    )
    events, rejected = _read(text, time_property=EX + "resultTime")
    assert [e.start for e in events] == [30, 30]
    assert rejected == [
        (
            5,
            'graph <http://ex.org/g2>: conflicting times "40"^^<http://www.w3.org/2001/'
            'XMLSchema#integer>, "41"^^<http://www.w3.org/2001/XMLSchema#integer>',
        ),
        (
            6,
            "graph <http://ex.org/g3>: no time: no <http://ex.org/resultTime> about the graph "
            "or inside it",
        ),
    ]


def test_triple_events_follow_the_ep_sparql_view() -> None:
    """EP-SPARQL's example: a price that falls by more than 30 % between two triples."""
    stream = HEAD + "".join(
        f"ex:t{i} {{ ex:GOOG ex:hasStockPrice {price} }} ex:t{i} prov:generatedAtTime {i} .\n"
        for i, price in enumerate([100, 95, 60, 58], start=1)
    )
    engine = Engine(
        ":- prefix(ex, 'http://ex.org/').\n"
        "drop(C, P1, P2) <- triple(C, ex:hasStockPrice, P1) SEQ triple(C, ex:hasStockPrice, P2)"
        " WHERE P2 < P1 * 0.7."
    )
    detections = [d for e in read_rdf(io.StringIO(stream)) for d in engine.push(e)]
    assert [(d.args, d.start, d.end) for d in detections] == [
        ((ex("GOOG"), 100, 60), 1, 3),
        ((ex("GOOG"), 95, 60), 2, 3),
        ((ex("GOOG"), 100, 58), 1, 4),
        ((ex("GOOG"), 95, 58), 2, 4),
    ]


def test_a_graph_no_mapping_matches_is_counted_not_rejected() -> None:
    mapping = GraphMapping(
        parse(
            ":- prefix(ex, 'http://ex.org/').\nrdf_event hot(S, V) :- rdf(S, ex:temp, V), V > 30."
        )
    )
    counts = GraphCounts()
    events, rejected = _read(
        HEAD + "ex:g1 { ex:a ex:temp 35 } ex:g1 prov:generatedAtTime 1 .\n"
        "ex:g2 { ex:a ex:temp 20 } ex:g2 prov:generatedAtTime 2 .\n",
        mapping=mapping,
        counts=counts,
    )
    assert events == [Event("hot", (ex("a"), 35), 1, 1)]
    assert rejected == [] and counts == GraphCounts(graphs=2, unmatched=1)


def test_malformed_trig_is_reported_with_its_line_and_the_stream_goes_on() -> None:
    text = HEAD + (
        "ex:g1 { ex:a ex:p 1 } ex:g1 prov:generatedAtTime 1 .\n"  # 4
        "ex:g2 {\n"  # 5
        "  ex:a ex:p 2 .\n"
        "  ex:a ex:p ex:b ex:c }\n"  # 7: four terms
        "ex:g3 { ex:a ex:p 3 } ex:g3 prov:generatedAtTime 3 .\n"  # 8
        'ex:g4 { ex:a ex:p "no end }\n'  # 9
        "ex:g5 { ex:a ex:p 5 } ex:g5 prov:generatedAtTime 5 .\n"  # 10
        "ex:g6 ex:p 6 .\n"  # 11: about no graph
    )
    events, rejected = _read(text)
    assert [e.args[2] for e in events] == [1, 3, 5]
    assert [line for line, _ in rejected] == [7, 9, 11]
    assert rejected[0][1].startswith("malformed RDF: ")
    assert (
        rejected[2][1]
        == "default-graph triples about <http://ex.org/g6>, but no graph <http://ex.org/g6>"
    )


def test_malformed_nquads_drop_the_graphs_around_the_bad_line(tmp_path: Path) -> None:
    time = "<http://www.w3.org/ns/prov#generatedAtTime>"

    def n(value: int) -> str:  # N-Quads has no bare numbers
        return f'"{value}"^^<http://www.w3.org/2001/XMLSchema#integer>'

    lines = [
        f"<{EX}a> <{EX}p> <{EX}b> <{EX}g1> .",
        f"<{EX}g1> {time} {n(1)} .",
        f"<{EX}a> <{EX}p> <{EX}c> <{EX}g2> .",
        f'<{EX}a> <{EX}p> "broken <{EX}g2> .',  # 4: inside g2
        f"<{EX}a> <{EX}p> <{EX}d> <{EX}g2> .",
        f"<{EX}g2> {time} {n(2)} .",
        f"<{EX}a> <{EX}p> <{EX}e> <{EX}g3> .",
        f"<{EX}a> <{EX}p> <{EX}f> <{EX}g3> <{EX}x> .",  # 8: between g3 and g4
        f"<{EX}a> <{EX}p> <{EX}g> <{EX}g4> .",
        f"<{EX}g4> {time} {n(4)} .",
        f"<{EX}a> <{EX}p> <{EX}h> <{EX}g5> . <{EX}g5> {time} {n(5)} .",  # 11: two on one line
        "",
        "# g6 may have lost its first line; g7 is whole",
        f"<{EX}a> <{EX}p> <{EX}i> <{EX}g6> .",
        f"<{EX}a> <{EX}p> <{EX}j> <{EX}g7> .",
        f"<{EX}g7> {time} {n(7)} .",
    ]
    path = tmp_path / "stream.nq"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rejected: list[Rejected] = []
    events = list(read_rdf(path, on_reject=rejected.append))
    assert [(e.args[2], e.start) for e in events] == [(ex("b"), 1), (ex("j"), 7)]
    assert {r.file for r in rejected} == {str(path)}
    dropped = "dropped: a malformed line may belong to it"
    assert [(r.line, r.reason) for r in rejected] == [
        (4, "malformed RDF: Unexpected end of file"),
        (3, f"graph <{EX}g2> {dropped}"),
        (8, "malformed RDF: Quads must be followed by a dot"),
        (7, f"graph <{EX}g3> {dropped}"),  # the broken line may end g3 ...
        (
            11,
            "malformed RDF: Only a single triple or quad can be written in a line, found "
            f'IriRef("{EX}g5")',
        ),
        (9, f"graph <{EX}g4> {dropped}"),  # ... or start g4
        (14, f"graph <{EX}g6> {dropped}"),
    ]


def test_bad_sources_and_settings_raise(tmp_path: Path) -> None:
    with pytest.raises(InputFormatError, match="no such RDF file"):
        read_rdf(tmp_path / "missing.trig")
    with pytest.raises(InputFormatError, match="unknown RDF stream syntax 'turtle'"):
        read_rdf(io.StringIO(""), syntax="turtle")
    with pytest.raises(InputFormatError, match="bad time property"):
        read_rdf(io.StringIO(""), time_property="not an iri")


def test_property_names_resolve_with_the_rules_prefixes() -> None:
    prefixes = {"sosa": "http://www.w3.org/ns/sosa/"}
    assert property_iri("sosa:resultTime", prefixes) == "http://www.w3.org/ns/sosa/resultTime"
    assert property_iri("<urn:t>", prefixes) == "urn:t"
    assert property_iri("http://ex.org/t", prefixes) == "http://ex.org/t"
    with pytest.raises(InputFormatError, match="unknown prefix in 'ex:t'"):
        property_iri("ex:t", prefixes)


def _random_stream(seed: int, syntax: str) -> str:
    """Graphs of 1-4 triples, some without a time or with a broken statement or line."""
    rng = random.Random(seed)
    time = "<http://www.w3.org/ns/prov#generatedAtTime>"
    parts = []
    for i in range(40):
        graph = f"<{EX}g{i % 7}>"  # names repeat: only consecutive statements form a graph
        triples = [
            f"<{EX}s{rng.randrange(3)}> <{EX}p> {rng.choice(['1', '2', f'<{EX}o>'])}"
            for _ in range(rng.randint(1, 4))
        ]
        if syntax == "nquads":
            triples = [
                t.replace(" 1", ' "1"^^<http://www.w3.org/2001/XMLSchema#integer>') for t in triples
            ]
            triples = [
                t.replace(" 2", ' "2"^^<http://www.w3.org/2001/XMLSchema#integer>') for t in triples
            ]
        stamp = f'"{i}"^^<http://www.w3.org/2001/XMLSchema#integer>'
        fault = rng.random()
        if fault < 0.1:
            triples[-1] += ' "broken'
        elif fault < 0.15:
            triples[0] += f" <{EX}extra>"
        if syntax == "trig":
            block = f"{graph} {{ " + " .\n  ".join(triples) + " }\n"
            parts.append(block if fault < 0.2 or fault > 0.25 else block.replace("{", "", 1))
            if not 0.25 < fault < 0.3:  # else: no time
                parts.append(f"{graph} {time} {stamp} .\n")
        else:
            parts += [f"{t} {graph} .\n" for t in triples]
            if not 0.25 < fault < 0.3:
                parts.append(f"{graph} {time} {stamp} .\n")
    return "".join(parts)


@pytest.mark.parametrize("syntax", ["trig", "nquads"])
@pytest.mark.parametrize("seed", range(12))
def test_a_file_read_in_one_pass_gives_what_a_statement_at_a_time_gives(
    tmp_path: Path, syntax: str, seed: int
) -> None:
    # A file goes through pyoxigraph's streaming parser until its first problem, a stream
    # statement by statement throughout: events, rejections (with lines) and counts agree.
    text = _random_stream(seed, syntax)
    path = tmp_path / f"stream.{'nq' if syntax == 'nquads' else 'trig'}"
    path.write_text(text, encoding="utf-8")
    results = []
    for source in (path, io.StringIO(text)):
        rejected: list[Rejected] = []
        counts = GraphCounts()
        events = list(read_rdf(source, syntax=syntax, on_reject=rejected.append, counts=counts))
        results.append((events, [(r.line, r.reason) for r in rejected], counts))
    assert results[0] == results[1]
    events, rejected, counts = results[0]
    assert counts.graphs == len({e.start for e in events})  # one time per graph here
    assert rejected and len(events) >= 10
