"""``frozen()``: what a run freezes is thawed after it, and a caller's freeze is never thawed
by the library (``reasoner run`` in-process, a worker pool's fork)."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from connectors.cli import main
from reasoner.runtime.frozen import frozen
from reasoner.runtime.parallel import ParallelEngine

RULES = "c(X) <- a(X) SEQ b(X)."


@pytest.fixture
def thawed() -> Iterator[None]:
    """Start with nothing frozen (another test may have frozen), end so too."""
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_frozen_thaws_on_leaving_even_on_an_error(thawed: None) -> None:
    with pytest.raises(ValueError), frozen():
        assert gc.get_freeze_count() > 0
        raise ValueError
    assert gc.get_freeze_count() == 0


def test_frozen_inside_a_callers_freeze_leaves_it_frozen(thawed: None) -> None:
    gc.freeze()
    before = gc.get_freeze_count()
    with frozen():
        pass
    assert gc.get_freeze_count() >= before > 0


def test_reasoner_run_in_process_twice_leaves_nothing_frozen(
    thawed: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules, events = tmp_path / "r.event", tmp_path / "e.jsonl"
    rules.write_text(RULES, encoding="utf-8")
    lines = [{"name": "a", "args": [1], "time": 1}, {"name": "b", "args": [1], "time": 2}]
    events.write_text("".join(json.dumps(e) + "\n" for e in lines), encoding="utf-8")
    for _ in range(2):
        out = tmp_path / "out.jsonl"
        assert main(["run", str(rules), "--events", str(events), "--output", str(out)]) == 0
        assert gc.get_freeze_count() == 0
        assert json.loads(out.read_text(encoding="utf-8"))["name"] == "c"
    capsys.readouterr()


def test_a_worker_pool_keeps_a_callers_freeze(thawed: None) -> None:
    gc.freeze()
    before = gc.get_freeze_count()
    with ParallelEngine(RULES, workers=1) as engine:
        assert gc.get_freeze_count() >= before
        assert [e.name for e in engine.run([])] == []
    assert gc.get_freeze_count() >= before > 0
