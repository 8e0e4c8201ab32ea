"""benchmarks/bench_rdf_input.py --quick: every input gives the same events and detections."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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
    assert all(d == detections[0] for d in detections) and detections[0]["lasting"] > 0
    assert readings["events"] > 20 * 144  # each reading is a graph of over 20 triples
