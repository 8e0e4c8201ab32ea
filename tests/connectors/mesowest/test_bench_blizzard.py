"""benchmarks/bench_blizzard.py --quick: the harness runs and counts what it should (no timing)."""

import importlib.util
import json
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "benchmarks" / "bench_blizzard.py"


def test_quick_run_counts_detections_per_level(
    sample_store: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(str(BENCH.parent))  # as when run: it imports its siblings
    spec = importlib.util.spec_from_file_location("bench_blizzard", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path / "bench.json"
    bench.main(["--quick", "--store", str(sample_store), "--json", str(out)])
    rows = json.loads(out.read_text())
    assert [(r["definition"], r["level"]) for r in rows] == [
        (d, level) for d in ("noaa", "weakened") for level in bench.LEVELS
    ]
    assert [r["readings"] for r in rows] == [1296] * len(rows)
    settling, area, places = (r["detections"] for r in rows[:3])  # NOAA
    assert settling["blizzardWarning"] == 8 and "areaSettling" not in settling
    assert area["blizzardArea"] == 5 and "blizzardPlace" not in area
    assert places["blizzardPlace"] == 51
    # Each level adds rules and changes nothing the lower level detects.
    assert area.items() >= settling.items() and places.items() >= area.items()
    assert "noaa      area+places" in capsys.readouterr().out
