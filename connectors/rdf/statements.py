"""Splitting an RDF stream into statements, so that one malformed statement spoils only itself.

An RDF parser that meets an error cannot say which graph the broken text belonged to, and an
unterminated string can swallow the rest of a file. The stream is therefore cut into
statements first, by a scanner that knows just enough of the syntax (IRIs, strings, comments,
braces, the final dot), and each statement is parsed on its own:

* TriG: a directive (``@prefix``, ``@base``, ``PREFIX``, ``BASE``), a graph block
  ``[GRAPH] name { ... }`` or a default-graph statement ending in ``.``. A short string
  (``"..."``) cannot span lines: an unterminated one ends its statement with its line, and
  scanning starts afresh on the next line.
* N-Quads: a line; consecutive lines that end with the same graph label form a batch that
  is parsed with one call (in practice one graph), and line by line only if that fails.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Statement:
    """Source text of one statement, from line ``line`` of the file."""

    line: int
    text: str
    directive: bool = False


_IRI = r"<(?:[^<>\"{}|^`\\\s]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*>"
_STRING = r'"""|' + r"'''" + r'|"(?:[^"\\\n]|\\.)*"|' + r"'(?:[^'\\\n]|\\.)*'" + r"|[\"']"
# One match skips plain text and IRIs (a "#" or a quote inside an IRI is no comment or string)
# and stops after the next token that matters, or at the end of the line (then no "token").
_OUTSIDE = re.compile(
    rf"(?:[^\"'<#{{}}.]+|{_IRI}|<|\.(?![\s#]|$))*(?P<token>{_STRING}|#|[{{}}]|\.)?"
)
_INSIDE = re.compile(rf"(?:[^\"'<#{{}}]+|{_IRI}|<)*(?P<token>{_STRING}|#|[{{}}])?")
_LONG_END = {
    '"""': re.compile(r'(?:[^"\\]|\\[\s\S]|"(?!""))*"""'),
    "'''": re.compile(r"(?:[^'\\]|\\[\s\S]|'(?!''))*'''"),
}
_DIRECTIVE = re.compile(r"@prefix\b|@base\b|(?P<sparql>(?i:prefix|base))(?=[\s<])")
_SPARQL_DIRECTIVE = re.compile(rf"(?i:prefix\s+[^\s:]*:|base)\s*{_IRI}")
_SPACE = re.compile(r"\s*")


def trig_statements(lines: Iterable[str]) -> Iterator[Statement]:
    """Cut TriG text into top-level statements.

    Args:
        lines: the text, line by line (newlines kept, as a file yields them).
    Returns:
        the statements in order; text after the last complete one comes out as it is, for
        the parser to report.

    >>> [(s.line, s.directive) for s in trig_statements(
    ...     ["@prefix ex: <http://ex.org/> .\\n", "ex:g { ex:a ex:b ex:c }\\n"])]
    [(1, True), (2, False)]
    """
    pieces: list[str] = []  # the current statement's text from earlier lines
    start = 0  # the current statement's first line, 0 between statements
    depth = 0
    directive = False
    long_end: re.Pattern[str] | None = None
    for number, line in enumerate(lines, 1):
        if depth and long_end is None and _inert(line):
            pieces.append(line)  # inside a graph block, and nothing here can end it
            continue
        pos = begin = 0
        while pos < len(line):
            if long_end is not None:  # inside a long string carried over from a line above
                closing = long_end.match(line, pos)
                if closing is None:
                    break
                pos, long_end = closing.end(), None
                continue
            if not start:
                pos = _SPACE.match(line, pos).end()  # type: ignore[union-attr]
                if pos == len(line) or line[pos] == "#":
                    break
                start, begin = number, pos
                kind = _DIRECTIVE.match(line, pos)
                directive = kind is not None
                if kind is not None and kind.group("sparql"):  # no final dot: ends after its IRI
                    sparql = _SPARQL_DIRECTIVE.match(line, pos)
                    pos = sparql.end() if sparql else len(line)
                    yield Statement(start, line[begin:pos], directive)
                    start = 0
                    continue
            token = (_INSIDE if depth else _OUTSIDE).match(line, pos)
            pos, text = token.end(), token.group("token")  # type: ignore[union-attr]
            if text is None or text == "#":
                break
            if text in _LONG_END:
                closing = _LONG_END[text].match(line, pos)
                if closing is None:
                    long_end = _LONG_END[text]
                    break
                pos = closing.end()
            elif text in ('"', "'"):
                # A short string open at the end of its line: the statement is broken, and
                # where the string was meant to end is anyone's guess. Restart on the next line.
                yield Statement(start, "".join(pieces) + line[begin:], directive)
                pieces, start, depth = [], 0, 0
                break
            elif text == "{":
                depth += 1
            elif text == "." or (text == "}" and depth <= 1):
                depth = 0
                yield Statement(start, "".join(pieces) + line[begin:pos], directive)
                pieces, start = [], 0
            elif text == "}":
                depth -= 1
        if start:
            pieces.append(line[begin:])
    if start:
        yield Statement(start, "".join(pieces), directive)


def _inert(line: str) -> bool:
    """Whether a line inside a graph block leaves the scanner's state as it is: no brace, and
    only simple strings that close on the line (the common case, checked without a regex)."""
    if "{" in line or "}" in line or "'" in line:
        return False
    return '"' not in line or (line.count('"') % 2 == 0 and "\\" not in line and '"""' not in line)


def nquads_batches(lines: Iterable[str]) -> Iterator[list[Statement]]:
    """N-Quads lines as statements, in batches of consecutive lines with the same graph label.

    Blank and comment lines are left out: every statement is one quad.

    Args:
        lines: the text, line by line.
    Returns:
        the batches, in order.

    >>> [[s.line for s in b] for b in nquads_batches(["<a> <b> <c> <g1> .\\n",
    ...     "# note\\n", "<d> <e> <f> <g1> .\\n", "<a> <b> <c> <g2> .\\n"])]
    [[1, 3], [4]]
    """
    batch: list[Statement] = []
    label = ""
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text[0] == "#":
            continue
        # The last term before the final dot: the graph label of a well-formed quad.
        last = text[:-1].rstrip().rsplit(None, 1)[-1] if text.endswith(".") else text
        if batch and last != label:
            yield batch
            batch = []
        label = last
        batch.append(Statement(number, text + "\n"))
    if batch:
        yield batch
