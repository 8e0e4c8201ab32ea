"""Reading a stream of RDF graphs (N-Quads or TriG) as events.

Each named graph is one event occurrence. Its time is the object of the time property
(default ``prov:generatedAtTime``): stated about the graph itself (``<g> prov:generatedAtTime
t``, in the default graph or inside ``g``), or else by the triples inside the graph that have
that property (``sosa:resultTime``), which must all agree. A ``xsd:dateTime`` (or any ISO-8601
text) sets :attr:`TimeStyle.iso`; a number is seconds. The graph's triples become events
through a :class:`~reasoner.rdf.mapping.GraphMapping` (by default the triple view
``triple(S, P, O)``), all at the graph's time.

Consecutive statements about one graph (its triples, its time stamp in the default graph, in
either order) form the graph; a graph ends where the next one starts. A file is parsed by
pyoxigraph's streaming parser in one pass; at the first problem (a syntax error, or a graph to
reject) the rest of it is read statement by statement (:mod:`connectors.rdf.statements`), which
knows the line of every statement; standard input is always read so, a statement at a time.
What cannot be used is reported as :class:`Rejected` (file, line, reason) and skipped, and the
stream goes on:

* a malformed statement (see :mod:`connectors.rdf.statements`). In N-Quads a broken line
  may belong to the graph before it or to the one after it, so both are dropped: a graph is
  never turned into events with a triple missing;
* a graph without a time, with conflicting times, or whose mapping fails to evaluate;
* default-graph triples about a resource that is no named graph of the stream.

A graph that gives no event is no error: it is counted in :attr:`GraphCounts.unmatched`.
An event the engine refuses later (a late one) is named by the line where its graph starts:
the streaming parser gives no lines, so the reader notes only which graph it is at, and the
line is found on a rejection, by reading the file statement by statement as far as that graph.
"""

from __future__ import annotations

import io
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import pyoxigraph as ox

from connectors.events.rejects import (
    InputFormatError,
    Position,
    Rejected,
    RejectHandler,
    log_rejected,
)
from connectors.events.stopping import standard_input
from connectors.events.times import TimeStyle, parse_time
from connectors.rdf.statements import Statement, nquads_batches, trig_statements
from reasoner.errors import ReasonerError
from reasoner.knowledge.store import to_value
from reasoner.language.ast import Program
from reasoner.rdf.mapping import GraphMapping
from reasoner.runtime.events import Event
from reasoner.values import Time, Value

#: The default time property: ``prov:generatedAtTime``.
GENERATED_AT_TIME = "http://www.w3.org/ns/prov#generatedAtTime"
#: Input syntaxes by file extension; anything else (and standard input) is read as TriG.
SYNTAXES = {".nq": "nquads", ".nquads": "nquads", ".trig": "trig"}
#: Terms remembered between graphs (predicates, classes, stations and values repeat).
_CACHE_SIZE = 4096


def property_iri(name: str, prefixes: Mapping[str, str]) -> str:
    """The IRI a command-line property names: ``<iri>``, ``prefix:local`` or a full IRI.

    Args:
        name: the text given.
        prefixes: prefixes that may be used (a rule program's, say).
    Returns:
        the IRI.
    Raises:
        InputFormatError: ``prefix:local`` with an unknown prefix (a full IRI has ``://`` or
            is a ``urn:``).

    >>> property_iri("sosa:resultTime", {"sosa": "http://www.w3.org/ns/sosa/"})
    'http://www.w3.org/ns/sosa/resultTime'
    """
    if name.startswith("<") and name.endswith(">"):
        return name[1:-1]
    prefix, colon, local = name.partition(":")
    if colon and prefix in prefixes:
        return prefixes[prefix] + local
    if "://" not in name and prefix != "urn":
        raise InputFormatError(
            f"unknown prefix in {name!r}: declare it in the rules or give an IRI"
        )
    return name


@dataclass(slots=True)
class GraphCounts:
    """Shared, mutable counters: graphs turned into events and graphs that gave none."""

    graphs: int = 0
    unmatched: int = 0


