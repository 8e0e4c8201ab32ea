"""MesoWest readings as a SOSA observation stream: the same events and the same detections
from CSV, JSON lines, TriG and N-Quads (the sample has a multi-station blizzard)."""

import io
from collections.abc import Iterable
from pathlib import Path

import pytest
from rdflib import Dataset, Namespace

from connectors.cli import main
from connectors.events.jsonl import JsonLinesWriter, read_jsonl
from connectors.mesowest.reader import read_mesowest
from connectors.mesowest.sosa import reading_graph, write_sosa
from connectors.rdf.reader import GraphCounts, read_rdf
from reasoner.knowledge.versions import KnowledgeBase
from reasoner.language.loader import load_rules, parse_file
from reasoner.rdf.mapping import GraphMapping
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = sorted((ROOT / "data" / "mesowest" / "sample").glob("*.csv"))
MAPPING = ROOT / "rules" / "mesowest_sosa.event"
STORM_RULES = ROOT / "tests" / "fixtures" / "rdf" / "storm_readings.event"
BLIZZARD = [ROOT / "rules" / "blizzard.event", ROOT / "rules" / "blizzard_noaa.event"]
SOSA = Namespace("http://www.w3.org/ns/sosa/")
# rdflib's TriG parser warns about its own deprecated internals.
pytestmark = pytest.mark.filterwarnings(r"ignore::DeprecationWarning:rdflib\..*")
READING = Event.at(
    "sensor_reading",
    ("KSLC", 1610344800, 13.8, 96.0, 40.7, "none", 0.09, "heavy snow", 0.09),
    1610344800,
)


@pytest.fixture(scope="module")
def readings() -> list[Event]:
    return list(read_mesowest(*SAMPLE))


