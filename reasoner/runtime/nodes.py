"""Operator state: one run-time object per network node.

Occurrences travel upward as calls ``emit(values, start, end, why)``; ``why`` is None, or
with provenance on, what the occurrence was built from (an input event, or a pair of
``why``s). A join keeps, per side, the occurrences that may still find a partner,
hash-indexed by the join key; an arriving occurrence probes the other side's bucket, then is
stored. That finds every pair exactly once, whichever side arrives first, so rule order never
changes results. The network is acyclic (derived events re-enter through the engine's
agenda, not through nodes), so a bucket is never modified while it is being probed.
"""

from __future__ import annotations

import functools
import heapq
import re
from collections.abc import Callable, Sequence
from functools import partial
from itertools import count
from operator import itemgetter
from typing import TYPE_CHECKING, Any, ClassVar

from reasoner.compiler.network import Rank
from reasoner.errors import SnapshotError
from reasoner.knowledge.base import Knowledge
from reasoner.knowledge.goals import Goal
from reasoner.language.ast import Compound, ListTerm, Term, Var
from reasoner.language.operators import NOW, POINT, Operator, join_interval
from reasoner.runtime.generated import define
from reasoner.runtime.policies import INF, Occurrence, Store, make_store
from reasoner.runtime.probes import (
    ProbeSpec,
    build_probe,
    tuple_expr,
)
from reasoner.values import Struct, Time

if TYPE_CHECKING:
    from reasoner.runtime.codec import Codec

Emit = Callable[[tuple[Any, ...], Time, Time, Any], None]
Values = tuple[Any, ...]


class Runtime:
    """What every node may read: the clock and the current knowledge version; and where
    nodes set timers (time points, occurrences leaving a window)."""

    __slots__ = ("now", "knowledge", "timers", "_order")

    def __init__(self, knowledge: Knowledge) -> None:
        self.now: Time = float("-inf")
        self.knowledge = knowledge
        self.timers: list[tuple[Time, int, Callable[[], None]]] = []  # a heap by time
        self._order = count()

    def resume(self, now: Time, timers: list[tuple[Time, int, Callable[[], None]]]) -> None:
        """Take up a snapshot's clock and timers (a heap; in place: heads hold the list);
        timers set from now on come after theirs."""
        self.now = now
        self.timers[:] = timers
        self._order = count(max((t[1] for t in timers), default=-1) + 1)

    def schedule(self, at: Time, fire: Callable[[], None]) -> None:
        """Call ``fire()`` when the stream reaches time ``at`` (in time order, before the
        events of that time)."""
        heapq.heappush(self.timers, (at, next(self._order), fire))


def picker(positions: Sequence[int]) -> Callable[[Values], Any]:
    """A fast function taking the values at ``positions``: a scalar for one position, a
    tuple otherwise (used for join keys, where scalars hash fastest)."""
    if not positions:
        return lambda v: ()
    if len(positions) == 1:
        return itemgetter(positions[0])
    return itemgetter(*positions)


def tuple_picker(positions: Sequence[int]) -> Callable[[Values], Values]:
    """Like :func:`picker` but always returns a tuple (used to build output values)."""
    if not positions:
        return lambda v: ()
    if len(positions) == 1:
        i = positions[0]
        return lambda v: (v[i],)
    return itemgetter(*positions)


def fan_out(parents: Sequence[Emit]) -> Emit:
    """One emit function calling every parent in order (the parent itself when alone)."""
    if len(parents) == 1:
        return parents[0]
    calls = "".join(f"    p{i}(v, s, e, w)\n" for i in range(len(parents)))
    scope = {f"p{i}": parent for i, parent in enumerate(parents)}
    return define(f"def emit(v, s, e, w):\n{calls}", "emit", scope)


def _nowhere(v: Values, s: Time, e: Time, w: Any) -> None:
    """The emit of a node nothing reads yet."""


def _nothing() -> None:
    """What loading a stateless node's state does."""


@functools.cache
def past_use(expression: str) -> Callable[[Time, Occurrence], bool]:
    """``past_use(floor, occurrence)`` from an interval record's past-use expression."""
    source = f"def past_use(floor, o):\n    s, e = o[1], o[2]\n    return {expression}\n"
    return define(source, f"past use {expression}", {})


# ------------------------------------------------------------------------ nodes


