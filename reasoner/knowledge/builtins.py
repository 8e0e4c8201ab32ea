"""Built-in arithmetic, comparisons and relational predicates over run-time values.

Everything here works on :mod:`reasoner.values` (never on AST terms): ``goals.py`` compiles
terms into closures that call these functions, so nothing is looked up by name per call.

Numeric conventions (Prolog's, with one documented exception):

* ``+ - * // mod rem min max abs sign`` keep integers integers; ``floor ceiling round
  truncate`` give integers; ``sqrt exp log sin cos tan atan atan2`` give floats.
* ``/`` on two integers is exact: an ``int`` when the division is exact, otherwise a float
  (``7 / 2 = 3.5``, ``6 / 3 = 2``). This is SWI-Prolog's default (``prefer_rationals=false``)
  and keeps ``X / 2 =:= 3.5`` readable; a :class:`~fractions.Fraction` operand keeps the
  result exact.
* ``//`` truncates toward zero, ``mod`` takes the sign of the divisor, ``rem`` the sign of
  the dividend; ``^`` on integers stays an integer (a negative exponent is an error unless
  the base is 1 or -1); ``**`` on integers with a non-negative exponent is an integer too.
* A comparison involving a non-number (e.g. the atom ``none`` of a missing sensor reading)
  is false, never an error.

Relational built-ins (``atom_length/2``, ``geo_distance/5`` ...) share the calling convention
of :meth:`Knowledge.solve <reasoner.knowledge.base.Knowledge.solve>`: a pattern with ``None``
at unbound positions in, the matching full tuples out.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

from reasoner.errors import EngineError
from reasoner.values import IRI, Struct, Value

Number = int | float | Fraction
Pattern = tuple[Value | None, ...]
Relation = Callable[[Pattern], Iterator[tuple[Value, ...]]]


class EvaluationError(EngineError):
    """Arithmetic that cannot be evaluated: a non-number operand, division by zero, ..."""


def is_number(value: object) -> bool:
    """Whether ``value`` is a number value (``bool`` is not one).

    >>> is_number(3), is_number("none")
    (True, False)
    """
    return isinstance(value, int | float | Fraction) and not isinstance(value, bool)


#: Number classes arithmetic and comparisons need no further test for (``bool`` is a class
#: of its own): compiled conditions test a value's class against it, then compute at once.
PLAIN_NUMBERS = frozenset({int, float})


def _num(value: Value, op: str) -> Number:
    if not is_number(value):
        raise EvaluationError(f"arithmetic '{op}' on a non-number: {value!r}")
    return value  # type: ignore[return-value]


def _int(value: Value, op: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise EvaluationError(f"'{op}' needs integers, got {value!r}")
    return value


def _nonzero(value: Number, op: str) -> Number:
    if value == 0:
        raise EvaluationError(f"division by zero in '{op}'")
    return value


def _divide(a: Value, b: Value) -> Number:
    x, y = _num(a, "/"), _nonzero(_num(b, "/"), "/")
    if isinstance(x, int) and isinstance(y, int):
        # Exact when divisible, float otherwise (see the module docstring).
        return x // y if x % y == 0 else x / y
    return x / y


def _int_divide(a: Value, b: Value) -> int:
    x, y = _int(a, "//"), _int(b, "//")
    _nonzero(y, "//")
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y > 0) else -q


def _rem(a: Value, b: Value) -> int:
    x, y = _int(a, "rem"), _int(b, "rem")
    return x - y * _int_divide(x, y)


def _mod(a: Value, b: Value) -> int:
    x, y = _int(a, "mod"), _int(b, "mod")
    return x % _nonzero(y, "mod")  # type: ignore[return-value]


def _caret(a: Value, b: Value) -> Number:
    x, y = _num(a, "^"), _num(b, "^")
    if isinstance(x, int) and isinstance(y, int):
        if y < 0 and x not in (1, -1):
            raise EvaluationError(f"{x} ^ {y}: negative integer exponent")
        return x**y if y >= 0 else x ** abs(y)  # 1 and -1 are their own inverses
    return _power(x, y)


def _power(a: Value, b: Value) -> Number:
    x, y = _num(a, "**"), _num(b, "**")
    if isinstance(x, int) and isinstance(y, int) and y >= 0:
        return x**y
    if x == 0 and y < 0:
        raise EvaluationError("0 raised to a negative power")
    try:
        result = float(x) ** float(y)
    except OverflowError as exc:
        raise EvaluationError(f"{x} ** {y} overflows") from exc
    if isinstance(result, complex):
        raise EvaluationError(f"{x} ** {y} is not a real number")
    return result


def _float_fn(name: str, fn: Callable[[float], float]) -> Callable[[Value], float]:
    def apply(a: Value) -> float:
        try:
            return fn(float(_num(a, name)))
        except (ValueError, OverflowError) as exc:
            raise EvaluationError(f"{name}({a!r}) is undefined") from exc

    return apply


def _log2(base: Value, x: Value) -> float:
    return _float_fn("log", math.log)(x) / _float_fn("log", math.log)(base)


def _to_int(name: str, fn: Callable[[Number], int]) -> Callable[[Value], int]:
    def apply(a: Value) -> int:
        x = _num(a, name)
        try:
            return fn(x)
        except (ValueError, OverflowError) as exc:
            raise EvaluationError(f"{name}({a!r}) is undefined") from exc

    return apply


def _round(x: Number) -> int:
    # Prolog rounds half away from zero (Python's round() rounds half to even).
    return math.floor(x + Fraction(1, 2)) if x >= 0 else -math.floor(-x + Fraction(1, 2))


def _sign(a: Value) -> Number:
    x = _num(a, "sign")
    if isinstance(x, float):
        return math.copysign(1.0, x) if x != 0 else 0.0
    return (x > 0) - (x < 0)


def _min(a: Value, b: Value) -> Number:
    x, y = _num(a, "min"), _num(b, "min")
    return y if y < x else x


def _max(a: Value, b: Value) -> Number:
    x, y = _num(a, "max"), _num(b, "max")
    return y if y > x else x


def _binary(name: str, fn: Callable[[Any, Any], Number]) -> Callable[[Value, Value], Number]:
    def apply(a: Value, b: Value) -> Number:
        if (
            a.__class__ in PLAIN_NUMBERS and b.__class__ in PLAIN_NUMBERS
        ):  # the common case, at once
            return fn(a, b)
        return fn(_num(a, name), _num(b, name))

    return apply


#: Arithmetic functions by ``(name, arity)``; each takes values and returns a number.
FUNCTIONS: dict[tuple[str, int], Callable[..., Number]] = {
    ("+", 2): _binary("+", operator.add),
    ("-", 2): _binary("-", operator.sub),
    ("*", 2): _binary("*", operator.mul),
    ("/", 2): _divide,
    ("//", 2): _int_divide,
    ("mod", 2): _mod,
    ("rem", 2): _rem,
    ("**", 2): _power,
    ("^", 2): _caret,
    ("min", 2): _min,
    ("max", 2): _max,
    ("atan2", 2): _binary("atan2", lambda y, x: math.atan2(y, x)),
    ("atan", 2): _binary("atan", lambda y, x: math.atan2(y, x)),
    ("log", 2): _log2,
    ("-", 1): lambda a: -_num(a, "-"),
    ("+", 1): lambda a: _num(a, "+"),
    ("abs", 1): lambda a: -x if (x := _num(a, "abs")) < 0 else x,
    ("sign", 1): _sign,
    ("sqrt", 1): _float_fn("sqrt", math.sqrt),
    ("exp", 1): _float_fn("exp", math.exp),
    ("log", 1): _float_fn("log", math.log),
    ("sin", 1): _float_fn("sin", math.sin),
    ("cos", 1): _float_fn("cos", math.cos),
    ("tan", 1): _float_fn("tan", math.tan),
    ("atan", 1): _float_fn("atan", math.atan),
    ("floor", 1): _to_int("floor", math.floor),
    ("ceiling", 1): _to_int("ceiling", math.ceil),
    ("round", 1): _to_int("round", _round),
    ("truncate", 1): _to_int("truncate", math.trunc),
    ("integer", 1): _to_int("integer", _round),
    ("float", 1): _float_fn("float", float),
}

#: Arithmetic constants (atoms evaluated by ``is`` and comparisons).
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan}


def apply_function(name: str, args: tuple[Value, ...]) -> Number:
    """Apply the arithmetic function ``name/len(args)`` to evaluated arguments.

    Args:
        name: the functor, e.g. ``"+"`` or ``"sqrt"``.
        args: already evaluated operands.
    Returns:
        The number; :class:`EvaluationError` for an unknown function or a bad operand.

    >>> apply_function("/", (7, 2)), apply_function("/", (6, 3)), apply_function("mod", (-7, 2))
    (3.5, 2, 1)
    """
    fn = FUNCTIONS.get((name, len(args)))
    if fn is None:
        raise EvaluationError(f"unknown arithmetic function {name}/{len(args)}")
    return fn(*args)


# ---------------------------------------------------------------------- comparisons


def _numeric(test: Callable[[Any, Any], bool]) -> Callable[[Value, Value], bool]:
    def compare(a: Value, b: Value) -> bool:
        if (
            a.__class__ in PLAIN_NUMBERS and b.__class__ in PLAIN_NUMBERS
        ):  # the common case, decided at once
            return test(a, b)
        return is_number(a) and is_number(b) and test(a, b)

    return compare


#: The comparisons on two numbers (of :data:`PLAIN_NUMBERS` or not), by name.
NUMERIC_TESTS: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    ">": operator.gt,
    "=<": operator.le,
    ">=": operator.ge,
    "=:=": operator.eq,
    "=\\=": operator.ne,
}

#: Numeric comparisons: false (never an error) when either side is not a number.
COMPARISONS: dict[str, Callable[[Value, Value], bool]] = {
    op: _numeric(test) for op, test in NUMERIC_TESTS.items()
}


# ------------------------------------------------- standard order of terms


def order_key(value: Value) -> tuple[Any, ...]:
    """``value``'s place in Prolog's standard order of terms, as a key Python compares.

    Numbers < atoms and strings < IRIs < compound terms. Numbers compare by value (NaN
    first); equal values put a float before a rational before an integer (``1.0 @< 1``).
    Atoms, strings and IRIs compare by their text, character code by character code (atoms
    and strings are one kind of value here: ``'GO'`` and ``"GO"`` are equal). Compound terms
    compare by arity, then name, then arguments left to right; a list is ``'.'(Head, Tail)``
    and ``[]`` the atom ``'[]'`` (so a list that is a prefix of another is before it).

    >>> sorted([Struct("f", (1,)), "b", (1, 2), 2, 1.0, "a", IRI("http://e/x"), 1], key=order_key)
    [1.0, 1, 2, 'a', 'b', IRI(value='http://e/x'), Struct(functor='f', args=(1,)), (1, 2)]
    """
    match value:
        case bool():
            raise EvaluationError(f"not a term value: {value!r}")
        case int() | float() | Fraction():
            if value != value:  # NaN
                return (0, 0)
            return (0, 1, value, _NUMBER_RANK[value.__class__])
        case str():
            return (1, value)
        case IRI(text):
            return (2, text)
        case Struct(functor, args):
            return (3, len(args), functor, tuple(order_key(a) for a in args))
        case ():
            return (1, "[]")
        case tuple():
            # '.'(H, T) with T again a list: comparing the items left to right, a shorter
            # list first (its tail is '[]', an atom, before any compound).
            return (3, 2, ".", tuple(order_key(a) for a in value))
    raise EvaluationError(f"not a term value: {value!r}")


_NUMBER_RANK = {float: 0, Fraction: 1, int: 2}

#: Prolog's standard-order comparisons (``@<`` ...), by name: they compare any two values
#: without evaluating them (``1+2 @< 3`` compares the compound ``+(1, 2)`` with 3).
TERM_ORDER: dict[str, Callable[[Value, Value], bool]] = {
    "@<": lambda a, b: order_key(a) < order_key(b),
    "@>": lambda a, b: order_key(a) > order_key(b),
    "@=<": lambda a, b: order_key(a) <= order_key(b),
    "@>=": lambda a, b: order_key(a) >= order_key(b),
}


# ------------------------------------------------------------- relational built-ins


def _text(value: Value | None) -> str | None:
    """The text of a bound atom/string value, None for an unbound one."""
    return None if value is None else _text_of(value)


def _text_of(value: Value) -> str:
    """The text of an atom/string value; numbers read as their Prolog text."""
    if isinstance(value, str):
        return value
    if is_number(value):
        return _number_text(value)  # type: ignore[arg-type]
    if isinstance(value, IRI):
        return value.value
    raise EvaluationError(f"expected an atom, got {value!r}")


def _number_text(value: Number) -> str:
    if isinstance(value, Fraction):
        return f"{value.numerator}r{value.denominator}"
    return repr(value)


def _need(value: Value | None, what: str) -> Value:
    if value is None:
        raise EngineError(f"{what}: argument is not sufficiently instantiated")
    return value


def _need_text(value: Value | None, what: str) -> str:
    return _text_of(_need(value, what))


def _length(name: str) -> Relation:
    def solve(pattern: Pattern) -> Iterator[tuple[Value, ...]]:
        text = _need_text(pattern[0], name)
        if pattern[1] is None or pattern[1] == len(text):
            yield (text, len(text))

    return solve


def _concat(name: str) -> Relation:
    def solve(pattern: Pattern) -> Iterator[tuple[Value, ...]]:
        a, b, c = (_text(v) for v in pattern)
        if a is not None and b is not None:
            if c is None or c == a + b:
                yield (a, b, a + b)
            return
        whole = _need_text(c, name)
        # With the whole known, enumerate every split that agrees with a bound part.
        for i in range(len(whole) + 1):
            left, right = whole[:i], whole[i:]
            if (a is None or a == left) and (b is None or b == right):
                yield (left, right, whole)

    return solve


def _sub_atom(pattern: Pattern) -> Iterator[tuple[Value, ...]]:
    text = _need_text(pattern[0], "sub_atom")
    before, length, after, sub = pattern[1], pattern[2], pattern[3], _text(pattern[4])
    n = len(text)
    if sub is not None:
        # A known sub-atom: only its occurrences need checking.
        starts = [i for i in range(n - len(sub) + 1) if text.startswith(sub, i)]
        spans = ((i, len(sub)) for i in starts)
    else:
        spans = ((i, k) for i in range(n + 1) for k in range(n - i + 1))
    for i, k in spans:
        if (
            (before is None or before == i)
            and (length is None or length == k)
            and (after is None or after == n - i - k)
        ):
            yield (text, i, k, n - i - k, text[i : i + k])


def _case(name: str, convert: Callable[[str], str]) -> Relation:
    def solve(pattern: Pattern) -> Iterator[tuple[Value, ...]]:
        text = _need_text(pattern[0], name)
        converted = convert(text)
        if pattern[1] is None or pattern[1] == converted:
            yield (text, converted)

    return solve


def parse_number(text: str) -> Number | None:
    """The number written in ``text`` (Prolog syntax: ``42``, ``-3.5``, ``1.0e3``), or None.

    >>> parse_number("42"), parse_number("-3.5"), parse_number("abc")
    (42, -3.5, None)
    """
    stripped = text.strip()
    if stripped != text or not stripped:
        return None
    try:
        return int(stripped)
    except ValueError:
        pass
    try:
        value = float(stripped)
    except ValueError:
        return None
    # "inf"/"nan" are atoms in Prolog, not numbers.
    return value if math.isfinite(value) else None


def _atom_number(pattern: Pattern) -> Iterator[tuple[Value, ...]]:
    atom, number = pattern
    if atom is not None:
        text = _need_text(atom, "atom_number")
        parsed = parse_number(text)
        if parsed is not None and (number is None or number == parsed):
            yield (text, parsed)
        return
    value = _need(number, "atom_number")
    if is_number(value):
        yield (_number_text(value), value)  # type: ignore[arg-type]


def _member(pattern: Pattern) -> Iterator[tuple[Value, ...]]:
    # member(X, List): each element of a bound list (in order) that X unifies with; a value
    # that is not a list has no members.
    item, items = pattern
    values = _need(items, "member")
    if isinstance(values, tuple):
        for value in values:
            if item is None or item == value:
                yield (value, values)


def geo_distance_km(lat1: Value, lon1: Value, lat2: Value, lon2: Value) -> float:
    """The geodesic (WGS-84) distance in kilometres between two latitude/longitude points.

    Args:
        lat1, lon1, lat2, lon2: decimal degrees.
    Returns:
        Kilometres, via ``geopy.distance.geodesic``.

    >>> round(geo_distance_km(0, 0, 0, 1), 1)
    111.3
    """
    coords = [float(_num(v, "geo_distance")) for v in (lat1, lon1, lat2, lon2)]
    # Checked here because geopy only warns about (and then rejects) such coordinates.
    if not all(math.isfinite(c) for c in coords) or abs(coords[0]) > 90 or abs(coords[2]) > 90:
        raise EvaluationError(f"geo_distance: not a latitude/longitude pair: {coords}")
    from geopy.distance import geodesic  # on first use: geopy takes 0.1 s to import

    try:
        return float(geodesic((coords[0], coords[1]), (coords[2], coords[3])).km)
    except ValueError as exc:
        raise EvaluationError(f"geo_distance: {exc}") from exc


def _geo_distance(pattern: Pattern) -> Iterator[tuple[Value, ...]]:
    lat1, lon1, lat2, lon2 = (_need(v, "geo_distance") for v in pattern[:4])
    try:
        km = geo_distance_km(lat1, lon1, lat2, lon2)
    except EvaluationError:
        return  # a missing coordinate (e.g. `none`) makes the goal fail, like a comparison
    if pattern[4] is None or pattern[4] == km:
        yield (lat1, lon1, lat2, lon2, km)


def _of_two(name: str, combine: Callable[[Number, Number], Number]) -> Relation:
    """``name(A, B, C)``: C is ``combine(A, B)`` of two numbers (A and B must be bound): ETALIS's
    ``min/3`` and ``max/3``, ``datime_minus_datime(T2, T1, D)`` (D = T2 - T1 in seconds) and
    ``datime_plus_sec(T1, S, T2)`` (T2 = T1 + S; times are numbers)."""

    def solve(pattern: Pattern) -> Iterator[tuple[Value, ...]]:
        a, b, result = pattern
        if not is_number(a) or not is_number(b):
            if a is None or b is None:
                raise EvaluationError(f"{name}/3 needs its first two arguments bound")
            return
        value = combine(a, b)  # type: ignore[arg-type]
        if result is None or result == value:
            yield (a, b, value)  # type: ignore[misc]

    return solve


#: Relational built-ins by ``(name, arity)``, called like ``Knowledge.solve``.
RELATIONS: dict[tuple[str, int], Relation] = {
    ("atom_length", 2): _length("atom_length"),
    ("string_length", 2): _length("string_length"),
    ("atom_concat", 3): _concat("atom_concat"),
    ("string_concat", 3): _concat("string_concat"),
    ("sub_atom", 5): _sub_atom,
    ("sub_string", 5): _sub_atom,
    ("upcase_atom", 2): _case("upcase_atom", str.upper),
    ("downcase_atom", 2): _case("downcase_atom", str.lower),
    ("atom_number", 2): _atom_number,
    ("member", 2): _member,
    ("geo_distance", 5): _geo_distance,
    # Seed 004 names it getDistance(Lat1, Long1, Lat2, Long2, Distance), same order, km.
    ("getDistance", 5): _geo_distance,
    ("min", 3): _of_two("min", min),
    ("max", 3): _of_two("max", max),
    ("datime_minus_datime", 3): _of_two("datime_minus_datime", operator.sub),
    ("datime_plus_sec", 3): _of_two("datime_plus_sec", operator.add),
}

#: The arguments each relational built-in needs bound (by position): any one of these sets
#: (``atom_concat(A, B, C)`` needs A and B, or C); called otherwise it raises an error.
NEEDS: dict[tuple[str, int], tuple[tuple[int, ...], ...]] = {
    ("atom_length", 2): ((0,),),
    ("string_length", 2): ((0,),),
    ("atom_concat", 3): ((0, 1), (2,)),
    ("string_concat", 3): ((0, 1), (2,)),
    ("sub_atom", 5): ((0,),),
    ("sub_string", 5): ((0,),),
    ("upcase_atom", 2): ((0,),),
    ("downcase_atom", 2): ((0,),),
    ("atom_number", 2): ((0,), (1,)),
    ("member", 2): ((1,),),
    ("geo_distance", 5): ((0, 1, 2, 3),),
    ("getDistance", 5): ((0, 1, 2, 3),),
    ("min", 3): ((0, 1),),
    ("max", 3): ((0, 1),),
    ("datime_minus_datime", 3): ((0, 1),),
    ("datime_plus_sec", 3): ((0, 1),),
}
