"""Parsed rule files are kept in the user's cache directory; a stale or damaged entry is
parsed again."""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Iterator
from pathlib import Path

import pytest

from reasoner.errors import RuleSyntaxError
from reasoner.language import loader, parser
from reasoner.language.ast import Program, dump
from reasoner.language.facts import Scan
from reasoner.language.loader import cache_dir, load_rules, parse_file
from reasoner.runtime.engine import Engine

RULES = "ce(X) <- a(X) SEQ b(X) WHERE X > 1.\n"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[str]]:
    """The texts the parser is asked to parse (a hit asks nothing); the cache in tmp_path."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    asked: list[str] = []
    real = parser.parse

    def counting(text: str, file: str | None = None, found: Scan | None = None) -> Program:
        asked.append(text)
        return real(text, file, found)

    monkeypatch.setattr(parser, "parse", counting)
    loader._parser_digest.cache_clear()
    yield asked
    loader._parser_digest.cache_clear()  # (a test may have changed what it reads)


def _rules(tmp_path: Path, text: str = RULES) -> Path:
    path = tmp_path / "rules.event"
    path.write_text(text, encoding="utf-8")
    return path


def _entry() -> Path:
    folder = cache_dir()
    assert folder is not None
    (entry,) = folder.iterdir()
    return entry


def test_a_file_is_parsed_once_then_loaded(parses: list[str], tmp_path: Path) -> None:
    path = _rules(tmp_path)
    first = parse_file(path)
    second = parse_file(path)
    assert parses == [RULES]
    assert second == first == parser.parse(RULES, str(path))
    assert dump(second) == dump(parser.parse(RULES, str(path)))
    assert second.source == RULES
    span = second.event_rules[0].span
    assert span == first.event_rules[0].span  # the file and place
    assert span is not None and (span.file, span.line, span.column) == (str(path), 1, 1)


def test_a_changed_file_is_parsed_again(parses: list[str], tmp_path: Path) -> None:
    path = _rules(tmp_path)
    parse_file(path)
    changed = RULES.replace("X > 1", "X > 2")
    path.write_text(changed, encoding="utf-8")
    program = parse_file(path)
    assert parses == [RULES, changed]
    assert "Number(value=2)" in dump(program)
    assert len(list(cache_dir().iterdir())) == 1  # type: ignore[union-attr]  # one per path
    parse_file(path)
    assert parses == [RULES, changed]


def test_another_parser_or_format_misses(
    parses: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _rules(tmp_path)
    parse_file(path)
    # the key covers the parser's own source files: one more (or a changed one) misses
    monkeypatch.setattr(loader, "_PARSER_SOURCES", (*loader._PARSER_SOURCES, "messages.py"))
    loader._parser_digest.cache_clear()
    parse_file(path)
    assert parses == [RULES, RULES]
    monkeypatch.setattr(loader, "FORMAT", b"reasoner-program 0")
    loader._parser_digest.cache_clear()
    parse_file(path)
    assert parses == [RULES, RULES, RULES]


def test_without_the_parser_sources_nothing_is_cached(
    parses: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # e.g. an install of bytecode only: what the parse depends on cannot be read
    monkeypatch.setattr(loader, "_PARSER_SOURCES", ("no-such-module.py",))
    path = _rules(tmp_path)
    first, second = parse_file(path), parse_file(path)
    assert first == second == parser.parse(RULES, str(path))
    assert parses == [RULES, RULES, RULES]
    assert list(cache_dir().iterdir()) == []  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # cut short
        lambda data: data[:-5] + bytes([data[-5] ^ 1]) + data[-4:],  # one bit flipped
        lambda data: b"",
        lambda data: b"not a cache entry at all",
    ],
    ids=["truncated", "bit-flip", "empty", "garbage"],
)
def test_a_damaged_entry_is_parsed_again_and_rewritten(
    parses: list[str], tmp_path: Path, damage: object
) -> None:
    path = _rules(tmp_path)
    expected = parse_file(path)
    entry = _entry()
    good = entry.read_bytes()
    entry.write_bytes(damage(good))  # type: ignore[operator]
    assert parse_file(path) == expected
    assert parses == [RULES, RULES]
    assert entry.read_bytes() == good


def test_an_entry_holding_no_program_is_ignored(parses: list[str], tmp_path: Path) -> None:
    path = _rules(tmp_path)
    expected = parse_file(path)
    entry = _entry()
    header = entry.read_bytes().partition(b"\n")[0]
    body = pickle.dumps(["not", "a", "program"])
    # a well-formed entry under the right key, with a matching checksum
    forged = b" ".join(header.split(b" ")[:-1] + [hashlib.sha256(body).hexdigest().encode()])
    entry.write_bytes(forged + b"\n" + body)
    assert parse_file(path) == expected
    assert parses == [RULES, RULES]


def test_no_cache_directory_only_costs_the_parse(
    parses: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(a_file))  # no directory can be made there
    assert cache_dir() is None
    path = _rules(tmp_path)
    first, second = parse_file(path), parse_file(path)
    assert parses == [RULES, RULES]
    assert first == second


def test_a_syntax_error_is_reported_every_time(parses: list[str], tmp_path: Path) -> None:
    path = _rules(tmp_path, "ce(X) <- a(X) SEQ.\n")
    for _ in range(2):
        with pytest.raises(RuleSyntaxError, match="rules.event:1:"):
            parse_file(path)
    assert len(parses) == 2
    assert list(cache_dir().iterdir()) == []  # type: ignore[union-attr]


def test_only_the_latest_entries_are_kept(
    parses: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loader, "KEEP", 3)
    paths = []
    for i in range(5):
        folder = tmp_path / f"run{i}"  # e.g. a test's temporary folder
        folder.mkdir()
        paths.append(_rules(folder))
        parse_file(paths[-1])
        # written in this order (set, as the clock may not tell files written together apart)
        entry = cache_dir() / hashlib.sha256(str(paths[-1]).encode()).hexdigest()  # type: ignore[operator]
        os.utime(entry, ns=(i * 10**9, i * 10**9))
    assert len(list(cache_dir().iterdir())) == 3  # type: ignore[union-attr]
    for path in paths[2:]:  # the three written last are hits
        parse_file(path)
    assert len(parses) == 5
    parse_file(paths[0])  # removed: parsed again
    assert len(parses) == 6


def test_long_rule_text_is_parsed_once_then_loaded(parses: list[str]) -> None:
    text = "".join(f"c{i}(X) <- a{i}(X) SEQ b{i}(X).\n" for i in range(100))
    assert len(text) >= loader.CACHED_TEXT
    expected = dump(parser.parse(text))
    parses.clear()
    first, second = load_rules(text), Engine(text).program
    assert parses == [text]
    assert dump(second) == dump(first) == expected
    span = second.event_rules[99].span
    assert span is not None and (span.file, span.line, span.column) == (None, 100, 1)
    assert len(list(cache_dir().iterdir())) == 1  # type: ignore[union-attr]
    changed = text.replace("c99", "d99")
    assert load_rules(changed).event_rules[99].head.name == "d99"
    assert parses == [text, changed]
    assert len(list(cache_dir().iterdir())) == 2  # type: ignore[union-attr]  # one per text


def test_short_rule_text_is_parsed_every_time(parses: list[str]) -> None:
    # e.g. the rules actions add while a stream runs: no entry each
    assert len(RULES) < loader.CACHED_TEXT
    assert load_rules(RULES) == load_rules(RULES)
    assert parses == [RULES, RULES]
    assert list(cache_dir().iterdir()) == []  # type: ignore[union-attr]


def test_a_file_and_the_same_text_keep_their_own_spans(
    parses: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loader, "CACHED_TEXT", 1)
    path = _rules(tmp_path)
    from_file, from_text = parse_file(path), load_rules(RULES)
    assert parses == [RULES, RULES]
    assert (parse_file(path), load_rules(RULES)) == (from_file, from_text)
    assert parses == [RULES, RULES]
    spans = [p.event_rules[0].span for p in (parse_file(path), load_rules(RULES))]
    assert [s.file for s in spans if s is not None] == [str(path), None]
