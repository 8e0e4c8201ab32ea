"""A source file is read whole as Spark listed it: one that changed since (written in place,
not renamed in) stops the query rather than being read in part."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from connectors.spark.sources import Keys, SourceError, listed_rows


def _listing(path: Path) -> tuple[str, int, datetime]:
    """The path, size and time as Spark's file source lists them (milliseconds)."""
    found = path.stat()
    listed = datetime.fromtimestamp(found.st_mtime_ns // 10**6 / 1000, UTC)
    return path.as_uri(), found.st_size, listed


def test_a_file_is_read_as_listed_and_a_file_changed_since_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"name": "a", "args": [1], "time": 1}\n', encoding="utf-8")
    os.utime(path, (1_700_000_000, 1_700_000_000))
    uri, size, listed = _listing(path)
    rows = listed_rows(uri, size, listed, "jsonl", Keys((), True), {})
    assert [(r[1], r[2], r[6]) for r in rows] == [(str(path), 1, 1_000_000)]
    with path.open("a", encoding="utf-8") as f:  # still being written
        f.write('{"name": "a", "args": [2], "t')
    with pytest.raises(SourceError, match=f"^{path}: changed after it was taken into a micro"):
        listed_rows(uri, size, listed, "jsonl", Keys((), True), {})
    os.utime(path, (1_700_000_000, 1_700_000_000))  # the same time, another size
    with pytest.raises(SourceError, match=r"\(.* bytes listed, .* now\)"):
        listed_rows(uri, size, listed, "jsonl", Keys((), True), {})
