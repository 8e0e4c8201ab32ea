"""Terms for the Python rule API: event arguments, WHERE conditions, head arithmetic.

Builders return :class:`Expr`, a wrapper around one AST term
(:mod:`reasoner.language.ast`) that adds Python operators, so that a condition reads as in
the rule text::

    >>> from reasoner.language.printer import to_source
    >>> Pr1, Pr2 = variables("Pr1 Pr2")
    >>> to_source(term(Pr1 < 1.2 * Pr2))
    'Pr1 < 1.2 * Pr2'

The AST nodes themselves stay plain dataclasses (their ``==`` compares trees), which is why
the operators live on a wrapper. Python values convert as follows: ``int``, ``float`` and
``Fraction`` → :class:`Number`; ``str`` → :class:`String` (``"GO"``; use :func:`atom` for
``go`` or ``'GO'``); :class:`reasoner.values.IRI` → :class:`Iri`; ``list`` →
:class:`ListTerm`. Unification and equality use methods because ``==`` must stay equality of
expressions: ``X.eq(Y)`` is ``X = Y``, ``X.is_(Y + 1)`` is ``X is Y + 1``. Any other operator,
and ``5 < X`` written that way round (Python turns it into ``X > 5``), is available as
``compound("<", 5, X)``: the parser reads ``A < B`` as the compound ``'<'(A, B)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from reasoner.language.ast import (
    Atom,
    Compound,
    Iri,
    ListTerm,
    Number,
    PName,
    String,
    Term,
    Var,
)
from reasoner.values import IRI

__all__ = [
    "Expr",
    "atom",
    "compound",
    "conj",
    "disj",
    "iri",
    "list_term",
    "not_provable",
    "pname",
    "term",
    "var",
    "variables",
]


@dataclass(frozen=True, slots=True)
class Expr:
    """An AST term with Python operators that build bigger terms.

    Arithmetic: ``+ - * / // % **`` and unary ``-`` (``%`` is Prolog's ``mod``). Comparisons:
    ``< <= > >=`` (``<=`` is written ``=<``). Methods for the operators Python cannot
    overload without changing ``==``: :meth:`eq`, :meth:`ne`, :meth:`num_eq`,
    :meth:`num_ne`, :meth:`is_`.

    >>> X = var("X")
    >>> (X + 1).term
    Compound(functor='+', args=(Var(name='X'), Number(value=1)))
    """

    term: Term

    def __bool__(self) -> bool:
        # `1 < X < 5` is `(1 < X) and (X < 5)` in Python: refuse it rather than keep half.
        raise TypeError(
            "an expression has no truth value: write 'X > 1, X < 5' as two conditions "
            "(where(p, X > 1, X < 5)) or conj(X > 1, X < 5)"
        )

    def __add__(self, other: object) -> Expr:
        return _infix("+", self, other)

    def __radd__(self, other: object) -> Expr:
        return _infix("+", other, self)

    def __sub__(self, other: object) -> Expr:
        return _infix("-", self, other)

    def __rsub__(self, other: object) -> Expr:
        return _infix("-", other, self)

    def __mul__(self, other: object) -> Expr:
        return _infix("*", self, other)

    def __rmul__(self, other: object) -> Expr:
        return _infix("*", other, self)

    def __truediv__(self, other: object) -> Expr:
        return _infix("/", self, other)

    def __rtruediv__(self, other: object) -> Expr:
        return _infix("/", other, self)

    def __floordiv__(self, other: object) -> Expr:
        return _infix("//", self, other)

    def __rfloordiv__(self, other: object) -> Expr:
        return _infix("//", other, self)

    def __mod__(self, other: object) -> Expr:
        return _infix("mod", self, other)

    def __rmod__(self, other: object) -> Expr:
        return _infix("mod", other, self)

    def __pow__(self, other: object) -> Expr:
        return _infix("**", self, other)

    def __rpow__(self, other: object) -> Expr:
        return _infix("**", other, self)

    def __neg__(self) -> Expr:
        return Expr(Compound("-", (self.term,)))

    def __lt__(self, other: object) -> Expr:
        return _infix("<", self, other)

    def __le__(self, other: object) -> Expr:
        return _infix("=<", self, other)

    def __gt__(self, other: object) -> Expr:
        return _infix(">", self, other)

    def __ge__(self, other: object) -> Expr:
        return _infix(">=", self, other)

    def eq(self, other: object) -> Expr:
        """``self = other`` (unification)."""
        return _infix("=", self, other)

    def ne(self, other: object) -> Expr:
        """``self \\= other`` (does not unify)."""
        return _infix("\\=", self, other)

    def num_eq(self, other: object) -> Expr:
        """``self =:= other`` (arithmetic equality)."""
        return _infix("=:=", self, other)

    def num_ne(self, other: object) -> Expr:
        """``self =\\= other`` (arithmetic inequality)."""
        return _infix("=\\=", self, other)

    def is_(self, other: object) -> Expr:
        """``self is other`` (evaluate ``other`` and unify)."""
        return _infix("is", self, other)


def term(value: object) -> Term:
    """Convert a Python value, an :class:`Expr` or an AST term to an AST term.

    Args:
        value: see the module doc for the conversions.
    Returns:
        the AST term.
    Raises:
        TypeError: for a value with no term form (``bool``, ``None``, dicts ...).

    >>> term("GO"), term(1.5)
    (String(value='GO'), Number(value=1.5))
    """
    match value:
        case Expr():
            return value.term
        case bool() | None:
            raise TypeError(f"{value!r} has no term form (use atom('true') for an atom)")
        case int() | float() | Fraction():
            return Number(value)
        case str():
            return String(value)
        case IRI():
            return Iri(value.value)
        case list():
            return ListTerm(tuple(term(item) for item in value))
        case Var() | Atom() | String() | Number() | Iri() | PName() | Compound() | ListTerm():
            return value
    raise TypeError(f"{value!r} has no term form")


def var(name: str) -> Expr:
    """A logic variable (``_`` is anonymous).

    >>> var("X").term
    Var(name='X')
    """
    return Expr(Var(name))


def variables(names: str) -> tuple[Expr, ...]:
    """Several variables, named in one space-separated string.

    >>> [v.term.name for v in variables("S T")]
    ['S', 'T']
    """
    return tuple(var(name) for name in names.split())


def atom(name: str) -> Expr:
    """An atom: ``atom("go")`` is ``go``, ``atom("GO")`` is ``'GO'``.

    >>> atom("recent").term
    Atom(name='recent')
    """
    return Expr(Atom(name))


def iri(value: str) -> Expr:
    """A full IRI ``<value>``.

    >>> iri("http://ex.org/a").term
    Iri(value='http://ex.org/a')
    """
    return Expr(Iri(value))


def pname(name: str) -> Expr:
    """A prefixed name such as ``wt:Diablo`` (declare the prefix with ``prefix``).

    >>> pname("wt:Diablo").term
    PName(prefix='wt', local='Diablo')
    """
    prefix, sep, local = name.partition(":")
    if not sep or not prefix or not local:
        raise ValueError(f"expected a prefixed name such as 'wt:Diablo', got {name!r}")
    return Expr(PName(prefix, local))


def compound(functor: str, *args: object) -> Expr:
    """A compound term ``functor(args...)``; a prefixed functor (``"wt:speed"``) asks the
    knowledge store, an operator functor (``"<"``) is that operator.

    >>> compound("wt:speed", var("S"), var("V")).term.functor
    'wt:speed'
    """
    return Expr(Compound(functor, tuple(term(a) for a in args)))


def list_term(items: list[object], tail: object) -> Expr:
    """A list with a tail, ``[items... | tail]`` (a Python list is a list without one).

    >>> from reasoner.language.printer import to_source
    >>> to_source(list_term([1], var("T")).term)
    '[1 | T]'
    """
    return Expr(ListTerm(tuple(term(i) for i in items), term(tail)))


def conj(*goals: object) -> Expr:
    """The conjunction ``g1, g2, ...`` (nested to the right, as the parser reads it).

    >>> from reasoner.language.printer import to_source
    >>> to_source(conj(var("X") > 1, var("X") < 5).term)
    'X > 1, X < 5'
    """
    return _fold(",", goals)


def disj(*goals: object) -> Expr:
    """The disjunction ``g1 ; g2 ; ...`` (nested to the right)."""
    return _fold(";", goals)


def not_provable(goal: object) -> Expr:
    """Negation as failure, ``\\+ goal``."""
    return Expr(Compound("\\+", (term(goal),)))


def _infix(op: str, left: object, right: object) -> Expr:
    return Expr(Compound(op, (term(left), term(right))))


def _fold(op: str, goals: tuple[object, ...]) -> Expr:
    if not goals:
        raise ValueError(f"'{op}' needs at least one goal")
    out = term(goals[-1])
    for goal in reversed(goals[:-1]):
        out = Compound(op, (term(goal), out))
    return Expr(out)