class Node:
    """Base: the parents to emit to, and the stores to report and expire.

    ``emit`` is rebuilt by :meth:`connect`, so a node calls its parents directly, in
    delivery order (highest rank first, :func:`~reasoner.compiler.network.delivery_ranks`).
    """

    __slots__ = ("parents", "runtime", "horizon", "id", "emit")

    #: Whether it holds occurrences (garbage collection visits it).
    holds: ClassVar[bool] = False
    #: The positions of :attr:`receivers` (and of the network node's ``inputs``) in the
    #: order the engine connects them.
    wiring: ClassVar[tuple[int, ...]] = ()

    @property
    def receivers(self) -> tuple[Emit, ...]:
        """What each input (in network order) calls with its occurrences."""
        return ()

    def __init__(self, node_id: int, runtime: Runtime) -> None:
        self.id = node_id
        self.parents: list[tuple[Rank, Emit]] = []
        self.runtime = runtime
        self.horizon: Time | None = None
        self.emit: Emit = _nowhere

    def connect(self, parent: Emit, rank: Rank) -> None:
        """Send this node's occurrences to ``parent`` too, in the place ``rank`` says."""
        self.parents.append((rank, parent))
        self.parents.sort(key=itemgetter(0), reverse=True)  # stable: equal ranks keep order
        self.emit = fan_out([p for _, p in self.parents])

    def disconnect(self, parent: Emit) -> None:
        """Stop sending occurrences to ``parent`` (a rule removed from the engine)."""
        self.parents = [(rank, p) for rank, p in self.parents if p is not parent]
        self.emit = fan_out([p for _, p in self.parents]) if self.parents else _nowhere

    def stores(self) -> tuple[Store, ...]:
        return ()

    def stored(self) -> int:
        """How many occurrences this node holds (its waiting goals)."""
        return sum(s.size for s in self.stores())

    def held(self) -> Time:
        """The earliest start of a stored occurrence that may still reach the output."""
        return INF

    def expire(self, now: Time, floors: Sequence[Time]) -> int:
        """Drop stored occurrences that can no longer contribute; return how many.

        ``floors`` holds, per input (in the network's input order), a lower bound on the start
        of every occurrence that input may still emit.
        """
        if self.horizon is None:
            return 0
        cutoff = now - self.horizon
        return sum(s.expire(cutoff, now) for s in self.stores())

    # The state contract (docs/architecture.md): a stateful node kind writes its state as
    # JSON data through the codec and reads it back; the snapshot format wraps it.

    def state(self, codec: Codec) -> Any:
        """This node's state as JSON data (None: it holds none)."""
        return None

    def load(self, data: Any, codec: Codec) -> Callable[[], None]:
        """Read ``data`` (what :meth:`state` wrote) now, raising ValueError (or KeyError,
        TypeError, IndexError) when it is malformed; return what puts it in this node, in
        place (generated code holds the stores), once every node has read its own."""
        if data is not None:
            raise ValueError(f"state for stateless node {self.id}")
        return _nothing

    def timer(self, fire: Callable[[], None], codec: Codec) -> list[Any]:
        """A timer this node set, as ``[kind, *data]`` (a snapshot writes the node's id)."""
        raise SnapshotError(f"cannot write timer {fire!r} into a snapshot")

    def read_timer(self, kind: str, data: list[Any], codec: Codec) -> Callable[[], None]:
        """The timer :meth:`timer` wrote; ValueError when this node sets no such timer."""
        raise ValueError(f"timer {kind} does not match node {self.id}")


class SourceNode(Node):
    """Matches one event name/arity against the argument patterns of an event atom.

    The engine compiles every source of one event name/arity into one generated dispatcher
    (:func:`dispatcher`); a source holds the pieces: its test and values as Python source
    over the arguments ``a``, and the constants they read (see :func:`argument_matcher`).
    """

    __slots__ = ("test", "values", "constants")

    def __init__(
        self, node_id: int, runtime: Runtime, test: str, values: str, constants: dict[str, Any]
    ) -> None:
        super().__init__(node_id, runtime)
        self.test = test
        self.values = values
        self.constants = constants


