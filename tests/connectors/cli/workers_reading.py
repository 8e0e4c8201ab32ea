"""The run of ``reasoner run`` the tests of the workers reading their shares compare: its exit
status, output, standard error and whether the workers read."""

from __future__ import annotations

from pathlib import Path

import pytest

from connectors.cli import main
from connectors.events.run_session import RunSession
from reasoner.runtime.parallel import ParallelEngine


def run_reading(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    out: Path,
    *,
    router: bool = False,
) -> tuple[int, str, str, int]:
    """The exit status, the output, standard error and how many runs the workers read."""
    read = []
    original = ParallelEngine.read_shares

    def spy(self, sources, on_note):  # type: ignore[no-untyped-def]
        found = original(self, sources, on_note)
        read.append(found is not None)
        return found

    with monkeypatch.context() as patch:
        patch.setattr(ParallelEngine, "read_shares", spy)
        if router:
            patch.setattr(RunSession, "_read_by_workers", lambda self: None)
        capsys.readouterr()
        status = main([*argv, "--output", str(out)])
        err = capsys.readouterr().err
    return status, out.read_text(), err, sum(read)
