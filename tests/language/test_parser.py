"""Parsing: both notations, ETALIS conventions, precedence, terms and units."""

from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

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
    Star,
    StaticRule,
    String,
    TimePoint,
    Var,
    Where,
    Window,
    dump,
)
from reasoner.language.parser import parse

X, Y = Var("X"), Var("Y")


def a(*args):  # type: ignore[no-untyped-def]
    return EventAtom("a", tuple(args))


def b(*args):  # type: ignore[no-untyped-def]
    return EventAtom("b", tuple(args))


def body(text: str):  # type: ignore[no-untyped-def]
    rule = parse(text).statements[0]
    assert isinstance(rule, EventRule)
    return rule.body


def test_operators_are_left_associative_with_one_precedence() -> None:
    assert body("e <- a SEQ b AND c OR d.") == Binary(
        "or", Binary("and", Binary("seq", a(), b()), EventAtom("c")), EventAtom("d")
    )


def test_where_binds_looser_than_binary_operators() -> None:
    assert body("e <- a(X) SEQ b(X) WHERE X > 1.") == Where(
        Binary("seq", a(X), b(X)), Compound(">", (X, Number(1)))
    )


def test_operator_spellings_are_equivalent() -> None:
    expected = body("e <- a SEQ b WHERE c.")
    for text in ("e <- a seq b where c.", "e <- a 'seq' b 'where' c.", "e <- a Seq b WHERE (c)."):
        assert body(text) == expected


def test_etalis_iff_is_the_rule_arrow() -> None:
    # ETALIS parses `Head iff Body` into the same event clause as `Head <- Body`.
    expected = parse("r1 'rule:' d(X) <- a(X) SEQ b(X).\nf <- iff(1).")
    assert parse("r1 'rule:' d(X) iff a(X) SEQ b(X).\nf IFF iff(1).") == expected
    assert parse("iff(X) :- x(X).").static_rules[0].head == Compound("iff", (Var("X"),))


def test_zero_arity_event_with_or_without_parentheses() -> None:
    assert body("e <- a() SEQ b.") == body("e <- a SEQ b().")


def test_window_then_full_stop() -> None:
    assert body("ce4 <- (ce1 AND ce2).20.") == Window(
        Binary("and", EventAtom("ce1"), EventAtom("ce2")), 20
    )


def test_window_units_are_seconds() -> None:
    assert body("e <- (a).3h.") == Window(a(), 10800, "h")
    assert body("e <- (a).30min.") == Window(a(), 1800, "min")
    assert body("e <- (a).20s.") == Window(a(), 20, "s")
    assert body("e <- (a).2d.") == Window(a(), 172800, "d")
    assert body("e <- (a).1.5h.") == Window(a(), 5400.0, "h")


def test_not_in_both_notations() -> None:
    expected = Not(EventAtom("c"), a(X), b(X))
    assert body("e(X) <- NOT(c).[a(X), b(X)].") == expected
    assert body("e(X) <- NOT(c)[a(X), b(X)].") == expected
    assert body("e(X) <- not(c).[a(X), b(X)].") == expected


def test_time_points() -> None:
    assert body("e <- a DURING (0 SEQ 6).") == Binary(
        "during", a(), Binary("seq", TimePoint(0), TimePoint(6))
    )


def test_etalis_negations() -> None:
    assert body("d(X) <- (a(X) 'seq' b(X)) 'cnot' c(Y).") == Binary(
        "cnot", Binary("seq", a(X), b(X)), EventAtom("c", (Y,))
    )
    assert body("d(X) <- b(X) 'fnot' a(Y).") == Binary("fnot", b(X), a(Y))
    assert body("d(X) <- b(X) 'not' a(Y).") == Binary("cnot", b(X), a(Y))


def test_event_multiply_star_times_and_aggregate() -> None:
    assert body("b(Y) <- a(X) 'event_multiply' ( p(X,Y) ).") == Multiply(
        a(X), Compound("p", (X, Y))
    )
    assert body("d(X) <- a(X) 'seq' b(X) 'star_times'.") == Binary("seq", a(X), Star(b(X)))
    assert body("d(C) <- s 'seq' aggregate(count, a(Y), C).") == Binary(
        "seq", EventAtom("s"), Aggregate(Atom("count"), a(Y), Var("C"))
    )
    assert body("d(S) <- s SEQ aggregate(sum(Y), a(Y), S, time(5min)).").right == Aggregate(
        Compound("sum", (Y,)), a(Y), Var("S"), ("time", 300)
    )


def test_labels_and_rule_properties_are_merged() -> None:
    prog = parse(
        "r1 'rule:' c(X) <- a(X) 'seq' b(X).\n"
        "event_rule_property(r1, event_rule_window, 1).\n"
        "r2([property(event_rule_window, 3)]) 'rule:' d(X) <- a(X) 'seq' b(X).\n"
    )
    assert [(r.label, r.properties) for r in prog.event_rules] == [
        ("r1", (("event_rule_window", Number(1)),)),
        ("r2", (("event_rule_window", Number(3)),)),
    ]
    assert prog.directives == ()


