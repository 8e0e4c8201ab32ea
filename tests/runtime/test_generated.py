"""Generated functions read like source in tracebacks, down to a rule's WHERE condition."""

from __future__ import annotations

import traceback

import pytest

from reasoner.runtime.generated import define


def test_a_traceback_shows_the_generated_line() -> None:
    broken = define("def f(x):\n    return 1 / x\n", "probe test", {})
    with pytest.raises(ZeroDivisionError) as error:
        broken(0)
    text = "".join(traceback.format_exception(error.value))
    assert 'File "generated probe test #' in text
    assert "return 1 / x" in text


def test_functions_of_one_source_share_the_code_and_keep_their_own_names() -> None:
    source = "def f(x):\n    return [k / y for y in x]\n"
    first = define(source, "probe one", {"k": 1})
    second = define(source, "probe two", {"k": 2})
    assert first.__code__.co_code == second.__code__.co_code
    assert (first([4]), second([4])) == ([0.25], [0.5])
    for function, label in ((first, "probe one"), (second, "probe two")):
        with pytest.raises(ZeroDivisionError) as error:
            function([0])
        frames = traceback.extract_tb(error.value.__traceback__)[1:]
        # the function's frame and the comprehension's inside it: both under the function's name
        assert [frame.filename.rsplit(" #", 1)[0] for frame in frames][-1] == f"generated {label}"
        assert {frame.filename for frame in frames} == {function.__code__.co_filename}
        assert frames[-1].line == "return [k / y for y in x]"
