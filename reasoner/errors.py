"""The project's exception hierarchy.

Every error a user can cause is a :class:`ReasonerError`. Errors tied to a place in a rule
file carry a :class:`~reasoner.spans.Span` and render as
``path/file.event:LINE:COL: message`` followed by the source line and a caret.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from reasoner.spans import Span


class ReasonerError(Exception):
    """Base class of every error the library raises on purpose."""


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem found in a rule file: where, what, and how serious."""

    message: str
    span: Span | None = None
    severity: str = "error"  # "error" | "warning"
    source_line: str | None = field(default=None, compare=False)

    def render(self) -> str:
        """Render as ``file:line:col: message`` plus the source line and a caret."""
        if self.span is None:
            return f"{self.severity}: {self.message}" if self.severity != "error" else self.message
        where = f"{self.span.file or '<rules>'}:{self.span.line}:{self.span.column}"
        prefix = "" if self.severity == "error" else f"{self.severity}: "
        text = f"{where}: {prefix}{self.message}"
        if self.source_line is not None:
            caret = " " * (max(self.span.column, 1) - 1) + "^"
            text += f"\n    {self.source_line.rstrip()}\n    {caret}"
        return text


class DiagnosticsError(ReasonerError):
    """An error carrying one or more diagnostics (the first one is the headline)."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = tuple(diagnostics)
        super().__init__("\n".join(d.render() for d in self.diagnostics))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (from a worker process) with its diagnostics, not its message."""
        return type(self), (self.diagnostics,)

    @property
    def span(self) -> Span | None:
        return self.diagnostics[0].span if self.diagnostics else None

    @property
    def line(self) -> int | None:
        return self.span.line if self.span else None

    @property
    def column(self) -> int | None:
        return self.span.column if self.span else None

    @property
    def message(self) -> str:
        return self.diagnostics[0].message if self.diagnostics else ""


class RuleSyntaxError(DiagnosticsError):
    """Rule text that does not parse; the message says what was expected."""


class RuleCompileError(DiagnosticsError):
    """Rule text that parses but breaks a semantic rule (unbound variable, recursion, ...)."""


class SnapshotError(ReasonerError):
    """An engine snapshot that cannot be restored (corrupt, truncated, another format version
    or another program); the engine is unchanged."""


class EventError(ReasonerError):
    """An input event the engine rejects (late, malformed, wrong arity); state is unchanged."""

    def __init__(self, reason: str, event: object = None) -> None:
        self.reason = reason
        self.event = event
        super().__init__(reason if event is None else f"{reason}: {event!r}")


class EngineError(ReasonerError):
    """A failure while running rules (e.g. runaway recursion), naming the rule."""


class KnowledgeError(ReasonerError):
    """Background knowledge that cannot be loaded, entailed or refreshed."""
