"""Hand-computed cases for the reference evaluator, one or more per operator."""

from fractions import Fraction

import pytest

from reasoner.errors import EngineError, RuleCompileError
from reasoner.knowledge.facts import FactBase
from reasoner.language.ast import (
    Aggregate,
    Atom,
    Binary,
    Compound,
    EventAtom,
    EventRule,
    Multiply,
    Not,
    Number,
    Program,
    Star,
    StaticRule,
    TimePoint,
    Var,
    Where,
    Window,
)
from reasoner.runtime.events import Event
from reasoner.semantics.reference import derive
from reasoner.values import Struct

X, Y, Z, R = Var("X"), Var("Y"), Var("Z"), Var("R")


def ev(name, *args):
    return EventAtom(name, tuple(args))


def op(name, left, right):
    return Binary(name, left, right)


def rule(body, head=None, **kw):
    return EventRule(head or ev("h"), body, **kw)


def at(name, time, *args):
    return Event.at(name, tuple(args), time)


def span(name, start, end, *args):
    return Event(name, tuple(args), start, end)


def intervals(rules, stream, head="h", **kw):
    """The (start, end) of every derived `head` event, sorted."""
    rules = rules if isinstance(rules, list) else [rules]
    out = derive(Program(tuple(rules)), stream, **kw)
    return sorted((e.start, e.end) for e in out if e.name == head)


# ---------------------------------------------------------------------- SEQ


def test_seq_requires_strictly_later_start():
    body = op("seq", ev("a"), ev("b"))
    assert intervals(rule(body), [at("a", 1), at("b", 2)]) == [(1, 2)]
    assert intervals(rule(body), [at("a", 2), at("b", 2)]) == []  # equal times: no sequence
    assert intervals(rule(body), [at("b", 1), at("a", 2)]) == []


def test_semantics_md_unrestricted_example():
    # a1 a2 a3 b4 b5 c6 with e <- a SEQ b SEQ c: every combination.
    body = op("seq", op("seq", ev("a"), ev("b")), ev("c"))
    stream = [at("a", 1), at("a", 2), at("a", 3), at("b", 4), at("b", 5), at("c", 6)]
    assert intervals(rule(body, ev("e")), stream, head="e") == [(1, 6), (2, 6), (3, 6)]


def test_shared_variables_join_and_head_arithmetic():
    body = op("seq", ev("a", X), ev("b", X, Y))
    head = EventAtom("h", (X, Compound("+", (X, Y))))
    stream = [at("a", 1, 1), at("a", 2, 2), at("b", 3, 1, 10), at("b", 4, 3, 10)]
    derived = derive(Program((rule(body, head),)), stream)
    assert derived == {span("h", 1, 3, 1, 11)}


# ------------------------------------------------------------ AND, PAR, OR


def test_and_in_any_order_takes_the_hull():
    body = op("and", ev("a"), ev("b"))
    assert intervals(rule(body), [at("b", 1), at("a", 3)]) == [(1, 3)]
    assert intervals(rule(body), [at("a", 2), at("b", 2)]) == [(2, 2)]


def test_par_needs_overlap_of_non_zero_length():
    body = op("par", ev("p"), ev("q"))
    overlap = [span("p", 1, 4), span("q", 3, 6)]
    assert intervals(rule(body), overlap) == [(1, 6)]
    touching = [span("p", 1, 3), span("q", 3, 6)]  # share only the point 3
    assert intervals(rule(body), touching) == []
    assert intervals(rule(body), [at("p", 2), at("q", 2)]) == []  # zero length


def test_or_is_the_union():
    body = op("or", ev("a"), ev("b"))
    assert intervals(rule(body), [at("a", 1), at("b", 2), at("c", 3)]) == [(1, 1), (2, 2)]


# ------------------------------------------------------- interval relations


def test_equals_same_start_and_end():
    body = op("equals", ev("p"), ev("q"))
    assert intervals(rule(body), [span("p", 1, 4), span("q", 1, 4)]) == [(1, 4)]
    assert intervals(rule(body), [span("p", 1, 4), span("q", 1, 5)]) == []


def test_meets_end_equals_start():
    body = op("meets", ev("p"), ev("q"))
    assert intervals(rule(body), [span("p", 1, 3), span("q", 3, 5)]) == [(1, 5)]
    assert intervals(rule(body), [span("p", 1, 3), span("q", 4, 5)]) == []


