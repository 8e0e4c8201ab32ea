"""rules/blizzard.event: settlings, warnings, areas and places, on small streams and on the
shipped sample with the knowledge the Spark pipeline builds."""

from collections.abc import Iterable
from pathlib import Path

import pytest

from connectors.events.times import iso_to_epoch
from connectors.mesowest.knowledge import open_knowledge
from connectors.mesowest.replay import replay
from connectors.mesowest.rules import blizzard_program
from reasoner import Engine, Event, KnowledgeBase
from reasoner.errors import ReasonerError
from reasoner.values import IRI

H = 3600
OM = "http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#"
ER = "https://w3id.org/etalis-reasoner/ns#"
GN = "http://www.geonames.org/ontology#"
# A, B and C lie within 300 km of each other, D and E far from them (and from each other
# except E-A below); one place lies near A.
NEAR = [("A", "B"), ("A", "C"), ("B", "C"), ("A", "E")]


def _knowledge(tmp_path: Path) -> Path:
    lines = [f'<urn:s:{s}> <{OM}ID> "{s}" .' for s in "ABCDE"]
    for a, b in NEAR:
        lines += [
            f"<urn:s:{a}> <{ER}nearStation> <urn:s:{b}> .",
            f"<urn:s:{b}> <{ER}nearStation> <urn:s:{a}> .",
        ]
    lines += [
        f"<urn:s:A> <{OM}hasLocatedNearRel> <urn:r:1> .",
        f"<urn:r:1> <{OM}hasLocation> <urn:p:1> .",
        f'<urn:r:1> <{OM}distance> "5.5"^^<http://www.w3.org/2001/XMLSchema#double> .',
        f'<urn:p:1> <{GN}name> "Pville" .',
    ]
    path = tmp_path / "kb.nt"
    path.write_text("\n".join(lines) + "\n")
    return path


def _reading(station: str, t: int, wind: float = 40.0, vis: float = 0.1, cond: str = "snow"):
    return Event.at("sensor_reading", (station, t, 20.0, 95, wind, "none", vis, cond, 0.1), t)


def _storm(station: str, start: float, end: float, **kw) -> list[Event]:
    """Satisfying readings every 20 minutes from ``start`` to ``end`` hours (both included)."""
    return [
        _reading(station, int(start * H) + k * 1200, **kw)
        for k in range(int((end - start) * 3) + 1)
    ]


def _detect(tmp_path: Path, events: Iterable[Event], definition: str = "noaa") -> list[Event]:
    program = blizzard_program(definition)
    kb = KnowledgeBase([_knowledge(tmp_path)], program=program)
    engine = Engine(program, knowledge=kb.current())
    found = []
    for event in sorted(events, key=lambda e: e.end):
        found += engine.push(event)
    return found


def _named(found: list[Event], name: str) -> list[tuple]:
    return [(*d.args, d.start, d.end) for d in found if d.name == name]


def test_one_warning_per_settling_and_a_new_settling_after_six_hours(tmp_path: Path) -> None:
    found = _detect(tmp_path, _storm("A", 0, 10))
    # Every reading starts a settling, but only two grow: one over 0..6 h (the window), the
    # next from the first reading after it.
    grown = [d for d in found if d.name == "blizzardSettling" and d.args[1] >= 2]
    assert sorted({d.start for d in grown}) == [0, 6 * H + 1200]
    assert max(d.end - d.start for d in grown) == 6 * H
    assert _named(found, "blizzardWarning") == [
        ("A", 0, 3 * H, 0, 3 * H),
        ("A", 6 * H + 1200, 9 * H + 1200, 6 * H + 1200, 9 * H + 1200),
    ]


def test_four_satisfying_readings_over_three_hours_are_needed(tmp_path: Path) -> None:
    calm = dict(wind=10.0, vis=10.0, cond="clear")
    a = [_reading("A", h * H) for h in range(4)] + [
        _reading("A", h * H + 1800, **calm) for h in range(3)
    ]
    d = [_reading("D", t) for t in (0, 5400, 3 * H)] + [_reading("D", 1800, **calm)]
    found = _detect(tmp_path, a + d)
    # A: the calm readings in between are skipped; the 4th reading, at 3 h, raises it.
    assert _named(found, "blizzardWarning") == [("A", 0, 3 * H, 0, 3 * H)]
    assert ("D", 3, 0, 3 * H, 0, 3 * H) in _named(found, "blizzardSettling")


