"""The built rule parser is kept between processes in the user's cache directory."""

from __future__ import annotations

import sys
from pathlib import Path

import lark
import pytest

from reasoner.language.parser import build_parser, grammar_cache

RULES = "ce(X) <- a(X) SEQ b(X) WHERE X > 1.\n"


def test_the_parser_is_built_once_then_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = grammar_cache()
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    name = f"grammar-lark-{lark.__version__}-python-{python}.pickle"
    assert cache == str(tmp_path / "etalis-reasoner" / name)
    built = build_parser(cache).parse(RULES)
    written = Path(cache).read_bytes()
    Path(cache).touch()  # a load leaves the file as it is; a rebuild would write it again
    before = Path(cache).stat().st_mtime_ns
    assert build_parser(cache).parse(RULES) == built == build_parser(False).parse(RULES)
    assert Path(cache).stat().st_mtime_ns == before and Path(cache).read_bytes() == written


def test_a_broken_or_unwritable_cache_only_costs_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = build_parser(False).parse(RULES)
    broken = tmp_path / "broken.pickle"
    broken.write_bytes(b"not a pickle\n")
    assert build_parser(str(broken)).parse(RULES) == expected
    assert broken.read_bytes() != b"not a pickle\n"  # rebuilt and written again
    a_file = tmp_path / "file"
    a_file.write_text("", encoding="utf-8")
    assert build_parser(str(a_file / "grammar.pickle")).parse(RULES) == expected
    monkeypatch.setenv("XDG_CACHE_HOME", str(a_file))  # no directory can be made there
    assert grammar_cache() is False