def test_property_for_an_unknown_label_stays_a_directive() -> None:
    prog = parse("event_rule_property(r9, event_rule_window, 1).")
    assert isinstance(prog.statements[0], Directive)


def test_static_rules_facts_db_and_directives() -> None:
    prog = parse(
        "db(p(1, 2)).\n"
        "print_trigger(a/1).\n"
        ":- prefix(wt, 'http://x#').\n"
        "q(X) :- p(X, Y), \\+ r(Y), !, (s ; t).\n"
        "prolog((h :- g)).\n"
    )
    assert prog.statements[0] == StaticRule(Compound("p", (Number(1), Number(2))))
    assert prog.statements[1] == Directive(
        Compound("print_trigger", (Compound("/", (Atom("a"), Number(1))),))
    )
    assert prog.prefixes == {"wt": "http://x#"}
    assert prog.statements[3] == StaticRule(
        Compound("q", (X,)),
        (
            Compound("p", (X, Y)),
            Compound("\\+", (Compound("r", (Y,)),)),
            Atom("!"),
            Compound(";", (Atom("s"), Atom("t"))),
        ),
    )
    assert prog.statements[4] == StaticRule(Atom("h"), (Atom("g"),))


def test_parenthesised_conjunction_is_one_goal() -> None:
    rule = parse("q :- (a, b), c.").statements[0]
    assert isinstance(rule, StaticRule)
    assert rule.body == (Compound(",", (Atom("a"), Atom("b"))), Atom("c"))


def test_terms() -> None:
    rule = parse(
        "x(<http://a.b/c>, \"s\\\"q\", [a, b | T], 1r3, 2.5e3, 'It''s', X - 1, -1, - 1, "
        "2 ** 3, wt:d, wt:speed(S, V), 1 + 2 * 3).\n"
    ).statements[0]
    assert isinstance(rule, StaticRule) and isinstance(rule.head, Compound)
    assert rule.head.args == (
        Iri("http://a.b/c"),
        String('s"q'),
        ListTerm((Atom("a"), Atom("b")), Var("T")),
        Number(Fraction(1, 3)),
        Number(2500.0),
        Atom("It's"),
        Compound("-", (X, Number(1))),
        Number(-1),
        Compound("-", (Number(1),)),
        Compound("**", (Number(2), Number(3))),
        PName("wt", "d"),
        Compound("wt:speed", (Var("S"), Var("V"))),
        Compound("+", (Number(1), Compound("*", (Number(2), Number(3))))),
    )


def test_arithmetic_in_head_and_comments() -> None:
    prog = parse("/* block\ncomment */ income(P1 + P2) <- a(P1) SEQ b(P2). % trailing\n")
    assert prog.event_rules[0].head == EventAtom("income", (Compound("+", (Var("P1"), Var("P2"))),))


def test_spans_point_into_the_file() -> None:
    prog = parse("\n  c(X) <- a(X).", "f.event")
    rule = prog.event_rules[0]
    assert rule.span is not None and (rule.span.file, rule.span.line, rule.span.column) == (
        "f.event",
        2,
        3,
    )


def test_large_files_parse() -> None:
    # Parse speed is measured in benchmarks, never asserted here.
    text = "".join(
        f"r{i}(X, Y) <- (a{i}(X) SEQ b(X, Y) AND c(Y)).10 WHERE X > {i}, Y < 3.\n"
        for i in range(3000)
    )
    prog = parse(text)
    assert len(prog.event_rules) == 3000
    assert prog.event_rules[-1].head.name == "r2999"


def test_spans_run_from_the_first_token_to_the_last_brackets_included() -> None:
    text = "c(X) <- (a(X) SEQ b(X)).3 WHERE f([X|T], (Y, Z)).\n"
    rule = parse(text, "f.event").event_rules[0]
    where = rule.body
    assert isinstance(where, Where) and isinstance(where.condition, Compound)
    spans = [
        rule.span,
        where.span,
        where.pattern.span,  # the window: from its "(" to its size
        where.pattern.pattern.span,  # type: ignore[attr-defined]  # the SEQ inside
        where.condition.span,
        where.condition.args[0].span,  # [X|T]
        where.condition.args[1].span,  # (Y, Z): the conjunction inside the brackets
    ]
    places = [(s.file, s.line, s.column, s.end_line, s.end_column) for s in spans if s]
    assert places == [
        ("f.event", 1, c, 1, end)
        for c, end in [(1, 50), (9, 49), (9, 26), (10, 23), (33, 49), (35, 40), (43, 47)]
    ]


def test_parses_in_threads_at_once_keep_apart() -> None:
    # one builder serves the parser: each parse has it to itself
    texts = [f"c{i}(X) <- a{i}(X) SEQ (b{i}(X) AND c(Y)).\n" * (20 + i) for i in range(8)]

    def parsed(i: int) -> tuple[str, list[object]]:
        program = parse(texts[i], f"f{i}.event")
        rules = program.event_rules
        return dump(program), [r.span for r in rules] + [r.body.span for r in rules]

    alone = [parsed(i) for i in range(8)]
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(parsed, range(8))) == alone
