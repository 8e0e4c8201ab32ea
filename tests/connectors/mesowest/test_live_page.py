"""The live page in a real browser while the shipped MesoWest sample replays.

The test paces the replay itself (it pushes the readings and publishes the detections, as
``reasoner run --serve`` does), so it can look at the page halfway: after the readings up to
2021-01-11 08:00 UTC only KOGD has raised a warning (07:40); at the end KOGD, KSLC and KEVW
have (docs/mesowest.md lists the warnings of the sample).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from connectors.events.times import iso_to_epoch
from connectors.mesowest.knowledge import open_knowledge
from connectors.mesowest.reader import read_mesowest
from connectors.mesowest.rules import blizzard_program
from reasoner.runtime.engine import Engine
from reasoner.server import EndpointConfig, SparqlServer

HALFWAY = iso_to_epoch("2021-01-11T08:00:00Z")
WAIT = 60_000  # ms: a liveness bound for the page to catch up, not a speed check
# The sample's stations (data/mesowest/README.md); the three blizzard stations are among them.
STATIONS = {"KEVW", "KGJT", "KJAC", "KOGD", "KPVU", "KSLC"}


def _warnings(page: Any) -> list[str]:
    """The first argument of each blizzardWarning row shown in the table, top to bottom."""
    return page.eval_on_selector_all(
        "#detections tbody tr:not(.hidden)",
        "rows => rows.filter(r => r.cells[1].innerText === 'blizzardWarning')"
        ".map(r => r.cells[2].innerText.split(', ')[0])",
    )


def _markers(page: Any) -> set[str]:
    return set(page.eval_on_selector_all("#markers circle", "cs => cs.map(c => c.dataset.key)"))


def _stations_in(detections: list[Any]) -> set[str]:
    """The sample's station ids among detections' arguments (lists included)."""
    found: set[str] = set()
    stack: list[Any] = [arg for d in detections for arg in d.args]
    while stack:
        value = stack.pop()
        if isinstance(value, tuple):
            stack.extend(value)
        elif value in STATIONS:
            found.add(value)
    return found


def test_live_page_shows_blizzard_stations_as_they_are_detected(
    sample_store: Path, sample_files: tuple[Path, ...], page: Any, artifacts: Path
) -> None:
    kb = open_knowledge(sample_store)
    engine = Engine(blizzard_program(), knowledge=kb.current(), provenance=True)
    readings = list(read_mesowest(*sample_files))
    with SparqlServer(kb, EndpointConfig(port=0)).start() as server:
        page.goto(server.page_url("live"))
        page.wait_for_selector("#states path")  # the state borders are drawn
        published: list[Any] = []
        cut = next(i for i, event in enumerate(readings) if event.end > HALFWAY)
        for event in readings[:cut]:
            found = engine.push(event)
            server.publish_detections(found)
            published += found
        # Playwright's expect polls from outside the page: wait_for_function would evaluate a
        # string in it, which the page's Content-Security-Policy (no unsafe-eval) forbids.
        expect(page.locator("#detections tbody tr")).to_have_count(len(published), timeout=WAIT)
        assert _warnings(page) == ["KOGD"]
        halfway = _stations_in(published)
        assert _markers(page) == halfway
        page.screenshot(path=artifacts / "live-halfway.png", full_page=True)

        for event in readings[cut:]:
            found = engine.push(event)
            server.publish_detections(found)
            published += found
        found = engine.flush()
        server.publish_detections(found)
        published += found
        server.finish_replay()
        page.wait_for_selector("#slider:not([disabled])")
        assert page.inner_text("#state") == (
            f"replay finished: {len(published)} detections ({len(published)} shown)"
        )
        assert _warnings(page) == ["KOGD", "KSLC", "KEVW"]
        # Stations, and the places near them (a place's IRI and name: one marker, its name).
        places = {d.args[3] for d in published if d.name == "blizzardPlace"}
        assert len(places) == 22  # 9 cities near KOGD, 13 near KSLC (docs/mesowest.md)
        assert _markers(page) == _stations_in(published) | places
        # Each marker shows its rarest event: the area for the three blizzard stations.
        shown = dict(
            page.eval_on_selector_all(
                "#markers circle", "cs => cs.map(c => [c.dataset.key, c.dataset.event])"
            )
        )
        assert {key: shown[key] for key in ("KOGD", "KSLC", "KEVW", "KPVU")} == {
            "KOGD": "blizzardArea",
            "KSLC": "blizzardArea",
            "KEVW": "blizzardArea",
            "KPVU": "warningNear",
        }
        assert {shown[place] for place in places} == {"blizzardPlace"}
        assert {"KOGD", "KSLC", "KEVW"} <= _markers(page)
        # The state borders around the stations: Utah's and Wyoming's among them.
        titles = page.eval_on_selector_all("#states path title", "ts => ts.map(t => t.textContent)")
        assert {"Utah", "Wyoming", "Idaho", "Colorado"} <= set(titles)

        # Provenance and RDF of KSLC's warning.
        page.click(
            "#detections tbody tr:has(td:text-is('blizzardWarning')):has(td:text-matches('^KSLC'))"
        )
        expect(page.locator("#rdf")).to_contain_text("Detection", timeout=WAIT)
        sources = page.eval_on_selector_all(
            "#sources tbody tr",
            "rows => rows.map(r => r.cells[0].innerText + ' ' + r.cells[2].innerText)",
        )
        warning = next(d for d in published if d.name == "blizzardWarning" and d.args[0] == "KSLC")
        assert [row.split()[0] for row in sources] == [s.name for s in warning.sources]
        assert "urn:reasoner:vocab#Detection" in page.inner_text("#rdf")
        page.screenshot(path=artifacts / "live-finished.png", full_page=True)

        # The slider goes back to the halfway point: KSLC's and KEVW's warnings are hidden.
        slider = page.locator("#slider")
        ends = sorted({d.end for d in published})
        slider.evaluate(
            "(s, i) => { s.value = i; s.dispatchEvent(new Event('input')); }",
            max(i for i, end in enumerate(ends) if end <= HALFWAY),
        )
        assert _warnings(page) == ["KOGD"]
        assert _markers(page) == halfway
    assert page.problems == []
