"""Run-time values as N-Triples terms: the one place that writes RDF text for values.

The mapping mirrors :func:`reasoner.knowledge.store.to_value` so that text written here and
read back by the store (or by :mod:`connectors.rdf.reader`) gives the same values:

* :class:`~reasoner.values.IRI` → ``<iri>`` (``IRI("_:b")`` → the blank node ``_:b``);
* ``int`` → ``xsd:integer``, ``float`` and ``Fraction`` → ``xsd:double`` (``repr`` keeps
  every float exact), ``bool`` → ``xsd:boolean``, ``str`` → a plain string literal;
* compound values and lists, which RDF lacks, → their rule-language text typed ``r:term``.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from reasoner.errors import KnowledgeError
from reasoner.values import IRI, Struct, Value
from reasoner.vocab import XSD

#: The project's small vocabulary (detections, compound terms).
VOCAB = "urn:reasoner:vocab#"

_BAD_IRI_CHARS = frozenset('<>"{}|^`\\ \n\r\t')
_BLANK = re.compile(r"_:[A-Za-z0-9_][A-Za-z0-9_.\-]*(?<!\.)")


def term(value: Value) -> str:
    """The N-Triples text of a value.

    Args:
        value: any run-time value.
    Returns:
        an IRI, blank node or literal in N-Triples syntax.
    Raises:
        KnowledgeError: for an IRI that N-Triples cannot write.

    >>> term(IRI("http://ex.org/a")), term(2.5), term("say \\"hi\\"")
    ('<http://ex.org/a>', '"2.5"^^<http://www.w3.org/2001/XMLSchema#double>', '"say \\\\"hi\\\\""')
    """
    if isinstance(value, IRI):
        return iri(value.value)
    return literal(value)


def iri(text: str) -> str:
    """``<text>``, or the blank node ``_:x`` for ``"_:x"``.

    Raises:
        KnowledgeError: when the text holds characters an IRI cannot contain.

    >>> iri("urn:reasoner:graph:detections")
    '<urn:reasoner:graph:detections>'
    """
    if text.startswith("_:") and _BLANK.fullmatch(text):
        return text
    if not text or any(c in _BAD_IRI_CHARS for c in text):
        raise KnowledgeError(f"cannot write the IRI {text!r} in RDF: not a valid IRI")
    return f"<{text}>"


def literal(value: Value) -> str:
    """The literal for a non-IRI value (see the module doc for the datatypes).

    >>> literal(3)
    '"3"^^<http://www.w3.org/2001/XMLSchema#integer>'
    """
    text, datatype = _lexical(value)
    return string(text) if datatype is None else f"{string(text)}^^<{datatype}>"


def json_term(value: Value) -> dict[str, str]:
    """A value as an RDF term of SPARQL 1.1 Query Results JSON (the datatypes of
    :func:`literal`).

    >>> json_term(IRI("http://ex.org/a")), json_term(2)
    ({'type': 'uri', 'value': 'http://ex.org/a'}, {'type': 'literal', 'value': '2', \
'datatype': 'http://www.w3.org/2001/XMLSchema#integer'})
    """
    if isinstance(value, IRI):
        if value.value.startswith("_:"):
            return {"type": "bnode", "value": value.value[2:]}
        return {"type": "uri", "value": value.value}
    text, datatype = _lexical(value)
    if datatype is None:
        return {"type": "literal", "value": text}
    return {"type": "literal", "value": text, "datatype": datatype}


def _lexical(value: Value) -> tuple[str, str | None]:
    """A non-IRI value's lexical form and datatype (None: a plain string)."""
    match value:
        case bool():
            return str(value).lower(), f"{XSD}boolean"
        case int():
            return str(value), f"{XSD}integer"
        case float() if math.isnan(value):
            return "NaN", f"{XSD}double"
        case float() if math.isinf(value):
            return ("INF" if value > 0 else "-INF"), f"{XSD}double"
        case float() | Fraction():
            return repr(float(value)), f"{XSD}double"
        case str():
            return value, None
    # Compound values and lists have no RDF counterpart: keep their rule-language text.
    return _text(value), f"{VOCAB}term"


def string(text: str) -> str:
    """A plain string literal with N-Triples escapes.

    >>> string("a\\nb")
    '"a\\\\nb"'
    """
    escaped = (
        text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    )
    return f'"{escaped}"'


def _text(value: Value) -> str:
    match value:
        case Struct(functor=f, args=args):
            return f"{f}({', '.join(_text(a) for a in args)})"
        case tuple():
            return f"[{', '.join(_text(a) for a in value)}]"
        case IRI():
            return f"<{value.value}>"
        case str():
            return repr(value)
    return str(value)
