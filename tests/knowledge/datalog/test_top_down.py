"""On-demand (top-down) predicates answer ground calls as the same rules evaluated bottom-up.

Each random program defines ``q0/2`` and ``q1/2`` with bodies mixing comparisons, arithmetic,
facts, a recursive (materialised) relation, negation as failure and (in ``q1``) calls of
``q0`` with its arguments bound; most bodies are not range-restricted, so they are answered
top-down per call. The
oracle is the same program with every body guarded by ``d(X), d(Y)`` (the domain), which makes
it range-restricted: evaluated naively, bottom-up, it lists exactly the ground calls that hold.
"""

from __future__ import annotations

from itertools import product

from hypothesis import given, settings
from hypothesis import strategies as st

from reasoner.knowledge.datalog import evaluate_naive, prepare
from reasoner.knowledge.facts import FactBase
from reasoner.knowledge.goals import compile_goal
from reasoner.knowledge.program import program_knowledge
from reasoner.language.ast import Compound, Number, Var
from reasoner.language.parser import parse

DOMAIN = range(4)

#: Body literals over the head's X and Y; "Q" is the other predicate (q0 in q1's rules).
LITERALS = [
    "X < Y",
    "X >= 2",
    "X =:= Y + 1",
    "Y - X > 1",
    "Z is X + Y, Z =< 3",
    "f(X)",
    "f(Y)",
    "e(X, Y)",
    "r(X, Y)",
    "r(Y, X)",
    "\\+ f(X)",
    "\\+ e(Y, X)",
    "\\+ r(X, Y)",
    "(X > Y ; f(Y))",
]
CALLS = ["q0(X, Y)", "q0(Y, X)", "\\+ q0(X, Y)"]

pairs = st.sets(st.tuples(st.sampled_from(DOMAIN), st.sampled_from(DOMAIN)), max_size=6)
bodies = st.lists(st.sampled_from(LITERALS), min_size=1, max_size=3)


@st.composite
def programs(draw: st.DrawFn) -> tuple[str, str]:
    """The program's rules, and the same rules guarded by the domain (the oracle)."""
    facts = [f"f({x})." for x in draw(st.sets(st.sampled_from(DOMAIN)))]
    facts += [f"e({x}, {y})." for x, y in draw(pairs)]
    facts += ["r(X, Y) :- e(X, Y).", "r(X, Y) :- e(X, Z), r(Z, Y)."]
    rules, guarded = [], []
    for name in ("q0", "q1"):
        for _ in range(draw(st.integers(1, 2))):
            body = draw(bodies)
            if name == "q1" and draw(st.booleans()):
                body.insert(draw(st.integers(0, len(body))), draw(st.sampled_from(CALLS)))
                # q0 is called with its arguments bound: q1 is answered top-down too (the
                # comparisons need X and Y), or bottom-up (d binds them first)
                body.insert(0, draw(st.sampled_from(["(X =< Y ; X > Y)", "d(X), d(Y)"])))
            text = ", ".join(body)
            rules.append(f"{name}(X, Y) :- {text}.")
            guarded.append(f"{name}(X, Y) :- d(X), d(Y), {text}.")
    facts += [f"d({x})." for x in DOMAIN]
    return "\n".join(facts + rules), "\n".join(facts + guarded)


@settings(max_examples=300, deadline=None)
@given(programs())
def test_ground_calls_hold_as_the_rules_bottom_up(texts: tuple[str, str]) -> None:
    text, guarded = texts
    oracle_program = parse(guarded)
    facts = FactBase.from_program(oracle_program)
    rules = [r for r in oracle_program.static_rules if r.body]
    model = evaluate_naive(prepare(rules, {}), facts, {})
    kb = program_knowledge(parse(text))
    calls = {name: compile_goal(Compound(name, (Var("A"), Var("B"))), {}) for name in ("q0", "q1")}
    for name, goal in calls.items():
        expected = set(model[(name, 2)])
        for x, y in product(DOMAIN, DOMAIN):
            env = {"A": x, "B": y}
            holds = (x, y) in expected
            assert goal.holds(env, kb) is holds, (name, x, y)
            assert list(goal.solutions(env, kb)) == ([env] if holds else [])
            ground = compile_goal(Compound(name, (Number(x), Number(y))), {})
            assert ground.holds({}, kb) is holds, (name, x, y)
    # the same calls given other knowledge ask it, then this one again
    for name, goal in calls.items():
        pairs = list(product(DOMAIN, DOMAIN))
        assert not any(goal.holds({"A": x, "B": y}, FactBase()) for x, y in pairs)
        held = {(x, y) for x, y in pairs if goal.holds({"A": x, "B": y}, kb)}
        assert held == set(model[(name, 2)])