def argument_matcher(
    args: Sequence[Term], value_of: Callable[[Term], Any], prefix: str
) -> tuple[str, str, dict[str, Any]]:
    """Python source matching an event's arguments ``a`` against the terms ``args``: the
    test (empty when any arguments match), the tuple of the variables' values (first
    occurrence order, as the compiler names them; ``a`` itself when the arguments are
    distinct variables), and the constants the code reads (named ``<prefix><n>``).

    Lists and compounds with variables inside are taken apart (``[X | T]``, ``f(X, 1)``).

    >>> from reasoner.language.ast import Number, Var
    >>> argument_matcher([Var("X"), Number(1), Var("X")], lambda t: t.value, "c")
    ('a[1] == c0 and a[2] == a[0]', '(a[0], )', {'c0': 1})
    """
    tests: list[str] = []
    bound: dict[str, str] = {}
    constants: dict[str, Any] = {}

    def constant(value: Any) -> str:
        name = f"{prefix}{len(constants)}"
        constants[name] = value
        return name

    def match(term: Term, path: str) -> None:
        match term:
            case Var("_"):
                pass
            case Var(name) if name in bound:
                tests.append(f"{path} == {bound[name]}")
            case Var(name):
                bound[name] = path
            case _ if value_of(term) is not None:
                tests.append(f"{path} == {constant(value_of(term))}")
            case ListTerm(items, tail):
                size = "==" if tail is None else ">="
                tests.append(f"type({path}) is tuple and len({path}) {size} {len(items)}")
                for i, item in enumerate(items):
                    match(item, f"{path}[{i}]")
                if tail is not None:
                    match(tail, f"{path}[{len(items)}:]")
            case Compound(functor, parts):
                tests.append(
                    f"type({path}) is {constant(Struct)} and {path}.functor == "
                    f"{constant(functor)} and len({path}.args) == {len(parts)}"
                )
                for i, part in enumerate(parts):
                    match(part, f"{path}.args[{i}]")

    for i, arg in enumerate(args):
        match(arg, f"a[{i}]")
    paths = list(bound.values())
    plain = not tests and paths == [f"a[{i}]" for i in range(len(args))]
    values = "a" if plain else "(" + "".join(f"{p}, " for p in paths) + ")"
    return " and ".join(tests), values, constants


def dispatcher(sources: Sequence[SourceNode], sink: Any = None) -> Emit:
    """One function ``dispatch(args, start, end, why)`` for an event name/arity: every
    source's test inlined, its parents called directly, all in delivery order.

    Its globals are named by the sources' places in it (parent ``k`` of the ``j``-th source
    ``p<j>_<k>``, its constants ``c<j>_<n>``), not by node ids: the dispatchers of many rules
    of one shape have one source, which :func:`~reasoner.runtime.inline.inline` fuses once.

    With the engine's ``sink`` (:class:`~reasoner.runtime.sink.Sink`), the dispatch calls
    ``sink.mark(None)`` first and ``sink.mark(edge_key(rank))`` after each parent, so that what
    each parent derived can be told apart (the parallel stages); both only once the push
    derived something (a mark before that says nothing: most events derive nothing, and the
    pushed event's own dispatch starts with nothing derived, so its start needs no mark)."""
    edges = [(rank, source, k, parent) for source in sources
             for k, (rank, parent) in enumerate(source.parents)]  # fmt: skip
    edges.sort(key=itemgetter(0), reverse=True)  # stable: equal ranks keep their order
    mark = sink is not None
    scope: dict[str, Any] = {"mark": sink.mark, "sink": sink} if mark else {}
    lines = ["def dispatch(a, s, e, w):"]
    lines += ["    if sink.detected:", "        mark(None)"] if mark else ["    pass"]
    previous = None
    placed: dict[int, tuple[int, str, str]] = {}  # source id -> its place, test, values
    for rank, source, k, parent in edges:
        if source.id not in placed:
            test, values, constants = _placed(source, len(placed))
            placed[source.id] = (len(placed), test, values)
            scope.update(constants)
        j, test, values = placed[source.id]
        pad = "        " if test else "    "
        argument = "a" if values == "a" else "v"
        if source is not previous:  # a run of one source's parents shares its test
            if test:
                lines.append(f"    if {test}:")
            if argument == "v":
                lines.append(f"{pad}v = {values}")
            previous = source
        scope[f"p{j}_{k}"] = parent
        lines.append(f"{pad}p{j}_{k}({argument}, s, e, w)")
        if mark:
            scope[f"k{j}_{k}"] = edge_key(rank)
            lines.append(f"{pad}if sink.detected:")
            lines.append(f"{pad}    mark(k{j}_{k})")
    return define("\n".join(lines) + "\n", "dispatch", scope)


