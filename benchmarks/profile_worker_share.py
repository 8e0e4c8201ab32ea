"""One worker's share of ``reasoner run --workers N`` on a MesoWest archive, run in this process
(no fork, no router, no second worker competing for the cores): the CPU seconds of its reading
alone and of its whole run (reading, checks, the keyed stage, the parts it would send).

A worker's CPU in ``profile_workers.py`` swings by a fifth with what else runs on the machine
(its two workers and the router share the cores); this times the same work alone, so that two
versions of the code can be compared, interleaved, on a shared machine (PYTHONPATH picks the
version). The archive is the one ``bench_scaleout.py --only archive`` writes under ``out/``.

    python benchmarks/profile_worker_share.py --stations 500 --repeat 3
    python benchmarks/profile_worker_share.py --archive out/scaleout_archive_2000x20d_2012

docs/scale-out.md ("Numbers") gives what it measured.
"""

from __future__ import annotations

import argparse
import gc
import os
import pickle
import time
from pathlib import Path
from typing import Any

from connectors.events.inputs import load_reader
from connectors.events.shares import file_sources
from reasoner.compiler.partition import analyse
from reasoner.knowledge.program import program_knowledge
from reasoner.language.loader import load_rules
from reasoner.runtime import worker
from reasoner.runtime.options import EngineOptions
from reasoner.runtime.stages import stage_engine

RULES = [Path("rules/blizzard.event"), Path("rules/blizzard_noaa.event")]


class Pipe:
    """The router's end as a worker sees it: ``go`` at once, ``finish`` after ``done``; what
    the worker sends is pickled (as a pipe does) and counted."""

    def __init__(self) -> None:
        self.inbox: list[tuple[Any, ...]] = [("go",)]
        self.sent = 0

    def send(self, message: tuple[Any, ...]) -> None:
        self.sent += len(pickle.dumps(message, pickle.HIGHEST_PROTOCOL))
        if message[0] == "done":
            self.inbox.append(("finish", message[1]))

    def recv(self) -> tuple[Any, ...]:
        return self.inbox.pop(0)

    def poll(self) -> bool:
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=Path, default=Path("out/scaleout_archive_2000x20d_2012"))
    parser.add_argument("--stations", type=int, default=0, help="the first N files (0: all)")
    parser.add_argument("--workers", type=int, default=2, help="worker 0's share of N")
    parser.add_argument("--batch", type=int, default=2048)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    program = load_rules([*RULES, args.archive / "near_station.event"])
    part = analyse(program, "unrestricted")
    knowledge = program_knowledge(program)
    options = EngineOptions("unrestricted", "longer", 100_000, 0, None, False, False)
    marking = bool(set(part.reads) & part.keyed_types(program))
    load_reader("mesowest")
    paths = sorted(str(p) for p in (args.archive / "csv").glob("*.csv"))
    paths = paths[: args.stations] if args.stations else paths
    shares = file_sources("mesowest", paths, args.workers, part)
    assert shares is not None, "the workers cannot read this archive"
    reads = set(part.reads)
    for _ in range(args.repeat):
        gc.collect()
        began = time.process_time()
        source = shares[0]()
        source.open()
        opened = time.process_time()
        n = sum(len(chunk.events) for chunk in source.chunks(args.batch))
        read = time.process_time()
        del source
        gc.collect()
        engine = stage_engine(program, part.keyed, options, knowledge=knowledge, marking=marking)
        pipe = Pipe()
        start = time.process_time()
        worker.work_share(pipe, engine, shares[0], reads, args.batch)  # type: ignore[arg-type]
        spent = time.process_time() - start
        print(
            f"worker 0 of {args.workers}, {n:,} readings (pid {os.getpid()}): reading "
            f"{read - began:.2f} s CPU (opening {opened - began:.2f}), the share run "
            f"{spent:.2f} s ({spent / n * 1e6:.2f} us a reading), {pipe.sent / 1e6:.1f} MB sent"
        )


if __name__ == "__main__":
    main()