def test_during_is_strict_and_gives_the_container():
    body = op("during", ev("p"), ev("q"))
    assert intervals(rule(body), [at("p", 3), span("q", 1, 5)]) == [(1, 5)]
    assert intervals(rule(body), [span("p", 2, 4), span("q", 1, 5)]) == [(1, 5)]
    assert intervals(rule(body), [span("p", 1, 4), span("q", 1, 5)]) == []  # same start
    assert intervals(rule(body), [span("p", 2, 5), span("q", 1, 5)]) == []  # same end


def test_starts_same_start_earlier_end():
    body = op("starts", ev("p"), ev("q"))
    assert intervals(rule(body), [span("p", 1, 3), span("q", 1, 5)]) == [(1, 5)]
    assert intervals(rule(body), [span("p", 1, 5), span("q", 1, 5)]) == []


def test_finishes_same_end_later_start():
    body = op("finishes", ev("p"), ev("q"))
    assert intervals(rule(body), [span("p", 3, 5), span("q", 1, 5)]) == [(1, 5)]
    assert intervals(rule(body), [span("p", 1, 5), span("q", 1, 5)]) == []


def test_time_points_count_up_to_the_horizon():
    body = op("during", ev("p"), op("seq", TimePoint(0), TimePoint(6)))
    assert intervals(rule(body), [at("p", 3)]) == []  # the stream has not reached 6
    assert intervals(rule(body), [at("p", 3), at("x", 6)]) == [(0, 6)]
    assert intervals(rule(body), [at("p", 3)], until=7) == [(0, 6)]


def test_until_drops_later_inputs():
    body = op("seq", ev("a"), ev("b"))
    assert intervals(rule(body), [at("a", 1), at("b", 5)], until=4) == []


# ------------------------------------------------------------------ windows


def test_window_is_at_most():
    body = Window(op("seq", ev("a"), ev("b")), 3)
    stream = [at("a", 1), at("a", 2), at("b", 5)]
    assert intervals(rule(body), stream) == [(2, 5)]  # 5 - 2 = 3 <= 3, 5 - 1 = 4 > 3


def test_rule_window_property_bounds_the_body():
    body = op("seq", ev("a"), ev("b"))
    windowed = rule(body, properties=(("event_rule_window", Number(3)),))
    assert intervals(windowed, [at("a", 1), at("a", 2), at("b", 5)]) == [(2, 5)]


# --------------------------------------------------------------------- NOT


def test_not_blocks_only_strictly_between():
    body = Not(ev("c"), ev("a"), ev("b"))
    assert intervals(rule(body), [at("a", 1), at("b", 5)]) == [(1, 5)]
    assert intervals(rule(body), [at("a", 1), at("c", 3), at("b", 5)]) == []
    assert intervals(rule(body), [at("a", 1), at("c", 1), at("b", 5)]) == [(1, 5)]  # at a's end
    assert intervals(rule(body), [at("a", 1), at("c", 5), at("b", 5)]) == [(1, 5)]  # at b's start


def test_not_is_per_pair():
    body = Not(ev("c"), ev("a"), ev("b"))
    stream = [at("a", 1), at("c", 2), at("a", 3), at("b", 4)]
    assert intervals(rule(body), stream) == [(3, 4)]


def test_not_variables_only_in_the_negation_are_local():
    body = Not(ev("c", Y), ev("a", X), ev("b", X))
    stream = [at("a", 1, 1), at("c", 2, 99), at("b", 3, 1)]
    assert intervals(rule(body), stream) == []  # any c blocks


def test_not_shared_variables_must_agree():
    body = Not(ev("c", X), ev("a", X), ev("b", X))
    stream = [at("a", 1, 1), at("c", 2, 2), at("b", 3, 1)]
    assert intervals(rule(body), stream) == [(1, 3)]  # c(2) does not block X = 1


# ------------------------------------------------------------- CNOT / FNOT


def test_cnot_on_a_sequence_is_not():
    body = op("cnot", op("seq", ev("a"), ev("b")), ev("c"))
    assert intervals(rule(body), [at("a", 1), at("b", 5)]) == [(1, 5)]
    assert intervals(rule(body), [at("a", 1), at("c", 3), at("b", 5)]) == []
    assert intervals(rule(body), [at("a", 1), at("c", 5), at("b", 5)]) == [(1, 5)]


