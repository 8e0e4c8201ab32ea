"""The benchmark harnesses run (``--quick``) and report the detections they should; their
speed is measured by running them, never asserted here."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

from connectors.generators.stock import stock_stream

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _quick(name: str, tmp_path: Path, *extra: str) -> list[dict]:
    out = tmp_path / f"{name}.json"
    subprocess.run(
        [sys.executable, str(BENCHMARKS / f"{name}.py"), "--quick", "--json", str(out), *extra],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.read_text(encoding="utf-8"))


def test_aggregate_benchmark_detects_one_aggregate_per_complex_event(tmp_path: Path) -> None:
    rows = _quick("bench_aggregates", tmp_path)
    assert {(r["workload"], r["window"]) for r in rows} == {
        (w, n) for w in ("SUM-AND", "AVG-SEQ") for n in (10, 100)
    }
    for row in rows:
        assert row["detections"] == {"a": 500, "out": 500}
        assert row["stored_at_end"] == row["window"]  # the window, and nothing else


#: ce1 and ce2 of rules/stock_ticker.event: a company's stock, then a later one of the same
#: company whose price is more than the first's / 1.2.
CE = (("ce1", "GO"), ("ce2", "MS"))


def _rises(company: str, policy: str, window: int | None) -> int:
    """ce1/ce2 detections on the benchmark's --quick stream, counted by brute force."""
    prices = [(e.end, e.args[1]) for e in stock_stream(2_000, seed=42) if e.args[0] == company]
    if policy == "recent":  # the latest earlier stock, consumed by nothing
        return sum(p1 < 1.20 * p2 for (_, p1), (_, p2) in itertools.pairwise(prices))
    if policy == "unrestricted":  # every earlier stock within the window
        return sum(
            p1 < 1.20 * p2 and t2 - t1 <= (window or t2)
            for (t1, p1), (t2, p2) in itertools.combinations(prices, 2)
        )
    waiting: list[int] = []  # chronological: the oldest fitting stock, consumed
    count = 0
    for _, price in prices:
        match = next((i for i, p1 in enumerate(waiting) if p1 < 1.20 * price), None)
        if match is not None:
            del waiting[match]
            count += 1
        waiting.append(price)
    return count


def test_stock_ticker_benchmark_runs_every_policy_with_bounded_state(tmp_path: Path) -> None:
    rows = _quick("bench_stock_ticker", tmp_path)
    assert [r["policy"] for r in rows] == ["chronological", "recent", "unrestricted"]
    for row in rows:
        expected = {ce: _rises(company, row["policy"], row["window"]) for ce, company in CE}
        assert {ce: row["detections"][ce] for ce, _ in CE} == expected
        # consumption keeps a few goals per node; the window of 20 a few per time unit
        assert row["stored_at_end"] < (1_000 if row["window"] else 100)
        # end to end through `reasoner run` (which wrote exactly the in-process detections)
        # (a quick stream may be too short to rate once start-up is subtracted)
        assert (row["startup_s"] is None) == (row["window"] is not None)
        if row["window"] is not None:
            assert row["end_to_end_events_per_s"] is None


def test_supply_chain_benchmark_follows_every_chain(tmp_path: Path) -> None:
    rows = _quick("bench_supply_chain", tmp_path)
    assert [(r["links"], r["variant"]) for r in rows] == [
        (n, v) for n in (20, 50) for v in ("delivery", "delivery2")
    ]
    for row in rows:
        assert row["detections"] == row["links"] + 1  # one delivery per shipment
        assert row["stored_at_end"] == 1  # recent keeps the latest delivery only


def test_memory_benchmark_samples_flat_state_and_plots_it(tmp_path: Path) -> None:
    png = tmp_path / "memory.png"
    rows = _quick("bench_memory", tmp_path, "--plot", str(png))
    assert [r["policy"] for r in rows] == ["chronological", "recent", "unrestricted"]
    for row in rows:
        assert len(row["samples"]) == 100
        # flat: what the rules need (a few dozen) plus what accumulates between two sweeps,
        # which wait until the work since the last one pays for them (measured: at most 332,
        # unrestricted under a window of 5, over 20,000 events)
        assert row["max_stored"] < 500
    assert png.read_bytes().startswith(b"\x89PNG")


def test_scaleout_benchmark_checks_workers_against_one_engine(tmp_path: Path) -> None:
    # (the benchmark itself stops if 1 or 2 workers differ from the single engine)
    # (and that reasoner run, one process and --workers 2, writes the same detections)
    rows = _quick("bench_scaleout", tmp_path)
    names = ["mesowest (100 stations)", "archive (100 stations x 1 days)", "ticker (100 companies)"]
    lines = [
        f"ticker as JSON lines, {title} (100 companies, 5,000 quotes)"
        for title in ("ticker rules", "rises only")
    ]
    assert [r["workload"] for r in rows] == names + lines
    for row in rows[3:]:  # (each path's detections checked equal by the benchmark)
        assert row["detections"] > 0 and len(row["--workers 2"]) == len(row["one process"]) == 1
    rows = rows[:3]
    assert rows[0]["events"] == rows[1]["events"] == 100 * 72  # a reading every 20 minutes
    assert (
        rows[1]["detections"] > 0 and rows[1]["workers_2_wall_s"] and rows[1]["one_process_wall_s"]
    )
    for row in rows[::2]:
        assert row["workers_1_events_per_s"] > 0 and row["workers_2_events_per_s"] > 0
        assert row["snapshot_bytes"] > 0 and row["checkpoint_every"] == 1_000


