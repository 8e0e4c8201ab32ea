"""A random EP-SPARQL query over a random triple stream gives exactly the solutions of a plain,
independent evaluation of the documented meaning (docs/ep-sparql.md): each group a set of
(binding, interval) pairs, combined by the operators as sets, nothing shared with the engine
or the translation."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasoner.language.epsparql import compile_query
from reasoner.language.epsparql.parser import parse_query
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.values import IRI, Value

OPS = ("SEQ", "EQUALS", "OPTIONALSEQ", "EQUALSOPTIONAL", "UNION")
PREDICATES = ("p", "q")
Solution = tuple[tuple[tuple[str, Value], ...], int, int]

groups = st.tuples(st.sampled_from(PREDICATES), st.sampled_from(("x", "y", "z")))
queries = st.tuples(groups, st.lists(st.tuples(st.sampled_from(OPS), groups), max_size=3))
streams = st.lists(
    st.tuples(
        st.sampled_from(("a", "b")),
        st.sampled_from(PREDICATES),
        st.integers(1, 2),
        st.integers(0, 2),
    ),
    max_size=7,
)


def _text(first: tuple[str, str], rest: list[tuple[str, tuple[str, str]]]) -> str:
    def group(g: tuple[str, str]) -> str:
        return f"{{ ?c <urn:{g[0]}> ?{g[1]} }}"

    return "SELECT * WHERE " + group(first) + "".join(f" {op} {group(g)}" for op, g in rest)


def _group(g: tuple[str, str], stream: list[tuple[str, str, int, int]]) -> set[Solution]:
    predicate, var = g
    out = set()
    for subject, p, value, time in stream:
        if p == predicate:
            binding = {"c": IRI(f"urn:{subject}"), var: value}
            out.add((tuple(sorted(binding.items())), time, time))
    return out


def _combine(op: str, left: set[Solution], right: set[Solution]) -> set[Solution]:
    if op == "UNION":
        return left | right
    paired = set()
    for lb, ls, le in left:
        for rb, rs, re in right:
            lmap, rmap = dict(lb), dict(rb)
            if any(lmap[k] != rmap[k] for k in lmap.keys() & rmap.keys()):
                continue
            merged = tuple(sorted({**lmap, **rmap}.items()))
            if op in ("SEQ", "OPTIONALSEQ") and le < rs:
                paired.add((merged, ls, re))
            if op in ("EQUALS", "EQUALSOPTIONAL") and (ls, le) == (rs, re):
                paired.add((merged, ls, le))
    return paired | left if op in ("OPTIONALSEQ", "EQUALSOPTIONAL") else paired


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(queries, streams)
def test_query_equals_the_plain_evaluation(
    query: tuple[tuple[str, str], list[tuple[str, tuple[str, str]]]],
    raw: list[tuple[str, str, int, int]],
) -> None:
    first, rest = query
    stream = sorted(raw, key=lambda item: item[3])
    expected = _group(first, stream)
    for op, g in rest:
        expected = _combine(op, expected, _group(g, stream))

    compiled = compile_query(parse_query(_text(first, rest)), "q")
    engine = Engine(compiled.program)
    heads = dict(compiled.heads)
    events = [Event("triple", (IRI(f"urn:{s}"), IRI(f"urn:{p}"), v), t, t) for s, p, v, t in stream]
    got = set()
    for d in [d for e in events for d in engine.push(e)] + engine.flush():
        got.add((tuple(sorted(zip(heads[d.name], d.args, strict=True))), d.start, d.end))
    assert got == expected
