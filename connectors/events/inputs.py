"""Opening one input file in any of ``reasoner run``'s formats, as a stream of events.

``reasoner run`` reads its files here in one process; ``reasoner spark replay`` reads each
file here on a Spark executor: the same readers, the same checks, the same messages.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from connectors.events.jsonl import read_jsonl
from connectors.events.rejects import Position, RejectHandler
from connectors.events.times import TimeStyle
from connectors.rdf.writer import RDF_SYNTAXES
from reasoner.runtime.events import Event

if TYPE_CHECKING:
    from reasoner.language.ast import Program

#: The RDF input formats: ``rdf`` picks the syntax by file extension.
RDF_FORMATS = ("rdf", *RDF_SYNTAXES)

#: Every input format.
FORMATS = ("jsonl", "mesowest", *RDF_FORMATS)


def rdf_options(fmt: str, rdf_time: str | None, program: Program) -> dict[str, Any]:
    """What every RDF stream is read with: the mapping (compiled once), time, counters;
    empty for the other formats."""
    if fmt not in RDF_FORMATS:
        return {}
    from connectors.rdf.reader import GENERATED_AT_TIME, GraphCounts, property_iri
    from reasoner.knowledge.goals import DEFAULT_PREFIXES
    from reasoner.rdf.mapping import GraphMapping

    time = GENERATED_AT_TIME
    if rdf_time:
        time = property_iri(rdf_time, {**DEFAULT_PREFIXES, **program.prefixes})
    return {
        "mapping": GraphMapping(program),
        "time_property": time,
        "counts": GraphCounts(),
        "syntax": None if fmt == "rdf" else fmt,
    }


def open_events(
    path: str,
    fmt: str,
    style: TimeStyle,
    on_reject: RejectHandler,
    rdf: dict[str, Any],
    arities: dict[str, set[int]],
    positions: list[Position],
) -> Iterator[Event]:
    """The events of one file (``-``: standard input) in file order.

    Args:
        path: the file.
        fmt: one of :data:`FORMATS`.
        style: set to ISO output when the input's times are ISO-8601.
        on_reject: called with each malformed line (the reader goes on).
        rdf: :func:`rdf_options` (RDF formats).
        arities: the argument counts of the event names the rules read.
        positions: the reader adds its :class:`Position` (to name a rejected event's line).
    """
    if rdf:
        from connectors.rdf.reader import read_rdf

        return read_rdf(path, style=style, on_reject=on_reject, positions=positions, **rdf)
    if fmt == "mesowest":
        from connectors.mesowest.reader import read_mesowest

        style.iso = True  # MesoWest times are ISO-8601: write detections back the same way
        return read_mesowest(path, on_reject=on_reject, positions=positions)
    return read_jsonl(path, style=style, on_reject=on_reject, arities=arities, positions=positions)
