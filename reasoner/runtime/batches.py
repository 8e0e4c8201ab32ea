"""Whole chunks of input events checked and shared out among worker processes with C-level
operations (``map``, ``set``, ``compress``), for the router of :mod:`reasoner.runtime.parallel`:
in the common case no Python code runs per event.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Iterator, Sequence
from fractions import Fraction
from itertools import compress, count, islice
from operator import is_, itemgetter, le, sub
from typing import Any

from reasoner.runtime.events import Event
from reasoner.values import NUMBER_TYPES, Struct

#: An event type: its name and number of arguments.
Kind = tuple[str, int]

_names, _args, _starts, _ends = itemgetter(0), itemgetter(1), itemgetter(2), itemgetter(3)


def acceptable(
    chunk: Sequence[Event],
    now: Any,
    arities: dict[str, set[int]],
    span_limit: Any,
    types: set[Kind] | None = None,
) -> bool:
    """Whether an engine at time ``now`` (without a lateness bound) takes every event of
    ``chunk``, one after the other: Events with exact number times, each starting at or
    after 0 and ending at or after its start, the ends never going back from ``now``, none
    lasting longer than ``span_limit``, every known name with one of its arities. False
    when any check fails (the caller then checks the events one by one, for the reasons).
    ``types``: the chunk's :func:`kinds` when the caller has them (not computed again)."""
    if set(map(type, chunk)) != {Event}:
        return False
    ends = list(map(_ends, chunk))
    if not (
        NUMBER_TYPES.issuperset(map(type, ends))
        and ends[0] >= max(now, 0)
        and all(map(le, ends, islice(ends, 1, None)))  # (False for NaN)
    ):
        return False
    starts = list(map(_starts, chunk))
    if not all(map(is_, starts, ends)) and not (  # (atomic events: the start is the end)
        NUMBER_TYPES.issuperset(map(type, starts))
        and all(map(le, starts, ends))  # (False for NaN)
        and min(starts) >= 0
        and (span_limit == math.inf or max(map(sub, ends, starts)) <= span_limit)
    ):
        return False
    for name, arity in kinds(chunk) if types is None else types:
        known = arities.get(name)
        if known is not None and arity not in known:
            return False
    return True


def kinds(chunk: Sequence[Event]) -> set[Kind]:
    """The distinct event types of ``chunk``."""
    names = set(map(_names, chunk))
    if len(names) == 1:
        (name,) = names
        return {(name, arity) for arity in set(map(len, map(_args, chunk)))}
    return set(zip(map(_names, chunk), map(len, map(_args, chunk)), strict=True))


#: How :func:`key_owner` shares keys out: a parallel snapshot records it (change it with the
#: formula, so that a snapshot whose workers hold keys elsewhere is refused).
OWNERS = "key_owner 2"


def key_owner(key: Any, workers: int) -> int:
    """The worker (or partition) owning a key value, of ``workers``: a hash of the text of
    the value's equality class, so that values the engine joins as one (``1``, ``1.0``,
    ``Fraction(1)``, ``True``; lists and compound values holding them) have one owner, the
    same in every process and run (no per-process string hash).

    >>> key_owner(1, 7) == key_owner(1.0, 7) == key_owner(Fraction(1), 7) == key_owner(True, 7)
    True
    >>> key_owner("S1", 1000), key_owner(0.5, 1000) == key_owner(Fraction(1, 2), 1000)
    (411, True)
    """
    return zlib.crc32(key_text(key).encode("utf-8", "surrogatepass")) % workers


def key_text(key: Any) -> str:
    """The text of a key value's equality class (what :func:`key_owner` hashes, and what
    ``reasoner spark stream`` names a key's state by): equal for the values the engine joins
    as one, different for the others.

    >>> key_text(2) == key_text(2.0) == key_text(Fraction(2)), key_text(1) == key_text(True)
    (True, True)
    >>> key_text("2"), key_text(2.5), key_text((1.0, "a"))
    ("'2'", '5/2', "(1, 'a')")
    """
    return repr(key) if type(key) is str else _canonical(key)


