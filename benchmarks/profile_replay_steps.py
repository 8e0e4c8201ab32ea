"""Where ``reasoner spark replay``'s executor time goes on its shuffle path, without Spark.

A MesoWest archive in time order is replayed without a shuffle (each keyed task reads its own
files: ``FilesTask``); the shuffle is the path of the other formats, and of files out of time
order. This runs the executors' work on that path for ``bench_scaleout.py``'s archive (2,000
stations, the blizzard rules and their ``near_station`` facts; build it first with
``bench_scaleout.py --only archive --days D``) in this one process, as Spark's Python workers
run it on ``local[2]``: the read in 8 tasks of a few hundred files (``read_task``: read,
numbered, checked and routed), the shuffle's pickling of each task's records and their
unpickling into the partitions, and the keyed task of each partition (``ShuffledTask``: its
events gathered and sorted, the engine, the detections formatted and written). Prints the
process CPU seconds of each step, and µs a reading. Beside ``reasoner run`` (one process) on
the same archive, the difference is what the events' crossing of the shuffle costs.

    python benchmarks/profile_replay_steps.py --days 20 [--files 2000]
"""

from __future__ import annotations

import argparse
import math
import pickle
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from connectors.spark import replay  # noqa: E402
from connectors.spark.detect import Stage, derivations  # noqa: E402
from connectors.spark.replay_keyed import ShuffledTask  # noqa: E402
from connectors.spark.replay_read import FILE, read_task  # noqa: E402
from reasoner.language.ast import event_arities  # noqa: E402
from reasoner.language.loader import load_rules  # noqa: E402
from reasoner.runtime.options import EngineOptions  # noqa: E402

_TASKS = 8  # read tasks (spark replay: 4 per core)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=20)
    parser.add_argument("--files", type=int, default=2000, help="the archive's first N files")
    args = parser.parse_args()
    folder = ROOT / "out" / f"scaleout_archive_2000x{args.days}d_2012"
    rules = [ROOT / "rules" / "blizzard.event", ROOT / "rules" / "blizzard_noaa.event"]
    program = load_rules([*rules, folder / "near_station.event"])
    options = EngineOptions()
    files = replay.check_files([str(folder / "csv")])[: args.files]
    plan = replay._plan(program, options.policy, 2)
    knowledge = replay.keyed_knowledge(program, options, None)
    shipped = replay.Archive(files, "mesowest", replay.executor_program(program, options))
    arities = event_arities(shipped.program)
    clock = time.process_time
    spent = {"read, number, route": 0.0, "pickle": 0.0, "unpickle": 0.0}
    parts: list[list[tuple[object, ...]]] = [[] for _ in range(plan.n + 1)]
    items = list(enumerate(files))
    list(read_task(shipped, arities, items[-1:], plan.keys, plan.raw_types, plan.n))  # (imports)
    size = math.ceil(len(items) / _TASKS)
    for start in range(0, len(items), size):
        began = clock()
        task = items[start : start + size]
        records = list(read_task(shipped, arities, task, plan.keys, plan.raw_types, plan.n))
        spent["read, number, route"] += clock() - began
        began = clock()
        batches = [pickle.dumps(records[i : i + 64], 5) for i in range(0, len(records), 64)]
        spent["pickle"] += clock() - began
        began = clock()
        for batch in batches:
            for partition, record in pickle.loads(batch):
                parts[partition].append(record)
        spent["unpickle"] += clock() - began
    until = max(r[2].last for r in parts[plan.n] if r[0] == FILE)
    stage = Stage(
        shipped.program,
        replace(options, lateness=0),
        None if knowledge is None else (lambda: knowledge),
        "profile",
        keep=plan.partitioning.keyed,
        marking=plan.feeds,
    )
    derivations(stage)  # (the engine compiled, once per worker: not the events' work)
    runs = tempfile.mkdtemp()
    keyed = ShuffledTask(stage, until, plan.reads or set(), False, runs, None)
    for index in range(plan.n):
        began = clock()
        list(keyed(index, parts[index]))
        spent[f"keyed task {index}"] = clock() - began
    readings = sum(r[2].taken for r in parts[plan.n] if r[0] == FILE)
    total = sum(spent.values())
    print(f"{readings:,} readings of {len(files)} files, process CPU s (µs a reading):")
    for step, seconds in [*spent.items(), ("in all", total)]:
        print(f"  {step:22} {seconds:7.2f}  ({seconds / readings * 1e6:.2f})")


if __name__ == "__main__":
    main()
