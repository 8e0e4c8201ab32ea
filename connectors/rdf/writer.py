"""Writing detections as RDF: one named graph per detection, in TriG or N-Quads.

The graph's name is the detection's IRI and it holds the description of
:mod:`reasoner.rdf.detections` (name, arguments, OWL-Time interval and, for an engine built with
``provenance=True``, ``prov:wasDerivedFrom`` links to the input events it was built from, each
described as an ``r:InputEvent``), the same triples the SPARQL endpoint publishes into its
detections graph. Instants carry an ``xsd:dateTime`` when the input used ISO-8601 times (the
shared :class:`TimeStyle`), otherwise only their number.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, TextIO, get_args

from connectors.events.times import TimeStyle
from reasoner.rdf.detections import DetectedEvent, detection_iri, detection_triples

#: The output syntaxes.
RdfSyntax = Literal["trig", "nquads"]
RDF_SYNTAXES: tuple[RdfSyntax, ...] = get_args(RdfSyntax)


def named_graph(graph: str, triples: Iterable[str], syntax: str) -> str:
    """A named graph as TriG or N-Quads text.

    Args:
        graph: the graph's name in N-Triples syntax (``<iri>``).
        triples: N-Triples statements without their final dot.
        syntax: ``"trig"`` or ``"nquads"``.
    Returns:
        the text, ending with a newline. (A default-graph triple is ``statement + " .\\n"``
        in both syntaxes.)

    >>> named_graph("<urn:g>", ["<urn:s> <urn:p> 1"], "nquads")
    '<urn:s> <urn:p> 1 <urn:g> .\\n'
    """
    if syntax == "nquads":
        return "".join(f"{t} {graph} .\n" for t in triples)
    return f"{graph} {{\n" + "".join(f"  {t} .\n" for t in triples) + "}\n"


class RdfWriter:
    """Writes each detection as a named graph.

    Args:
        out: an open text stream.
        syntax: ``"trig"`` or ``"nquads"``.
        style: the :class:`TimeStyle` shared with the readers (dates once ``iso`` is set).

    Raises:
        ValueError: for another syntax.

    Example:
        >>> import io
        >>> from reasoner.runtime.events import Event
        >>> buffer = io.StringIO()
        >>> RdfWriter(buffer, "nquads").write(Event("ce1", (), 3, 9))
        >>> buffer.getvalue().count("\\n")
        17
    """

    def __init__(self, out: TextIO, syntax: str = "trig", style: TimeStyle | None = None) -> None:
        if syntax not in RDF_SYNTAXES:
            raise ValueError(f"unknown RDF syntax {syntax!r} (use {' or '.join(RDF_SYNTAXES)})")
        self.out = out
        self.syntax = syntax
        self.style = style or TimeStyle()

    def write(self, event: DetectedEvent) -> None:
        """Write one detection as one named graph."""
        triples = detection_triples(event, dates=self.style.iso)
        self.out.write(named_graph(f"<{detection_iri(event)}>", triples, self.syntax))

    def write_all(self, events: Iterable[DetectedEvent]) -> int:
        """Write every detection; return how many were written."""
        count = 0
        for event in events:
            self.write(event)
            count += 1
        return count
