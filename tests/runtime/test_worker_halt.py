"""A worker told ``halt`` outside a share (its reading failed and it sent the error, then the
router stopped on a signal) answers ``halted`` and serves on, as inside one: the router's
halt waits for that answer from every worker."""

from __future__ import annotations

import threading
from multiprocessing import Pipe

from reasoner.knowledge.program import program_knowledge
from reasoner.language.loader import load_rules
from reasoner.runtime.options import EngineOptions
from reasoner.runtime.worker import work


def test_a_worker_told_to_halt_between_shares_answers_and_serves_on() -> None:
    program = load_rules("c(X) <- a(X) SEQ b(X).")
    here, there = Pipe()
    stage = (program, None, False)
    args = (there, 0, [], stage, EngineOptions(), lambda: program_knowledge(program), set())
    worker = threading.Thread(target=work, args=args, daemon=True)
    worker.start()
    try:
        here.send(("halt",))
        assert here.poll(30), "no answer"
        assert here.recv() == ("halted", None)
        here.send(("stats",))  # (still serving)
        assert here.poll(30)
        assert here.recv()[0] == "ok"
    finally:
        here.close()  # (end of file: the worker returns)
        worker.join(30)
    assert not worker.is_alive()
