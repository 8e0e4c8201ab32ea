"""Where ``reasoner run --workers N`` spends its CPU: the router's and each worker's seconds
(and, with ``--profile DIR``, a cProfile of the router and of each worker's share, in CPU time).

Runs ``reasoner run`` in this process with the arguments given after ``--``, each worker's
share (``reasoner.runtime.worker.work_share``) wrapped to time it; prints one line per worker
and one for the router on standard error. The workers are forked, so the wrapper reaches them.

    python benchmarks/profile_workers.py -- run rules/blizzard.event ... --workers 2
    python benchmarks/profile_workers.py --profile out/profile -- run ... --workers 2
    python benchmarks/profile_workers.py --router-reads -- run ... --workers 2   # (to compare)
    python -c "import pstats; pstats.Stats('out/profile/worker.1234').sort_stats('tottime')\\
        .print_stats(20)"

docs/scale-out.md ("Numbers") gives the split on the 20-day MesoWest archive of
``bench_scaleout.py --only archive --days 20``.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from connectors.cli import main as reasoner
from connectors.events.run_session import RunSession
from reasoner.runtime import worker


def timed(share: Callable[..., bool], folder: Path | None) -> Callable[..., bool]:
    """``work_share`` printing its worker's CPU (and profiling it into ``folder``)."""

    def run(*args: Any, **kwargs: Any) -> bool:
        began = time.process_time()
        profile = cProfile.Profile(time.process_time) if folder else None
        try:
            if profile is None:
                return share(*args, **kwargs)
            return bool(profile.runcall(share, *args, **kwargs))
        finally:
            spent = time.process_time()
            # One write, newline included: standard error is unbuffered, and print() writes
            # the text and its newline apart, so two workers ending together could otherwise
            # put both texts on one line.
            sys.stderr.write(
                f"worker {os.getpid()}: {spent:.2f} s CPU since the fork, "
                f"its share {spent - began:.2f} s\n"
            )
            sys.stderr.flush()
            if profile is not None and folder is not None:  # (before the router joins it)
                profile.dump_stats(folder / f"worker.{os.getpid()}")

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", type=Path, help="write cProfile files here")
    parser.add_argument(
        "--router-reads",
        action="store_true",
        help="the router reads the input and sends the events, as before the workers read it",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- reasoner's arguments")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if args.profile:
        args.profile.mkdir(parents=True, exist_ok=True)
    worker.work_share = timed(worker.work_share, args.profile)  # (looked up when called)
    if args.router_reads:
        RunSession._read_by_workers = lambda self: None  # type: ignore[method-assign]
    profile = cProfile.Profile(time.process_time) if args.profile else None
    try:
        status = reasoner(command) if profile is None else profile.runcall(reasoner, command)
    finally:
        if profile is not None:
            profile.dump_stats(args.profile / "router")
        used = os.times()
        print(
            f"router: {used.user + used.system:.2f} s CPU "
            f"(its workers {used.children_user + used.children_system:.2f} s)",
            file=sys.stderr,
        )
    return status


if __name__ == "__main__":
    sys.exit(main())
