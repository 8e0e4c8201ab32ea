"""Aggregates over sliding windows, updated per occurrence without rescanning the window.

A window holds the occurrences aggregated so far, oldest first: a count window the last N, a
time window those that ended within the last D (one ending at e leaves at e + D). Running
count, sum and sum of squares make count, sum, avg and stddev O(1) per occurrence; monotonic
deques make min, max and the earliest start amortised O(1).

The value reported for an occurrence covers the window as it was before the occurrence's time
point, plus the occurrence itself (docs/language.md), so occurrences of the current time point
wait as *pending* and join the window when the clock moves on.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from functools import partial
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from reasoner.knowledge.builtins import apply_function
from reasoner.runtime.nodes import (
    Emit,
    Node,
    OneInputNode,
    Runtime,
    Values,
    picker,
    tuple_picker,
)
from reasoner.runtime.policies import INF, Store, make_store
from reasoner.values import Time

if TYPE_CHECKING:
    from reasoner.runtime.codec import Codec


class SlidingWindow:
    """The occurrences one aggregate currently covers (one group, or one start occurrence)."""

    __slots__ = (
        "function",
        "kind",
        "size",
        "items",
        "total",
        "squares",
        "lows",
        "highs",
        "starts",
        "pending",
        "pending_time",
        "_next",
    )

    def __init__(self, function: str, window: tuple[str, Time] | None) -> None:
        self.function = function
        self.kind: str | None = window[0] if window is not None else None
        self.size: Time = window[1] if window is not None else 0
        self.items: deque[tuple[int, Any, Time, Time]] = deque()  # (seq, value, start, end)
        self.total: Any = 0
        self.squares = 0.0
        self.lows: deque[tuple[Any, int]] = deque()  # increasing values: the front is the min
        self.highs: deque[tuple[Any, int]] = deque()  # decreasing values: the front is the max
        self.starts: deque[tuple[Time, int]] = deque()  # increasing starts
        self.pending: list[tuple[Any, Time, Time]] = []
        self.pending_time: Time = -INF
        self._next = 0

    def __len__(self) -> int:
        return len(self.items) + len(self.pending)

    def state(self, codec: Codec) -> dict[str, Any]:
        """The window as JSON data."""
        w = codec.write
        return {
            "items": [[seq, w(v), w(s), w(e)] for seq, v, s, e in self.items],
            "total": w(self.total),
            "squares": w(self.squares),
            "lows": [[w(v), seq] for v, seq in self.lows],
            "highs": [[w(v), seq] for v, seq in self.highs],
            "starts": [[w(s), seq] for s, seq in self.starts],
            "pending": [[w(v), w(s), w(e)] for v, s, e in self.pending],
            "pending_time": w(self.pending_time),
            "next": self._next,
        }

    @staticmethod
    def loaded(
        data: dict[str, Any], function: str, window: tuple[str, Time] | None, codec: Codec
    ) -> SlidingWindow:
        """A window holding what :meth:`state` wrote (ValueError, KeyError... if malformed)."""
        w = SlidingWindow(function, window)
        w.read(data, codec)
        return w

    def read(self, data: dict[str, Any], codec: Codec) -> None:
        """Take what :meth:`state` wrote (a new window's)."""
        r = codec.read
        self.items = deque((int(q), r(v), r(s), r(e)) for q, v, s, e in data["items"])
        self.total = r(data["total"])
        self.squares = float(r(data["squares"]))
        self.lows = deque((r(v), int(q)) for v, q in data["lows"])
        self.highs = deque((r(v), int(q)) for v, q in data["highs"])
        self.starts = deque((r(s), int(q)) for s, q in data["starts"])
        self.pending = [(r(v), r(s), r(e)) for v, s, e in data["pending"]]
        self.pending_time = r(data["pending_time"])
        self._next = int(data["next"])

    def settle(self, now: Time) -> int:
        """Commit the pending occurrences of earlier time points, then drop what has left a
        time window by ``now``; return how many left."""
        if self.pending and self.pending_time < now:
            for value, start, end in self.pending:
                self._push(value, start, end)
            self.pending.clear()
        left = 0
        if self.kind == "time":
            limit = now - self.size
            while self.items and self.items[0][3] <= limit:
                self._pop()
                left += 1
        return left

    def add(self, value: Any, start: Time, end: Time, now: Time) -> None:
        """Add an occurrence of the current time point (pending until the clock moves on)."""
        self.pending.append((value, start, end))
        self.pending_time = now

    def earliest_start(self) -> Time:
        """The earliest start among the covered occurrences (pending ones included)."""
        earliest = self.starts[0][0] if self.starts else INF
        return min(earliest, min((p[1] for p in self.pending), default=INF))

    def value(self, extra: Any = None) -> Any:
        """The aggregate over the committed occurrences plus ``extra`` (None: none); None
        when it is undefined (avg, min, max or stddev of nothing)."""
        n = len(self.items) + (extra is not None)
        function = self.function
        if function == "count":
            return n
        total = self.total if extra is None else self.total + extra
        if function == "sum":
            return total
        if n == 0:
            return None
        if function == "avg":
            return apply_function("/", (total, n))
        if function == "min":
            low = self.lows[0][0] if self.lows else extra
            return low if extra is None or low <= extra else extra
        if function == "max":
            high = self.highs[0][0] if self.highs else extra
            return high if extra is None or high >= extra else extra
        squares = self.squares if extra is None else self.squares + float(extra) ** 2
        mean = float(total) / n
        return math.sqrt(max(squares / n - mean * mean, 0.0))

    def _push(self, value: Any, start: Time, end: Time) -> None:
        seq = self._next
        self._next += 1
        self.items.append((seq, value, start, end))
        function = self.function
        if function in ("sum", "avg", "stddev"):
            self.total += value
            if function == "stddev":
                self.squares += float(value) ** 2
        elif function == "min":
            while self.lows and self.lows[-1][0] >= value:
                self.lows.pop()
            self.lows.append((value, seq))
        elif function == "max":
            while self.highs and self.highs[-1][0] <= value:
                self.highs.pop()
            self.highs.append((value, seq))
        while self.starts and self.starts[-1][0] >= start:
            self.starts.pop()
        self.starts.append((start, seq))
        if self.kind == "count":
            while len(self.items) > self.size - 1:  # the reported value adds one more
                self._pop()

    def _pop(self) -> None:
        seq, value, _, _ = self.items.popleft()
        if self.function in ("sum", "avg", "stddev"):
            self.total -= value
            if self.function == "stddev":
                self.squares -= float(value) ** 2
        for ordered in (self.lows, self.highs, self.starts):
            if ordered and ordered[0][1] == seq:
                ordered.popleft()


def _reader(position: int | None) -> Callable[[Values], Any]:
    """The aggregated value of an occurrence (count counts ones)."""
    return (lambda _v: 1) if position is None else itemgetter(position)


class SlidingAggregateNode(OneInputNode):
    """A sliding ``aggregate(F, p, R[, W])``: per group, the aggregate at every occurrence,
    and again whenever an occurrence leaves a time window (even if nothing else arrives)."""

    __slots__ = ("groups", "_function", "_window", "_key", "_group_values", "_value")

    holds = True

    def __init__(
        self,
        node_id: int,
        runtime: Runtime,
        function: str,
        value: int | None,
        group: Sequence[int],
        window: tuple[str, Time] | None,
    ) -> None:
        super().__init__(node_id, runtime)
        self.groups: dict[Any, tuple[Values, SlidingWindow]] = {}
        self._function = function
        self._window = window
        self._key = picker(group)
        self._group_values = tuple_picker(group)
        self._value = _reader(value)

    def stored(self) -> int:
        return sum(len(window) for _, window in self.groups.values())

    def held(self) -> Time:
        return min((w.earliest_start() for _, w in self.groups.values()), default=INF)

    def receive(self, v: Values, s: Time, e: Time, w: Any) -> None:
        key = self._key(v)
        entry = self.groups.get(key)
        if entry is None:
            window = SlidingWindow(self._function, self._window)
            entry = self.groups[key] = (self._group_values(v), window)
        values, window = entry
        now = self.runtime.now
        window.settle(now)
        x = self._value(v)
        start = min(s, window.earliest_start())
        result = window.value(x)
        window.add(x, s, e, now)
        if self._window is not None and self._window[0] == "time":
            self.runtime.schedule(e + self._window[1], partial(self._leave, key))
        self.emit(values + (result,), start, e, w)

    def state(self, codec: Codec) -> Any:
        w = codec.write
        groups = [[w(k), w(values), win.state(codec)] for k, (values, win) in self.groups.items()]
        return {"groups": groups}

    def load(self, data: Any, codec: Codec) -> Callable[[], None]:
        r, function, window = codec.read, self._function, self._window
        groups = {
            r(k): (r(values), SlidingWindow.loaded(w, function, window, codec))
            for k, values, w in data["groups"]
        }

        def apply() -> None:
            self.groups.clear()
            self.groups.update(groups)

        return apply

    def timer(self, fire: Callable[[], None], codec: Codec) -> list[Any]:
        if isinstance(fire, partial) and fire.func == self._leave:
            return ["leave", codec.write(fire.args[0])]
        return super().timer(fire, codec)

    def read_timer(self, kind: str, data: list[Any], codec: Codec) -> Callable[[], None]:
        if kind != "leave":
            return super().read_timer(kind, data, codec)
        return partial(self._leave, codec.read(data[0]))

    def _leave(self, key: Any) -> None:
        """A timer: occurrences of this group may have left the window now."""
        entry = self.groups.get(key)
        now = self.runtime.now
        if entry is None or not entry[1].settle(now):
            return
        values, window = entry
        result = window.value()
        if not window:
            del self.groups[key]
        if result is not None:
            self.emit(values + (result,), window.earliest_start() if window else now, now, None)


class StartedAggregateNode(Node):
    """``p1 SEQ aggregate(F, p2, R[, W])``: for every start occurrence of p1, the aggregate
    over the p2 occurrences (with the same group values) that started after it ended."""

    __slots__ = ("starts", "_function", "_window", "_start_key", "_key", "_value", "_trace")

    holds = True
    wiring = (1, 0)  # items before starts: an occurrence that is both never counts itself

    @property
    def receivers(self) -> tuple[Emit, ...]:
        return (self.start_in, self.item_in)

    def __init__(
        self,
        node_id: int,
        runtime: Runtime,
        function: str,
        value: int | None,
        group: Sequence[int],
        start_key: Sequence[int],
        window: tuple[str, Time] | None,
        policy: str,
        tie_break: str,
        provenance: bool = False,
    ) -> None:
        super().__init__(node_id, runtime)
        self._trace = provenance
        # Recent keeps the latest start per group; the others keep every start (an
        # aggregate consumes nothing: each start accumulates what follows it).
        self.starts = make_store("recent" if policy == "recent" else "unrestricted", tie_break)
        self._function = function
        self._window = window
        self._start_key = picker(start_key)
        self._key = picker(group)
        self._value = _reader(value)

    def stores(self) -> tuple[Store, ...]:
        return (self.starts,)

    def stored(self) -> int:
        return sum(1 + len(o[4]) for b in self.starts.buckets.values() for o in b)

    def held(self) -> Time:
        return self.starts.earliest_start()

    def state(self, codec: Codec) -> Any:
        return {"starts": codec.store(self.starts, lambda window: window.state(codec))}

    def load(self, data: Any, codec: Codec) -> Callable[[], None]:
        function, window = self._function, self._window
        starts = codec.buckets(
            data["starts"], lambda w: SlidingWindow.loaded(w, function, window, codec)
        )
        return partial(self.starts.fill, starts)

    def start_in(self, v: Values, s: Time, e: Time, w: Any) -> None:
        window = SlidingWindow(self._function, self._window)
        self.starts.add(self._start_key(v), (v, s, e, w, window))
        if self._function in ("count", "sum"):
            self.emit(v + (0,), s, e, w)

    def item_in(self, v: Values, s: Time, e: Time, w: Any) -> None:
        bucket = self.starts.buckets.get(self._key(v))
        if not bucket:
            return
        now = self.runtime.now
        x = self._value(v)
        for sv, ss, se, sw, window in tuple(bucket):
            if se < s:
                window.settle(now)
                result = window.value(x)
                window.add(x, s, e, now)
                self.emit(sv + (result,), ss, e, (sw, w) if self._trace else None)