def _canonical(value: Any) -> str:
    """The text of ``value``'s equality class: numbers as their exact ratio (an integral one
    as the integer), lists and compound values part by part, others (strings, IRIs) as
    their ``repr``."""
    kind = type(value)
    if kind is int or kind is bool:
        return repr(int(value))
    if kind is float:
        if not math.isfinite(value):
            return repr(value)  # (inf, -inf; NaN equals nothing)
        if value.is_integer():
            return repr(int(value))  # (-0.0 as 0)
        numerator, denominator = value.as_integer_ratio()  # (0.5 is 1/2, 0.1 is not 1/10)
        return f"{numerator}/{denominator}"
    if kind is Fraction:
        return str(value)  # (n/d in lowest terms, n when whole)
    if kind is tuple:
        return "(" + ", ".join(map(_canonical, value)) + ")"
    if kind is Struct:
        return f"{value.functor!r}(" + ", ".join(map(_canonical, value.args)) + ")"
    return repr(value)


class Owners(dict[Any, int]):
    """Key value -> the worker owning it (:func:`key_owner`), kept for each value seen: the
    common case is a dictionary lookup."""

    def __init__(self, workers: int) -> None:
        super().__init__()
        self.workers = workers

    def __missing__(self, key: Any) -> int:
        owner = self[key] = key_owner(key, self.workers)
        return owner


def share(
    chunk: Sequence[Event], keys: dict[Kind, int], reads: set[Kind], owners: Owners
) -> tuple[Sequence[int] | None, list[list[tuple[Any, ...]]], list[tuple[int, Event]]]:
    """The events of ``chunk`` for each worker, as plain tuples (they pickle many times
    faster than Events): those of a keyed type (``keys``: its key's argument position) go
    to the owner of their key, those of no keyed type that the global stage does not read
    (``reads``) to worker 0 (no rule reads them: counted, ignored). Also returns the owner
    of each event, in order (:func:`mine` reads it; ``owners.workers``: none, the event
    is for the global stage alone; None: every event is worker 0's), and the ``(index,
    event)`` the global stage reads."""
    types = kinds(chunk)
    raw = (
        []
        if reads.isdisjoint(types)
        else [(i, e) for i, e in enumerate(chunk) if (e[0], len(e[1])) in reads]
    )
    workers = owners.workers
    positions = {keys.get(kind) for kind in types}
    if len(positions) == 1 and None not in positions:  # every event keyed, at one position
        rows = list(map(tuple, chunk))
        if workers == 1:
            return None, [rows], raw
        (position,) = positions
        owner = list(map(owners.__getitem__, map(itemgetter(position), map(_args, chunk))))
        shares = [list(compress(rows, map(worker.__eq__, owner))) for worker in range(workers)]
        return _packed(owner, workers), shares, raw
    owner = []
    shares = [[] for _ in range(workers)]
    for event in chunk:
        kind = (event[0], len(event[1]))
        position = keys.get(kind)
        if position is not None:
            worker = owners[event[1][position]]
        elif kind not in reads:
            worker = 0  # no rule reads it: counted, ignored
        else:
            owner.append(workers)
            continue
        owner.append(worker)
        shares[worker].append(tuple(event))
    return _packed(owner, workers), shares, raw


def _packed(owner: list[int], workers: int) -> Sequence[int]:
    """``owner`` as bytes when they hold it (1 byte per event to pickle, no int objects)."""
    return bytes(owner) if workers < 256 else owner


def mine(
    first: int, owner: Sequence[int] | None, worker: int, rows: list[tuple[Any, ...]]
) -> Iterator[tuple[int, tuple[Any, ...]]]:
    """A worker's share of a batch numbered from ``first``: its ``rows`` (as :func:`share`
    gives them) with their sequence numbers."""
    numbers: Iterable[int] = (
        range(first, first + len(rows))
        if owner is None
        else compress(count(first), map(worker.__eq__, owner))
    )
    return zip(numbers, rows, strict=True)
