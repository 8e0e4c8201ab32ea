"""Places in a source text.

:class:`Span` sits below both the syntax (:mod:`reasoner.language.ast`, whose nodes carry one)
and the errors (:mod:`reasoner.errors`, whose diagnostics render one), so that neither imports
the other to name a place.

>>> str(Span("rules/blizzard.event", 12, 7))
'rules/blizzard.event:12:7'
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """A place in a source text (1-based line and column).

    Args:
        file: the source file's path, or None for rule text given as a string.
        line: the first line.
        column: the first column.
        end_line: the last line, when known.
        end_column: the column after the last character, when known.

    >>> str(Span(None, 3, 1))
    '<rules>:3:1'
    """

    file: str | None
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None

    def __str__(self) -> str:
        return f"{self.file or '<rules>'}:{self.line}:{self.column}"
