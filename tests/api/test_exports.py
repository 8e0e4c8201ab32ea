"""The rule API is importable from ``reasoner`` itself, loaded on first use."""

from __future__ import annotations

import subprocess
import sys

import reasoner
import reasoner.api


def test_every_api_name_is_exported_from_reasoner() -> None:
    assert set(reasoner.api.__all__) <= set(reasoner.__all__)
    for name in reasoner.__all__:
        value = getattr(reasoner, name)
        if name in reasoner.api.__all__:
            assert value is getattr(reasoner.api, name)


def test_import_reasoner_loads_neither_the_api_nor_the_parser() -> None:
    code = (
        "import sys, reasoner\n"
        "print('reasoner.api' in sys.modules, 'lark' in sys.modules)\n"
        "reasoner.seq\n"
        "print('reasoner.api' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "True"]
