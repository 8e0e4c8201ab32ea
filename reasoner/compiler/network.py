"""The compiled network: the intermediate representation between rules and the runtime.

Binarization turns every event pattern into a tree of two-input nodes (ETALIS's intermediate
events, "goals"). Each node produces occurrences ``(values, start, end)`` where ``values``
lines up with the node's ``variables``. Nodes are shared between rules when their
sub-patterns are identical up to variable names. The runtime instantiates one stateful
operator per node; this module only describes them.

Every node kind answers, for the passes that treat all kinds alike (window push-down here,
wiring and garbage collection in the engine): ``inputs``, the nodes it reads in network
order (the order in which its run-time node receives their floors); ``feeds``, the inputs
whose start can become its output's start; ``stores``, whether it holds occurrences (and so
gets a horizon); ``bound``, the window that bounds its output's length, pushed down to its
inputs; ``sides``, the name of each input in the delivery order (0 left, 1 right, 2 negated).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from fractions import Fraction
from math import inf
from typing import ClassVar

from reasoner.language.ast import Alarm, EventAtom, Term
from reasoner.language.operators import Operator, join_interval
from reasoner.language.printer import to_source
from reasoner.spans import Span
from reasoner.values import Time


class _EveryInputFeeds:
    """The base of the node kinds whose output may start where any input's starts."""

    __slots__ = ()

    @property
    def inputs(self) -> tuple[int, ...]:
        raise NotImplementedError

    @property
    def feeds(self) -> tuple[int, ...]:
        return self.inputs


@dataclass(frozen=True, slots=True)
class Source:
    """Matches events ``name/arity`` against argument terms (constants and variables)."""

    id: int
    name: str
    args: tuple[Term, ...]
    variables: tuple[str, ...]

    #: No inputs; the engine feeds it the events it matches.
    inputs: ClassVar[tuple[int, ...]] = ()
    feeds: ClassVar[tuple[int, ...]] = ()
    stores: ClassVar[bool] = False
    bound: ClassVar[None] = None

    sides: ClassVar[tuple[int, ...]] = ()

    def describe(self) -> str:
        inner = ", ".join(to_source(a) for a in self.args)
        return f"source {self.name}({inner})" if self.args else f"source {self.name}"


@dataclass(frozen=True, slots=True)
class Clock:
    """A time point ``q``: one virtual occurrence [q, q] when the stream reaches q."""

    id: int
    time: Time
    variables: tuple[str, ...] = ()

    inputs: ClassVar[tuple[int, ...]] = ()
    feeds: ClassVar[tuple[int, ...]] = ()
    stores: ClassVar[bool] = False
    bound: ClassVar[None] = None

    sides: ClassVar[tuple[int, ...]] = ()

    def describe(self) -> str:
        return f"time point {_time(self.time)}"


@dataclass(frozen=True, slots=True)
class Join:
    """A binary interval operator over a left and a right input.

    ``key`` pairs the positions of the shared variables (left, right); ``right_rest`` lists
    the right positions appended to the left values to form the output. ``conditions`` are
    WHERE conjuncts checked on each candidate pair; ``window`` bounds the output's length.
    """

    id: int
    op: Operator
    left: int
    right: int
    variables: tuple[str, ...]
    left_key: tuple[int, ...]
    right_key: tuple[int, ...]
    right_rest: tuple[int, ...]
    conditions: tuple[Term, ...] = ()
    window: Time | None = None
    policy: str = "unrestricted"

    stores: ClassVar[bool] = True

    @property
    def inputs(self) -> tuple[int, ...]:
        return (self.left, self.right)

    @property
    def feeds(self) -> tuple[int, ...]:
        return tuple(self.inputs[side] for side in join_interval(self.op).start_sides)

    @property
    def bound(self) -> Time | None:
        return self.window

    sides: ClassVar[tuple[int, ...]] = (0, 1)

    def describe(self) -> str:
        text = f"{self.op} n{self.left} n{self.right}"
        if self.left_key:
            text += f" on {_names(self.variables, self.left_key)}"
        return text + _extras(self.conditions, self.window, self.policy)


@dataclass(frozen=True, slots=True)
class Union(_EveryInputFeeds):
    """OR: passes both inputs through, projected onto the variables both bind."""

    id: int
    left: int
    right: int
    variables: tuple[str, ...]
    left_projection: tuple[int, ...]
    right_projection: tuple[int, ...]

    stores: ClassVar[bool] = False
    bound: ClassVar[None] = None

    @property
    def inputs(self) -> tuple[int, ...]:
        return (self.left, self.right)

    sides: ClassVar[tuple[int, ...]] = (0, 1)

    def describe(self) -> str:
        return f"or n{self.left} n{self.right}"


