"""Golden network dumps: each tests/fixtures/network/*.txt holds a title, rules and the
network they compile to (``--- rules`` and ``--- network`` sections). Adding a case is adding
a file; the test only reads them."""

from pathlib import Path

import pytest

from reasoner.compiler.compile import compile_program
from reasoner.language.parser import parse

CASES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "network").glob("*.txt"))


def _sections(path: Path) -> tuple[str, str, str]:
    title, rest = path.read_text(encoding="utf-8").split("\n--- rules\n", 1)
    rules, network = rest.split("\n--- network\n", 1)
    return title, rules, network


def test_there_are_cases() -> None:
    assert len(CASES) >= 8


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_rules_compile_to_the_golden_network(path: Path) -> None:
    title, rules, expected = _sections(path)
    assert title and not title.startswith("---")
    assert compile_program(parse(rules, path.name)).dump() == expected
