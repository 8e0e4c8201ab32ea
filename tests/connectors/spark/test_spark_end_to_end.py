"""End to end: ``reasoner knowledge build`` on the shipped sample, then ``reasoner run --store``
with rules/places_near_station.event (seed 004: which places are near the station that warned).
"""

import json
from pathlib import Path

import pytest

from connectors.cli import main

ROOT = Path(__file__).resolve().parents[3]
GEONAMES = ROOT / "data" / "geonames" / "US-mountain-cities15000.txt"
STATIONS = ROOT / "data" / "stations" / "us-mountain-stations.csv"
RULES = ROOT / "rules" / "places_near_station.event"

# Station -> {place name: km} within 20 km; checked against geopy by the located-near job's
# brute-force test. KJAC (Jackson, WY) has none: the sample's cities have 15,000+ people.
PLACES = {
    "KSLC": {
        "Salt Lake City": 7.937,
        "North Salt Lake": 8.967,
        "South Salt Lake": 10.807,
        "West Valley City": 10.926,
        "Magna": 13.671,
        "Taylorsville": 13.799,
        "Bountiful": 13.883,
        "Millcreek": 14.202,
        "Kearns": 14.349,
        "Murray": 15.479,
        "Centerville": 16.925,
        "East Millcreek": 17.207,
        "Holladay": 18.536,
    },
    "KGTF": {"Great Falls": 5.602},
    "KJAC": {},
    "KOGD": {
        "South Ogden": 3.446,
        "Roy": 3.901,
        "Ogden": 4.469,
        "Clinton": 6.942,
        "Clearfield": 9.433,
        "Syracuse": 12.536,
        "North Ogden": 13.189,
        "Layton": 15.369,
        "Kaysville": 18.799,
    },
}
# (station, seconds): KOGD is 45 km from KSLC and 288 km from KJAC; KJAC is 329 km from KSLC.
WARNINGS = [("KSLC", 0), ("KGTF", 600), ("KJAC", 1200), ("KOGD", 1800), ("KSLC", 20000)]


@pytest.fixture(scope="module")
def store(spark, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("e2e") / "kb"
    code = main(
        ["knowledge", "build", "--out", str(out)]
        + ["--stations", str(STATIONS), "--geonames", str(GEONAMES)]
    )
    assert code == 0
    return out


def test_rules_ask_the_built_store_which_places_are_near_a_warning(store, tmp_path) -> None:
    events = tmp_path / "warnings.jsonl"
    events.write_text(
        "".join(json.dumps({"name": "warning", "args": [s], "time": t}) + "\n" for s, t in WARNINGS)
    )
    output = tmp_path / "detections.jsonl"
    code = main(
        ["run", str(RULES), "--store", str(store), "--events", str(events)]
        + ["--output", str(output)]
    )
    assert code == 0
    found = [json.loads(line) for line in output.read_text().splitlines()]
    by_name: dict[str, list[dict]] = {}
    for d in found:
        by_name.setdefault(d["name"], []).append(d)
    assert set(by_name) == {"placeNearWarning", "populatedWarning", "areaWarning"}

    places: dict[tuple[str, int], dict[str, float]] = {}
    for d in by_name["placeNearWarning"]:
        station, place, name, km = d["args"]
        assert d["start"] == d["end"]
        assert place["iri"].startswith("https://sws.geonames.org/")
        places.setdefault((station, d["end"]), {})[name] = km
    expected = {(s, t): PLACES[s] for s, t in WARNINGS if PLACES[s]}
    assert places == expected
    slc = [d["args"][1] for d in by_name["placeNearWarning"] if d["args"][2] == "Salt Lake City"]
    assert slc == [{"iri": "https://sws.geonames.org/5780993/"}] * 2

    # Only KSLC is near a place of 100,000+ (Salt Lake City, West Valley City).
    assert [(d["args"], d["end"]) for d in by_name["populatedWarning"]] == [
        (["KSLC"], 0),
        (["KSLC"], 20000),
    ]
    # Neighbours within 300 km, warning within 3 hours of each other.
    assert [(d["args"], d["start"], d["end"]) for d in by_name["areaWarning"]] == [
        (["KSLC", "KOGD"], 0, 1800),
        (["KJAC", "KOGD"], 1200, 1800),
    ]
