"""Every rules/*.event parses, checks clean, prints back to itself, and matches its AST dump.

The tests only read tests/fixtures/ast/*.txt; after an intended change, rewrite them with
``python scripts/update_golden.py`` and review the diff.
"""

from pathlib import Path

import pytest

from reasoner.language.ast import dump
from reasoner.language.check import check
from reasoner.language.loader import parse_file
from reasoner.language.parser import parse
from reasoner.language.printer import to_source

ROOT = Path(__file__).resolve().parents[2]
RULES = sorted((ROOT / "rules").glob("*.event"))
GOLDEN = ROOT / "tests" / "fixtures" / "ast"


def test_there_are_rule_files() -> None:
    assert len(RULES) >= 8


@pytest.mark.parametrize("path", RULES, ids=lambda p: p.name)
def test_rule_file_matches_golden_dump(path: Path) -> None:
    program = parse_file(path)
    actual = dump(program)
    golden = GOLDEN / (path.stem + ".txt")
    assert golden.exists(), f"no golden file {golden.name}: run scripts/update_golden.py"
    assert actual == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", RULES, ids=lambda p: p.name)
def test_rule_file_checks_clean_and_round_trips(path: Path) -> None:
    program = parse_file(path)
    assert [d.render() for d in check(program)] == []
    assert parse(to_source(program)) == program
