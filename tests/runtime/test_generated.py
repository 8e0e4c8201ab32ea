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
