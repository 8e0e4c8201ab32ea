"""Compiling generated hot-path functions (join probes, WHERE tests, source matchers, head
builders): Python source written once per network node, with its settings inlined.

A generated function carries its source (a loader in its globals, the way modules do), so a
traceback through generated code shows the generated lines like any other source, and nothing
is kept once the function is gone. A source is compiled once: the many nodes of one shape (and
the dispatchers fused from them) share the code, each under its own file name.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from itertools import count
from types import CodeType, FunctionType
from typing import Any

_serial = count(1)


@dataclass(frozen=True, slots=True)
class _SourceLoader:
    """What :mod:`linecache` asks for the lines of a traceback (``get_source``)."""

    source: str

    def get_source(self, name: str) -> str:
        return self.source


def define(source: str, label: str, scope: dict[str, Any]) -> Callable[..., Any]:
    """Compile ``source`` (one ``def``) with the names in ``scope`` and return the function.

    Args:
        source: Python source defining exactly one function.
        label: names it in tracebacks, e.g. ``probe seq/recent/0`` (a serial number is added).
        scope: the globals the function reads (copied; never modified).
    Returns:
        The function.

    >>> define("def double(x):\\n    return k * x\\n", "example", {"k": 2})(21)
    42
    """
    filename = f"generated {label} #{next(_serial)}"
    code = _named(_compiled(source), filename)
    namespace = {**scope, "__name__": filename, "__loader__": _SourceLoader(source)}
    exec(code, namespace)
    function: Callable[..., Any] = namespace[code.co_names[0]]
    return function


@functools.lru_cache(maxsize=4096)
def _compiled(source: str) -> CodeType:
    return compile(source, "generated", "exec")


def _named(code: CodeType, filename: str) -> CodeType:
    """``code`` (and the code nested in it) as if compiled from ``filename``."""
    nested = tuple(_named(c, filename) if isinstance(c, CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=nested)


def generated_source(function: Any) -> str | None:
    """The source of a function :func:`define` made (None for any other callable)."""
    if type(function) is not FunctionType:
        return None
    loader = function.__globals__.get("__loader__")
    return loader.source if isinstance(loader, _SourceLoader) else None
