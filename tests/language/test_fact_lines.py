"""Ground fact lines read without lark (reasoner.language.facts) give what lark gives: the same
statements, values and spans, and the same error where the text does not parse."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasoner.errors import RuleSyntaxError
from reasoner.language.ast import Facts, Program, Span, StaticRule
from reasoner.language.facts import Scan, scan
from reasoner.language.loader import parse_file
from reasoner.language.parser import parse


def lark(text: str, file: str | None = "f.event") -> Program:
    """The text parsed by lark alone (no run of fact lines given to the fast path)."""
    return parse(text, file, Scan((), only_facts=False))


def fast(text: str, file: str | None = "f.event") -> Program:
    """The text parsed with every run of fact lines, however short, read as a table."""
    return parse(text, file, scan(text, file, min_run=1))


def spans(node: object) -> list[tuple[str, Span | None]]:
    """Every node's span, depth first (spans are not part of equality)."""
    out: list[tuple[str, Span | None]] = []
    if isinstance(node, tuple):
        for item in node:
            out += spans(item)
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        span = getattr(node, "span", None)
        out.append((type(node).__name__, span))
        for f in dataclasses.fields(node):
            if f.name != "span":
                out += spans(getattr(node, f.name))
    return out


def outcome(read: object, text: str) -> object:
    """The statements as written and their spans, or the error's place and message."""
    try:
        program = read(text)  # type: ignore[operator]
    except RuleSyntaxError as exc:
        return ("error", exc.line, exc.column, exc.message)
    return program.written, spans(program.written)


# ------------------------------------------------------------------- random fact files

NAMES = [
    "p",
    "near_station",
    "seq",
    "not",
    "where",
    "do",
    "is",
    "mod",
    "iff",
    "table",
    "aggregate",
    "rdf_event",
    "prefix",
    "db",
    "print_trigger",
    "ins_event_rule",
    "x1_Y",
]
QUOTED = [
    "'KSLC'",
    "'a b'",
    "'it''s'",
    "'back\\\\slash'",
    "'tab\\t'",
    "'%'",
    "'a,b'",
    "''",
    "'[]'",
    "'rule:'",
    "'seq'",
    "'ends.'",
    "'a'''",
    "'\"'",
]
NUMBERS = [
    "0",
    "42",
    "-7",
    "3.25",
    "-0.5",
    "1e3",
    "2.5E-2",
    "1r3",
    "-2r4",
    "1r0",
    "007",
    "1.",
    "5s",
]
OTHERS = [
    '"str"',
    '"esc\\"q"',
    '""',
    "<http://ex.org/a#b>",
    "<urn:x:y>",
    "wt:speed",
    "a:b",
    "X",
    "_",
    "[]",
    "[a]",
    "f(a)",
    "- 1",
    "a b",
    "<bad iri>",
]
SPACE = st.sampled_from(["", " ", "  ", "\t"])


@st.composite
def constant(draw: st.DrawFn) -> str:
    return draw(st.sampled_from(NAMES + QUOTED + NUMBERS + OTHERS))


@st.composite
def fact_line(draw: st.DrawFn) -> str:
    functor = draw(st.sampled_from(NAMES + ["'quoted f'", "wt:speed", "'db'"]))
    args = draw(st.lists(constant(), min_size=1, max_size=6))
    sep = draw(SPACE) + "," + draw(SPACE)
    tail = draw(st.sampled_from(["", " ", " % note", "% x /* y", "\t"]))
    lead = draw(st.sampled_from(["", "", " ", "\t"]))
    return f"{lead}{functor}({draw(SPACE)}{sep.join(args)}{draw(SPACE)}){draw(SPACE)}.{tail}"


OTHER_LINES = [
    "",
    "% a comment",
    "c(X) <- a(X) SEQ b(X) WHERE near_station(X, Y).",
    "h(X) :-",
    "  p(a), q(X).",
    "/*",
    "*/",
    "/* one line */",
    ":- prefix(wt, 'http://ex.org/wt#').",
    "r(X) :- p(X).",
    "p(a). p(b).",
    "'multi",
    "line'(a).",
    "bad ) line",
]


@st.composite
def fact_file(draw: st.DrawFn) -> str:
    lines = draw(
        st.lists(
            st.one_of(fact_line(), fact_line(), fact_line(), st.sampled_from(OTHER_LINES)),
            max_size=12,
        )
    )
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n"]))


@settings(max_examples=400, deadline=None)
@given(fact_file())
def test_fact_lines_read_as_lark_reads_them(text: str) -> None:
    assert outcome(fast, text) == outcome(lark, text)
    assert outcome(lambda t: parse(t, "f.event"), text) == outcome(lark, text)  # (16 or more)


