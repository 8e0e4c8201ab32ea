"""``reasoner run --checkpoint DIR``: resumable replays.

A checkpoint is one file, ``DIR/checkpoint``, in the engine snapshot format
(:mod:`reasoner.runtime.checkpoint`): the engine's snapshot, how many input events were
taken, how many bytes of output were written (flushed to disk first) and the run's counters.
It is replaced atomically (written aside, synced, renamed), so a crash at any moment leaves
the previous checkpoint or the new one. A run that finds a checkpoint resumes: the engine is
restored, the output cut back to the recorded length, and the input events already taken are
read again and skipped. A finished run removes its checkpoint. With ``--watch-rules`` it also
holds the rule files' history (their texts at the start and every reload since): the files
may change while the run goes on, and the resumed engine is rebuilt from that history.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reasoner.aside import write_aside
from reasoner.errors import ReasonerError, SnapshotError
from reasoner.runtime.checkpoint import pack, unpack

FILE = "checkpoint"


@dataclass(frozen=True, slots=True)
class Every:
    """How often to checkpoint: every ``events`` input events or every ``seconds``."""

    events: int | None = None
    seconds: float | None = None

    @staticmethod
    def parse(text: str) -> Every:
        """``"10000"`` (events) or ``"30s"`` (seconds).

        >>> Every.parse("30s"), Every.parse("500")
        (Every(events=None, seconds=30.0), Every(events=500, seconds=None))
        """
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s?)\s*", text)
        if match is None or float(match.group(1)) <= 0:
            raise ReasonerError(
                f"--checkpoint-every takes a number of events (10000) or seconds (30s), "
                f"not {text!r}"
            )
        if match.group(2):
            return Every(seconds=float(match.group(1)))
        if "." in match.group(1):
            raise ReasonerError(f"--checkpoint-every: a number of events is whole, not {text!r}")
        return Every(events=int(match.group(1)))


@dataclass(slots=True)
class Resume:
    """What a checkpoint gives back."""

    engine: bytes
    position: int
    output_bytes: int
    counts: dict[str, int] = field(default_factory=dict)
    rules: dict[str, Any] | None = None  # with --watch-rules: the rule files' history


class Checkpoints:
    """The checkpoints of one run in ``directory`` (``fingerprint``: of the command's rules,
    inputs and options; a checkpoint of another command is refused)."""

    def __init__(self, directory: str | Path, fingerprint: str, every: Every) -> None:
        self.path = Path(directory) / FILE
        self.fingerprint = fingerprint
        self.every = every
        self._since = 0
        self._last = time.monotonic()
        Path(directory).mkdir(parents=True, exist_ok=True)

    def load(self) -> Resume | None:
        """The checkpoint to resume from (None: start afresh). SnapshotError for a corrupt or
        foreign one (the file is left as it is)."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            raise ReasonerError(f"cannot read checkpoint {self.path}: {error}") from None
        try:
            state = unpack(data)
        except SnapshotError as error:
            raise SnapshotError(f"checkpoint {self.path}: {error}") from None
        if state.get("run") != self.fingerprint:
            raise SnapshotError(
                f"checkpoint {self.path} belongs to another command (other rules, inputs or "
                "options); remove it to start afresh"
            )
        try:
            rules = state.get("rules")
            return Resume(
                state["engine"].encode("utf-8"),
                int(state["position"]),
                int(state["output_bytes"]),
                {k: int(v) for k, v in state["counts"].items()},
                None if rules is None else dict(rules),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise SnapshotError(f"checkpoint {self.path} is malformed ({error})") from None

    def due(self) -> bool:
        """Count one input event; whether a checkpoint is due."""
        self._since += 1
        if self.every.events is not None:
            return self._since >= self.every.events
        return (
            self.every.seconds is not None and time.monotonic() - self._last >= self.every.seconds
        )

    def save(
        self,
        engine: bytes,
        position: int,
        output: Any,
        counts: dict[str, int],
        rules: dict[str, Any] | None = None,
    ) -> None:
        """Record a checkpoint: ``output`` (an open file) is flushed to disk first; ``rules``:
        the rule files' history (``RuleWatcher.history``), when they may change while the
        run goes on."""
        output.flush()
        os.fsync(output.fileno())
        state: dict[str, Any] = {
            "run": self.fingerprint,
            "engine": engine.decode("utf-8"),
            "position": position,
            "output_bytes": os.lseek(output.fileno(), 0, os.SEEK_CUR),
            "counts": counts,
        }
        if rules is not None:
            state["rules"] = rules
        write_aside(self.path, lambda f: f.write(pack(state)))
        self._since = 0
        self._last = time.monotonic()

    def remove(self) -> None:
        """The run finished: nothing to resume."""
        self.path.unlink(missing_ok=True)


def run_fingerprint(rules: list[str], inputs: list[str], options: dict[str, Any]) -> str:
    """Of a command: its rule files' contents, its input paths and its options."""
    digest = hashlib.sha256()
    for path in rules:
        digest.update(Path(path).read_bytes() if Path(path).is_file() else path.encode())
    digest.update(repr((inputs, sorted(options.items()))).encode())
    return digest.hexdigest()


def cut_output(path: str, size: int) -> None:
    """Cut the output file back to the length a checkpoint recorded."""
    try:
        with open(path, "r+b") as f:
            if f.seek(0, os.SEEK_END) < size:
                raise SnapshotError(
                    f"output {path} is shorter than its checkpoint recorded ({size} bytes)"
                )
            f.truncate(size)
    except FileNotFoundError:
        raise SnapshotError(f"output {path} of the checkpoint is missing") from None