def edge_key(rank: Rank) -> tuple[Any, ...]:
    """A delivery rank as a key sorting in delivery order (ascending): ranks are tuples of
    one to three numbers, compared as if padded with -infinity, highest first."""
    return tuple(-x for x in (*rank, -INF, -INF)[:3])


def _placed(source: SourceNode, j: int) -> tuple[str, str, dict[str, Any]]:
    """A source's test, values and constants, the constants renamed ``c<j>_<n>`` (their names
    are identifiers of the generated code only: no string in it holds them)."""
    if not source.constants:
        return source.test, source.values, {}
    names = {name: f"c{j}_{n}" for n, name in enumerate(source.constants)}
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b")

    def rename(text: str) -> str:
        return pattern.sub(lambda m: names[m.group(0)], text)

    constants = {names[name]: value for name, value in source.constants.items()}
    return rename(source.test), rename(source.values), constants


class ClockNode(Node):
    """A time point: emits one empty occurrence [q, q] when the clock reaches q."""

    __slots__ = ("time", "pending")

    holds = True

    def __init__(self, node_id: int, runtime: Runtime, time: Time, pending: bool) -> None:
        super().__init__(node_id, runtime)
        self.time = time
        self.pending = pending

    def held(self) -> Time:
        return self.time if self.pending else INF

    def fire(self) -> None:
        self.pending = False
        self.emit((), self.time, self.time, None)

    def state(self, codec: Codec) -> Any:
        return {"pending": self.pending}

    def load(self, data: Any, codec: Codec) -> Callable[[], None]:
        return partial(setattr, self, "pending", bool(data["pending"]))

    def timer(self, fire: Callable[[], None], codec: Codec) -> list[Any]:
        return ["clock"]

    def read_timer(self, kind: str, data: list[Any], codec: Codec) -> Callable[[], None]:
        if kind != "clock":
            return super().read_timer(kind, data, codec)
        return self.fire


class JoinNode(Node):
    """A binary interval operator under one consumption policy; its two inputs are
    generated probes (:mod:`reasoner.runtime.probes`)."""

    __slots__ = (
        "left",
        "right",
        "_keep",
        "_stamp",
        "_interval",
        "_held_sides",
        "_past_use",
        "left_in",
        "right_in",
    )

    holds = True
    # Right before left: when one input feeds both sides (stock SEQ stock), an occurrence
    # first meets its predecessors, then is stored.
    wiring = (1, 0)

    @property
    def receivers(self) -> tuple[Emit, ...]:
        return (self.left_in, self.right_in)

    def __init__(
        self,
        node_id: int,
        runtime: Runtime,
        op: Operator,
        left_key: Sequence[int],
        right_key: Sequence[int],
        right_rest: Sequence[int],
        right_width: int,
        check: Callable[[Values], bool] | None,
        window: Time | None,
        policy: str,
        tie_break: str,
        provenance: bool = False,
    ) -> None:
        super().__init__(node_id, runtime)
        if op == "forall_seq":  # it keeps and consumes its own way under every policy
            policy = "forall"
        self.left = make_store(policy, tie_break)
        self.right = make_store(policy, tie_break)
        interval = self._interval = join_interval(op)
        keep = interval.retention
        if policy == "forall":
            # FORALL_SEQ's right store holds the left occurrences taken at the current time
            # (by the right ones ending then), emptied when time moves on.
            keep = (keep[0], NOW)
        elif policy == "recent" and keep[1] == POINT:
            # Recent keeps the latest right occurrence, zero-length or not: whether it is a
            # point decides if a later left occurrence meets it.
            keep = (keep[0], NOW)
        self._keep = keep
        # the sides whose occurrences may still start an output (FORALL_SEQ's taken ones too)
        self._held_sides = (0, 1) if policy == "forall" else interval.start_sides
        self._past_use = tuple(None if e is None else past_use(e) for e in interval.past_use)
        self._stamp: Time = float("-inf")  # the time "now" stores were last valid
        scope = {
            "node": self,
            "l_store": self.left,
            "r_store": self.right,
            "l_buckets": self.left.buckets,
            "r_buckets": self.right.buckets,
            "check": check,
            "window": window,
            "refresh": self._refresh,
        }
        volatile = NOW in self._keep or POINT in self._keep  # stores emptied per time
        self.left_in, self.right_in = (
            build_probe(
                ProbeSpec(
                    op,
                    policy,
                    side,
                    (left_key, right_key)[side],
                    right_rest,
                    right_width,
                    self._keep[side],
                    window is not None,
                    check is not None,
                    volatile,
                    provenance,
                ),
                scope,
            )
            for side in (0, 1)
        )

    def stores(self) -> tuple[Store, ...]:
        return (self.left, self.right)

    def held(self) -> Time:
        sides = self.stores()
        return min(sides[side].earliest_start() for side in self._held_sides)

    def expire(self, now: Time, floors: Sequence[Time]) -> int:
        dropped = super().expire(now, floors)
        for store, used, partner_floor in zip(
            self.stores(), self._past_use, reversed(floors), strict=False
        ):
            if used is not None:
                dropped += store.drop(partial(used, partner_floor), now)
        return dropped

    def state(self, codec: Codec) -> Any:
        return {
            "left": codec.store(self.left),
            "right": codec.store(self.right),
            "stamp": codec.write(self._stamp),
        }

    def load(self, data: Any, codec: Codec) -> Callable[[], None]:
        left, right = codec.buckets(data["left"]), codec.buckets(data["right"])
        stamp = codec.read(data["stamp"])

        def apply() -> None:
            self.left.fill(left)
            self.right.fill(right)
            self._stamp = stamp

        return apply

    def _refresh(self) -> None:
        # Stores holding "now"-only occurrences empty themselves once time moves on.
        now = self.runtime.now
        if self._stamp != now:
            self._stamp = now
            if self._keep[0] == NOW:
                self.left.clear()
            if self._keep[1] in (NOW, POINT):
                self.right.clear()


