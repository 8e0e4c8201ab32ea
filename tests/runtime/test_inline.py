"""The inliner that fuses generated node inputs into one function per event type: a fused
function does exactly what the calls it replaces did, and it declines what it cannot paste."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from reasoner.runtime import inline as inline_module
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.runtime.generated import define, generated_source
from reasoner.runtime.inline import inline

TICKER = Path(__file__).resolve().parents[2] / "rules" / "stock_ticker.event"


def _define(source: str, **scope: Any) -> Any:
    return define(source, "test", scope)


def test_locals_of_two_inlined_calls_are_renamed_apart() -> None:
    trace: list[Any] = []
    step = _define("def step(x):\n    y = x * 2\n    out.append(y)\n", out=trace)
    both = _define(
        "def both(y):\n    step(y)\n    step(y + 1)\n    out.append(y)\n", step=step, out=trace
    )
    fused = inline(both, "both")
    fused(5)
    assert trace == [10, 12, 5]
    assert "step(" not in generated_source(fused)  # both calls became code


def test_a_parameter_the_callee_assigns_is_copied_not_shared() -> None:
    trace: list[Any] = []
    bump = _define("def bump(x):\n    x = x + 1\n    out.append(x)\n", out=trace)
    caller = _define("def caller(x):\n    bump(x)\n    out.append(x)\n", bump=bump, out=trace)
    inline(caller, "caller")(1)
    assert trace == [2, 1]


def test_a_function_with_return_stays_a_call() -> None:
    trace: list[Any] = []
    early = _define("def early(x):\n    if x:\n        return\n    out.append(x)\n", out=trace)
    caller = _define("def caller(x):\n    early(x)\n    out.append('after')\n", early=early)
    caller.__globals__["out"] = trace
    fused = inline(caller, "caller")
    assert fused is caller  # nothing could be inlined
    fused(1)
    assert trace == ["after"]


def test_a_test_function_with_one_final_return_is_hoisted_into_the_if() -> None:
    check = _define("def check(v):\n    ok = v > 2\n    return ok\n")
    multi = _define("def multi(v):\n    if v:\n        return True\n    return False\n")
    trace: list[Any] = []
    caller = _define(
        "def caller(v):\n    if check(v):\n        out.append('big')\n"
        "    if multi(v):\n        out.append('some')\n",
        check=check,
        multi=multi,
        out=trace,
    )
    fused = inline(caller, "caller")
    source = generated_source(fused)
    assert "check(" not in source and "multi(" in source  # two returns: stays a call
    for value in (0, 1, 3):
        fused(value)
    assert trace == ["some", "big", "some"]


def test_recursion_and_loops_that_break_are_handled() -> None:
    trace: list[Any] = []
    scope: dict[str, Any] = {"out": trace}
    first = define(
        "def first(items):\n    for i in items:\n        if i > 1:\n            out.append(i)\n"
        "            break\n    else:\n        out.append('none')\n",
        "first",
        scope,
    )
    loop = define(
        "def loop(n):\n    if n:\n        out.append(n)\n        loop(n - 1)\n", "loop", scope
    )
    scope["loop"] = loop  # calls itself: inlined at most once per chain
    caller = _define("def caller(xs):\n    first(xs)\n    loop(2)\n", first=first, loop=loop)
    fused = inline(caller, "caller")
    fused([0, 3, 5])
    fused([1])
    assert trace == [3, 2, 1, "none", 2, 1]


def test_a_deep_chain_stops_inlining_within_the_nesting_limit() -> None:
    trace: list[Any] = []
    function = _define("def f0(x):\n    out.append(x)\n", out=trace)
    for depth in range(1, 40):  # each level adds a loop and two blocks
        function = _define(
            f"def f{depth}(x):\n    for y in (x,):\n        if y >= 0:\n            g(y + 1)\n",
            g=function,
        )
    fused = inline(function, "deep")
    fused(0)
    assert trace == [39]
    assert "for " in generated_source(fused)
    loops = generated_source(fused).count("for ")
    assert loops <= inline_module.MAX_LOOPS


# ---------------------------------------------------------------- random call graphs

statements = st.recursive(
    st.one_of(
        st.builds(lambda k: f"out.append(('{k}', x, y))", st.sampled_from("abc")),
        st.just("y = y + x"),
        st.just("x = x - 1"),
        st.builds(lambda n: f"CALL{n}", st.integers(0, 3)),
    ),
    lambda inner: st.one_of(
        st.builds(lambda body: ("if x > y:", body), st.lists(inner, min_size=1, max_size=3)),
        st.builds(
            lambda body: ("for x in range(2):", body), st.lists(inner, min_size=1, max_size=3)
        ),
    ),
    max_leaves=8,
)


def _render(items: list[Any], depth: int, index: int) -> list[str]:
    lines = []
    pad = "    " * depth
    for item in items:
        if isinstance(item, tuple):
            header, body = item
            lines.append(pad + header)
            lines += _render(body, depth + 1, index)
        elif item.startswith("CALL"):
            callee = index + 1 + int(item[4:])  # only later functions: the graph is acyclic
            lines.append(f"{pad}f{callee}(x, y)" if callee < 5 else f"{pad}out.append('leaf')")
        else:
            lines.append(pad + item)
    return lines


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(statements, min_size=1, max_size=4), min_size=5, max_size=5))
def test_fused_functions_do_what_their_calls_did(bodies: list[list[Any]]) -> None:
    """Five functions calling later ones, with shared local names, reassigned parameters,
    loops and branches: the fused first function leaves the same trace as the calls."""
    trace: list[Any] = []
    scope: dict[str, Any] = {"out": trace}
    for index in reversed(range(5)):
        lines = [f"def f{index}(x, y):", *_render(bodies[index], 1, index)]
        scope[f"f{index}"] = define("\n".join(lines) + "\n", f"f{index}", scope)
    plain = scope["f0"]
    plain(3, 1)
    expected = list(trace)
    trace.clear()
    inline(plain, "f0")(3, 1)
    assert trace == expected


# ---------------------------------------------------------------- the engine


def test_the_ticker_network_is_one_function_per_event_type() -> None:
    engine = Engine(TICKER, policy="chronological", max_span=0)
    dispatch = engine.wiring.routes[("stock", 3)][0]
    source = generated_source(dispatch)
    assert source is not None
    # the two SEQ probes, their WHERE tests and the ce1/ce2 heads are inlined ...
    assert "emit(" not in source and "check(" not in source
    assert source.count("_receivers, ") == 2  # ... down to queueing ce1 / ce2 on the agenda


def test_a_second_function_of_one_source_is_fused_with_its_own_globals() -> None:
    # The second fusion replays the first's questions: the same answers give the same
    # source, with the second function's globals; another answer, a fusion of its own.
    caller = "def caller(x):\n    step(x)\n    out.append('after')\n"
    first_out: list[Any] = []
    second_out: list[Any] = []
    step_source = "def step(x):\n    out.append(x * 2)\n"
    first = _define(caller, step=_define(step_source, out=first_out), out=first_out)
    second = _define(caller, step=_define(step_source, out=second_out), out=second_out)
    fused_first, fused_second = inline(first, "first"), inline(second, "second")
    assert generated_source(fused_first) == generated_source(fused_second)
    assert "step(" not in generated_source(fused_second)
    fused_first(1)
    fused_second(2)
    assert (first_out, second_out) == ([2, "after"], [4, "after"])

    def plain_step(x: int) -> None:  # not generated: stays a call
        second_out.append(-x)

    third = _define(caller, step=plain_step, out=second_out)
    assert inline(third, "third") is third
    other = _define(caller, step=_define("def step(x):\n    out.append(x + 1)\n", out=first_out))
    other.__globals__["out"] = first_out
    fused_other = inline(other, "other")
    assert generated_source(fused_other) != generated_source(fused_first)
    fused_other(5)
    assert first_out == [2, "after", 6, "after"]


def test_replayed_dispatchers_are_those_a_fresh_fusion_writes() -> None:
    # The ticker's program built twice: the first engine fuses (nothing recorded), the second
    # replays; the fused text is the same, and each engine's dispatchers act on its own nodes.
    inline_module._fused.clear()
    first = Engine(TICKER, policy="chronological")
    replays = {source: len(known) for source, known in inline_module._fused.items()}
    second = Engine(TICKER, policy="chronological")
    assert {s: len(k) for s, k in inline_module._fused.items()} == replays  # nothing new
    for route, receivers in first.wiring.routes.items():
        assert list(map(generated_source, receivers)) == list(
            map(generated_source, second.wiring.routes[route])
        )
    events = [
        Event.at("stock", (c, 100 + 30 * (t % 2), 5), t) for t in range(6) for c in ("GO", "MS")
    ]
    found = [d for e in events for d in second.push(e)]
    assert first.stats().events_in == 0 and first.stats().stored == 0  # not first's nodes
    assert found == [d for e in events for d in first.push(e)]  # as the fresh fusion's
    assert {d.name for d in found} == {f"ce{n}" for n in range(1, 7)}  # every rule fires
