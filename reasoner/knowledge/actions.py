"""Actions: what ETALIS's ``p do Action`` runs each time ``p`` is detected.

``p do Action`` is read as ``p WHERE do(Action)`` (docs/language.md): ``do/1`` runs the action
with the values of its arguments and succeeds once, whatever the action returns. An action is a
built-in printing action or a Python callable the program registers by name
(``Engine(rules, actions={"notify": notify})``), called with the argument values
(:mod:`reasoner.values`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import TextIO

from reasoner.errors import EngineError
from reasoner.language.ast import RULE_CHANGES
from reasoner.values import IRI, Struct, Value

Action = Callable[..., object]

#: The built-in actions by ``(name, arity)`` (what ``reasoner run`` offers): printing and
#: ETALIS's :data:`~reasoner.language.ast.RULE_CHANGES`.
PRINTING = frozenset({("write", 1), ("print", 1), ("writeln", 1), ("nl", 0)})
BUILTIN_ACTIONS = PRINTING | {(name, 1) for name in RULE_CHANGES}


class Fresh:
    """What a printing action shows for a variable not bound yet: ``_`` (Prolog writes
    ``_123``, a fresh variable)."""

    def __str__(self) -> str:
        return "_"


FRESH = Fresh()


def text(value: Value | Fresh) -> str:
    """A value as Prolog's ``write/1`` prints it.

    >>> text(Struct("times", (1, 2.5, "go", (IRI("http://ex.org/a"), Struct("-", (3,))))))
    'times(1,2.5,go,[<http://ex.org/a>,-(3)])'
    >>> text(Struct("ceo", ("c1", FRESH)))
    'ceo(c1,_)'
    """
    match value:
        case Struct(functor, args):
            return f"{functor}({','.join(text(a) for a in args)})"
        case tuple():
            return f"[{','.join(text(a) for a in value)}]"
        case IRI(iri):
            return f"<{iri}>"
        case Fraction():
            return f"{value.numerator}r{value.denominator}"
    return str(value)


def actions(
    registered: Mapping[str, Action] | None = None,
    output: TextIO | None = None,
    rules: Callable[[str, str], None] | None = None,
) -> dict[tuple[str, int] | str, Action]:
    """The actions a program may run: the built-in ones, printing to ``output`` (standard
    output when None, looked up at each call), and the ``registered`` callables by name (any
    arity; a registered name hides a built-in one). ``rules(name, text)`` makes the rule
    changes (:data:`RULE_CHANGES`); without it they fail.

    >>> import io
    >>> out = io.StringIO()
    >>> table = actions({"note": lambda *a: out.write(f"note{a}")}, out)
    >>> table[("write", 1)](Struct("f", (1,))), table[("nl", 0)](), table["note"](2)
    (None, None, 8)
    >>> out.getvalue()
    'f(1)\\nnote(2,)'
    """

    def stream() -> TextIO:
        return output if output is not None else sys.stdout

    def write(value: Value) -> None:
        stream().write(text(value))

    def writeln(value: Value) -> None:
        stream().write(text(value) + "\n")

    def nl() -> None:
        stream().write("\n")

    def change(name: str) -> Action:
        def run(value: Value) -> None:
            if rules is None:
                raise EngineError(f"{name}/1 changes the rules of a running engine: none here")
            rules(name, text(value))

        return run

    table: dict[tuple[str, int] | str, Action] = {
        ("write", 1): write,
        ("print", 1): write,
        ("writeln", 1): writeln,
        ("nl", 0): nl,
        **{(name, 1): change(name) for name in RULE_CHANGES},
    }
    table.update(registered or {})
    return table
