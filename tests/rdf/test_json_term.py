"""SPARQL results JSON terms say what the N-Triples writer says: the same lexical form and
datatype for every kind of value (read back by rdflib, an independent RDF parser)."""

from __future__ import annotations

from fractions import Fraction

import pytest
import rdflib

from reasoner.rdf.ntriples import VOCAB, json_term, term
from reasoner.values import IRI, Struct, Value

VALUES: list[Value] = [
    IRI("http://ex.org/a"),
    IRI("_:b1"),
    7,
    -2,
    2.5,
    Fraction(1, 4),
    True,
    'say "hi"\n',
    Struct("f", (1, "x")),
    (1, 2),
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_json_term_agrees_with_ntriples(value: Value) -> None:
    graph = rdflib.Graph().parse(data=f"<urn:s> <urn:p> {term(value)} .", format="nt")
    (read,) = graph.objects()
    found = json_term(value)
    if isinstance(read, rdflib.URIRef):
        assert found == {"type": "uri", "value": str(read)}
    elif isinstance(read, rdflib.BNode):
        assert found["type"] == "bnode" and value == IRI("_:" + found["value"])
    else:
        assert found["type"] == "literal"
        assert found["value"] == str(read)
        assert found.get("datatype") == (None if read.datatype is None else str(read.datatype))


def test_compound_values_are_typed_as_terms() -> None:
    assert json_term(Struct("f", (1,))) == {
        "type": "literal",
        "value": "f(1)",
        "datatype": f"{VOCAB}term",
    }
