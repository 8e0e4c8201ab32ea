"""The printer: hand-picked cases and a hypothesis round trip (random AST -> text -> AST)."""

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from reasoner.language.ast import (
    Aggregate,
    Atom,
    Binary,
    Compound,
    Directive,
    EventAtom,
    EventRule,
    Iri,
    ListTerm,
    Multiply,
    Not,
    Number,
    PName,
    Program,
    Star,
    StaticRule,
    String,
    Term,
    TimePoint,
    Var,
    Where,
    Window,
)
from reasoner.language.operators import OPERATORS
from reasoner.language.parser import parse
from reasoner.language.printer import to_source


def test_prints_papers_notation() -> None:
    rule = parse("c(X) <- (a(X) 'seq' b(X)) 'where' X > 1.").event_rules[0]
    assert to_source(rule) == "c(X) <- a(X) SEQ b(X) WHERE X > 1."


def test_parenthesises_only_where_needed() -> None:
    left = Binary("seq", Binary("and", EventAtom("a"), EventAtom("b")), EventAtom("c"))
    right = Binary("seq", EventAtom("a"), Binary("and", EventAtom("b"), EventAtom("c")))
    assert to_source(left) == "a AND b SEQ c"
    assert to_source(right) == "a SEQ (b AND c)"
    assert (
        to_source(Compound("*", (Compound("+", (Var("A"), Var("B"))), Var("C")))) == "(A + B) * C"
    )
    assert to_source(Compound("-", (Number(1),))) == "-(1)"


def test_window_units_print_back() -> None:
    assert to_source(Window(EventAtom("a"), 10800, "h")) == "(a).3h"


# ------------------------------------------------------------------- random ASTs

NAMES = st.sampled_from(["a", "b", "c", "ev", "tick", "s1", "camelCase", "go_on"])
VARS = st.sampled_from(["X", "Y", "Z", "Price", "_", "_Rank", "X1"]).map(Var)
NUMBERS = st.one_of(
    st.integers(-1000, 1000),
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    st.fractions(max_denominator=50).filter(lambda f: f.denominator != 1),
).map(Number)
ATOMS = st.one_of(NAMES, st.sampled_from(["GO", "it's", "a b", "[]", "!", "+", "x\\y"])).map(Atom)
LEAVES = st.one_of(
    VARS,
    NUMBERS,
    ATOMS,
    st.text("ab\"\\' \n", max_size=5).map(String),
    st.sampled_from(["http://x.org/a#b", "urn:x:1"]).map(Iri),
    st.tuples(st.sampled_from(["wt", "rdf"]), st.sampled_from(["Diablo", "type", "x1"])).map(
        lambda t: PName(*t)
    ),
)
INFIX = [
    ",",
    ";",
    "->",
    "=",
    "\\=",
    "<",
    ">=",
    "is",
    "=..",
    "+",
    "-",
    "*",
    "/",
    "//",
    "mod",
    "**",
    "^",
]


def _terms(children: st.SearchStrategy[Term]) -> st.SearchStrategy[Term]:
    return st.one_of(
        st.tuples(st.sampled_from(INFIX), children, children).map(
            lambda t: Compound(t[0], (t[1], t[2]))
        ),
        st.tuples(st.sampled_from(["-", "\\+"]), children).map(lambda t: Compound(t[0], (t[1],))),
        st.tuples(
            st.one_of(NAMES, st.sampled_from(["wt:speed", "Q", "+"])),
            st.lists(children, min_size=1, max_size=3),
        ).map(lambda t: Compound(t[0], tuple(t[1]))),
        st.tuples(
            st.lists(children, min_size=1, max_size=3), st.one_of(st.none(), VARS, children)
        ).map(lambda t: ListTerm(tuple(t[0]), t[1])),
    )


TERMS = st.recursive(LEAVES, _terms, max_leaves=8)
EVENTS = st.tuples(NAMES, st.lists(TERMS, max_size=3)).map(lambda t: EventAtom(t[0], tuple(t[1])))
SIZES = st.one_of(
    st.integers(1, 100).map(lambda n: (n, None)),
    st.tuples(st.integers(1, 50), st.sampled_from(["s", "min", "h", "d"])).map(
        lambda t: (t[0] * {"s": 1, "min": 60, "h": 3600, "d": 86400}[t[1]], t[1])
    ),
)


def _patterns(children):  # type: ignore[no-untyped-def]
    return st.one_of(
        st.tuples(st.sampled_from(tuple(OPERATORS)), children, children).map(lambda t: Binary(*t)),
        st.tuples(children, children, children).map(lambda t: Not(*t)),
        st.tuples(children, TERMS).map(lambda t: Where(*t)),
        st.tuples(children, TERMS).map(lambda t: Multiply(*t)),
        st.tuples(children, SIZES).map(lambda t: Window(t[0], t[1][0], t[1][1])),
        children.map(Star),
        st.tuples(
            st.sampled_from([Atom("count"), Compound("sum", (Var("V"),))]),
            children,
            VARS,
            st.one_of(
                st.none(),
                st.integers(1, 9).map(lambda n: ("count", n)),
                st.integers(1, 900).map(lambda n: ("time", n)),
            ),
        ).map(lambda t: Aggregate(*t)),
    )


PATTERNS = st.recursive(
    st.one_of(EVENTS, st.integers(0, 50).map(TimePoint), st.just(TimePoint(Fraction(1, 2)))),
    _patterns,
    max_leaves=6,
)
PROPERTIES = st.lists(st.tuples(NAMES, TERMS), max_size=2).map(tuple)
STATEMENTS = st.one_of(
    st.tuples(EVENTS, PATTERNS, st.one_of(st.none(), NAMES), PROPERTIES).map(
        lambda t: EventRule(*t)
    ),
    st.tuples(
        st.one_of(EVENTS.map(lambda e: Compound(e.name, e.args) if e.args else Atom(e.name))),
        st.lists(TERMS, max_size=3),
    ).map(lambda t: StaticRule(t[0], tuple(t[1]))),
    TERMS.map(Directive),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(STATEMENTS, max_size=4).map(lambda s: Program(tuple(s))))
def test_round_trip(program: Program) -> None:
    text = to_source(program)
    assert parse(text) == program, text
