"""An EP-SPARQL query in Python: compiled into rules, run by the engine, read back as bindings.

Run: ``.venv/bin/python examples/epsparql_query.py``. A stream of price triples (as the triple
view reads timestamped RDF graphs: one ``triple(S, P, O)`` event per triple) goes through a
query for orders of a shop that a courier picks up within 30 minutes, or not (OPTIONALSEQ).
"""

from __future__ import annotations

from reasoner import IRI, Engine, Event
from reasoner.language.epsparql import compile_query

EX = "http://ex.org/"
QUERY = """
PREFIX ex: <http://ex.org/>
SELECT ?order ?courier
WHERE { ?order ex:placedAt ex:pizzeria }
OPTIONALSEQ { ?order ex:pickedUpBy ?courier }
WITHIN "PT30M"^^xsd:duration
"""
STREAM = [
    ("o1", "placedAt", "pizzeria", 0),
    ("o2", "placedAt", "pizzeria", 600),
    ("o1", "pickedUpBy", "ann", 900),
    ("o2", "pickedUpBy", "bob", 3000),
]


def main() -> None:
    query = compile_query(QUERY, "pickups")
    engine = Engine(query.program)
    heads = dict(query.heads)  # head event -> the variables of its arguments
    for s, p, o, t in STREAM:
        triple = (IRI(EX + s), IRI(EX + p), IRI(EX + o))
        for d in engine.push(Event("triple", triple, t, t)):
            binding = {name: str(value) for name, value in zip(heads[d.name], d.args, strict=True)}
            print(f"{binding} during [{d.start}, {d.end}]")


if __name__ == "__main__":
    main()
