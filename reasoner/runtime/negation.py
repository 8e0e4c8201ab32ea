"""Negation's operator state: ``NOT(n).[p, q]`` (:class:`NegationNode`), ``CNOT`` and ``FNOT``
(:class:`GuardNode`), over the occurrences of the negated pattern (:class:`Blockers`)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from reasoner.runtime import probes
from reasoner.runtime.generated import define
from reasoner.runtime.nodes import Emit, Node, Runtime, Values, picker
from reasoner.runtime.policies import INF, Store, make_store
from reasoner.runtime.probes import key_expr, store_lines
from reasoner.values import Time

if TYPE_CHECKING:
    from reasoner.runtime.codec import Codec


class Blockers:
    """Occurrences of a negated pattern per blocker key, in arrival (= end) order, with a
    running maximum of their starts: "some blocker ends before T and starts after S" is one
    binary search."""

    __slots__ = ("_by_key", "size")

    def __init__(self) -> None:
        # blocker key -> (ends, running maximum of starts, starts)
        self._by_key: dict[Any, tuple[list[Time], list[Time], list[Time]]] = {}
        self.size = 0

    def add(self, key: Any, start: Time, end: Time) -> None:
        entry = self._by_key.get(key)
        if entry is None:
            self._by_key[key] = ([end], [start], [start])
        else:
            ends, maxima, starts = entry
            ends.append(end)
            maxima.append(start if start > maxima[-1] else maxima[-1])
            starts.append(start)
        self.size += 1

    def between(self, key: Any, after: Time, before: Time, *, inclusive: bool = False) -> bool:
        """Whether a blocker with this key starts after ``after`` (or at it, if inclusive)
        and ends before ``before``."""
        latest = self.latest_start(key, before)
        return latest >= after if inclusive else latest > after

    def latest_start(self, key: Any, before: Time) -> Time:
        """The latest start of a blocker with this key that ends before ``before``
        (-infinity if none)."""
        entry = self._by_key.get(key)
        if entry is None:
            return -INF
        ends, maxima, _ = entry
        count = bisect_left(ends, before)
        return maxima[count - 1] if count else -INF

    def state(self, codec: Codec) -> list[Any]:
        """The blockers as JSON data (per key: ends, running maxima, starts)."""
        w = codec.write
        return [
            [w(k), [w(t) for t in ends], [w(t) for t in maxima], [w(t) for t in starts]]
            for k, (ends, maxima, starts) in self._by_key.items()
        ]

    def load(self, data: list[Any], codec: Codec) -> Callable[[], None]:
        """Read what :meth:`state` wrote; return what puts it in (see ``Node.load``)."""
        r = codec.read
        by_key = {
            r(k): ([r(t) for t in e], [r(t) for t in m], [r(t) for t in s]) for k, e, m, s in data
        }

        def apply() -> None:
            self._by_key.clear()
            self._by_key.update(by_key)
            self.size = sum(len(entry[0]) for entry in by_key.values())

        return apply

    def expire(self, cutoff: Time, *, strict: bool = True) -> int:
        """Forget blockers that started before ``cutoff`` (or at it, unless ``strict``);
        return how many."""
        dropped = 0
        for key in list(self._by_key):
            ends, _, starts = self._by_key[key]
            kept = [
                (en, st)
                for en, st in zip(ends, starts, strict=True)
                if st > cutoff or (strict and st == cutoff)
            ]
            if len(kept) == len(ends):
                continue
            dropped += len(ends) - len(kept)
            if not kept:
                del self._by_key[key]
                continue
            maxima: list[Time] = []
            for _, st in kept:
                maxima.append(st if not maxima or st > maxima[-1] else maxima[-1])
            self._by_key[key] = ([en for en, _ in kept], maxima, [st for _, st in kept])
        self.size -= dropped
        return dropped


class NegationNode(Node):
    """``NOT(n).[left, right]``: left SEQ right with no occurrence of n strictly between."""

    __slots__ = (
        "left",
        "blockers",
        "_bkey_out",
        "_bkey_width",
        "left_in",
        "right_in",
        "negated_in",
    )

    holds = True
    wiring = (0, 2, 1)  # blockers first, then right before left (as for joins)

    @property
    def receivers(self) -> tuple[Emit, ...]:
        return (self.negated_in, self.left_in, self.right_in)

    def __init__(
        self,
        node_id: int,
        runtime: Runtime,
        left_key: Sequence[int],
        right_key: Sequence[int],
        right_rest: Sequence[int],
        left_width: int,
        blocker_key: Sequence[tuple[int, int]],
        check: Callable[[Values], bool] | None,
        window: Time | None,
        policy: str,
        tie_break: str,
        provenance: bool = False,
    ) -> None:
        super().__init__(node_id, runtime)
        self.left = make_store(policy, tie_break)
        self.blockers = Blockers()
        self._bkey_out = picker([o for o, _ in blocker_key])
        negated_key = [n for _, n in blocker_key]
        # how many leading (left) values the blocker key reads
        self._bkey_width = max((o for o, _ in blocker_key), default=-1) + 1
        self.left_in: Emit = define(
            f"def left_in(v, s, e, w):\n    key = {key_expr('v', left_key)}\n"
            + "\n".join(store_lines("store", "buckets", "(v, s, e, w)", policy, "    "))
            + "\n",
            "not left",
            {"store": self.left, "buckets": self.left.buckets},
        )
        from_right = all(o >= left_width for o, _ in blocker_key)
        self.right_in: Emit = define(
            probes.negation_source(
                right_key,
                right_rest,
                [o - left_width for o, _ in blocker_key] if from_right else None,
                [o for o, _ in blocker_key],
                window is not None,
                check is not None,
                policy,
                provenance,
            ),
            f"not right/{policy}",
            {
                "node": self,
                "store": self.left,
                "buckets": self.left.buckets,
                "latest_start": self.blockers.latest_start,
                "check": check,
                "window": window,
                **probes.HELPERS,
            },
        )
        self.negated_in: Emit = define(
            f"def negated_in(v, s, e, w):\n    add({key_expr('v', negated_key)}, s, e)\n",
            "not negated",
            {"add": self.blockers.add},
        )

    def stores(self) -> tuple[Store, ...]:
        return (self.left,)

    def stored(self) -> int:
        return self.left.size + self.blockers.size

    def held(self) -> Time:
        return self.left.earliest_start()

    def state(self, codec: Codec) -> Any:
        return {"left": codec.store(self.left), "blockers": self.blockers.state(codec)}

    def load(self, data: Any, codec: Codec) -> Callable[[], None]:
        left = codec.buckets(data["left"])
        blockers = self.blockers.load(data["blockers"], codec)

        def apply() -> None:
            self.left.fill(left)
            blockers()

        return apply

    def expire(self, now: Time, floors: Sequence[Time]) -> int:
        dropped = super().expire(now, floors)
        # A stored left occurrence followed by a blocker that ends before any future right
        # occurrence can start is blocked for good (when the blocker key is known from it).
        between, key, width, right_floor = (
            self.blockers.between,
            self._bkey_out,
            self._bkey_width,
            floors[2],
        )
        dropped += self.left.drop(
            lambda o: len(o[0]) >= width and between(key(o[0]), o[2], right_floor), now
        )
        # A blocker matters only to a left occurrence that ended before it started. Future
        # left occurrences end at `now` or later, so a blocker that started no later than
        # every stored left occurrence's end (and `now`) can never block anything again.
        earliest_end = now
        for bucket in self.left.buckets.values():
            for occurrence in bucket:
                if occurrence[2] < earliest_end:
                    earliest_end = occurrence[2]
        return dropped + self.blockers.expire(earliest_end, strict=False)


class GuardNode(Node):
    """ETALIS's ``p CNOT q`` (no q inside p) and ``p FNOT q`` (no q ended before p ends).

    FNOT without a memory bound needs only the earliest end of any q per key; with one (the
    tightest enclosing window w) it keeps the ends of the last w time units.
    """

    __slots__ = (
        "blockers",
        "_ends",
        "_bkey_in",
        "_bkey_neg",
        "_fnot",
        "_memory",
        "input_in",
        "negated_in",
    )

    holds = True
    wiring = (1, 0)  # blockers first

    @property
    def receivers(self) -> tuple[Emit, ...]:
        return (self.input_in, self.negated_in)

    def __init__(
        self,
        node_id: int,
        runtime: Runtime,
        op: str,
        blocker_key: Sequence[tuple[int, int]],
        memory: Time | None,
    ) -> None:
        super().__init__(node_id, runtime)
        self.blockers = Blockers()
        self._ends: dict[Any, list[Time]] = {}  # FNOT: ends of q per key, in end order
        self._bkey_in = picker([i for i, _ in blocker_key])
        self._bkey_neg = picker([n for _, n in blocker_key])
        self._fnot = op == "fnot"
        self._memory = memory
        self.input_in = self._input
        self.negated_in = self._negated

    def stored(self) -> int:
        return self.blockers.size + sum(len(e) for e in self._ends.values())

    def state(self, codec: Codec) -> Any:
        w = codec.write
        ends = [[w(k), [w(e) for e in v]] for k, v in self._ends.items()]
        return {"blockers": self.blockers.state(codec), "ends": ends}

    def load(self, data: Any, codec: Codec) -> Callable[[], None]:
        blockers = self.blockers.load(data["blockers"], codec)
        ends = {codec.read(k): [codec.read(e) for e in v] for k, v in data["ends"]}

        def apply() -> None:
            blockers()
            self._ends.clear()
            self._ends.update(ends)

        return apply

    def _negated(self, v: Values, s: Time, e: Time, w: Any) -> None:
        key = self._bkey_neg(v)
        if not self._fnot:
            self.blockers.add(key, s, e)
        elif key not in self._ends:
            self._ends[key] = [e]
        elif self._memory is not None:  # without a memory bound the first end is enough
            self._ends[key].append(e)

    def _input(self, v: Values, s: Time, e: Time, w: Any) -> None:
        key = self._bkey_in(v)
        if self._fnot:
            ends = self._ends.get(key)
            if ends:
                oldest = bisect_left(ends, e - self._memory) if self._memory is not None else 0
                if oldest < len(ends) and ends[oldest] < e:
                    return
        elif self.blockers.between(key, s, e, inclusive=True):
            return
        self.emit(v, s, e, w)

    def expire(self, now: Time, floors: Sequence[Time]) -> int:
        if self._fnot:
            if self._memory is None:
                return 0
            cutoff = now - self._memory
            dropped = 0
            for key in list(self._ends):
                ends = self._ends[key]
                keep = bisect_left(ends, cutoff)
                if keep:
                    dropped += keep
                    del ends[:keep]
                    if not ends:
                        del self._ends[key]
            return dropped
        # CNOT: a blocker counts for inputs that start no later than it does.
        cutoff = floors[0] if self.horizon is None else max(floors[0], now - self.horizon)
        return self.blockers.expire(cutoff)
