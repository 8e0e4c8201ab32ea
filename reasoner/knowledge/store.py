"""The RDF store: a thin wrapper around ``pyoxigraph.Store`` (the only pyoxigraph importer).

Two graphs matter to the project: the default graph holds *asserted* triples (what files and
the Spark pipeline load) and :data:`INFERRED_GRAPH` holds what entailment and Horn rules
derived, so the two stay distinguishable (``GRAPH <urn:reasoner:graph:inferred>`` in SPARQL).

Term conversion between pyoxigraph and :mod:`reasoner.values`:

* named node ``<x>`` ↔ :class:`~reasoner.values.IRI` ``IRI("x")``;
* blank node ``_:b`` ↔ ``IRI("_:b")`` (values have no blank nodes; the ``_:`` prefix keeps
  them apart from real IRIs and round-trips);
* numeric literals (xsd:integer and its subtypes, xsd:decimal, xsd:double, xsd:float) ↔ Python
  ``int`` / ``float``; a numeric literal with an invalid lexical form stays a ``str``;
* every other literal → its lexical form as ``str`` (language tags and other datatypes are
  dropped: atoms, strings and plain literals compare equal, see :mod:`reasoner.values`).
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pyoxigraph as ox
from tqdm import tqdm

from reasoner.errors import KnowledgeError
from reasoner.values import IRI, Value
from reasoner.vocab import XSD

#: The named graph holding every inferred triple (entailment and Horn rules).
INFERRED_GRAPH = "urn:reasoner:graph:inferred"

#: File extensions (lower case) and the RDF syntax they mean.
FORMATS: dict[str, ox.RdfFormat] = {
    ".ttl": ox.RdfFormat.TURTLE,
    ".turtle": ox.RdfFormat.TURTLE,
    ".nt": ox.RdfFormat.N_TRIPLES,
    ".ntriples": ox.RdfFormat.N_TRIPLES,
    ".nq": ox.RdfFormat.N_QUADS,
    ".nquads": ox.RdfFormat.N_QUADS,
    ".trig": ox.RdfFormat.TRIG,
    ".rdf": ox.RdfFormat.RDF_XML,
    ".owl": ox.RdfFormat.RDF_XML,
    ".xml": ox.RdfFormat.RDF_XML,
    ".jsonld": ox.RdfFormat.JSON_LD,
    ".json": ox.RdfFormat.JSON_LD,
}

#: Format names accepted by ``format=`` arguments.
FORMAT_NAMES: dict[str, ox.RdfFormat] = {
    "turtle": ox.RdfFormat.TURTLE,
    "ntriples": ox.RdfFormat.N_TRIPLES,
    "nquads": ox.RdfFormat.N_QUADS,
    "trig": ox.RdfFormat.TRIG,
    "rdfxml": ox.RdfFormat.RDF_XML,
    "jsonld": ox.RdfFormat.JSON_LD,
}

_INTEGER_TYPES = frozenset(
    XSD + t
    for t in (
        "integer",
        "int",
        "long",
        "short",
        "byte",
        "nonNegativeInteger",
        "positiveInteger",
        "nonPositiveInteger",
        "negativeInteger",
        "unsignedLong",
        "unsignedInt",
        "unsignedShort",
        "unsignedByte",
    )
)
_FLOAT_TYPES = frozenset(XSD + t for t in ("decimal", "double", "float"))

#: Triple with values in place of RDF terms.
Triple = tuple[Value, Value, Value]

#: SELECT/ASK answer serializations by name (the endpoint's negotiation keys).
RESULT_FORMATS: dict[str, ox.QueryResultsFormat] = {
    "json": ox.QueryResultsFormat.JSON,
    "xml": ox.QueryResultsFormat.XML,
    "csv": ox.QueryResultsFormat.CSV,
    "tsv": ox.QueryResultsFormat.TSV,
}
#: CONSTRUCT/DESCRIBE answer serializations by name (likewise).
GRAPH_FORMATS: dict[str, ox.RdfFormat] = {
    "turtle": ox.RdfFormat.TURTLE,
    "ntriples": ox.RdfFormat.N_TRIPLES,
    "rdfxml": ox.RdfFormat.RDF_XML,
    "jsonld": ox.RdfFormat.JSON_LD,
}


class SparqlError(KnowledgeError):
    """A SPARQL query or update that does not parse or cannot be evaluated."""


# ------------------------------------------------------------------------ term conversion


def to_value(term: object) -> Value:
    """Convert a pyoxigraph term to a run-time value.

    Args:
        term: a ``NamedNode``, ``BlankNode`` or ``Literal``.
    Returns:
        ``IRI`` for nodes, ``int``/``float`` for numeric literals, ``str`` otherwise.

    >>> to_value(ox.Literal("60", datatype=ox.NamedNode(XSD + "int")))
    60
    """
    if isinstance(term, ox.NamedNode):
        return IRI(term.value)
    if isinstance(term, ox.BlankNode):
        return IRI("_:" + term.value)
    if isinstance(term, ox.Literal):
        return literal_value(term.value, term.datatype.value)
    raise KnowledgeError(f"cannot convert RDF term {term!r} to a value")


def literal_value(lexical: str, datatype: str | None) -> Value:
    """The run-time value of an RDF literal given its lexical form and datatype IRI.

    Args:
        lexical: the literal's text.
        datatype: its datatype IRI (None for a plain or language-tagged literal).
    Returns:
        ``int`` or ``float`` for numeric datatypes, otherwise the text.

    >>> literal_value("2.5", "http://www.w3.org/2001/XMLSchema#decimal")
    2.5
    """
    try:
        if datatype in _INTEGER_TYPES:
            return int(lexical)
        if datatype in _FLOAT_TYPES:
            return float(lexical)
    except ValueError:
        # An ill-typed literal ("abc"^^xsd:int) is still data: keep its text.
        return lexical
    return lexical


def to_term(value: Value) -> ox.NamedNode | ox.BlankNode | ox.Literal:
    """Convert a run-time value to a pyoxigraph term (the inverse of :func:`to_value`).

    Args:
        value: an ``IRI``, ``str``, ``int``, ``float`` or ``Fraction``.
    Returns:
        the RDF term; ``Fraction`` becomes an ``xsd:double`` literal.
    Raises:
        KnowledgeError: for compound values and lists, which have no RDF form.

    >>> to_term(IRI("http://ex.org/a"))
    <NamedNode value=http://ex.org/a>
    """
    match value:
        case IRI(value=v) if v.startswith("_:"):
            return ox.BlankNode(v[2:])
        case IRI(value=v):
            try:
                return ox.NamedNode(v)
            except ValueError as e:
                raise KnowledgeError(f"invalid IRI {v!r}: {e}") from e
        case bool():
            return ox.Literal("true" if value else "false", datatype=ox.NamedNode(XSD + "boolean"))
        case int() | float():
            return ox.Literal(value)
        case Fraction():
            return ox.Literal(float(value))
        case str():
            return ox.Literal(value)
    raise KnowledgeError(f"value {value!r} has no RDF form")


_Term = ox.NamedNode | ox.BlankNode | ox.Literal


def _node(value: Value | None) -> _Term | None:
    return None if value is None else to_term(value)


# ------------------------------------------------------------------------------ results


@dataclass(frozen=True, slots=True)
class SparqlResult:
    """The answer to a SPARQL query, in run-time values.

    ``kind`` is ``"select"``, ``"ask"`` or ``"graph"`` (CONSTRUCT/DESCRIBE). For ``select``,
    ``variables`` names the columns and ``rows`` holds one tuple per solution (``None`` for an
    unbound column); for ``ask``, ``boolean``; for ``graph``, ``triples``.
    """

    kind: str
    variables: tuple[str, ...] = ()
    rows: tuple[tuple[Value | None, ...], ...] = ()
    boolean: bool | None = None
    triples: tuple[Triple, ...] = ()


# -------------------------------------------------------------------------------- store


class Store:
    """An RDF store in memory or on disk.

    Args:
        path: the directory of an on-disk store, or None for memory.
        create: make the store when ``path`` does not hold one yet (only builds do: a
            mistyped path must not become an empty store that answers nothing).
    Raises:
        KnowledgeError: ``path`` is missing or empty and ``create`` is False, or cannot be
            opened.

    >>> s = Store()
    >>> s.load_text('<http://e/a> <http://e/p> "1"^^<http://www.w3.org/2001/XMLSchema#int> .',
    ...             "ntriples")
    >>> list(s.triples(None, IRI("http://e/p"), None))
    [(IRI(value='http://e/a'), IRI(value='http://e/p'), 1)]
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, create: bool = False) -> None:
        self.path = None if path is None else Path(path)
        if self.path is not None and not create and not _holds_files(self.path):
            raise KnowledgeError(
                f"{path}: no knowledge store there (`reasoner knowledge build --out {path}` "
                "builds one)"
            )
        try:
            self._store = ox.Store(None if path is None else str(path))
        except OSError as e:
            raise KnowledgeError(f"cannot open the store at {path}: {e}") from e

    # ------------------------------------------------------------------ loading

    def load(
        self,
        sources: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
        *,
        format: str | None = None,
        graph: str | None = None,
        progress: bool = False,
    ) -> int:
        """Load RDF files, or every RDF file under folders, into the store.

        Each file loads in one transaction: a malformed file adds nothing.

        Args:
            sources: a file or folder path, or several.
            format: a :data:`FORMAT_NAMES` key; by default guessed from each file's extension.
            graph: the named graph IRI for triple formats (default graph if None).
            progress: show a tqdm progress bar over the files.
        Returns:
            the number of files loaded.
        Raises:
            KnowledgeError: naming the file and line of malformed input, or a missing path.

        >>> Store().load("ontologies/")  # doctest: +SKIP
        1
        """
        files = rdf_files(sources, explicit_format=format is not None)
        for file in tqdm(files, desc="loading RDF", unit="file", disable=not progress or not files):
            self._load_one(file, format, graph, bulk=False)
        return len(files)

    def bulk_load(
        self,
        path: str | os.PathLike[str],
        format: str | None = None,
        *,
        graph: str | None = None,
    ) -> None:
        """Load one big file quickly, without a transaction (for Spark's N-Triples output).

        Args:
            path: the file (a folder loads every RDF file in it).
            format: a :data:`FORMAT_NAMES` key, or None to guess from the extension.
            graph: the named graph IRI for triple formats (default graph if None).
        Raises:
            KnowledgeError: naming the file and line of malformed input.

        >>> Store("/tmp/kb").bulk_load("part-0000.nt", "ntriples")  # doctest: +SKIP
        """
        for file in rdf_files(path, explicit_format=format is not None):
            self._load_one(file, format, graph, bulk=True)

    def load_text(
        self, text: str, format: str, *, graph: str | None = None, base_iri: str | None = None
    ) -> None:
        """Load RDF given as text (tests, the endpoint's graph store protocol).

        Args:
            text: the RDF document.
            format: a :data:`FORMAT_NAMES` key.
            graph: the named graph IRI for triple formats (default graph if None).
            base_iri: the base against which relative IRIs resolve.
        Raises:
            KnowledgeError: with the line of malformed input.

        >>> Store().load_text("<http://e/a> <http://e/p> <http://e/b> .", "turtle")
        """
        try:
            self._store.load(
                text,
                format=_format(format, "<text>"),
                base_iri=base_iri,
                to_graph=_graph(graph),
            )
        except SyntaxError as e:
            raise KnowledgeError(f"<text>:{e.lineno}: malformed {format}: {e.msg}") from e
        except (ValueError, OSError) as e:
            raise KnowledgeError(f"<text>: cannot load {format}: {e}") from e

    def _load_one(self, file: Path, format: str | None, graph: str | None, bulk: bool) -> None:
        rdf_format = _format(format, file) if format else FORMATS[file.suffix.lower()]
        loader = self._store.bulk_load if bulk else self._store.load
        try:
            loader(
                path=str(file),
                format=rdf_format,
                base_iri=file.resolve().as_uri(),
                to_graph=_graph(graph),
            )
        except SyntaxError as e:
            raise KnowledgeError(f"{file}:{e.lineno}: malformed RDF: {e.msg}") from e
        except (ValueError, OSError) as e:
            raise KnowledgeError(f"{file}: cannot load: {e}") from e

    # ------------------------------------------------------------------ triples

    def add(self, triples: Iterable[Triple], graph: str | None = INFERRED_GRAPH) -> int:
        """Add triples to a graph (the inferred graph by default).

        Args:
            triples: ``(subject, predicate, object)`` values.
            graph: the named graph IRI, or None for the default graph.
        Returns:
            how many triples were given.
        Raises:
            KnowledgeError: when a value has no RDF form or a literal is a subject.

        >>> Store().add([(IRI("http://e/a"), IRI("http://e/p"), 3)])
        1
        """
        g = _graph(graph)
        quads = []
        for s, p, o in triples:
            subject, predicate = to_term(s), to_term(p)
            if isinstance(subject, ox.Literal) or not isinstance(predicate, ox.NamedNode):
                raise KnowledgeError(f"({s!r}, {p!r}, {o!r}) is not an RDF triple")
            quads.append(ox.Quad(subject, predicate, to_term(o), g))
        self._store.extend(quads)
        return len(quads)

    def clear_graph(self, graph: str | None = INFERRED_GRAPH) -> None:
        """Remove every triple of a graph (the inferred graph by default).

        Args:
            graph: the named graph IRI, or None for the default graph.

        >>> Store().clear_graph()
        """
        self._store.clear_graph(_graph(graph))

    def triples(
        self,
        subject: Value | None = None,
        predicate: Value | None = None,
        obj: Value | None = None,
        *,
        graph: str | None = "all",
    ) -> Iterator[Triple]:
        """Triples matching a pattern (None is a wildcard).

        Args:
            subject, predicate, obj: values or None.
            graph: ``"all"`` (asserted and inferred, duplicates removed), None (the default,
                asserted graph) or a named graph IRI.
        Returns:
            an iterator of value triples.

        >>> list(Store().triples(IRI("http://e/nobody")))
        []
        """
        try:
            s, p, o = _node(subject), _node(predicate), _node(obj)
        except KnowledgeError:
            return  # a value with no RDF form (a list) matches no triple
        if isinstance(s, ox.Literal) or not isinstance(p, ox.NamedNode | None):
            return  # literals are never subjects or predicates
        if graph == "all":
            seen: set[Triple] = set()
            for quad in self._store.quads_for_pattern(s, p, o, None):
                t = (to_value(quad.subject), to_value(quad.predicate), to_value(quad.object))
                if t not in seen:
                    seen.add(t)
                    yield t
            return
        for quad in self._store.quads_for_pattern(s, p, o, _graph(graph)):
            yield (to_value(quad.subject), to_value(quad.predicate), to_value(quad.object))

    def __len__(self) -> int:
        return len(self._store)

    @property
    def oxigraph(self) -> ox.Store:
        """The underlying ``pyoxigraph.Store``, for code that needs pyoxigraph's own API (the
        SPARQL endpoint streams answers with its serializers and passes protocol datasets).

        Writes through it bypass this class's checks and error wrapping: prefer the methods
        above wherever they suffice.

        >>> len(Store().oxigraph)
        0
        """
        return self._store

    # ------------------------------------------------------------------- SPARQL

    def query(self, sparql: str, *, union_default_graph: bool = True) -> SparqlResult:
        """Run a SPARQL query and convert its answer to values.

        Args:
            sparql: the query text.
            union_default_graph: let the default graph be the union of all graphs, so that
                inferred triples answer plain patterns.
        Returns:
            a :class:`SparqlResult`.
        Raises:
            SparqlError: for a query that does not parse or fails.

        >>> Store().query("ASK { ?s ?p ?o }").boolean
        False
        """
        answer = self._run(sparql, union_default_graph)
        if isinstance(answer, ox.QueryBoolean):
            return SparqlResult("ask", boolean=bool(answer))
        if isinstance(answer, ox.QuerySolutions):
            names = tuple(v.value for v in answer.variables)
            rows = tuple(
                tuple(None if sol[n] is None else to_value(sol[n]) for n in names) for sol in answer
            )
            return SparqlResult("select", variables=names, rows=rows)
        triples = tuple(
            (to_value(t.subject), to_value(t.predicate), to_value(t.object)) for t in answer
        )
        return SparqlResult("graph", triples=triples)

    def query_serialized(
        self, sparql: str, format: str, *, union_default_graph: bool = True
    ) -> tuple[str, bytes]:
        """Run a SPARQL query and serialize its answer for HTTP.

        Args:
            sparql: the query text.
            format: for SELECT/ASK one of ``json``, ``xml``, ``csv``, ``tsv``; for
                CONSTRUCT/DESCRIBE the results are N-Triples or Turtle (``turtle``) — any
                other value gives N-Triples.
            union_default_graph: as in :meth:`query`.
        Returns:
            ``(kind, body)`` where kind is ``select``, ``ask`` or ``graph``.
        Raises:
            SparqlError: for a query that does not parse or fails.

        >>> Store().query_serialized("ASK { ?s ?p ?o }", "json")[1]
        b'{"head":{},"boolean":false}'
        """
        answer = self._run(sparql, union_default_graph)
        try:
            if isinstance(answer, ox.QueryBoolean | ox.QuerySolutions):
                kind = "ask" if isinstance(answer, ox.QueryBoolean) else "select"
                fmt = RESULT_FORMATS.get(format, ox.QueryResultsFormat.JSON)
                return kind, answer.serialize(format=fmt) or b""
            rdf = ox.RdfFormat.TURTLE if format == "turtle" else ox.RdfFormat.N_TRIPLES
            return "graph", answer.serialize(format=rdf) or b""
        except (OSError, ValueError) as e:
            raise SparqlError(f"cannot serialize the query answer: {e}") from e

    def update(self, sparql: str) -> None:
        """Run a SPARQL 1.1 Update (INSERT DATA, DELETE WHERE, LOAD is refused offline).

        Args:
            sparql: the update text.
        Raises:
            SparqlError: for an update that does not parse or fails.

        >>> Store().update("INSERT DATA { <http://e/a> <http://e/p> 1 }")
        """
        try:
            self._store.update(sparql)
        except SyntaxError as e:
            raise SparqlError(f"malformed SPARQL update: {e.msg}") from e
        except (ValueError, OSError) as e:
            raise SparqlError(f"SPARQL update failed: {e}") from e

    def _run(
        self, sparql: str, union_default_graph: bool
    ) -> ox.QueryBoolean | ox.QuerySolutions | ox.QueryTriples:
        try:
            return self._store.query(sparql, use_default_graph_as_union=union_default_graph)
        except SyntaxError as e:
            raise SparqlError(f"malformed SPARQL query: {e.msg}") from e
        except (ValueError, OSError) as e:
            raise SparqlError(f"SPARQL query failed: {e}") from e

    # ------------------------------------------------------------------ housekeeping

    def flush(self) -> None:
        """Write pending changes of an on-disk store to disk (a no-op in memory)."""
        if self.path is not None:
            self._store.flush()

    def dump_text(self, format: str = "nquads") -> str:
        """Serialize the whole store (every graph) for debugging and tests.

        Args:
            format: ``nquads`` or ``trig`` (formats that keep graph names).
        Returns:
            the document as text.

        >>> Store().dump_text()
        ''
        """
        buffer = io.BytesIO()
        self._store.dump(buffer, format=_format(format, "<dump>"))
        return buffer.getvalue().decode()