def read_rdf(
    source: str | Path | TextIO,
    *,
    mapping: GraphMapping | None = None,
    syntax: str | None = None,
    time_property: str = GENERATED_AT_TIME,
    style: TimeStyle | None = None,
    on_reject: RejectHandler | None = None,
    counts: GraphCounts | None = None,
    positions: list[Position] | None = None,
) -> Iterator[Event]:
    """Read a stream of timestamped RDF graphs as events, in stream order.

    Args:
        source: a path, ``"-"`` for standard input, or an open text stream.
        mapping: how graphs become events (default: the triple view ``triple(S, P, O)``).
        syntax: ``"nquads"`` or ``"trig"``; by default from the file extension (TriG otherwise).
        time_property: the IRI of the property that gives a graph its time.
        style: set to ``iso=True`` once a time is a date (for writers sharing it).
        on_reject: called with each :class:`Rejected`; default: log it.
        counts: updated with the number of graphs read and of graphs that gave no event.
        positions: a list the reader adds its :class:`Position` to, to find the line of the
            graph of an event rejected later.

    Returns:
        A lazy iterator of atomic events; each graph's events share its time.

    Raises:
        InputFormatError: a named file does not exist (checked at once) or cannot be read, or
            the syntax is unknown.

    Example:
        >>> import io
        >>> text = '<urn:g> {<urn:s> <urn:p> 1} <urn:g> <%s> 5 .' % GENERATED_AT_TIME
        >>> list(read_rdf(io.StringIO(text)))
        [Event(name='triple', args=(IRI(value='urn:s'), IRI(value='urn:p'), 1), start=5, end=5)]
    """
    if isinstance(source, str | Path) and str(source) != "-" and not Path(source).is_file():
        raise InputFormatError(f"{source}: no such RDF file")
    if syntax is None:
        suffix = Path(source).suffix.lower() if isinstance(source, str | Path) else ""
        syntax = SYNTAXES.get(suffix, "trig")
    if syntax not in ("nquads", "trig"):
        raise InputFormatError(f"unknown RDF stream syntax {syntax!r} (use nquads or trig)")
    try:
        time_node = ox.NamedNode(time_property)
    except ValueError as exc:
        raise InputFormatError(f"bad time property {time_property!r}: {exc}") from None
    reader = _Reader(
        mapping or GraphMapping(Program()),
        time_node,
        style or TimeStyle(),
        on_reject or log_rejected,
        counts or GraphCounts(),
        syntax,
    )
    if positions is not None:
        positions.append(reader.where)
    return reader.read(source)


class _Unusable(Exception):
    """A graph that gives no events but a rejection (the reason)."""


@dataclass(slots=True)
class _Graph:
    """The statements read so far about one graph (``key``: its name)."""

    key: object
    line: int
    content: list[ox.Quad] = field(default_factory=list)
    about: list[ox.Quad] = field(default_factory=list)  # default-graph triples about it
    broken: bool = False


class _Where(Position):
    """A :class:`Position` in an RDF stream: the events of the graph read last, and either
    the line it starts on or (read by the streaming parser) its number in the file."""

    __slots__ = ("events", "graph", "reader")

    def __init__(self, reader: _Reader) -> None:
        super().__init__(reader.file)
        self.reader = reader
        self.events: list[Event] = []
        self.graph: int | None = None

    def holds(self, event: object) -> bool:
        return any(mine is event for mine in self.events)

    def rejected(self, reason: str) -> Rejected:
        line = self.line if self.graph is None else self.reader.graph_line(self.graph)
        return Rejected(self.file, line, reason)


