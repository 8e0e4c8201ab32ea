"""``reasoner run --query`` and ``reasoner check --query`` (in-process, via ``main``)."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from rdflib.query import Result

from connectors.cli import main
from reasoner.runtime.events import Event

QUERY = """PREFIX ex: <http://ex.org/>
SELECT ?company ?p2
WHERE { ?company ex:hasStockPrice ?p1 }
OPTIONALSEQ { ?company ex:hasStockPrice ?p2 }
FILTER (?p1 > 50)
"""
STREAM = """@prefix ex: <http://ex.org/> .
@prefix prov: <http://www.w3.org/ns/prov#> .
ex:g1 { ex:acme ex:hasStockPrice 100 . } ex:g1 prov:generatedAtTime "2024-01-01T00:00:00Z" .
ex:g2 { ex:bolt ex:hasStockPrice 10 . } ex:g2 prov:generatedAtTime "2024-01-01T00:00:05Z" .
ex:g3 { ex:acme ex:hasStockPrice 60.5 . } ex:g3 prov:generatedAtTime "2024-01-01T00:00:09Z" .
"""


def _datatype(term: object) -> str | None:
    datatype = getattr(term, "datatype", None)
    return None if datatype is None else str(datatype)


def _files(tmp_path: Path) -> tuple[Path, Path]:
    query, stream = tmp_path / "highs.rq", tmp_path / "prices.trig"
    query.write_text(QUERY, encoding="utf-8")
    stream.write_text(STREAM, encoding="utf-8")
    return query, stream


def test_run_writes_one_sparql_results_document_per_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    query, stream = _files(tmp_path)
    assert main(["run", "--query", str(query), "--events", str(stream), "--format", "rdf"]) == 0
    lines = capsys.readouterr().out.splitlines()
    records = [json.loads(line) for line in lines]
    assert [(r["start"], r["end"]) for r in records] == [
        ("2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z"),  # acme 100, without the optional part
        ("2024-01-01T00:00:00Z", "2024-01-01T00:00:09Z"),  # acme 100 then 60.5
        ("2024-01-01T00:00:09Z", "2024-01-01T00:00:09Z"),  # acme 60.5, without
    ]
    # Each line is a SPARQL 1.1 results document: a SPARQL results reader reads it.
    rows = []
    for line in lines:
        result = Result.parse(io.StringIO(line), format="json")
        assert [str(v) for v in result.vars] == ["company", "p2"]
        rows += [
            {str(k): (str(v), _datatype(v)) for k, v in row.asdict().items()} for row in result
        ]
    acme = ("http://ex.org/acme", None)
    double = "http://www.w3.org/2001/XMLSchema#double"
    assert rows == [{"company": acme}, {"company": acme, "p2": ("60.5", double)}, {"company": acme}]


def test_run_writes_rdf_for_the_query_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    query, stream = _files(tmp_path)
    rules = tmp_path / "other.event"
    rules.write_text("low(S) <- triple(S, P, O) WHERE O < 20.\n", encoding="utf-8")
    argv = ["run", str(rules), "--query", str(query), "--events", str(stream), "--format", "rdf"]
    assert main([*argv, "--output-format", "nquads"]) == 0
    out = capsys.readouterr().out
    events = [
        line.split(" ")[2] for line in out.splitlines() if "<urn:reasoner:vocab#event>" in line
    ]
    # The rule's low(bolt) is not written: the output is the query's results.
    assert sorted(events) == ['"highs"', '"highs_2"', '"highs_2"']


def test_serve_publishes_the_query_results_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from connectors.events import serving

    published: list[str] = []

    @contextlib.contextmanager
    def recording(*args: Any, **kwargs: Any) -> Iterator[Callable[[Sequence[Event]], None]]:
        yield lambda detections: published.extend(d.name for d in detections)

    monkeypatch.setattr(serving, "detections_endpoint", recording)
    query, stream = _files(tmp_path)
    rules = tmp_path / "other.event"
    rules.write_text("low(S) <- triple(S, P, O) WHERE O < 20.\n", encoding="utf-8")
    argv = ["run", str(rules), "--query", str(query), "--events", str(stream), "--format", "rdf"]
    assert main([*argv, "--serve", "0"]) == 0
    capsys.readouterr()
    # The rule's low(bolt) is derived but not published: the query's results are.
    assert sorted(published) == ["highs", "highs_2", "highs_2"]


def test_check_reports_query_errors_at_their_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.rq"
    bad.write_text("SELECT ?x\nWHERE { ?x <urn:p> ?y } FILTER (?z > 1)\n", encoding="utf-8")
    assert main(["check", "--query", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{bad}:2:33: unbound variable 'Z'")
    broken = tmp_path / "broken.rq"
    broken.write_text("SELECT ?x\nWHERE { ?x <urn:p> ?y } SEQUENCE { }\n", encoding="utf-8")
    assert main(["check", "--query", str(broken)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{broken}:2:25: expected ")
    assert "    WHERE { ?x <urn:p> ?y } SEQUENCE { }\n                            ^" in err


def test_check_emits_the_translation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    query, _ = _files(tmp_path)
    assert main(["check", "--query", str(query), "--emit", "rules"]) == 0
    assert capsys.readouterr().out == (
        ":- prefix(ex, 'http://ex.org/').\n"
        "highs(Company, P2) <- triple(Company, ex:hasStockPrice, P1) SEQ "
        "triple(Company, ex:hasStockPrice, P2) WHERE P1 > 50.\n"
        "highs_2(Company) <- triple(Company, ex:hasStockPrice, P1) WHERE P1 > 50.\n"
    )


def test_run_needs_rules_or_a_query(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run"]) == 1
    assert capsys.readouterr().err == "reasoner: give rule files, or a query with --query\n"
    assert main(["run", "--query", "q.rq", "--only", "x"]) == 1
    assert capsys.readouterr().err == (
        "reasoner: --only does not go with --query: the query's results are written\n"
    )


def test_construct_writes_the_constructed_triples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # ETALIS's ep_sparql_03, over JSON lines of triple events.
    query, stream = tmp_path / "pairs.rq", tmp_path / "prices.jsonl"
    query.write_text(
        "CONSTRUCT ?company hasPricePairMin ?price1 WHERE { ?company hasStockPrice ?price1 } "
        "SEQ { ?company hasStockPrice ?price2 } FILTER ( ?price1 < ?price2 )",
        encoding="utf-8",
    )
    stream.write_text(
        '{"name": "triple", "args": ["company1", "hasStockPrice", 1], "time": 1}\n'
        '{"name": "triple", "args": ["company1", "hasStockPrice", 2], "time": 2}\n',
        encoding="utf-8",
    )
    assert main(["run", "--query", str(query), "--events", str(stream)]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    integer = "http://www.w3.org/2001/XMLSchema#integer"
    assert records == [
        {
            "head": {"vars": ["subject", "predicate", "object"]},
            "results": {
                "bindings": [
                    {
                        "subject": {"type": "literal", "value": "company1"},
                        "predicate": {"type": "literal", "value": "hasPricePairMin"},
                        "object": {"type": "literal", "value": "1", "datatype": integer},
                    }
                ]
            },
            "start": 1,
            "end": 2,
        }
    ]
