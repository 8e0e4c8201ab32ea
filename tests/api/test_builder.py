"""The rule builder gives exactly the parser's AST, construct by construct, and prints back."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest

from reasoner.api import (
    aggregate,
    and_,
    at,
    atom,
    clause,
    cnot,
    compound,
    conj,
    directive,
    disj,
    during,
    equals,
    event,
    fact,
    finishes,
    fnot,
    iri,
    list_term,
    meets,
    multiply,
    not_,
    not_provable,
    or_,
    par,
    pname,
    prefix,
    program,
    rdf_event,
    rule,
    seq,
    star,
    starts,
    var,
    variables,
    where,
    within,
)
from reasoner.language.ast import Program, Statement
from reasoner.language.loader import parse_file
from reasoner.language.parser import parse
from reasoner.language.printer import to_source
from reasoner.values import IRI

ROOT = Path(__file__).resolve().parents[2]

N, P1, P2, R, S, T, V1, V2, X, Y = variables("N P1 P2 R S T V1 V2 X Y")
WT = "http://etalis.example.org/ontology/weather#"

# (rule text, the same statements built in Python); every construct of the grammar.
CASES: list[tuple[str, Statement | list[Statement]]] = [
    # events and time points
    ("c <- a.", rule("c", "a")),
    ("c <- a().", rule("c", event("a"))),
    (
        'c(X) <- stock("GO", X, 101.5, -2, 1r3).',
        rule(event("c", X), event("stock", "GO", X, 101.5, -2, Fraction(1, 3))),
    ),
    ("c <- 'Big event'(_).", rule("c", event("Big event", var("_")))),
    ("wt:alert(S) <- wt:reading(S).", rule(event("wt:alert", S), event("wt:reading", S))),
    ("c <- p DURING (0 SEQ 6).", rule("c", during("p", seq(0, 6)))),
    ("c <- p DURING (0.5 SEQ 6).", rule("c", during("p", seq(at(0.5), at(6))))),
    # the binary operators, chains and nesting
    ("c <- a SEQ b.", rule("c", seq("a", "b"))),
    ("c <- a AND b.", rule("c", and_("a", "b"))),
    ("c <- a PAR b.", rule("c", par("a", "b"))),
    ("c <- a OR b.", rule("c", or_("a", "b"))),
    ("c <- a EQUALS b.", rule("c", equals("a", "b"))),
    ("c <- a MEETS b.", rule("c", meets("a", "b"))),
    ("c <- a DURING b.", rule("c", during("a", "b"))),
    ("c <- a STARTS b.", rule("c", starts("a", "b"))),
    ("c <- a FINISHES b.", rule("c", finishes("a", "b"))),
    ("c <- a CNOT b.", rule("c", cnot("a", "b"))),
    ("c <- a 'not' b.", rule("c", cnot("a", "b"))),
    ("c <- a FNOT b.", rule("c", fnot("a", "b"))),
    ("c <- a SEQ b SEQ c.", rule("c", seq("a", "b", "c"))),
    ("c <- a SEQ b AND c.", rule("c", and_(seq("a", "b"), "c"))),
    ("c <- a SEQ (b AND c).", rule("c", seq("a", and_("b", "c")))),
    # negation
    ("ce6 <- NOT(ce2).[ce1, ce1].", rule("ce6", not_("ce2", "ce1", "ce1"))),
    (
        "c(X) <- NOT(b(X))[a(X), (d(X) OR e(X))].",
        rule(event("c", X), not_(event("b", X), event("a", X), or_(event("d", X), event("e", X)))),
    ),
    # WHERE with every kind of condition term
    (
        'ce1 <- (stock("GO", P1, V1) SEQ stock("GO", P2, V2)) WHERE P1 < 1.20 * P2.',
        rule(
            "ce1",
            where(seq(event("stock", "GO", P1, V1), event("stock", "GO", P2, V2)), P1 < 1.20 * P2),
        ),
    ),
    (
        "c(X) <- a(X) WHERE X > 1, X =< 5, X >= 2.",
        rule(event("c", X), where(event("a", X), X > 1, X <= 5, X >= 2)),
    ),
    (
        "c(X) <- a(X) WHERE (X < 1 ; X > 5).",
        rule(event("c", X), where(event("a", X), disj(X < 1, X > 5))),
    ),
    (
        "c(X) <- a(X) WHERE \\+ banned(X).",
        rule(event("c", X), where(event("a", X), not_provable(compound("banned", X)))),
    ),
    (
        "c(X) <- a(X, Y) WHERE X = go, Y \\= 'GO'.",
        rule(event("c", X), where(event("a", X, Y), X.eq(atom("go")), Y.ne(atom("GO")))),
    ),
    (
        "c(X) <- a(X) WHERE X mod 2 =:= 0, X =\\= 4.",
        rule(event("c", X), where(event("a", X), (X % 2).num_eq(0), X.num_ne(4))),
    ),
    (
        "c(Y) <- a(X) EVENT_MULTIPLY Y is -X + (X - 3) // 2 * X ** 2 / 4.",
        rule(event("c", Y), multiply(event("a", X), Y.is_(-X + (X - 3) // 2 * X**2 / 4))),
    ),
    (
        "c(X) <- a(X) WHERE 1 - X < 2 / X, 2 ** X > 2 * X, 7 mod X > 3 // X.",
        rule(
            event("c", X),
            where(event("a", X), 1 - X < 2 / X, 2**X > 2 * X, 7 % X > 3 // X),
        ),
    ),
    ("c(X) <- a(X) WHERE 5 < X.", rule(event("c", X), where(event("a", X), compound("<", 5, X)))),
    (
        "c(S) <- a(S) WHERE rdf(S, rdf:type, wt:Diablo), wt:speed(S, V1), V1 > 50.",
        rule(
            event("c", S),
            where(
                event("a", S),
                compound("rdf", S, pname("rdf:type"), pname("wt:Diablo")),
                compound("wt:speed", S, V1),
                V1 > 50,
            ),
        ),
    ),
    (
        "c(S) <- a(S) WHERE S = <http://ex.org/s1>.",
        rule(event("c", S), where(event("a", S), S.eq(iri("http://ex.org/s1")))),
    ),
    (
        "c(S) <- a(S) WHERE S = <http://ex.org/s2>.",
        rule(event("c", S), where(event("a", S), S.eq(IRI("http://ex.org/s2")))),
    ),
    (
        'c(X) <- a(X) WHERE member(X, [1, "two", [3] | T]).',
        rule(
            event("c", X),
            where(event("a", X), compound("member", X, list_term([1, "two", [3]], T))),
        ),
    ),
    (
        "c(X) <- a(X) WHERE member(X, [1, 2]).",
        rule(event("c", X), where(event("a", X), compound("member", X, [1, 2]))),
    ),
    ("c(X) <- a(X) WHERE X = [].", rule(event("c", X), where(event("a", X), X.eq(atom("[]"))))),
    (
        "c(X) <- (a(X) WHERE X > 1) SEQ b.",
        rule(event("c", X), seq(where(event("a", X), X > 1), "b")),
    ),
    # head arithmetic
    (
        "income(P1 + P2) <- a(P1) SEQ b(P2).",
        rule(event("income", P1 + P2), seq(event("a", P1), event("b", P2))),
    ),
    # windows
    ("ce4 <- (ce1 AND ce2).20.", rule("ce4", within(and_("ce1", "ce2"), 20))),
    ("c <- (a SEQ b).30min.", rule("c", within(seq("a", "b"), 30, "min"))),
    ("c <- (a).1.5h.", rule("c", within("a", 1.5, "h"))),
    ("c <- (a).2d.", rule("c", within("a", 2, "d"))),
    ("c <- (a).2.5.", rule("c", within("a", 2.5))),
    # ETALIS constructs
    (
        "r(R, D) <- request(R) EVENT_MULTIPLY driver(D, _Rank).",
        rule(
            event("r", R, var("D")),
            multiply(event("request", R), compound("driver", var("D"), var("_Rank"))),
        ),
    ),
    (
        "r(R, D) <- request(R) EVENT_MULTIPLY (driver(D, _), D \\= R).",
        rule(
            event("r", R, var("D")),
            multiply(event("request", R), compound("driver", var("D"), var("_")), var("D").ne(R)),
        ),
    ),
    ("c <- a SEQ b STAR_TIMES.", rule("c", seq("a", star("b")))),
    (
        "c(N) <- a SEQ aggregate(count, b, N).",
        rule(event("c", N), seq("a", aggregate("count", "b", N))),
    ),
    (
        "c(S) <- a SEQ aggregate(sum(X), b(X), S, count(5)).",
        rule(
            event("c", S), seq("a", aggregate(compound("sum", X), event("b", X), S, ("count", 5)))
        ),
    ),
    (
        "c(S) <- a SEQ aggregate(avg(X), b(X), S, time(5min)).",
        rule(
            event("c", S), seq("a", aggregate(compound("avg", X), event("b", X), S, ("time", 300)))
        ),
    ),
    (
        "c(S) <- aggregate(max(X), b(X), S, time(1h)).",
        rule(event("c", S), aggregate(compound("max", X), event("b", X), S, ("time", 3600))),
    ),
    # labels and rule properties
    ("r1 'rule:' c <- a SEQ b.", rule("c", seq("a", "b"), label="r1")),
    (
        "r2([property(event_rule_window, 3), property(consumption_policy, recent)]) "
        "'rule:' c <- a SEQ b.",
        rule("c", seq("a", "b"), label="r2", window=3, policy="recent"),
    ),
    ("[property(event_rule_window, 3)] 'rule:' c <- a.", rule("c", "a", window=3)),
    (
        "r1 'rule:' c <- a SEQ b. event_rule_property(r1, event_rule_window, 5).",
        rule("c", seq("a", "b"), label="r1", window=5),
    ),
    (
        "r3([property(note, \"x\"), property(weight, 2)]) 'rule:' c <- a.",
        rule("c", "a", label="r3", properties={"note": "x", "weight": 2}),
    ),
    # input-graph mappings
    (
        "rdf_event reading(S, V1) :- rdf(S, ex:value, V1), V1 > 0.",
        rdf_event(event("reading", S, V1), compound("rdf", S, pname("ex:value"), V1), V1 > 0),
    ),
    # static rules, facts and directives
    ("driver(d1, 3).", fact(compound("driver", atom("d1"), 3))),
    ("db(driver(d1, 3)).", fact(compound("driver", atom("d1"), 3))),
    ("ready.", fact("ready")),
    ("wt:cold(wt:Snow).", fact(compound("wt:cold", pname("wt:Snow")))),
    ("q(X) :- p(X), X > 1.", clause(compound("q", X), compound("p", X), X > 1)),
    ("prolog((q(X) :- p(X))).", clause(compound("q", X), compound("p", X))),
    (":- prefix(wt, 'http://etalis.example.org/ontology/weather#').", prefix("wt", WT)),
    (":- dynamic(seen/1).", directive(compound("dynamic", compound("/", atom("seen"), 1)))),
    ("print_trigger(a/1).", directive(compound("print_trigger", compound("/", atom("a"), 1)))),
    (
        "?- X is 1 + 2, X > 2.",
        directive(conj(X.is_(compound("+", 1, 2)), X > 2)),
    ),
]


def _program(built: Statement | list[Statement]) -> Program:
    return program(built if isinstance(built, list) else [built])


@pytest.mark.parametrize(("text", "built"), CASES, ids=[text for text, _ in CASES])
def test_built_equals_parsed(text: str, built: Statement | list[Statement]) -> None:
    assert _program(built) == parse(text)


@pytest.mark.parametrize(("text", "built"), CASES, ids=[text for text, _ in CASES])
def test_built_prints_back_to_itself(text: str, built: Statement | list[Statement]) -> None:
    built_program = _program(built)
    assert parse(to_source(built_program)) == built_program


def test_the_stock_ticker_file_built_in_python() -> None:
    Pr1, Pr2, Vol1, Vol2 = variables("Pr1 Pr2 Vol1 Vol2")

    def increase(symbol: str) -> object:
        first, second = event("stock", symbol, Pr1, Vol1), event("stock", symbol, Pr2, Vol2)
        return where(seq(first, second), Pr1 < 1.20 * Pr2)

    built = program(
        rule("ce1", increase("GO")),
        rule("ce2", increase("MS")),
        rule("ce3", or_("ce1", "ce2")),
        rule("ce4", within(and_("ce1", "ce2"), 20)),
        rule("ce5", par("ce1", "ce2")),
        rule("ce6", not_("ce2", "ce1", "ce1")),
    )
    assert built == parse_file(ROOT / "rules" / "stock_ticker.event")


def test_program_splices_programs_and_iterables() -> None:
    parsed = parse("a <- b. c <- d.")
    extra = rule("e", "f")
    assert program(parsed, [extra]).statements == (*parsed.statements, extra)


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda: event("a", True), TypeError, "True has no term form"),
        (lambda: event("a", None), TypeError, "None has no term form"),
        (lambda: event("a", {"k": 1}), TypeError, "has no term form"),
        (lambda: where("a", 1 < X < 5), TypeError, "an expression has no truth value"),
        (lambda: seq("a"), TypeError, "SEQ needs at least two patterns, got 1"),
        (lambda: seq("a", object()), TypeError, "is not a pattern"),
        (lambda: at(True), TypeError, "a time point is a number"),
        (lambda: within("a", 3, "week"), ValueError, "unknown window unit 'week'"),
        (lambda: pname("Diablo"), ValueError, "expected a prefixed name"),
        (lambda: aggregate("count", "b", atom("n")), TypeError, "must be a variable"),
        (lambda: aggregate("count", "b", N, ("last", 3)), ValueError, "as the window"),
        (lambda: where("a"), ValueError, "needs at least one goal"),
        (lambda: rule(event("c"), "a", properties=[("p", None)]), TypeError, "no term form"),
        (lambda: rule(compound("c"), "a"), TypeError, "a rule head is an event"),
        (lambda: fact(3), TypeError, "a clause head is an atom or a compound term"),
        (lambda: clause("q"), TypeError, "use fact()"),
        (lambda: rdf_event("reading"), TypeError, "needs at least one goal"),
    ],
)
def test_misuse_raises_with_a_message(
    build: Callable[[], object], error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        build()
