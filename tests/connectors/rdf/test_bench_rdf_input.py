"""benchmarks/bench_rdf_input.py --quick: every input gives the same events and detections."""

import itertools
import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from connectors.mesowest.generator import DEFAULT_START, Storm, generate
from connectors.mesowest.reader import read_mesowest
from connectors.mesowest.station import load_stations

ROOT = Path(__file__).resolve().parents[3]


def _detections(folder: Path) -> dict[str, int]:
    """The benchmark's detections by brute force on its --quick data (2 stations, a day, an
    8-hour storm at the first from noon): ``stormy`` readings (wind >= 30 mph, visibility
    < 1 mile, snow) and ``lasting`` pairs of them at one station 2 to 3 hours apart."""
    table = load_stations()[:2]
    storm = Storm(table[0].id, DEFAULT_START + timedelta(days=0.5), hours=8)
    stormy = [
        (r.args[0], r.end)
        for r in read_mesowest(*generate(folder, table, 1.0, 0, [storm]))
        if r.args[4] != "none"
        and r.args[4] >= 30
        and r.args[6] != "none"
        and r.args[6] < 1
        and r.args[7] in ("snow", "heavy snow")
    ]
    lasting = sum(
        s1 == s2 and 7200 <= t2 - t1 <= 10800
        for (s1, t1), (s2, t2) in itertools.product(stormy, repeat=2)
    )
    return {"lasting": lasting, "stormy": len(stormy)}


def test_quick_benchmark_counts_agree_across_inputs(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    script = ROOT / "benchmarks" / "bench_rdf_input.py"
    subprocess.run(
        [sys.executable, str(script), "--quick", "--json", str(out)],
        check=True,
        capture_output=True,
        cwd=ROOT,
    )
    rows = {row["input"]: row for row in json.loads(out.read_text(encoding="utf-8"))}
    assert set(rows) == {
        "mesowest csv",
        "json lines",
        "trig (sosa)",
        "n-quads (sosa)",
        "trig (triples)",
        "trig small graphs (triples)",
    }
    small = rows.pop("trig small graphs (triples)")
    assert (small["graphs"], small["events"]) == (2_000, 7_035)  # 2-5 triples each, seed 1
    assert small["detections"] == {"high": 357}  # the benchmark counts them in the events too
    readings = rows.pop("trig (triples)")
    events = {row["events"] for row in rows.values()}
    detections = [row["detections"] for row in rows.values()]
    assert len(events) == 1 and events.pop() == 2 * 72  # 2 stations x 1 day, every 20 minutes
    assert detections == [_detections(tmp_path / "brute")] * len(detections)
    assert readings["events"] > 20 * 144  # each reading is a graph of over 20 triples