@dataclass(frozen=True, slots=True)
class Negation:
    """``NOT(negated).[left, right]``: left SEQ right with no ``negated`` strictly between.

    ``blocker_key`` pairs positions of the variables the negated pattern shares with the
    output (output position, negated position); the negated pattern's other variables are
    local to it.
    """

    id: int
    negated: int
    left: int
    right: int
    variables: tuple[str, ...]
    left_key: tuple[int, ...]
    right_key: tuple[int, ...]
    right_rest: tuple[int, ...]
    blocker_key: tuple[tuple[int, int], ...]
    conditions: tuple[Term, ...] = ()
    window: Time | None = None
    policy: str = "unrestricted"

    stores: ClassVar[bool] = True

    @property
    def inputs(self) -> tuple[int, ...]:
        return (self.negated, self.left, self.right)

    @property
    def feeds(self) -> tuple[int, ...]:
        return (self.left,)

    @property
    def bound(self) -> Time | None:
        return self.window

    sides: ClassVar[tuple[int, ...]] = (2, 0, 1)

    def describe(self) -> str:
        text = f"not n{self.negated} between n{self.left} n{self.right}"
        return text + _extras(self.conditions, self.window, self.policy)


@dataclass(frozen=True, slots=True)
class Guard(_EveryInputFeeds):
    """ETALIS's ``input CNOT negated`` / ``input FNOT negated`` (docs/language.md): occurrences
    of the input with no occurrence of ``negated`` inside them (cnot) or before their end
    (fnot; only as far back as ``memory``, the tightest enclosing window, when there is one).
    ``blocker_key`` is as for :class:`Negation`."""

    id: int
    op: Operator
    input: int
    negated: int
    variables: tuple[str, ...]
    blocker_key: tuple[tuple[int, int], ...]
    memory: Time | None = None

    stores: ClassVar[bool] = True
    bound: ClassVar[None] = None

    @property
    def inputs(self) -> tuple[int, ...]:
        return (self.input, self.negated)

    sides: ClassVar[tuple[int, ...]] = (0, 2)

    def describe(self) -> str:
        text = f"{self.op} n{self.input} unless n{self.negated}"
        return text if self.memory is None else f"{text} within {_time(self.memory)}"


@dataclass(frozen=True, slots=True)
class Filter(_EveryInputFeeds):
    """WHERE conditions and/or a window applied to one input."""

    id: int
    input: int
    variables: tuple[str, ...]
    conditions: tuple[Term, ...] = ()
    window: Time | None = None

    stores: ClassVar[bool] = False

    @property
    def inputs(self) -> tuple[int, ...]:
        return (self.input,)

    @property
    def bound(self) -> Time | None:
        return self.window

    sides: ClassVar[tuple[int, ...]] = (0,)

    def describe(self) -> str:
        return f"filter n{self.input}" + _extras(self.conditions, self.window, "unrestricted")


@dataclass(frozen=True, slots=True)
class Expand(_EveryInputFeeds):
    """ETALIS's ``event_multiply``: one output per solution of a static goal."""

    id: int
    input: int
    variables: tuple[str, ...]
    goal: Term

    stores: ClassVar[bool] = False
    bound: ClassVar[None] = None

    @property
    def inputs(self) -> tuple[int, ...]:
        return (self.input,)

    sides: ClassVar[tuple[int, ...]] = (0,)

    def describe(self) -> str:
        return f"multiply n{self.input} by {to_source(self.goal)}"


@dataclass(frozen=True, slots=True)
class Fold:
    """An aggregate ``function`` of the values at position ``value`` of ``input`` (None:
    count), per group (the ``group`` positions), over a sliding ``window`` (``("count", N)``,
    ``("time", D)`` or None).

    Without ``start`` it is a sliding aggregate whose output is the group's values then the
    result. With ``start`` it is ``start SEQ aggregate(...)``: one aggregate per start
    occurrence over the inputs after it, joined on ``start_key`` = ``group``; the output is
    the start's values then the result.
    """

    id: int
    input: int
    variables: tuple[str, ...]
    function: str
    value: int | None
    group: tuple[int, ...]
    window: tuple[str, Time] | None = None
    start: int | None = None
    start_key: tuple[int, ...] = ()
    policy: str = "unrestricted"

    bound: ClassVar[None] = None

    @property
    def inputs(self) -> tuple[int, ...]:
        return (self.input,) if self.start is None else (self.start, self.input)

    @property
    def feeds(self) -> tuple[int, ...]:
        return self.inputs if self.start is None else (self.start,)

    @property
    def stores(self) -> bool:
        return self.start is not None

    @property
    def sides(self) -> tuple[int, ...]:
        return (0,) if self.start is None else (1, 0)

    def describe(self) -> str:
        what = self.function if self.value is None else f"{self.function}(#{self.value})"
        text = f"aggregate {what} of n{self.input}"
        if self.group:
            text += f" per {list(self.group)}"
        if self.window is not None:
            text += f" over last {_time(self.window[1])}" + (
                " occurrences" if self.window[0] == "count" else ""
            )
        if self.start is not None:
            text += f" since n{self.start} [{self.policy}]"
        return text