class _Reader:
    def __init__(
        self,
        mapping: GraphMapping,
        time_property: ox.NamedNode,
        style: TimeStyle,
        on_reject: RejectHandler,
        counts: GraphCounts,
        syntax: str,
    ) -> None:
        self.mapping = mapping
        self.time_property = time_property
        self.style = style
        self.on_reject = on_reject
        self.counts = counts
        self.syntax = syntax
        self.file = "<stream>"
        self.nodes: dict[object, Value] = {}
        self.skip = 0  # graphs the statement-wise reader passes over (already read)
        self.where = _Where(self)
        self.starts: Iterator[tuple[int, _Graph]] | None = None  # see graph_line
        self.found = (-1, 0)  # the graph graph_line found last, and its line

    def read(self, source: str | Path | TextIO) -> Iterator[Event]:
        if isinstance(source, str | Path) and str(source) != "-":
            self.file = self.where.file = str(source)
            try:
                done = yield from self._streamed(Path(source))
                if done is not None:
                    with open(source, encoding="utf-8") as stream:
                        yield from self._events(stream, skip=done)
            except (OSError, UnicodeDecodeError) as exc:
                raise InputFormatError(f"{source}: cannot read RDF: {exc}") from exc
        else:
            text: TextIO = source  # type: ignore[assignment]
            if isinstance(source, str | Path):  # (standard input)
                text = io.TextIOWrapper(standard_input(), encoding="utf-8")
            self.file = self.where.file = getattr(text, "name", "<stream>")
            yield from self._events(text)

    # ------------------------------------------------------------------ graphs

    def _streamed(self, path: Path) -> Generator[Event, None, int | None]:
        """Parse the whole file with pyoxigraph's streaming parser, turning each graph into
        events; return None at its end, or at the first problem the number of graphs turned
        into events before it (the statement-wise reader takes over from there).

        A graph is converted only once the one after it is complete too: a malformed line may
        start with a quad the parser has already given (N-Quads drops the graphs around it).
        """
        fmt = ox.RdfFormat.N_QUADS if self.syntax == "nquads" else ox.RdfFormat.TRIG
        done, previous, current = 0, None, None
        try:
            with open(path, "rb") as stream:
                default = ox.DefaultGraph
                for quad in ox.parse(stream, fmt):
                    key = quad.graph_name  # (pyoxigraph builds a term at each access)
                    named = type(key) is not default
                    if not named:
                        key = quad.subject
                    if current is None or key != current.key:
                        if previous is not None:
                            yield from self._noted(self._convert(previous), done)
                            done += 1
                        previous, current = current, _Graph(key, 0)
                    (current.content if named else current.about).append(quad)
            for graph in (previous, current):
                if graph is not None:
                    yield from self._noted(self._convert(graph), done)
                    done += 1
        except (SyntaxError, _Unusable):
            return done
        return None

    def _noted(self, events: list[Event], graph: int | None) -> list[Event]:
        """The events of the ``graph``-th graph of the file (from 0), noted in the position."""
        self.where.events, self.where.graph = events, graph
        return events

    def graph_line(self, graph: int) -> int:
        """The line the ``graph``-th graph of the file starts on (asked in file order: the
        file is read once, as far as the graphs asked for)."""
        if self.starts is None:
            quiet = _Reader(
                self.mapping, self.time_property, self.style, _ignore, GraphCounts(), self.syntax
            )
            self.starts = enumerate(quiet._graphs(_lines(self.file)))
        for number, start in self.starts if self.found[0] < graph else ():
            self.found = number, start.line
            if number == graph:
                break
        return self.found[1]

    def _events(self, lines: Iterable[str], skip: int = 0) -> Iterator[Event]:
        """Turn each graph into events (but not the first ``skip`` graphs, already read)."""
        self.skip = skip
        for graph in self._graphs(lines):
            yield from self._finish(graph)

    def _graphs(self, lines: Iterable[str]) -> Iterator[_Graph]:
        """Group parsed quads into graphs."""
        parsed = self._nquads(lines) if self.syntax == "nquads" else self._trig(lines)
        current: _Graph | None = None
        spoil_next = False  # N-Quads: the graph after a broken line is dropped too
        for line, quad in parsed:
            if quad is None:
                if current is not None:
                    if self.syntax == "nquads":
                        current.broken = spoil_next = True
                    else:
                        yield current
                        current = None
                continue
            named = not isinstance(quad.graph_name, ox.DefaultGraph)
            key = quad.graph_name if named else quad.subject
            if current is None or key != current.key:
                if current is not None:
                    yield current
                current = _Graph(key, line, broken=spoil_next)
            spoil_next = False
            (current.content if named else current.about).append(quad)
        if current is not None:
            yield current

    def _finish(self, graph: _Graph) -> Iterator[Event]:
        if self.skip:
            self.skip -= 1
            return
        try:
            events = self._convert(graph)
        except _Unusable as exc:
            self._reject(graph.line, str(exc))
            return
        self.where.line = graph.line
        yield from self._noted(events, None)

    def _convert(self, graph: _Graph) -> list[Event]:
        """The events of one graph; raises _Unusable with the reason to reject it."""
        name = str(graph.key)
        if graph.broken:
            raise _Unusable(f"graph {name} dropped: a malformed line may belong to it")
        if not graph.content:
            raise _Unusable(f"default-graph triples about {name}, but no graph {name}")
        value = self._value
        terms = [(q.subject, q.predicate, q.object) for q in graph.content]
        try:
            time = self._time(graph.key, graph.about, terms)
            triples = [(value(s), value(p), value(o)) for s, p, o in terms]
            occurrences = self.mapping.events(triples, time)
        except (ReasonerError, ValueError) as exc:  # ValueError: a bad time stamp
            raise _Unusable(f"graph {name}: {exc}") from None
        self.counts.graphs += 1
        if not occurrences:
            self.counts.unmatched += 1
        return [Event(event_name, args, time, time) for event_name, args in occurrences]

    def _time(self, key: object, about: list[ox.Quad], terms: Sequence[tuple[Any, ...]]) -> Time:
        """The time of graph ``key`` from the default-graph triples ``about`` it and the
        ``terms`` (subject, predicate, object) of its own triples."""
        prop = self.time_property
        stamps: set[Any] = {q.object for q in about if q.predicate == prop}
        stamps.update(o for s, p, o in terms if p == prop and s == key)
        if not stamps:
            stamps = {o for _, p, o in terms if p == prop}
        if not stamps:
            raise ValueError(f"no time: no {prop} about the graph or inside it")
        if len(stamps) > 1:
            raise ValueError(f"conflicting times {', '.join(sorted(map(str, stamps)))}")
        value = to_value(stamps.pop())
        time = parse_time(value)
        if isinstance(value, str):
            self.style.iso = True
        return time

    def _value(self, term: object) -> Value:
        value = self.nodes.get(term)
        if value is None:
            if len(self.nodes) >= _CACHE_SIZE:  # bounded: observation IRIs never repeat
                self.nodes.clear()
            value = self.nodes[term] = to_value(term)
        return value

    def _reject(self, line: int, reason: str) -> None:
        self.on_reject(Rejected(self.file, line, reason))

    # ----------------------------------------------------------------- parsing

    def _trig(self, lines: Iterable[str]) -> Iterator[tuple[int, ox.Quad | None]]:
        preamble, shift = "", 0  # the directives so far, prepended to every statement
        for statement in trig_statements(lines):
            quads = self._parse(preamble + statement.text, ox.RdfFormat.TRIG, statement, shift)
            if quads is None:
                yield statement.line, None
            elif statement.directive:
                preamble += statement.text + "\n"
                shift = preamble.count("\n")
            else:
                for quad in quads:
                    yield statement.line, quad

    def _nquads(self, lines: Iterable[str]) -> Iterator[tuple[int, ox.Quad | None]]:
        for batch in nquads_batches(lines):
            try:
                quads = list(ox.parse("".join(s.text for s in batch), ox.RdfFormat.N_QUADS))
            except SyntaxError:  # find the broken lines: parse one at a time
                for statement in batch:
                    parsed = self._parse(statement.text, ox.RdfFormat.N_QUADS, statement, 0)
                    yield statement.line, None if parsed is None else parsed[0]
                continue
            # N-Quads has exactly one quad per line: the i-th quad comes from the i-th line.
            yield from zip((s.line for s in batch), quads, strict=True)

    def _parse(
        self, text: str, fmt: ox.RdfFormat, statement: Statement, shift: int
    ) -> list[ox.Quad] | None:
        """Parse one statement (after ``shift`` lines of directives); None if malformed."""
        try:
            return list(ox.parse(text, fmt))
        except SyntaxError as exc:
            line = statement.line + max((exc.lineno or 1) - 1 - shift, 0)
            # pyoxigraph's message starts with its own (statement-relative) position.
            reason = exc.msg.split(": ", 1)[-1] if exc.msg.startswith("Parser error") else exc.msg
            self._reject(line, f"malformed RDF: {reason}")
            return None


def _ignore(rejected: Rejected) -> None:
    """A reject handler for a second reading: the first one reported everything."""


def _lines(file: str) -> Iterator[str]:
    with open(file, encoding="utf-8") as stream:
        yield from stream