@pytest.fixture(scope="module")
def streams(readings: list[Event], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sample as JSON lines, TriG and N-Quads files."""
    folder = tmp_path_factory.mktemp("streams")
    paths = {"jsonl": folder / "sample.jsonl", "trig": folder / "sample.trig"}
    paths["nquads"] = folder / "sample.nq"
    with open(paths["jsonl"], "w", encoding="utf-8") as out:
        JsonLinesWriter(out).write_all(readings)
    for syntax in ("trig", "nquads"):
        with open(paths[syntax], "w", encoding="utf-8") as out:
            assert write_sosa(out, readings, syntax) == len(readings)
    return paths


@pytest.fixture(scope="module")
def sosa_events(streams: dict[str, Path]) -> dict[str, list[Event]]:
    """The TriG and N-Quads streams read back through rules/mesowest_sosa.event."""
    return {syntax: _sosa(streams[syntax]) for syntax in ("trig", "nquads")}


def _sosa(path: Path, time_property: str | None = None) -> list[Event]:
    counts, rejected = GraphCounts(), []
    options = {"time_property": time_property} if time_property else {}
    events = list(
        read_rdf(
            path,
            mapping=GraphMapping(parse_file(MAPPING)),
            counts=counts,
            on_reject=rejected.append,
            **options,
        )
    )
    assert rejected == [] and counts.unmatched == 0
    return events


def _detect(rules: Iterable[Path], events: Iterable[Event], knowledge: Path | None) -> list[Event]:
    program = load_rules(list(rules))
    kb = None if knowledge is None else KnowledgeBase([knowledge], program=program).current()
    engine = Engine(program, knowledge=kb)
    return [d for e in events for d in engine.push(e)] + engine.flush()


def test_a_reading_is_one_graph_of_sosa_observations() -> None:
    dataset = Dataset()
    dataset.parse(data=reading_graph(READING), format="trig")
    graph_name = "https://w3id.org/etalis-reasoner/mesowest/KSLC/2021-01-11T06:00:00Z"
    (graph,) = [g for g in dataset.graphs() if str(g.identifier) == graph_name]
    results = {
        str(p).rsplit("#", 1)[-1]: o.toPython()
        for obs in graph.subjects(predicate=None, object=None, unique=True)
        for p in graph.objects(obs, SOSA.observedProperty)
        for o in graph.objects(obs, SOSA.hasSimpleResult)
    }
    assert results == {
        "AirTemperature": 13.8,
        "RelativeHumidity": 96.0,
        "WindSpeed": 40.7,
        "Visibility": 0.09,
        "WeatherCondition": "heavy snow",
        "Precipitation": 0.09,
    }  # no gust: `none` has no observation
    with pytest.raises(ValueError, match="not a sensor_reading"):
        reading_graph(Event.at("sensor_reading", ("KSLC",), 0))


def test_the_rdf_stream_gives_the_csv_events(
    readings: list[Event], streams: dict[str, Path], sosa_events: dict[str, list[Event]]
) -> None:
    assert sosa_events["trig"] == readings
    assert sosa_events["nquads"] == readings
    assert _sosa(streams["trig"], str(SOSA.resultTime)) == readings  # the time inside graphs


def test_storm_rules_detect_the_same_from_csv_json_trig_and_nquads(
    readings: list[Event], streams: dict[str, Path], sosa_events: dict[str, list[Event]]
) -> None:
    expected = _detect([STORM_RULES], readings, None)
    assert {"stormy", "lasting", "gustless"} <= {d.name for d in expected}
    assert _detect([STORM_RULES], read_jsonl(streams["jsonl"]), None) == expected
    for events in sosa_events.values():
        assert _detect([STORM_RULES], events, None) == expected


def test_blizzard_rules_detect_the_same_from_csv_and_rdf(
    readings: list[Event], sosa_events: dict[str, list[Event]], tmp_path: Path
) -> None:
    # Station ids and neighbours as the knowledge build would give them (all six near).
    om = "http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#"
    er = "https://w3id.org/etalis-reasoner/ns#"
    ids = sorted({r.args[0] for r in readings})
    lines = [f'<urn:s:{s}> <{om}ID> "{s}" .' for s in ids]
    lines += [f"<urn:s:{a}> <{er}nearStation> <urn:s:{b}> ." for a in ids for b in ids if a != b]
    knowledge = tmp_path / "stations.nt"
    knowledge.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = _detect(BLIZZARD, readings, knowledge)
    assert any(d.name == "blizzardWarning" for d in expected)
    assert _detect(BLIZZARD, sosa_events["trig"], knowledge) == expected


def test_reasoner_run_reads_rdf_and_writes_trig(
    streams: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["run", str(STORM_RULES), str(MAPPING), "--only", "lasting"]
    json_out, trig_out = tmp_path / "lasting.jsonl", tmp_path / "lasting.trig"
    from_json = ["--events", str(streams["jsonl"]), "--output", str(json_out)]
    assert main([*common, *from_json]) == 0
    from_rdf = ["--format", "rdf", "--events", str(streams["trig"]), "--output", str(trig_out)]
    assert (
        main([*common, *from_rdf, "--rdf-time", "sosa:resultTime", "--output-format", "trig"]) == 0
    )
    summary = capsys.readouterr().err.splitlines()[-1]
    assert summary.endswith("0 graphs matched no mapping")
    detections = list(read_jsonl(json_out))
    assert detections
    dataset = Dataset()
    dataset.parse(trig_out, format="trig")
    named = [g for g in dataset.graphs() if len(g)]
    assert len(named) == len(detections)


def test_default_graph_data_not_about_a_graph_is_a_rejected_line() -> None:
    rejected = []
    text = reading_graph(READING) + '<urn:x> <urn:p> "stray" .\n'
    events = list(
        read_rdf(
            io.StringIO(text), mapping=GraphMapping(parse_file(MAPPING)), on_reject=rejected.append
        )
    )
    assert events == [READING]
    assert [r.line for r in rejected] == [text.count("\n")]


def test_mesowest_to_rdf_writes_the_stream(tmp_path: Path) -> None:
    out = tmp_path / "kslc.nq"
    assert (
        main(["mesowest", "to-rdf", str(SAMPLE[-1]), "--out", str(out), "--syntax", "nquads"]) == 0
    )
    assert _sosa(out) == list(read_mesowest(SAMPLE[-1]))
