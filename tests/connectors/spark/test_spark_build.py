"""Jobs 4-5 and refresh: RDFS equal to owlrl, the store build, refresh and its atomic swap."""

import argparse
import shutil
from pathlib import Path

import owlrl
import pytest
import rdflib
from geopy.distance import geodesic

from connectors.cli.knowledge import register
from connectors.geonames import read_dump
from connectors.spark.build import BuildConfig, build_knowledge, read_manifest, refresh_knowledge
from connectors.spark.neighbourhoods import uses_graphframes
from connectors.spark.rdfs import PROPERTY, RESOURCE, SUBCLASS, SUBPROPERTY, TYPE, materialise_rdfs
from connectors.spark.readers import triples_frame
from connectors.spark.terms import term
from connectors.stations import read_station_csv
from reasoner.errors import KnowledgeError
from reasoner.knowledge.store import INFERRED_GRAPH, Store
from reasoner.values import IRI

ROOT = Path(__file__).resolve().parents[3]
GEONAMES = ROOT / "data" / "geonames" / "US-mountain-cities15000.txt"
STATIONS = ROOT / "data" / "stations" / "us-mountain-stations.csv"

ONTOLOGY = """
@prefix : <http://e/> . @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
:Diablo rdfs:subClassOf :WindObservation . :Sundowner rdfs:subClassOf :WindObservation .
:WindObservation rdfs:subClassOf :WeatherObservation .
:WeatherObservation rdfs:subClassOf :Observation .
:hasSpeed rdfs:subPropertyOf :hasValue . :hasValue rdfs:domain :Observation .
:hasValue rdfs:range xsd:double . :observedBy rdfs:range :Sensor .
:Sensor rdfs:subClassOf :Device .
:o1 a :Diablo ; :hasSpeed "3.5"^^xsd:double ; :observedBy :s1 .
:o2 :hasValue 4 . :t1 a :TemperatureObservation ; :label "warm" .
"""
EXOTIC = """
@prefix : <http://e/> . @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
:kind rdfs:subPropertyOf rdf:type . :A rdfs:subClassOf :B . :x :kind :A .
:unit rdfs:range rdfs:Datatype . :m :unit :Celsius . :r :reading :v . :v a :Celsius .
:reading rdfs:range :Value . :Value rdfs:subClassOf :Thing .
"""


def _owlrl(text: str, trivial: bool) -> set[tuple[str, str, str]]:
    graph = rdflib.Graph().parse(data=text, format="turtle")
    given = {(term(s), term(p), term(o)) for s, p, o in graph}
    owlrl.DeductiveClosure(
        owlrl.RDFSClosure.RDFS_Semantics, axiomatic_triples=False, datatype_axioms=False
    ).expand(graph)
    inferred = {(term(s), term(p), term(o)) for s, p, o in graph} - given
    inferred = {t for t in inferred if not t[0].startswith('"')}  # not RDF
    if not trivial:
        inferred = {
            (s, p, o)
            for s, p, o in inferred
            if not (p == TYPE and o in (RESOURCE, PROPERTY))
            and not (p in (SUBCLASS, SUBPROPERTY) and s == o)
            and not (p == SUBCLASS and o == RESOURCE)
        }
    return inferred


@pytest.mark.parametrize("trivial", [False, True])
@pytest.mark.parametrize("text", [ONTOLOGY, EXOTIC], ids=["weather", "vocabulary"])
def test_rdfs_equals_owlrl(spark, text: str, trivial: bool) -> None:
    graph = rdflib.Graph().parse(data=text, format="turtle")
    frame = triples_frame(spark, sorted((term(s), term(p), term(o)) for s, p, o in graph))
    got = {(r.s, r.p, r.o) for r in materialise_rdfs(frame, trivial=trivial).collect()}
    expected = _owlrl(text, trivial)
    assert got == expected
    diablo = ("<http://e/o1>", TYPE, "<http://e/Observation>")
    assert (diablo in got) == (text is ONTOLOGY)


@pytest.fixture(scope="module")
def built(spark, tmp_path_factory):
    folder = tmp_path_factory.mktemp("kb")
    ontology = folder / "weather.ttl"
    ontology.write_text(
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        "<http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#System> "
        "rdfs:subClassOf <http://e/WeatherStation> .\n"
    )
    stations = folder / "stations.csv"
    shutil.copy(STATIONS, stations)
    config = BuildConfig(
        ontologies=(str(ontology),), stations=(str(stations),), geonames=(str(GEONAMES),)
    )
    lines: list[str] = []
    report = build_knowledge(folder / "store", config, log=lines.append)
    return folder, report, lines


