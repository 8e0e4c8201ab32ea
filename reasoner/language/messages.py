"""Words for syntax errors: which tokens the parser expected, said the way a person would.

The grammar's terminal names (``BINOP``, ``END``, ...) mean nothing to a user; this module maps
them to descriptions, folds the many term operators into "an operator", and recognises the common
places (after a rule head, inside a pattern) to phrase the message for them.
"""

from __future__ import annotations

from collections.abc import Iterable

# Description of each terminal, in the order they are listed in a message.
_WORDS: dict[str, str] = {
    "ARROW": "'<-'",
    "NECK": "':-'",
    "END": "'.'",
    "RULE_TAG": "'rule:'",
    "DIRECTIVE_START": "':-'",
    "BINOP": "a pattern operator (SEQ, AND, PAR, OR, ...)",
    "WHERE_KW": "WHERE",
    "MULTIPLY_KW": "EVENT_MULTIPLY",
    "DO_KW": "do",
    "STAR_KW": "STAR_TIMES",
    "NOT_KW": "NOT",
    "AGG_KW": "aggregate",
    "ATOM_NAME": "a name",
    "QUOTED_ATOM": "a quoted atom",
    "PNAME": "a prefixed name",
    "VAR": "a variable",
    "NUMBER": "a number",
    "NEG_NUMBER": "a number",
    "DURATION": "a duration such as 20s",
    "STRING": "a string",
    "IRI": "an IRI",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "COMMA": "','",
    "VBAR": "'|'",
    "DOT": "'.'",
    "SEMICOLON": "';'",
    "BANG": "'!'",
    "RDF_EVENT": "rdf_event",
    "$END": "the end of the file",
}

# Terminals that are term operators: listed together as "an operator".
_OPERATORS = frozenset(
    {"OP700", "OP500", "OP400", "POW", "CARET", "MINUS", "PREFIX900", "PREFIX_DECL", "__ANON_1"}
)

# Terminals every term start accepts; reported together as "a term" (RULE_CHANGE: ETALIS's
# ins_event_rule( and the like, whose argument may be a rule).
_TERM_STARTS = frozenset(
    {
        "VAR",
        "NUMBER",
        "NEG_NUMBER",
        "STRING",
        "IRI",
        "PNAME",
        "ATOM_NAME",
        "QUOTED_ATOM",
        "RULE_CHANGE",
    }
)


def describe_expected(expected: Iterable[str]) -> str:
    """Say in words what the parser expected, given lark's terminal names.

    Args:
        expected: names of the terminals the parser could accept.

    Returns:
        A phrase such as ``"expected '<-', ':-' or '.' after the rule head"``; ``""`` for none.

    >>> describe_expected({"END", "NECK", "ARROW", "RULE_TAG", "OP700"})
    "expected '<-', ':-' or '.' after the rule head"
    """
    names = set(expected)
    words = {_WORDS.get(n, n) for n in names}
    if {"'<-'", "':-'", "'.'"} <= words and "RULE_TAG" in names:
        return "expected '<-', ':-' or '.' after the rule head"
    if "BINOP" in names and "'.'" in words and "WHERE_KW" in names:
        return "expected a pattern operator (SEQ, AND, ...), WHERE or '.' after the pattern"
    if {"NOT_KW", "AGG_KW"} <= names:
        return "expected an event, a number, '(' or NOT to start a pattern"
    parts: list[str] = []
    if names & _TERM_STARTS and len(names & _TERM_STARTS) >= 4:
        parts.append("a term")
        names -= _TERM_STARTS
    has_operator = bool(names & _OPERATORS)
    names -= _OPERATORS
    order = list(_WORDS)
    for name in sorted(names, key=lambda n: order.index(n) if n in order else len(order)):
        word = _WORDS.get(name)
        if word is None:
            word = name if name.startswith("'") else _literal(name)
        if word not in parts:
            parts.append(word)
    if has_operator:
        parts.append("an operator")
    return expected_phrase(parts)


def expected_phrase(words: list[str]) -> str:
    """``"expected a, b or c"``; ``""`` for no words.

    >>> expected_phrase(["'('", "a name"]), expected_phrase([])
    ("expected '(' or a name", '')
    """
    if len(words) <= 1:
        return f"expected {words[0]}" if words else ""
    return f"expected {', '.join(words[:-1])} or {words[-1]}"


def _literal(name: str) -> str:
    """lark names anonymous terminals after their text (``LESSTHAN``); spell them back."""
    symbols = {
        "LESSTHAN": "<",
        "MORETHAN": ">",
        "MINUS": "-",
        "COLON": ":",
        "QMARK": "?",
        "EQUAL": "=",
        "SLASH": "/",
        "STAR": "*",
        "PLUS": "+",
    }
    parts = name.split("_")
    if all(p in symbols for p in parts):
        return "'" + "".join(symbols[p] for p in parts) + "'"
    return name.lower().replace("_", " ")
