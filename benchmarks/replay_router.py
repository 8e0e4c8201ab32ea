"""The router's side of ``reasoner run --workers N`` on recorded parts: what the workers sent
in one run, replayed through :class:`reasoner.runtime.shares.ShareMerge` and the JSON-lines
writer in this process, with no worker competing for the cores (CPU seconds).

``record`` runs ``reasoner run`` in this process with the arguments after ``--`` and keeps
every message the router received (pickled, in the order it received them); ``replay`` feeds
them, in that order, to the merge of the code on ``PYTHONPATH`` and writes the detections, so
two versions of the router can be compared, interleaved, on the same parts (the order the
parts came in, which two workers' pace decides, is the recorded one). The program is the
MesoWest archive's (``bench_scaleout.py --only archive``).

    python benchmarks/replay_router.py record out/parts.pkl -- run rules/blizzard.event \\
        rules/blizzard_noaa.event out/scaleout_archive_2000x20d_2012/near_station.event \\
        --format mesowest --events ... --workers 2 --output out/w2.jsonl
    python benchmarks/replay_router.py replay out/parts.pkl --repeat 3 --output out/replayed.jsonl

docs/scale-out.md ("The router's merge") gives what it measured.
"""

from __future__ import annotations

import argparse
import io
import pickle
import sys
import time
from pathlib import Path
from typing import Any

from connectors.cli import main as reasoner
from connectors.events.jsonl import JsonLinesWriter
from connectors.events.times import TimeStyle
from reasoner.compiler.partition import analyse
from reasoner.knowledge.program import program_knowledge
from reasoner.language.loader import load_rules
from reasoner.runtime import order, pool, shares
from reasoner.runtime.options import EngineOptions
from reasoner.runtime.stages import stage_engine

ARCHIVE = Path("out/scaleout_archive_2000x20d_2012")
RULES = [Path("rules/blizzard.event"), Path("rules/blizzard_noaa.event")]


def record(path: Path, command: list[str]) -> int:
    """Run ``reasoner`` keeping every message its router receives, pickled, in ``path``."""
    received: list[tuple[int, bytes]] = []
    receive = pool.WorkerPool.receive

    def keep(self: pool.WorkerPool, i: int) -> Any:
        message = receive(self, i)
        received.append((i, pickle.dumps(message, pickle.HIGHEST_PROTOCOL)))
        return message

    pool.WorkerPool.receive = keep  # type: ignore[method-assign]
    try:
        return reasoner(command)
    finally:
        path.write_bytes(pickle.dumps(received, pickle.HIGHEST_PROTOCOL))


class Recorded:
    """A pool answering as the recorded workers did, in the recorded order (the workers'
    opening answers already taken)."""

    def __init__(self, messages: list[tuple[int, bytes]]) -> None:
        workers = 1 + max(i for i, _ in messages)
        self.messages = messages[workers:]  # (after the answers to the opening)
        self.connections = list(range(workers))

    def post(self, message: tuple[Any, ...], *to: int) -> None:
        """The router's messages go nowhere."""

    def ready(self, waiting: list[int]) -> list[int]:
        """The worker whose message came next (as ``multiprocessing.connection.wait``)."""
        return [self.messages[0][0]]

    def receive(self, i: int) -> Any:
        j, message = self.messages.pop(0)
        assert i == j, "the replay asked another worker than the recording"
        return pickle.loads(message)


def replay(path: Path, repeat: int, output: Path | None) -> None:
    """Merge the recorded parts ``repeat`` times, printing the CPU seconds of each."""
    messages = pickle.loads(path.read_bytes())
    program = load_rules([*RULES, ARCHIVE / "near_station.event"])
    part = analyse(program, "unrestricted")
    knowledge = program_knowledge(program)
    options = EngineOptions("unrestricted", "longer", 100_000, 0, None, False, False)
    spent = {"global": 0.0}
    run_global = order.run_global

    def timed(*args: Any) -> Any:
        began = time.process_time()
        try:
            return run_global(*args)
        finally:
            spent["global"] += time.process_time() - began

    shares.run_global = timed  # type: ignore[assignment]
    for _ in range(repeat):
        stage = stage_engine(
            program, part.remainder, options, knowledge=knowledge, remainder=True, reads_keyed=True
        )
        recorded = Recorded(list(messages))
        shares.wait = recorded.ready  # type: ignore[assignment]
        counts = {"events_in": 0, "detections": 0, "rejected": 0}
        merge = shares.ShareMerge(recorded, stage, set(part.reads), None, counts)  # type: ignore[arg-type]
        style = TimeStyle()
        style.iso = True  # (as the archive's times are written)
        out = io.StringIO()
        writer = JsonLinesWriter(out, style)
        spent["global"] = 0.0
        began = time.process_time()
        written = sum(writer.write_all(found) for found in merge.run(lambda note: None))
        total = time.process_time() - began
        print(
            f"{written:,} detections: the router {total:.2f} s CPU, of which the global stage "
            f"{spent['global']:.2f} s",
            flush=True,
        )
        if output is not None:
            output.write_text(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("record", "replay"))
    parser.add_argument("parts", type=Path, help="the recorded messages")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--output", type=Path, help="replay: write the detections here")
    parser.add_argument("command", nargs="*", help="record: -- reasoner's arguments")
    args = parser.parse_args()
    if args.mode == "record":
        command = args.command[1:] if args.command[:1] == ["--"] else args.command
        sys.exit(record(args.parts, command))
    replay(args.parts, args.repeat, args.output)


if __name__ == "__main__":
    main()
