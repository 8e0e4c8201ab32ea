from pathlib import Path

import pytest

from reasoner.errors import KnowledgeError
from reasoner.knowledge.store import INFERRED_GRAPH, SparqlError, Store
from reasoner.values import IRI

EX = "http://e/"
A, P, B = IRI(EX + "a"), IRI(EX + "p"), IRI(EX + "b")


def test_load_folder_every_format(tmp_path: Path) -> None:
    (tmp_path / "a.ttl").write_text(f"<{EX}a> <{EX}p> 1 .")
    (tmp_path / "b.nt").write_text(f'<{EX}b> <{EX}p> "x" .\n')
    (tmp_path / "c.nq").write_text(f"<{EX}c> <{EX}p> <{EX}d> <{EX}g> .\n")
    (tmp_path / "d.jsonld").write_text(f'{{"@id": "{EX}e", "{EX}p": 2.5}}')
    (tmp_path / "e.rdf").write_text(
        '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:e="http://e/">'
        '<rdf:Description rdf:about="http://e/f"><e:p>y</e:p></rdf:Description></rdf:RDF>'
    )
    store = Store()
    assert store.load(tmp_path, progress=True) == 5
    got = sorted((str(s), o) for s, _, o in store.triples(None, P, None))
    assert got == [
        (EX + "a", 1),
        (EX + "b", "x"),
        (EX + "c", IRI(EX + "d")),
        (EX + "e", 2.5),
        (EX + "f", "y"),
    ]


def test_malformed_file_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ttl"
    bad.write_text(f"<{EX}a> <{EX}p> 1 .\n\n<{EX}a> <{EX}p> ;; .\n")
    store = Store()
    with pytest.raises(KnowledgeError, match=r"bad\.ttl:3: malformed RDF"):
        store.load(bad)
    assert len(store) == 0  # one transaction per file: nothing was added


def test_missing_and_unknown_files(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeError, match="no such file"):
        Store().load(tmp_path / "nope.ttl")
    odd = tmp_path / "data.csv"
    odd.write_text("x")
    with pytest.raises(KnowledgeError, match="unknown RDF file type"):
        Store().load(odd)


def test_bulk_load_on_disk_persists(tmp_path: Path) -> None:
    data = tmp_path / "part-0000.nt"
    data.write_text("".join(f'<{EX}s{i}> <{EX}p> "{i}" .\n' for i in range(100)))
    store = Store(tmp_path / "db", create=True)
    store.bulk_load(data, "ntriples")
    store.flush()
    del store
    assert len(Store(tmp_path / "db")) == 100


def test_numeric_literals_become_numbers_others_text() -> None:
    store = Store()
    store.load_text(
        f'@prefix x: <http://www.w3.org/2001/XMLSchema#> . <{EX}a> <{EX}p> "60"^^x:int, '
        f'"2.5"^^x:decimal, "1e3"^^x:double, "abc"^^x:int, "true"^^x:boolean, "chat"@fr .',
        "turtle",
    )
    objects = {o for _, _, o in store.triples(A)}
    assert objects == {60, 2.5, 1000.0, "abc", "true", "chat"}
    assert all(type(o) is not bool for o in objects)


def test_named_graphs_and_sparql_passthrough() -> None:
    store = Store()
    store.load_text(f"<{EX}a> <{EX}p> <{EX}b> .", "turtle")
    store.add([(B, P, A)])
    assert list(store.triples(graph=None)) == [(A, P, B)]
    assert list(store.triples(graph=INFERRED_GRAPH)) == [(B, P, A)]
    result = store.query(f"SELECT ?s WHERE {{ ?s <{EX}p> ?o }} ORDER BY ?s")
    assert result.kind == "select" and result.rows == ((A,), (B,))
    inferred_only = store.query(f"SELECT ?s WHERE {{ GRAPH <{INFERRED_GRAPH}> {{ ?s ?p ?o }} }}")
    assert inferred_only.rows == ((B,),)
    kind, body = store.query_serialized("ASK { ?s ?p ?o }", "json")
    assert (kind, body) == ("ask", b'{"head":{},"boolean":true}')
    store.clear_graph()
    assert len(store) == 1
    with pytest.raises(SparqlError, match="malformed SPARQL query"):
        store.query("SELEKT *")


def test_add_rejects_non_rdf_values() -> None:
    with pytest.raises(KnowledgeError, match="not an RDF triple"):
        Store().add([("literal", P, B)])


def test_oxigraph_is_the_underlying_store_itself() -> None:
    store = Store()
    store.load_text(f"<{EX}a> <{EX}p> <{EX}b> .", "turtle")
    native = store.oxigraph
    assert native is store.oxigraph and len(native) == 1
    store.add([(B, P, A)])  # writes through the wrapper are visible through the accessor
    assert bool(native.query(f"ASK {{ GRAPH <{INFERRED_GRAPH}> {{ <{EX}b> ?p ?o }} }}"))


def test_only_a_build_creates_a_store(tmp_path: Path) -> None:
    missing = tmp_path / "typo"
    with pytest.raises(KnowledgeError, match=f"^{missing}: no knowledge store there"):
        Store(missing)
    assert not missing.exists()
    (tmp_path / "empty").mkdir()
    with pytest.raises(KnowledgeError, match="empty: no knowledge store there"):
        Store(tmp_path / "empty")
    store = Store(missing, create=True)
    store.load_text(f'<{EX}s> <{EX}p> "1" .', "ntriples")
    store.flush()
    del store
    assert len(Store(missing)) == 1