def test_build_answers_which_places_are_near_a_station(spark, built) -> None:
    folder, report, lines = built
    assert [s.name for s in report.stages] == [
        "ontologies",
        "stations",
        "features",
        "near",
        "neighbourhoods",
        "inferred",
    ]
    assert "[4/6] near: stations within 20 km of GeoNames features ..." in lines
    # Six triples describe each (station, feature) link within 20 km, counted by brute force.
    links = sum(
        geodesic((s.lat, s.lon), (f.latitude, f.longitude)).km <= 20.0
        for s in read_station_csv(STATIONS)
        for f in read_dump(GEONAMES)
    )
    assert any(line.startswith(f"[4/6] near: {6 * links} triples in ") for line in lines)
    method = (
        "GraphFrames"
        if uses_graphframes(spark)
        else "DataFrames (no GraphFrames jar on the classpath)"
    )
    assert f"  connected components: {method}" in lines
    assert lines[-1].startswith(f"load: {sum(s.triples for s in report.stages):,} triples in ")
    store = Store(folder / "store")
    answer = store.query(
        "PREFIX om: <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#>"
        ' SELECT ?name ?d WHERE { ?s om:ID "KSLC" ; om:hasLocatedNearRel ?r .'
        " ?r om:hasLocation ?f ; om:distance ?d ."
        " ?f <http://www.geonames.org/ontology#name> ?name } ORDER BY ?d"
    )
    assert answer.rows[0] == ("Salt Lake City", 7.937)
    assert len(answer.rows) == 13
    kslc = IRI("http://knoesis.wright.edu/ssw/System_KSLC")
    inferred = set(store.triples(kslc, None, None, graph=INFERRED_GRAPH))
    assert inferred == {(kslc, IRI(TYPE[1:-1]), IRI("http://e/WeatherStation"))}
    assert len(store) == sum(s.triples for s in report.stages)


def test_refresh_rebuilds_only_what_changed(built) -> None:
    folder, first, _ = built
    lines: list[str] = []
    same = refresh_knowledge(folder / "store", log=lines.append)
    assert not same.changed and lines == ["up to date: no input changed"]
    stations = folder / "stations.csv"
    stations.write_text(stations.read_text() + "KNEW,New Station,40.76,-111.89,1300,UT\n")
    again = refresh_knowledge(folder / "store", log=lines.append)
    assert again.changed and again.version == 2
    reused = {s.name for s in again.stages if s.reused}
    assert reused == {"ontologies", "features"}
    assert "[3/6] features: 1,107 triples reused (inputs unchanged)" in lines
    store = Store(folder / "store")
    near = store.query(
        "ASK { <http://knoesis.wright.edu/ssw/System_KNEW> "
        "<https://w3id.org/etalis-reasoner/ns#locatedNear> <https://sws.geonames.org/5780993/> }"
    )
    assert near.boolean
    assert read_manifest(folder / "store")["version"] == 2
    assert not list(folder.glob(".store.building-*"))


def test_failed_build_leaves_the_store_untouched(built, tmp_path: Path) -> None:
    folder, _, _ = built
    before = sorted(p.name for p in (folder / "store").iterdir())
    broken = tmp_path / "broken.txt"
    broken.write_text("1\tnot enough columns\n")
    config = BuildConfig(stations=(str(STATIONS),), geonames=(str(broken),))
    with pytest.raises(KnowledgeError, match="malformed GeoNames row"):
        build_knowledge(folder / "store", config, log=lambda _: None)
    assert sorted(p.name for p in (folder / "store").iterdir()) == before
    assert not list(folder.glob(".store.building-*"))
    assert Store(folder / "store").query("ASK { ?s ?p ?o }").boolean


@pytest.mark.parametrize(("radius", "neighbour"), [(0.0, 300.0), (20.0, 5001.0)])
def test_distances_out_of_range_are_refused(tmp_path: Path, radius, neighbour) -> None:
    config = BuildConfig(stations=(str(STATIONS),), radius_km=radius, neighbour_km=neighbour)
    with pytest.raises(KnowledgeError, match=r"km \S+ is not in \(0, 5000\]"):
        build_knowledge(tmp_path / "kb", config, log=lambda _: None)
    assert not list(tmp_path.iterdir())


def test_cli_registers_build_and_refresh(built, capsys) -> None:
    folder, _, _ = built
    parser = argparse.ArgumentParser(prog="reasoner")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        [
            "knowledge",
            "build",
            "--out",
            "kb",
            "--stations",
            "a.csv",
            "--stations",
            "b.csv",
            "--geonames",
            "US.zip",
            "--ontology",
            "o.ttl",
            "--radius-km",
            "5",
            "--master",
            "local[1]",
            "--jars",
            "g.jar",
        ]
    )
    assert (args.out, args.stations, args.geonames, args.ontology) == (
        "kb",
        ["a.csv", "b.csv"],
        ["US.zip"],
        ["o.ttl"],
    )
    assert (args.radius_km, args.neighbour_km, args.master) == (5.0, 300.0, "local[1]")
    assert (args.packages, args.jars, args.entailment) == ([], ["g.jar"], "rdfs")
    refresh = parser.parse_args(["knowledge", "refresh", str(folder / "store")])
    assert refresh.handler(refresh) == 0
    assert "unchanged" in capsys.readouterr().out
