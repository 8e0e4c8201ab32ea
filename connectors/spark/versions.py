"""The knowledge of a streaming query: one version per micro-batch, the same on every executor.

On the driver the knowledge is a :class:`~reasoner.knowledge.versions.KnowledgeBase`,
refreshed as ``reasoner run --refresh-every`` refreshes it (:mod:`connectors.events.refresh`:
every N seconds and on SIGHUP, the next version built aside and swapped in atomically; a
failed refresh keeps the version in use). Spark calls ``foreachBatch`` before it computes
the micro-batch's stateful step, so there the driver picks the batch's version
(:meth:`Versions.choose`): it reads the current snapshot once; a version not shipped yet is
written to a file of the versions folder (its derived knowledge, pickled, written aside and
renamed; the folder, under the checkpoint, must be readable at the same path by every
executor), the batch and its version are recorded in the folder's ``chosen.json`` (replaced
atomically: a batch run again after a crash takes the version it had; when a new batch is
chosen for, the files of the other versions are removed), and the
version's name goes to the batch's tasks as a Spark local property. A Python worker reads a
version's file once (:func:`current`) and its engine takes it before the batch's first key,
so every event of a batch is evaluated against the same version.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from pathlib import Path
from typing import TYPE_CHECKING

from reasoner.aside import write_aside
from reasoner.errors import ReasonerError
from reasoner.knowledge.base import Knowledge

if TYPE_CHECKING:
    from reasoner.knowledge.versions import KnowledgeBase

#: The Spark local property naming a micro-batch's knowledge version.
PROPERTY = "reasoner.knowledge"

#: The versions folder's record of the last micro-batch chosen for and its version.
STATE = "chosen.json"


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
        self._state = folder / STATE
        self._names: dict[int, str] = {}  # the knowledge base's version -> its file's name
        #: the last micro-batch chosen for and its version (None: none yet)
        self.last: tuple[int, str] | None = None
        if self._state.exists():
            item = json.loads(self._state.read_text(encoding="utf-8"))
            self.last = int(item["batch"]), str(item["version"])

    def choose(self, batch: int) -> str:
        """The version micro-batch ``batch`` uses: the one it had when it ran before, else
        the current one.

        Raises:
            ReasonerError: ``batch`` is before the last batch chosen for (Spark runs again
                only the last one; the versions of the others are not kept).
        """
        if self.last is not None and batch <= self.last[0]:
            if batch < self.last[0]:
                raise ReasonerError(
                    f"micro-batch {batch} runs after micro-batch {self.last[0]}: "
                    "its knowledge version is not kept"
                )
            return self.last[1]
        snapshot = self.knowledge.current()
        name = self._names.get(snapshot.version)
        if name is None:
            name = self._write(snapshot.knowledge)
            self._names = {snapshot.version: name}
        state = json.dumps({"batch": batch, "version": name}).encode("utf-8")
        write_aside(self._state, lambda f: f.write(state))
        self.last = batch, name
        # Spark runs again only the batch that did not finish, this one: the versions of
        # the earlier batches are not needed any more.
        for old in self.folder.glob("*.pickle"):
            if old.name != name:
                old.unlink()
        return name

    def _write(self, knowledge: Knowledge) -> str:
        data = pickle.dumps(knowledge, protocol=pickle.HIGHEST_PROTOCOL)
        name = hashlib.sha256(data).hexdigest()[:24] + ".pickle"
        target = self.folder / name
        if not target.exists():
            write_aside(target, lambda f: f.write(data))
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