def rdf_files(
    sources: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *, explicit_format: bool
) -> list[Path]:
    """The RDF files named by paths: files as given, folders searched recursively.

    Args:
        sources: one path or several.
        explicit_format: accept files with unknown extensions (the caller names the format).
    Returns:
        the files, folder contents sorted by name so that loading is deterministic.
    Raises:
        KnowledgeError: for a missing path or a file of unknown type.

    >>> rdf_files([], explicit_format=False)
    []
    """
    paths = [sources] if isinstance(sources, str | os.PathLike) else list(sources)
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.extend(
                sorted(f for f in path.rglob("*") if f.is_file() and f.suffix.lower() in FORMATS)
            )
        elif path.is_file():
            if not explicit_format and path.suffix.lower() not in FORMATS:
                known = ", ".join(sorted(FORMATS))
                raise KnowledgeError(f"{path}: unknown RDF file type (expected one of {known})")
            out.append(path)
        else:
            raise KnowledgeError(f"{path}: no such file or folder")
    return out


def _format(name: str, where: object) -> ox.RdfFormat:
    try:
        return FORMAT_NAMES[name]
    except KeyError:
        known = ", ".join(sorted(FORMAT_NAMES))
        raise KnowledgeError(f"{where}: unknown RDF format {name!r} (expected {known})") from None


def _graph(graph: str | None) -> ox.NamedNode | ox.DefaultGraph:
    return ox.DefaultGraph() if graph is None else ox.NamedNode(graph)


def _holds_files(folder: Path) -> bool:
    return folder.is_dir() and any(folder.iterdir())
