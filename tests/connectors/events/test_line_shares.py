"""A worker's reading of JSON-lines input (connectors/events/line_shares.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from connectors.events import line_shares
from connectors.events.inputs import Reading


def _readings(monkeypatch: pytest.MonkeyPatch) -> list[Reading]:
    """The readings ``LineReader.open`` opens, kept (so that only an explicit close ends
    them, not their last reference dropped)."""
    kept: list[Reading] = []
    opened = line_shares.read_share

    def read_share(*args: Any) -> Reading:
        kept.append(opened(*args))
        return kept[-1]

    monkeypatch.setattr(line_shares, "read_share", read_share)
    return kept


@pytest.mark.parametrize("second", ["b.jsonl", "missing.jsonl"])
def test_open_closes_the_files_it_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, second: str
) -> None:
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_text('{"name": "a", "time": 1}\n{"name": "a", "time": 2}\n')
    paths = [str(tmp_path / "a.jsonl"), str(tmp_path / second)]
    kept = _readings(monkeypatch)
    shares = line_shares.line_sources("jsonl", paths, 2, {}, {"a": {0}}, None)
    assert shares is not None
    answer = shares[0]().open()
    assert (answer is None) == (second == "b.jsonl")
    assert kept
    for reading in kept:  # each reading's generator ran to its end or was closed
        assert getattr(reading.events, "gi_frame", None) is None


def test_a_share_stopped_early_closes_its_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text("".join(f'{{"name": "a", "args": [{t}], "time": {t}}}\n' for t in range(50)))
    kept: list[Iterator[Any]] = []
    blocks = line_shares.read_jsonl_blocks

    def read_jsonl_blocks(*args: Any) -> Iterator[Any]:
        kept.append(blocks(*args, size=64))
        return kept[-1]

    monkeypatch.setattr(line_shares, "read_jsonl_blocks", read_jsonl_blocks)
    shares = line_shares.line_sources("jsonl", [str(path)], 1, {}, {"a": {1}}, None)
    assert shares is not None
    reader = shares[0]()
    assert reader.open() is None
    chunks = reader.chunks(1)
    next(chunks)
    chunks.close()  # (a share halted)
    assert kept
    assert all(getattr(blocks, "gi_frame", None) is None for blocks in kept)