def test_cnot_on_an_interval_event():
    body = op("cnot", ev("p"), ev("c"))
    assert intervals(rule(body), [span("p", 1, 5)]) == [(1, 5)]
    assert intervals(rule(body), [at("c", 3), span("p", 1, 5)]) == []
    assert intervals(rule(body), [at("c", 1), span("p", 1, 5)]) == []  # at the start counts
    assert intervals(rule(body), [at("c", 5), span("p", 1, 5)]) == [(1, 5)]  # at the end: no
    assert intervals(rule(body), [at("c", 0), span("p", 1, 5)]) == [(1, 5)]  # before: no


def test_fnot_never_happened_before():
    body = op("fnot", ev("b", X), ev("a", Y))
    assert intervals(rule(body), [at("b", 2, 1)]) == [(2, 2)]
    assert intervals(rule(body), [at("a", 1, 7), at("b", 2, 1)]) == []
    assert intervals(rule(body), [at("a", 2, 7), at("b", 2, 1)]) == [(2, 2)]  # same time: no
    assert intervals(rule(body), [at("b", 2, 1), at("a", 3, 7)]) == [(2, 2)]


def test_fnot_under_a_window_forgets_older_blockers():
    body = Window(op("fnot", ev("b"), ev("a")), 3)
    assert intervals(rule(body), [at("a", 1), at("b", 5)]) == [(5, 5)]  # 1 < 5 - 3
    assert intervals(rule(body), [at("a", 2), at("b", 5)]) == []


# ------------------------------------------------------ WHERE and MULTIPLY


def test_where_filters_with_facts_and_builtins():
    facts = [StaticRule(Compound("big", (Number(10),)))]
    body = Where(ev("a", X), Compound(",", (Compound("big", (X,)), Compound(">", (X, Number(5))))))
    program = Program((rule(body, ev("h", X)), *facts))
    derived = derive(program, [at("a", 1, 10), at("a", 2, 3)])
    assert derived == {span("h", 1, 1, 10)}


def test_where_with_explicit_knowledge_and_unknown_predicate():
    body = Where(ev("a", X), Compound("limit", (X,)))
    kb = FactBase([("limit", (3,))])
    assert derive(Program((rule(body),)), [at("a", 1, 3)], knowledge=kb) == {span("h", 1, 1)}
    with pytest.raises(RuleCompileError, match="unknown predicate 'limit/1'"):
        derive(Program((rule(body),)), [at("a", 1, 3)])


def test_multiply_one_occurrence_per_solution():
    facts = [
        StaticRule(Compound("driver", (Atom(d), Number(r)))) for d, r in (("d1", 1), ("d2", 2))
    ]
    body = Multiply(ev("req", X), Compound("driver", (Y, Var("_Rank"))))
    program = Program((rule(body, ev("h", X, Y)), *facts))
    assert derive(program, [at("req", 4, "r1")]) == {
        span("h", 4, 4, "r1", "d1"),
        span("h", 4, 4, "r1", "d2"),
    }


def test_multiply_computes_a_value():
    body = Multiply(ev("a", X), Compound("is", (Y, Compound("*", (X, Number(2))))))
    assert derive(Program((rule(body, ev("h", Y)),)), [at("a", 1, 21)]) == {span("h", 1, 1, 42)}


# ------------------------------------------------- STAR_TIMES and aggregates


def test_star_times_zero_or_more_repetitions():
    body = op("seq", ev("a"), Star(ev("b")))
    stream = [at("a", 1), at("b", 2), at("b", 3), at("b", 1)]
    assert intervals(rule(body), stream) == [(1, 1), (1, 2), (1, 3)]


def test_aggregate_count_and_sum_since_the_start():
    count = op("seq", ev("a"), Aggregate(Atom("count"), ev("b", X), R))
    total = op("seq", ev("a"), Aggregate(Compound("sum", (X,)), ev("b", X), R))
    stream = [at("a", 1), at("b", 2, 5), at("b", 3, 7)]
    program = Program((rule(count, ev("n", R)), rule(total, ev("s", R))))
    derived = derive(program, stream)
    assert {(e.name, e.args, e.end) for e in derived} == {
        ("n", (0,), 1),
        ("n", (1,), 2),
        ("n", (2,), 3),
        ("s", (0,), 1),
        ("s", (5,), 2),
        ("s", (12,), 3),
    }


