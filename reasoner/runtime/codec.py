"""The value codec below the nodes: run-time values as JSON data, and back.

Values JSON has no type for are tagged arrays (an array is never a value itself): ``["t", ...]``
a tuple, ``["q", n, d]`` a fraction, ``["i", iri]`` an IRI, ``["s", functor, [args]]`` a
compound, ``["x", "inf"]`` (or ``"-inf"``, ``"nan"``) a float JSON cannot write, ``["e", name,
args, start, end]`` an event and ``["d", name, args, start, end, [sources]]`` a detection with
provenance; an explaining engine's detections add ``[rule, values, why]``, their derivation (the
rule by its place among the engine's rules in use, the values of its variables, the ``why``
tree). Decoding runs no code: it builds only plain values, events and detections.

Every stateful node writes and reads its state through a :class:`Codec` (the node's
``state``/``load``, :class:`~reasoner.runtime.nodes.Node`); the snapshot format
(:mod:`reasoner.runtime.checkpoint`) wraps what they write.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from reasoner.errors import SnapshotError
from reasoner.runtime.events import Detection, Event
from reasoner.values import IRI, Struct

if TYPE_CHECKING:
    from reasoner.runtime.engine import Engine
    from reasoner.runtime.policies import Store


@dataclass(frozen=True, slots=True)
class Derivations:
    """Explaining engines' rules in use (``RuleInfo``s, by place) and the knowledge: what
    writing and reading derivations needs."""

    infos: tuple[Any, ...]
    places: dict[int, int]  # id(RuleInfo) -> place
    knowledge: Any

    @staticmethod
    def of(*engines: Engine) -> Derivations | None:
        """The rules of ``engines``, one after the other (None unless they explain); the
        knowledge of the first."""
        if not engines or not engines[0].settings.explain:
            return None
        infos = tuple(info for e in engines for info in e.wiring.rule_infos())
        places = {id(info): place for place, info in enumerate(infos)}
        return Derivations(infos, places, engines[0].knowledge)

    def write(self, derivation: Any) -> list[Any] | None:
        """A :class:`~reasoner.runtime.explain.Derivation` as JSON data ``[rule, values,
        why]``; None for one of a rule not in use any more."""
        place = self.places.get(id(derivation.rule))
        if place is None:
            return None
        return [place, encode(derivation.values), encode(derivation.why, self)]

    def read(self, data: list[Any]) -> Any:
        """The inverse of :meth:`write`."""
        from reasoner.runtime.explain import Derivation

        place, values, why = data
        return Derivation(self.infos[int(place)], decode(values), decode(why, self), self.knowledge)


def encode(x: Any, rules: Derivations | None = None) -> Any:
    """A run-time value as JSON data (tagged arrays for what JSON lacks); with ``rules``,
    detections with their derivations."""
    # (isinstance with a tuple, not a union: this runs for every value a snapshot writes)
    if x is None or isinstance(x, (str, int)):  # (bool is an int)
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else ["x", repr(x)]
    if isinstance(x, Event):
        name, args, start, end = x
        out = ["e", name, encode(args), encode(start), encode(end)]
        if isinstance(x, Detection):
            out[0] = "d"
            out.append([encode(s) for s in x.sources])
            # (the derivation of a rule removed since is not kept: the event explains as a leaf)
            written = None if rules is None or x.derivation is None else rules.write(x.derivation)
            if written is not None:
                out.append(written)
        return out
    if isinstance(x, tuple):
        return ["t", *[encode(i, rules) for i in x]]
    if isinstance(x, Fraction):
        return ["q", x.numerator, x.denominator]
    if isinstance(x, IRI):
        return ["i", x.value]
    if isinstance(x, Struct):
        return ["s", x.functor, [encode(a) for a in x.args]]
    raise SnapshotError(f"cannot write a value of type {type(x).__name__} into a snapshot")


def decode(x: Any, rules: Derivations | None = None) -> Any:
    """The inverse of :func:`encode` (builds only plain values, events and detections)."""
    if not isinstance(x, list):
        if x is None or isinstance(x, (str, int, float)):
            return x
        raise ValueError(f"unexpected {type(x).__name__}")
    tag = x[0]
    if tag == "t":
        return tuple([decode(i, rules) for i in x[1:]])
    if tag == "x":
        if x[1] not in ("inf", "-inf", "nan"):
            raise ValueError(f"bad float {x[1]!r}")
        return float(x[1])
    if tag == "q":
        return Fraction(int(x[1]), int(x[2]))
    if tag == "i":
        return IRI(str(x[1]))
    if tag == "s":
        return Struct(str(x[1]), tuple(decode(a) for a in x[2]))
    if tag == "e":
        return Event(str(x[1]), decode(x[2]), decode(x[3]), decode(x[4]))
    if tag == "d":
        detection = Detection(str(x[1]), decode(x[2]), decode(x[3]), decode(x[4]))
        detection.sources = tuple(decode(s) for s in x[5])
        if rules is not None and len(x) > 6:
            detection.derivation = rules.read(x[6])
        return detection
    raise ValueError(f"unknown tag {tag!r}")


class Codec:
    """How a node writes and reads its state: values as JSON data (:func:`encode`), and the
    ``why`` of stored occurrences with the derivations of ``rules`` (an explaining engine's).

    >>> codec = Codec()
    >>> codec.read(codec.write((1, float("inf"))))
    (1, inf)
    """

    __slots__ = ("rules",)

    def __init__(self, rules: Derivations | None = None) -> None:
        self.rules = rules

    def write(self, x: Any) -> Any:
        """A value as JSON data."""
        return encode(x)

    def read(self, x: Any) -> Any:
        """The value of JSON data :meth:`write` wrote (ValueError when malformed)."""
        return decode(x)

    def write_why(self, x: Any) -> Any:
        """What an occurrence was built from (detections with their derivations)."""
        return encode(x, self.rules)

    def read_why(self, x: Any) -> Any:
        """The inverse of :meth:`write_why`."""
        return decode(x, self.rules)

    def store(self, store: Store, item: Callable[[Any], Any] | None = None) -> list[Any]:
        """A store's buckets (``item`` writes the fifth field of occurrences that have one)."""
        return [
            [encode(key), [self._occurrence(o, item) for o in bucket]]
            for key, bucket in store.buckets.items()
        ]

    def _occurrence(self, o: tuple[Any, ...], item: Callable[[Any], Any] | None) -> list[Any]:
        out = [encode(o[0]), encode(o[1]), encode(o[2]), encode(o[3], self.rules)]
        if len(o) == 5:  # (a started aggregate's window)
            assert item is not None
            out.append(item(o[4]))
        return out

    def buckets(
        self, data: list[Any], item: Callable[[Any], Any] | None = None
    ) -> dict[Any, list[tuple[Any, ...]]]:
        """The buckets :meth:`store` wrote (``item`` reads a fifth field; ValueError when there
        is one and no ``item``)."""
        buckets: dict[Any, list[tuple[Any, ...]]] = {}
        for key, bucket in data:
            occurrences = []
            for o in bucket:
                occ: tuple[Any, ...] = (
                    decode(o[0]),
                    decode(o[1]),
                    decode(o[2]),
                    self.read_why(o[3]),
                )
                if len(o) == 5:
                    if item is None:
                        raise ValueError("an aggregate window outside an aggregate")
                    occ += (item(o[4]),)
                occurrences.append(occ)
            buckets[decode(key)] = occurrences
        return buckets
