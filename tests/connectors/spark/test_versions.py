"""The driver's choice of a knowledge version per micro-batch (no Spark needed)."""

import pickle
from pathlib import Path

import pytest

from connectors.spark.versions import Versions
from reasoner.errors import ReasonerError
from reasoner.knowledge.versions import KnowledgeBase

EX = "http://example.org/"


def _limit(path: Path, value: int) -> None:
    path.write_text(f"<{EX}s1> <{EX}limit> {value} .\n")


def _limit_in(folder: Path, name: str) -> object:
    """The limit in a version's file, as an executor reads it."""
    with open(folder / name, "rb") as f:
        knowledge = pickle.load(f)
    ((_, _, value),) = knowledge.solve("rdf", (None, None, None))
    return value


def test_a_batch_run_again_after_a_restart_takes_the_version_it_had(tmp_path: Path) -> None:
    data, folder = tmp_path / "limits.ttl", tmp_path / "knowledge"
    _limit(data, 30)
    kb = KnowledgeBase([data], entailment="none")
    versions = Versions(kb, folder)
    names = []
    for batch in range(6):
        if batch == 3:
            _limit(data, 40)
            kb.refresh()
        names.append(versions.choose(batch))
    assert names[:3] == [names[0]] * 3 and names[3:] == [names[3]] * 3
    assert names[0] != names[3]
    assert versions.choose(5) == names[3]  # (in the same process too)

    # The driver restarts (a new knowledge base, built from a changed store): Spark runs
    # batch 5 again, then batch 6.
    _limit(data, 50)
    versions = Versions(KnowledgeBase([data], entailment="none"), folder)
    assert versions.choose(5) == names[3]
    assert _limit_in(folder, names[3]) == 40
    with pytest.raises(ReasonerError, match="micro-batch 4 runs after micro-batch 5"):
        versions.choose(4)
    new = versions.choose(6)
    assert new not in names
    assert _limit_in(folder, new) == 50
    assert sorted(p.name for p in folder.iterdir()) == sorted([new, "chosen.json"])
    assert Versions(kb, folder).choose(6) == new
