"""Every ``examples/*.py`` runs with the project's Python and prints what it promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

#: Lines (or parts of lines) each example must print; a new example adds its entry here.
EXPECTED: dict[str, list[str]] = {
    "stock_ticker_api.py": [
        'ce1 <- stock("GO", Pr1, Vol1) SEQ stock("GO", Pr2, Vol2) WHERE Pr1 < 1.2 * Pr2.',
        "ce4 <- (ce1 AND ce2).20.",
        "ce6 <- NOT(ce2).[ce1, ce1].",
        "ce6 from 1 to 4",
        *(f"ce{i}: " for i in range(1, 7)),
    ],
    "async_detections.py": [
        "jump of GO from 334 to 341 between t=2 and t=3",
        " jumps",
    ],
    "epsparql_query.py": [
        "{'order': 'http://ex.org/o1'} during [0, 0]\n"
        "{'order': 'http://ex.org/o2'} during [600, 600]\n"
        "{'order': 'http://ex.org/o1', 'courier': 'http://ex.org/ann'} during [0, 900]\n",
    ],
    "sparql_endpoint_query.py": [
        "windDuringFire(California, http://etalis.example.org/data/Observ_1, 60) at t=3600",
        "http://etalis.example.org/data/Observ_1 blew 60 at 1970-01-01T01:00:00Z: Hot, dry",
    ],
}


def test_every_example_has_expectations() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs_and_prints_its_detections(name: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        cwd=tmp_path,  # examples find their data by their own path, not the working directory
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    for expected in EXPECTED[name]:
        assert expected in done.stdout, f"{name} did not print {expected!r}:\n{done.stdout}"