class UnionNode(Node):
    """OR: both inputs pass through, projected onto the variables both bind."""

    __slots__ = ("left_in", "right_in")

    wiring = (0, 1)

    @property
    def receivers(self) -> tuple[Emit, ...]:
        return (self.left_in, self.right_in)

    def __init__(
        self, node_id: int, runtime: Runtime, left: Sequence[int], right: Sequence[int]
    ) -> None:
        super().__init__(node_id, runtime)
        self.left_in, self.right_in = (
            define(
                f"def project(v, s, e, w):\n    node.emit({tuple_expr('v', side)}, s, e, w)\n",
                "or",
                {"node": self},
            )
            for side in (left, right)
        )


class OneInputNode(Node):
    """A node with one input, which calls its ``receive``."""

    __slots__ = ()

    wiring = (0,)

    @property
    def receivers(self) -> tuple[Emit, ...]:
        return (self.receive,)

    if TYPE_CHECKING:

        def receive(self, v: Values, s: Time, e: Time, w: Any) -> None: ...


class FilterNode(OneInputNode):
    """WHERE conditions and a window over one input."""

    __slots__ = ("_check", "_window")

    def __init__(
        self,
        node_id: int,
        runtime: Runtime,
        check: Callable[[Values], bool] | None,
        window: Time | None,
    ) -> None:
        super().__init__(node_id, runtime)
        self._check = check
        self._window = window

    def receive(self, v: Values, s: Time, e: Time, w: Any) -> None:
        if self._window is not None and e - s > self._window:
            return
        if self._check is not None and not self._check(v):
            return
        self.emit(v, s, e, w)


class ExpandNode(OneInputNode):
    """event_multiply: one output per solution of a static goal."""

    __slots__ = ("_goal", "_inputs", "_outputs")

    def __init__(
        self,
        node_id: int,
        runtime: Runtime,
        goal: Goal,
        inputs: Sequence[str],
        outputs: Sequence[str],
    ) -> None:
        super().__init__(node_id, runtime)
        self._goal = goal
        self._inputs = tuple(inputs)
        self._outputs = tuple(outputs)

    def receive(self, v: Values, s: Time, e: Time, w: Any) -> None:
        env: dict[str, Any] = dict(zip(self._inputs, v, strict=True))
        env["$start"], env["$end"] = s, e  # for t1/1 and t2/1 (no variable has such a name)
        for solution in list(self._goal.solutions(env, self.runtime.knowledge)):
            self.emit(tuple(solution[n] for n in self._outputs), s, e, w)