@settings(max_examples=100, deadline=None)
@given(st.lists(fact_line(), min_size=1, max_size=40))
def test_a_file_of_facts_only(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    assert outcome(fast, text) == outcome(lark, text)


# ---------------------------------------------------------------------------- examples

FACTS = "".join(f"near_station('S{i:05d}', 'S{i + 1:05d}').\n" for i in range(40))


def test_a_fact_file_is_one_table_read_without_lark() -> None:
    found = scan(FACTS, "near.event")
    program = found.program(FACTS)
    assert program is not None
    (table,) = program.statements
    assert isinstance(table, Facts) and len(table) == 40
    assert table.args[0] == ("S00000", "S00001") and table.kinds[0] == "aa"
    assert program == lark(FACTS, "near.event")
    assert spans(program.written) == spans(lark(FACTS, "near.event").written)
    assert str(program.static_rules[39].span) == "near.event:40:1"


def test_a_syntax_error_among_facts_is_reported_where_it_is() -> None:
    text = "".join(FACTS.splitlines(keepends=True)[:5]) + "near_station('S1', ).\n" + FACTS
    with pytest.raises(RuleSyntaxError) as error:
        parse(text, "near.event")
    with pytest.raises(RuleSyntaxError) as expected:
        lark(text, "near.event")
    assert str(error.value) == str(expected.value)
    assert (error.value.line, error.value.column) == (6, 20)


def test_facts_in_a_block_comment_or_a_clause_body_stay_lark_s() -> None:
    text = f"/*\n{FACTS}*/\nh(X) :-\n{FACTS}c <- a.\n"
    program = parse(text, "f.event")
    assert outcome(lambda t: parse(t, "f.event"), text) == outcome(lark, text)
    h, *facts = program.static_rules  # (the first fact ends the clause)
    assert len(h.body) == 1 and len(facts) == 39 and len(program.event_rules) == 1
    text = f"h(X) :-\n{FACTS}c <- a.\n"  # (the other facts still one table)
    assert [type(s).__name__ for s in parse(text).statements] == [
        "StaticRule",
        "Facts",
        "EventRule",
    ]
    assert outcome(lambda t: parse(t, "f.event"), text) == outcome(lark, text)


def test_rules_around_fact_runs_keep_their_places() -> None:
    text = f"c(X) <- a(X) WHERE near_station(X, _).\n{FACTS}r(X) :- near_station(X, _).\n{FACTS}"
    program = parse(text, "f.event")
    kinds = [type(s).__name__ for s in program.statements]
    assert kinds == ["EventRule", "Facts", "StaticRule", "Facts"]
    assert outcome(lambda t: parse(t, "f.event"), text) == outcome(lark, text)
    assert program.statements[2].span == Span("f.event", 42, 1, 42, 28)


def test_a_few_facts_stay_statements() -> None:
    (statement,) = parse("p(a, 1).").statements
    assert isinstance(statement, StaticRule)


def test_the_cache_keeps_tables_as_plain_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "near.event"
    path.write_text(FACTS, encoding="utf-8")
    first, second = parse_file(path), parse_file(path)  # parsed, then read from the cache
    assert first == second == lark(FACTS, str(path))
    assert spans(second.written) == spans(lark(FACTS, str(path)).written)
    (entry,) = (tmp_path / "cache" / "etalis-reasoner" / "programs").iterdir()
    body = entry.read_bytes().partition(b"\n")[2]
    assert b"StaticRule" not in body and b"Compound" not in body
    assert pickle.loads(body) == first


def test_a_fact_is_removed_from_its_table() -> None:
    program = parse(FACTS, "near.event")
    gone = parse("near_station('S00003', 'S00004').").static_rules
    smaller = program.without(gone)
    assert len(smaller.static_rules) == 39
    assert smaller.static_rules[3].head.args[0].name == "S00004"
    assert str(smaller.static_rules[3].span) == "near.event:5:1"
    assert program.without(parse("other(a).").static_rules) == program


def test_an_explanation_names_the_line_of_a_fact_in_a_table() -> None:
    from reasoner.runtime.engine import Engine
    from reasoner.runtime.events import Event
    from reasoner.runtime.explain import explain, to_json

    text = f"warn(X, Y) <- alarm(X) WHERE near_station(X, Y).\n{FACTS}"
    engine = Engine(parse(text, "f.event"), explain=True)
    [warn] = engine.push(Event.at("alarm", ("S00016",), 1))
    [where] = to_json(explain(warn))["where"]
    assert where["facts"] == [
        {
            "fact": "near_station",
            "args": ["S00016", "S00017"],
            "graph": "asserted",
            "rule": "f.event:18",
        }
    ]