NodeSpec = Source | Clock | Join | Union | Negation | Guard | Filter | Expand | Fold


@dataclass(frozen=True, slots=True)
class Output:
    """A rule head: builds ``head`` from the values of node ``input`` (named ``variables``)."""

    rule: int
    input: int
    head: EventAtom
    variables: tuple[str, ...]
    label: str | None = None
    span: Span | None = field(default=None, compare=False)
    #: The id of the first node created for this body (those up to the next output's are its
    #: own): what orders deliveries between bodies (:func:`delivery_ranks`).
    first_node: int = 0
    #: ETALIS's timer: the head is derived when the clock reaches its time.
    alarm: Alarm | None = None

    def head_text(self) -> str:
        """The head as written: ``b(X)``, or with an alarm ``exceptionAlarm(b(X), 1)``."""
        head = to_source(self.head)
        if self.alarm is None:
            return head
        return f"{self.alarm.functor}({head}, {to_source(self.alarm.time)})"


@dataclass(frozen=True, slots=True)
class Network:
    """Nodes in creation order (inputs before users), rule outputs, and each stored node's
    horizon: how long after an occurrence's start it can still contribute (None: forever)."""

    nodes: tuple[NodeSpec, ...]
    outputs: tuple[Output, ...]
    horizons: tuple[tuple[int, Time | None], ...]
    prefixes: tuple[tuple[str, str], ...] = ()

    def dump(self) -> str:
        """Deterministic text form, one node per line (golden tests, ``--emit network``)."""
        horizon = dict(self.horizons)
        lines = []
        for node in self.nodes:
            line = f"n{node.id} = {node.describe()}  -> ({', '.join(node.variables)})"
            if horizon.get(node.id) is not None:
                line += f"  horizon {_time(horizon[node.id])}"  # type: ignore[arg-type]
            lines.append(line)
        for out in self.outputs:
            lines.append(f"rule {out.rule}: {out.head_text()} <- n{out.input}")
        return "\n".join(lines) + "\n"


def _time(t: Time) -> str:
    return f"{t.numerator}/{t.denominator}" if isinstance(t, Fraction) else repr(t)


def _names(variables: tuple[str, ...], positions: tuple[int, ...]) -> str:
    return ", ".join(variables[i] for i in positions)


def _extras(conditions: tuple[Term, ...], window: Time | None, policy: str) -> str:
    text = ""
    if conditions:
        text += " where " + ", ".join(to_source(c) for c in conditions)
    if window is not None:
        text += f" within {_time(window)}"
    if policy != "unrestricted":
        text += f" [{policy}]"
    return text


#: Where an occurrence is delivered among the others an event causes: highest first.
Rank = tuple[float, ...]


def delivery_ranks(network: Network, first_output: int = 0) -> dict[tuple[int, int], Rank]:
    """The delivery order (docs/semantics.md): per (node id, input side) — and per
    (``-1 - output index``, 0) for rule heads — the rank of what arrives there; an event
    reaches the inputs reading it highest rank first.

    A body comes before the bodies after it; within a body an operator before the operators
    below it, its right input before its left one (descending creation order: operands are
    created before their operator). Nodes that only pass occurrences on (filters, OR,
    EVENT_MULTIPLY, CNOT/FNOT's input) take the rank of where they deliver; sides: 0 left,
    1 right, 2 negated. ``first_output`` is the index of the network's first output.
    """
    starts = [out.first_node for out in network.outputs]
    ranks: dict[tuple[int, int], Rank] = {}
    passing: dict[int, Rank] = {}  # node id -> the highest rank of where it delivers
    for index, out in enumerate(network.outputs):
        head: Rank = (-(first_output + index), inf)
        ranks[(-1 - index, 0)] = head
        passing[out.input] = max(passing.get(out.input, head), head)
    for spec in reversed(network.nodes):  # users come after their inputs
        for side, child in zip(spec.sides, spec.inputs, strict=True):
            if isinstance(spec, Join | Negation | Fold) or (isinstance(spec, Guard) and side):
                body = first_output + bisect_right(starts, spec.id) - 1
                rank: Rank = (-body, spec.id, side)
            else:
                rank = passing.get(spec.id, (-inf,))
            ranks[(spec.id, side)] = rank
            passing[child] = max(passing.get(child, rank), rank)
    return ranks