def test_scaleout_benchmark_runs_each_worker_count_asked_for(tmp_path: Path) -> None:
    # (the benchmark stops if a path's detections differ from one process's)
    (row,) = _quick("bench_scaleout", tmp_path, "--only", "archive", "--workers", "1,3")
    assert row["detections"] > 0 and "workers_2_wall_s" not in row
    for key in ("one_process", "workers_1", "workers_3"):
        assert len(row[f"{key}_wall_s"]) == len(row[f"{key}_cpu_s"]) == 1


def test_epsparql_benchmark_query_detects_what_its_rules_and_brute_force_do(
    tmp_path: Path,
) -> None:
    rows = {r["workload"]: r for r in _quick("bench_epsparql", tmp_path)}
    ticks = [(e.end, e.args[0], e.args[1]) for e in stock_stream(2_000, seed=42)]
    pairs = [(a, b) for a, b in itertools.combinations(ticks, 2) if a[1] == b[1] and a[0] < b[0]]
    rises = sum(b[2] > a[2] + 5 and b[0] - a[0] <= 10 for a, b in pairs)
    assert rows["rise"]["query_detections"] == rows["rise"]["rules_detections"] == {"q": rises}
    highs = sum(p > 900 for _, _, p in ticks)
    falls = sum(a[2] > 900 and b[2] < 880 and b[0] - a[0] <= 20 for a, b in pairs)
    expected = {"q": falls, "q_2": highs}
    assert rows["optional"]["query_detections"] == rows["optional"]["rules_detections"] == expected


def test_startup_benchmark_runs_with_and_without_the_parsed_rules_cached(tmp_path: Path) -> None:
    rows = _quick("bench_startup", tmp_path)
    # (it fails by itself when a run with the rules cached writes the cache again)
    assert [(r["rules"], r["runs"], r["rule_files_cached"]) for r in rows] == [
        ("stock ticker", 2, 1),
        ("blizzard (NOAA)", 2, 2),
        ("blizzard + facts", 2, 3),
    ]


def test_explain_benchmark_detects_the_same_in_every_mode(tmp_path: Path) -> None:
    rows = _quick("bench_explain", tmp_path)
    assert [r["mode"] for r in rows] == ["off", "provenance", "explain", "explain+why"]
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from bench_explain import stream
    finally:
        sys.path.remove(str(BENCHMARKS))
    events = stream(5_000, 23)
    cats = [(e.end, int(e.args[0][1:])) for e in events if e.name == "cat"]
    planes = [(e.end, int(e.args[1][1:])) for e in events if e.name == "airplane"]
    # a warning per cat and later airplane within 60 whose point precedes the cat's on the chain
    warnings = sum(0 < t2 - t1 <= 60 and p < c for t1, c in cats for t2, p in planes)
    for row in rows:
        assert row["detections"]["warning"] == warnings
        assert row["detections"] == rows[0]["detections"]


def test_dynamic_rules_benchmark_detects_the_same_after_changes(tmp_path: Path) -> None:
    (row,) = _quick("bench_dynamic_rules", tmp_path)
    assert row["rules"] == 20
    # one c<i> per a<i>(j), b<i>(j) pair of the 500, with or without the rules changed around
    assert (row["detections_unchanged"], row["detections_after_changes"]) == (500, 500)


def test_keys_benchmark_times_both_rule_sets(tmp_path: Path) -> None:
    rows = _quick("bench_keys", tmp_path)
    assert [(r["rules"], r["keys"]) for r in rows] == [("stock ticker", 20), ("blizzard", 20)]
    assert all(r["engine_of_us"] > 0 and r["engine_rules_ms"] > 0 for r in rows)


def test_profile_workers_reports_the_router_and_each_worker(tmp_path: Path) -> None:
    root = BENCHMARKS.parent
    samples = sorted((root / "data/mesowest/sample").glob("*.csv"))
    events = [arg for path in samples for arg in ("--events", str(path))]
    rules = [str(root / "rules" / name) for name in ("blizzard.event", "blizzard_noaa.event")]
    argv = ["run", *rules, "--format", "mesowest", *events, "--workers", "2"]
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "profile_workers.py"), "--profile", str(tmp_path)]
        + ["--", *argv, "--output", str(tmp_path / "out.jsonl")],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = done.stderr.splitlines()
    # (each worker prints as its share ends, the router once the run is over)
    assert sum(line.startswith("worker ") for line in lines) == 2
    assert lines[-1].startswith("router: ") and "1296 events" in done.stderr
    assert (tmp_path / "router").exists()  # (the workers' profiles: worker.PID beside it)
