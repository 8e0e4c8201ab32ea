"""Compiling generated hot-path functions (join probes, WHERE tests, source matchers, head
builders): Python source written once per network node, with its settings inlined."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def define(source: str, label: str, scope: dict[str, Any]) -> Callable[..., Any]:
    """Compile ``source`` (one ``def``) with the names in ``scope`` and return the function.

    Args:
        source: Python source defining exactly one function.
        label: shown as the file name in tracebacks, e.g. ``<probe seq/recent/0>``.
        scope: the globals the function reads (copied; never modified).
    Returns:
        The function.

    >>> define("def double(x):\\n    return k * x\\n", "<example>", {"k": 2})(21)
    42
    """
    namespace = dict(scope)
    code = compile(source, label, "exec")
    exec(code, namespace)
    name = code.co_names[0]
    function: Callable[..., Any] = namespace[name]
    return function