def test_aggregate_avg_max_with_count_window():
    body = op("seq", ev("a"), Aggregate(Compound("avg", (X,)), ev("b", X), R, ("count", 2)))
    top = op("seq", ev("a"), Aggregate(Compound("max", (X,)), ev("b", X), R))
    stream = [at("a", 1), at("b", 2, 4), at("b", 3, 8), at("b", 4, 1)]
    derived = derive(Program((rule(body, ev("avg", R)), rule(top, ev("max", R)))), stream)
    assert sorted((e.name, e.args[0], e.end) for e in derived) == [
        ("avg", 4, 2),
        ("avg", 4.5, 4),
        ("avg", 6, 3),
        ("max", 4, 2),
        ("max", 8, 3),
        ("max", 8, 4),
    ]


# -------------------------------------------------- recursion and strata


def test_recursive_rule_terminates():
    # d(X) <- d(X) AND c(X) adds nothing new after the first round.
    base = rule(ev("c", X), ev("d", X))
    recursive = rule(op("and", ev("d", X), ev("c", X)), ev("d", X))
    derived = derive(Program((base, recursive)), [at("c", 1, 1), at("c", 2, 1)])
    assert {(e.start, e.end) for e in derived} == {(1, 1), (2, 2), (1, 2)}


def test_transitive_closure_by_recursion():
    base = rule(ev("link", X, Y), ev("path", X, Y))
    step = rule(op("seq", ev("path", X, Y), ev("link", Y, Z)), ev("path", X, Z))
    stream = [at("link", 1, "a", "b"), at("link", 2, "b", "c"), at("link", 3, "c", "d")]
    paths = {e.args for e in derive(Program((base, step)), stream)}
    assert paths == {("a", "b"), ("b", "c"), ("c", "d"), ("a", "c"), ("b", "d"), ("a", "d")}


def test_negation_reads_a_complete_lower_stratum():
    # The blocker m is itself derived; NOT must see all of it.
    derive_m = rule(op("seq", ev("x"), ev("y")), ev("m"))
    guarded = rule(Not(ev("m"), ev("a"), ev("b")))
    stream = [at("a", 1), at("x", 2), at("y", 3), at("b", 4), at("b", 2)]
    assert intervals([guarded, derive_m], stream) == [(1, 2)]


def test_recursion_through_negation_is_rejected():
    loop = rule(Not(ev("h"), ev("a"), ev("b")))
    with pytest.raises(EngineError, match="negation through recursion"):
        derive(Program((loop,)), [at("a", 1), at("b", 2)])


def test_runaway_derivation_is_capped():
    count_up = rule(ev("n", X), EventAtom("n", (Compound("+", (X, Number(1))),)))
    with pytest.raises(EngineError, match="runaway"):
        derive(Program((count_up,)), [at("n", 1, 0)])


def test_a_rule_may_rederive_an_input():
    copy = rule(ev("a", X), ev("a", X))
    assert derive(Program((copy,)), [at("a", 1, 1)]) == {at("a", 1, 1)}
    assert derive(Program(()), [at("a", 1, 1)]) == set()


def test_structured_arguments_match():
    body = ev("pos", Compound("coordinates", (X, Y)))
    stream = [at("pos", 1, Struct("coordinates", (3, 4)))]
    assert derive(Program((rule(body, ev("h", X, Y)),)), stream) == {span("h", 1, 1, 3, 4)}


def test_fnot_under_the_rule_window_property():
    body = op("fnot", ev("b"), ev("a"))
    windowed = rule(body, properties=(("event_rule_window", Number(3)),))
    assert intervals(windowed, [at("a", 1), at("b", 5)]) == [(5, 5)]
    assert intervals(windowed, [at("a", 2), at("b", 5)]) == []


def test_exact_rational_times():
    body = op("seq", ev("a"), ev("b"))
    stream = [at("a", Fraction(1, 3)), at("b", Fraction(1, 2))]
    assert intervals(rule(body), stream) == [(Fraction(1, 3), Fraction(1, 2))]
