"""Replay MesoWest files through rules, keeping what the blizzard tables and plots need.

:func:`replay` reads the files (merged by time), pushes every reading through an
:class:`~reasoner.runtime.engine.Engine` with a tqdm progress bar, and returns a
:class:`Replay`: the stations of the files, each station's wind and visibility series, and the
detections (all of them, or only the names asked for).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from connectors.events.pace import paced
from connectors.events.rejects import Rejected
from connectors.mesowest.reader import MesoWestFile, read_mesowest
from connectors.stations.table import Station
from reasoner.knowledge.base import Knowledge
from reasoner.language.loader import Rules
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.values import Time, Value

#: Positions of a reading's time, wind and visibility in ``sensor_reading``.
_TIME, _WIND, _VISIBILITY = 1, 4, 6


@dataclass(slots=True)
class Replay:
    """What a replay saw and detected.

    ``series[station]`` holds ``(time, wind, visibility)`` per reading (``none`` kept as is);
    ``detections`` are in detection order; ``seconds`` is the time spent in the engine loop.
    """

    stations: dict[str, Station]
    series: dict[str, list[tuple[Time, Value, Value]]] = field(default_factory=dict)
    detections: list[Event] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    events: int = 0
    seconds: float = 0.0

    def named(self, name: str) -> list[Event]:
        """The detections called ``name``, in detection order."""
        return [d for d in self.detections if d.name == name]


def replay(
    rules: Rules,
    paths: Sequence[str | Path],
    *,
    knowledge: Knowledge | None = None,
    keep: Collection[str] | None = None,
    progress: bool = True,
    provenance: bool = False,
    explain: bool = False,
    publish: Callable[[Sequence[Event]], None] | None = None,
    speed: float | None = None,
) -> Replay:
    """Push the readings of MesoWest files through rules.

    Args:
        rules: rule files, text or a parsed program (e.g. ``rules/blizzard.event`` and a
            definition file).
        paths: MesoWest CSV exports, one station each.
        knowledge: what WHERE conditions ask (default: the program's own facts).
        keep: detection names to keep (default: every detection).
        progress: show a tqdm bar on standard error.
        provenance: detections keep the input events they were built from (``sources``).
        explain: detections keep their derivation (``Engine(explain=True)``).
        publish: called with every batch of detections as it is derived, all of them
            whatever ``keep`` says (e.g. a SPARQL endpoint's, for its ``/live`` page).
        speed: replay at this many stream seconds per second (:func:`paced`) instead of as
            fast as possible; ``seconds`` then includes the waits.
    Returns:
        the :class:`Replay`; malformed rows are skipped and listed in ``rejected``.

    >>> result = replay(["rules/blizzard.event", "rules/blizzard_noaa.event"],
    ...                 paths, knowledge=kb.current())  # doctest: +SKIP
    >>> [w.args[0] for w in result.named("blizzardWarning")]  # doctest: +SKIP
    ['KOGD', 'KSLC', 'KEVW']
    """
    files = [MesoWestFile(path) for path in paths]
    result = Replay({f.station.id: f.station for f in files})
    series = result.series = {ident: [] for ident in result.stations}
    engine = Engine(rules, knowledge=knowledge, provenance=provenance, explain=explain)
    readings = read_mesowest(*paths, on_reject=result.rejected.append)
    if speed is not None:
        readings = paced(readings, speed)
    bar = tqdm(
        readings,
        total=sum(_rows(path) for path in paths),
        unit=" readings",
        desc="replay",
        disable=not progress,
    )
    push, detections = engine.push, result.detections
    began = time.perf_counter()
    for event in bar:
        args = event.args
        series[str(args[0])].append((args[_TIME], args[_WIND], args[_VISIBILITY]))
        found = push(event)
        if found:
            if publish is not None:
                publish(found)
            detections.extend(found if keep is None else (d for d in found if d.name in keep))
    found = engine.flush()
    if found and publish is not None:
        publish(found)
    detections.extend(d for d in found if keep is None or d.name in keep)
    result.seconds = time.perf_counter() - began
    result.events = engine.stats().events_in
    return result


def _rows(path: str | Path) -> int:
    """The number of data rows of an export, for the progress bar (comments and the two
    header rows excluded); counting lines costs far less than parsing them."""
    with open(path, "rb") as stream:
        lines = sum(1 for line in stream if line.strip() and not line.startswith(b"#"))
    return max(0, lines - 2)
