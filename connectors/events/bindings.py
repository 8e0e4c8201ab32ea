"""EP-SPARQL results as JSON lines: one SPARQL 1.1 Query Results JSON document per detection.

Each line is a complete results document holding one solution, plus the detection's interval::

    {"head":{"vars":["company"]},"results":{"bindings":[{"company":{"type":"uri",
     "value":"http://ex.org/c1"}}]},"start":1,"end":2}

so any SPARQL results reader reads a line. A variable the solution leaves unbound (the optional
part of OPTIONALSEQ did not occur) is absent from its binding, as in SPARQL. Times are numbers,
or ISO-8601 text when the input used dates (as for detections, :mod:`connectors.events.jsonl`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, TextIO

from connectors.events.times import TimeStyle, epoch_to_iso
from reasoner.rdf.ntriples import json_term
from reasoner.runtime.events import Event
from reasoner.values import Time


class BindingsWriter:
    """Writes the detections of a compiled query's heads as results lines (others are skipped).

    Args:
        out: an open text stream.
        variables: the selected variables' names (``head.vars``).
        heads: each head event's name and the variable names of its arguments.
        style: the :class:`TimeStyle` shared with the readers.

    >>> import io
    >>> buffer = io.StringIO()
    >>> BindingsWriter(buffer, ("c",), (("q", ("c",)),)).write_all([Event("q", ("x",), 1, 2)])
    1
    >>> buffer.getvalue()  # doctest: +ELLIPSIS
    '{"head":{"vars":["c"]},"results":{"bindings":[{"c":{"type":"literal","value":"x"}}]},...'
    """

    def __init__(
        self,
        out: TextIO,
        variables: tuple[str, ...],
        heads: Iterable[tuple[str, tuple[str, ...]]],
        style: TimeStyle | None = None,
    ) -> None:
        self.out = out
        self.head = {"vars": list(variables)}
        self.heads = dict(heads)
        self.style = style or TimeStyle()

    def write_all(self, events: Iterable[Event]) -> int:
        """Write one line per query result among ``events``; return how many."""
        lines = [self._line(e) for e in events if e.name in self.heads]
        if lines:
            self.out.write("".join(lines))
        return len(lines)

    def _line(self, event: Event) -> str:
        names = self.heads[event.name]
        binding = {name: json_term(value) for name, value in zip(names, event.args, strict=True)}
        record: dict[str, Any] = {
            "head": self.head,
            "results": {"bindings": [binding]},
            "start": self._time(event.start),
            "end": self._time(event.end),
        }
        return json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n"

    def _time(self, t: Time) -> Any:
        if self.style.iso:
            return epoch_to_iso(t)
        return t if isinstance(t, int | float) else float(t)
