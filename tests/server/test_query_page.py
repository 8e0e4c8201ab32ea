"""The query page in a real browser: run a query, read the table, download, update rules."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from reasoner.server import SparqlServer

SELECT = """PREFIX ex: <http://ex.org/>
SELECT ?s ?name ?t WHERE { ?s ex:name ?name ; ex:temperature ?t } ORDER BY ?name"""
INSERT = 'PREFIX ex: <http://ex.org/>\nINSERT DATA { ex:KOGD ex:name "Ogden (page)" }'
TOKEN = "page-token-0123456789"


def _run(page: Any, query: str) -> None:
    """Put the query in the editor (as if typed) and press the editor's run button."""
    page.wait_for_selector(".yasqe .CodeMirror")
    page.evaluate("q => yasgui.getTab().getYasqe().setValue(q)", query)
    page.click(".yasqe_queryButton")


def _table(page: Any) -> list[list[str]]:
    page.wait_for_selector(".yasr table.dataTable tbody tr")
    return page.eval_on_selector_all(
        ".yasr table.dataTable tbody tr",
        "rows => rows.map(r => [...r.cells].map(c => c.innerText.trim()))",
    )


def test_query_runs_and_table_shows_the_rows(
    server: SparqlServer, page: Any, artifacts: Path
) -> None:
    response = page.goto(server.page_url())
    assert response.status == 200
    assert response.headers["content-security-policy"].startswith("default-src 'none'")
    _run(page, SELECT)
    integer = "^^<http://www.w3.org/2001/XMLSchema#integer>"
    assert _table(page) == [
        ["1", "ex:KPVU", "Provo", f'"2"{integer}'],
        ["2", "ex:KSLC", "Salt Lake City", f'"-7"{integer}'],
    ]
    page.screenshot(path=artifacts / "query-page.png", full_page=True)
    assert page.problems == []  # no script error, no Content-Security-Policy violation


def test_download_in_a_protocol_format(server: SparqlServer, page: Any) -> None:
    page.goto(server.page_url())
    _run(page, SELECT)
    _table(page)
    page.select_option("#download-format", label="CSV")
    with page.expect_download() as download:
        page.click("#download")
    path = download.value.path()
    assert download.value.suggested_filename == "results.csv"
    assert Path(path).read_bytes() == (
        b"s,name,t\r\nhttp://ex.org/KPVU,Provo,2\r\nhttp://ex.org/KSLC,Salt Lake City,-7\r\n"
    )


def test_update_needs_the_token(serve: Callable[..., SparqlServer], page: Any) -> None:
    server = serve(access_token=TOKEN)
    ogden = 'ASK { <http://ex.org/KOGD> <http://ex.org/name> "Ogden (page)" }'
    page.goto(server.page_url())
    _run(page, INSERT)
    page.wait_for_selector(".yasr :text('SPARQL Update needs')")
    assert server._current().query(ogden).boolean is False
    page.fill("#token", TOKEN)
    with page.expect_response(lambda r: r.url.endswith("/sparql")) as answer:
        page.click(".yasqe_queryButton")
    assert answer.value.status == 204
    assert server._current().query(ogden).boolean is True
    page.problems.remove(
        "Failed to load resource: the server responded with a status of 401 (Unauthorized)"
    )
    assert page.problems == []
