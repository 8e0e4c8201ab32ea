"""The knowledge of a streaming query: one version per micro-batch, the same on every executor.

On the driver the knowledge is a :class:`~reasoner.knowledge.snapshot.KnowledgeBase`,
refreshed as ``reasoner run --refresh-every`` refreshes it (:mod:`connectors.events.refresh`:
every N seconds and on SIGHUP, the next version built aside and swapped in atomically; a
failed refresh keeps the version in use). Spark calls ``foreachBatch`` before it computes
the micro-batch's stateful step, so there the driver picks the batch's version
(:meth:`Versions.choose`): it reads the current snapshot once; a version not shipped yet is
written to a file of the versions folder (its derived knowledge, pickled, written aside and
renamed; the folder, under the checkpoint, must be readable at the same path by every
executor), the choice is appended to the folder's ``versions.jsonl`` (a batch run again after a
crash takes the version it had; the earlier versions' files are then removed), and the
version's name goes to the batch's tasks as a Spark local property. A Python worker reads a
version's file once (:func:`current`) and its engine takes it before the batch's first key,
so every event of a batch is evaluated against the same version.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from reasoner.errors import ReasonerError
from reasoner.knowledge.base import Knowledge

if TYPE_CHECKING:
    from reasoner.knowledge.snapshot import KnowledgeBase

#: The Spark local property naming a micro-batch's knowledge version.
PROPERTY = "reasoner.knowledge"


class Versions:
    """The driver's side: which version each micro-batch uses.

    Args:
        knowledge: the knowledge base (refreshed elsewhere).
        folder: where the versions are written (created).
    """

    def __init__(self, knowledge: KnowledgeBase, folder: Path) -> None:
        self.knowledge = knowledge
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self._log = folder / "versions.jsonl"
        self._names: dict[int, str] = {}  # the knowledge base's version -> its file's name
        self.chosen: list[tuple[int, str]] = []  # (first batch, version), as logged
        if self._log.exists():
            for line in self._log.read_text(encoding="utf-8").splitlines():
                item = json.loads(line)
                self.chosen.append((int(item["batch"]), str(item["version"])))

    def choose(self, batch: int) -> str:
        """The version micro-batch ``batch`` uses: the one it had when it ran before, else
        the current one (logged when it differs from the previous batch's)."""
        for first, chosen in reversed(self.chosen):
            if first == batch:
                return chosen
        snapshot = self.knowledge.snapshot()
        name = self._names.get(snapshot.version)
        if name is None:
            name = self._names[snapshot.version] = self._write(snapshot.knowledge)
        if not self.chosen or self.chosen[-1][1] != name:
            with open(self._log, "a", encoding="utf-8") as log:
                log.write(json.dumps({"batch": batch, "version": name}) + "\n")
                log.flush()
                os.fsync(log.fileno())
            self.chosen.append((batch, name))
            # Spark runs again only the batch that did not finish, this one: the versions
            # of the earlier batches are not needed any more.
            for old in self.folder.glob("*.pickle"):
                if old.name != name:
                    old.unlink()
        return name

    def _write(self, knowledge: Knowledge) -> str:
        data = pickle.dumps(knowledge, protocol=pickle.HIGHEST_PROTOCOL)
        name = hashlib.sha256(data).hexdigest()[:24] + ".pickle"
        target = self.folder / name
        if not target.exists():
            with tempfile.NamedTemporaryFile(dir=self.folder, prefix=".", delete=False) as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(f.name, target)
        return name


#: This Python worker's version: (folder, name) and the knowledge read from its file.
_loaded: tuple[tuple[str, str], Knowledge] | None = None


def current(folder: str) -> Knowledge:
    """On an executor: the knowledge of the running task's micro-batch (read once per
    worker and version).

    Raises:
        ReasonerError: when the task names no version (a query started without
            :class:`Versions`) or its file cannot be read.
    """
    global _loaded
    from pyspark import TaskContext

    context = TaskContext.get()
    name = None if context is None else context.getLocalProperty(PROPERTY)
    if name is None:
        raise ReasonerError("this micro-batch names no knowledge version")
    if _loaded is None or _loaded[0] != (folder, name):
        try:
            with open(Path(folder) / name, "rb") as f:
                _loaded = (folder, name), pickle.load(f)
        except OSError as error:
            raise ReasonerError(f"cannot read knowledge version {name}: {error}") from error
    return _loaded[1]
