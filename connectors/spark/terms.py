"""RDF terms as N-Triples strings: the representation of triples inside the Spark jobs.

A triple table is a DataFrame with string columns ``s``, ``p``, ``o`` holding terms in
N-Triples syntax (``<iri>``, ``_:b0``, ``"text"``, ``"1.5"^^<...#double>``, ``"hi"@en``). Terms
compare by string equality, joins need no decoding, and writing N-Triples is a concatenation.
Column helpers import pyspark lazily: importing this module starts nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rdflib import BNode, Literal, URIRef
from rdflib.term import Node

from reasoner.errors import KnowledgeError
from reasoner.vocab import XSD

if TYPE_CHECKING:
    from pyspark.sql import Column

#: The columns of every triple table.
TRIPLE_COLUMNS = ("s", "p", "o")

_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"})


def iri(value: str) -> str:
    """An IRI in N-Triples syntax.

    Args:
        value: the IRI.
    Returns:
        ``<value>``.

    >>> iri("http://e/a")
    '<http://e/a>'
    """
    return f"<{value}>"


def escape(text: str) -> str:
    """Escape a literal's lexical form for N-Triples (backslash, quote, newlines).

    Args:
        text: the lexical form.
    Returns:
        the escaped text, without surrounding quotes.

    >>> escape('say "hi"')
    'say \\\\"hi\\\\"'
    """
    return text.translate(_ESCAPES)


def term(node: Node) -> str:
    """Encode an rdflib term in N-Triples syntax.

    Args:
        node: a ``URIRef``, ``BNode`` or ``Literal``.
    Returns:
        the term's N-Triples form; plain literals without language are written ``"x"``.
    Raises:
        KnowledgeError: for other node kinds (variables, quoted graphs).

    >>> term(Literal(3))
    '"3"^^<http://www.w3.org/2001/XMLSchema#integer>'
    """
    if isinstance(node, URIRef):
        return iri(str(node))
    if isinstance(node, BNode):
        return f"_:{node}"
    if isinstance(node, Literal):
        body = f'"{escape(str(node))}"'
        if node.language:
            return f"{body}@{node.language}"
        if node.datatype is not None and str(node.datatype) != XSD + "string":
            return f"{body}^^<{node.datatype}>"
        return body
    raise KnowledgeError(f"{node!r} cannot appear in an N-Triples file")


def iri_col(prefix: str, column: Column, suffix: str = "") -> Column:
    """A column of IRIs ``<prefix + column + suffix>``.

    Args:
        prefix: the text before the column value.
        column: a string-convertible column.
        suffix: the text after it.
    Returns:
        the N-Triples IRI column.

    >>> iri_col("https://sws.geonames.org/", F.col("geonameid"), "/")  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    return F.concat(F.lit("<" + prefix), column.cast("string"), F.lit(suffix + ">"))


def literal_col(column: Column, datatype: str | None = None) -> Column:
    """A column of literals, typed when ``datatype`` is given (null stays null).

    Args:
        column: the values (cast to string for the lexical form).
        datatype: the datatype IRI, or None for a plain string literal.
    Returns:
        the N-Triples literal column.

    >>> literal_col(F.col("lat"), XSD + "double")  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    text = column.cast("string")
    for raw, escaped in (("\\\\", "\\\\\\\\"), ('"', '\\\\"'), ("\n", "\\\\n"), ("\r", "\\\\r")):
        text = F.regexp_replace(text, raw, escaped)
    tail = "" if datatype is None else f"^^<{datatype}>"
    return F.concat(F.lit('"'), text, F.lit('"' + tail))


def const(value: str) -> Column:
    """A constant term column (already in N-Triples syntax).

    Args:
        value: the term, e.g. ``iri(RDF_TYPE)``.
    Returns:
        a literal Spark column.

    >>> const(iri("http://e/a"))  # doctest: +SKIP
    """
    from pyspark.sql import functions as F

    return F.lit(value)