def test_the_weakened_definition_needs_no_snow_and_less_wind(tmp_path: Path) -> None:
    windy = _storm("A", 0, 3, wind=20.0, vis=0.2, cond="clear")
    assert _named(_detect(tmp_path, windy, "noaa"), "blizzardWarning") == []
    assert _named(_detect(tmp_path, windy, "weakened"), "blizzardWarning") == [
        ("A", 0, 3 * H, 0, 3 * H)
    ]
    light = _storm("A", 0, 3, wind=40.0, vis=0.2, cond="light snow")
    assert _named(_detect(tmp_path, light, "noaa"), "blizzardWarning") == []


def test_an_area_grows_from_its_first_warning_with_neighbours_within_nine_hours(
    tmp_path: Path,
) -> None:
    events = (
        _storm("A", 0, 3)  # warning at 3 h: starts an area
        + _storm("B", 1, 4)  # near A, at 4 h: joins it
        + _storm("D", 1, 4)  # near no one: an area of its own, never a blizzard area
        + _storm("C", 5, 8)  # near A, at 8 h: joins
        + _storm("E", 7, 10)  # near A, 2 h after the area's latest warning: joins
        + _storm("B", 20, 23)  # 13 h after: a new area
    )
    found = _detect(tmp_path, events)
    assert [w[0] for w in _named(found, "blizzardWarning")] == ["A", "B", "D", "C", "E", "B"]
    assert sorted(_named(found, "areaSettling")) == [
        ("A", ("A",), 1, 3 * H, 0, 3 * H),
        ("A", ("B", "A"), 2, 4 * H, 0, 4 * H),
        ("A", ("C", "B", "A"), 3, 8 * H, 0, 8 * H),
        ("A", ("E", "C", "B", "A"), 4, 10 * H, 0, 10 * H),
        ("B", ("B",), 1, 23 * H, 20 * H, 23 * H),
        ("D", ("D",), 1, 4 * H, H, 4 * H),
    ]
    assert _named(found, "blizzardArea") == [
        ("A", ("B", "A"), 2, 0, 4 * H),
        ("A", ("C", "B", "A"), 3, 0, 8 * H),
        ("A", ("E", "C", "B", "A"), 4, 0, 10 * H),
    ]
    # Only A has a place nearby: reported once, when the area forms.
    assert _named(found, "blizzardPlace") == [("A", "A", IRI("urn:p:1"), "Pville", 5.5, 0, 4 * H)]


def test_an_unknown_definition_is_refused() -> None:
    with pytest.raises(ReasonerError, match="unknown blizzard definition 'mild'"):
        blizzard_program("mild")


def _at(text: str) -> int:
    return int(iso_to_epoch(f"2021-01-11T{text}:00Z"))


KOGD_PLACES = {
    "South Ogden",
    "Roy",
    "Ogden",
    "Clinton",
    "Clearfield",
    "Syracuse",
    "North Ogden",
    "Layton",
    "Kaysville",
}
KSLC_PLACES = {
    "Salt Lake City",
    "North Salt Lake",
    "South Salt Lake",
    "West Valley City",
    "Magna",
    "Taylorsville",
    "Bountiful",
    "Millcreek",
    "Kearns",
    "Murray",
    "Centerville",
    "East Millcreek",
    "Holladay",
}


@pytest.mark.parametrize("definition", ["noaa", "weakened"])
def test_the_sample_blizzard(sample_store: Path, sample_files, definition: str) -> None:
    kb = open_knowledge(sample_store, definition)
    result = replay(
        blizzard_program(definition), sample_files, knowledge=kb.current(), progress=False
    )
    assert result.events == 1296 and result.rejected == []
    assert _named(result.detections, "blizzardWarning") == [
        ("KOGD", _at("04:40"), _at("07:40"), _at("04:40"), _at("07:40")),
        ("KSLC", _at("05:40"), _at("08:40"), _at("05:40"), _at("08:40")),
        ("KEVW", _at("08:00"), _at("11:00"), _at("08:00"), _at("11:00")),
    ]
    assert _named(result.detections, "blizzardArea") == [
        ("KOGD", ("KSLC", "KOGD"), 2, _at("04:40"), _at("08:40")),
        ("KOGD", ("KEVW", "KSLC", "KOGD"), 3, _at("04:40"), _at("11:00")),
    ]
    places: dict[str, set[str]] = {}
    for anchor, station, _, name, km, start, _ in _named(result.detections, "blizzardPlace"):
        assert anchor == "KOGD" and start == _at("04:40") and 0 < km <= 20
        places.setdefault(station, set()).add(name)
    assert places == {"KOGD": KOGD_PLACES, "KSLC": KSLC_PLACES}  # none within 20 km of KEVW
    # The weakened definition lets KSLC's last storm reading (34.7 mph) count as well.
    kslc = [d for d in result.named("blizzardSettling") if d.args[0] == "KSLC"]
    assert max(d.args[1] for d in kslc) == (14 if definition == "noaa" else 15)
