"""Rewrite the golden AST dumps (tests/fixtures/ast/*.txt) from rules/*.event.

Run after an intended change to the parser or the dump format, then review the diff: the
tests only read these files, so a wrong dump is caught only if the diff is read.

Usage: python scripts/update_golden.py
"""

from __future__ import annotations

from pathlib import Path

from reasoner.language.ast import dump
from reasoner.language.loader import parse_file

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    target = ROOT / "tests" / "fixtures" / "ast"
    for path in sorted((ROOT / "rules").glob("*.event")):
        golden = target / (path.stem + ".txt")
        golden.write_text(dump(parse_file(path)), encoding="utf-8")
        print(golden.relative_to(ROOT))


if __name__ == "__main__":
    main()
