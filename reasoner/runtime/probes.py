"""Generated join probes: one Python function per join node input.

A join input is the engine's innermost loop: for every arriving occurrence it looks up the
partner bucket, tests each partner's interval, window and WHERE condition, and emits the
pairs. Writing that loop once per (operator, policy, side) with every choice baked in, keys
and value projections inlined as tuple indexing, makes it straight-line code: no calls to
interval helpers, no branches on settings that never change. The code is generated once,
when the rules are compiled; :func:`probe_source` shows it.

Occurrences reach a node in time order and each ends when it reaches it, so a bucket is
sorted by end: PAR skips with one binary search the partners that end too early to overlap
(between two sweeps they pile up at the front of the bucket).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import islice
from operator import itemgetter
from typing import Any

from reasoner.compiler.network import KEEP, NOW, POINT
from reasoner.runtime.generated import define

#: Per operator: the time condition on a (left, right) pair, and the output interval
#: (SEMANTICS.md, "Patterns"), over the names ls, le (left) and rs, re (right).
INTERVALS: dict[str, tuple[str, str, str]] = {
    "seq": ("le < rs", "ls", "re"),
    "and": ("", "ls if ls < rs else rs", "le if le > re else re"),
    "par": (
        "(ls if ls > rs else rs) < (le if le < re else re)",
        "ls if ls < rs else rs",
        "le if le > re else re",
    ),
    "equals": ("ls == rs and le == re", "ls", "le"),
    "meets": ("le == rs", "ls", "re"),
    "during": ("rs < ls and le < re", "rs", "re"),
    "starts": ("ls == rs and le < re", "ls", "re"),
    "finishes": ("le == re and rs < ls", "rs", "le"),
}


#: The end of a stored occurrence ``(values, start, end, why)``.
END = itemgetter(2)
#: Whether PAR and NOT skip, by binary search on the sorted ends, the partners that cannot
#: match (a test turns it off to check that skipping never changes a detection).
SKIP_BY_END = True


@dataclass(frozen=True, slots=True)
class ProbeSpec:
    """Everything that shapes one join input's code."""

    op: str
    policy: str
    side: int  # 0: the left input, 1: the right input
    key: Sequence[int]  # positions of the join key in the arriving side's values
    rest: Sequence[int]  # positions of the right values that extend the left ones
    right_width: int  # how many values a right occurrence has
    keep: str  # what the arriving side stores: KEEP, NOW, POINT or NONE
    window: bool
    check: bool
    volatile: bool
    provenance: bool


def tuple_expr(name: str, positions: Sequence[int]) -> str:
    """Python source building the tuple of ``name``'s values at ``positions``."""
    if not positions:
        return "()"
    return "(" + "".join(f"{name}[{i}], " for i in positions) + ")"


def key_expr(name: str, positions: Sequence[int]) -> str:
    """Python source of a join key: a scalar for one position (scalars hash fastest)."""
    if len(positions) == 1:
        return f"{name}[{positions[0]}]"
    return tuple_expr(name, positions)


def probe_source(spec: ProbeSpec) -> str:
    """The Python source of one join input ``probe(v, s, e, w)``."""
    me, other = ("l", "r") if spec.side == 0 else ("r", "l")
    condition, start, end = INTERVALS[spec.op]
    if tuple(spec.rest) == tuple(range(spec.right_width)):
        values = "lv + rv"
    elif not spec.rest:
        values = "lv"
    else:
        values = f"lv + {tuple_expr('rv', spec.rest)}"
    why = "(lw, rw)" if spec.provenance else "None"
    chrono = spec.policy == "chronological"
    partner = f"{other}v, {other}s, {other}e, {other}w"

    lines = [f"def probe({me}v, {me}s, {me}e, {me}w):"]
    if spec.volatile:
        lines.append("    refresh()")
    lines.append(f"    key = {key_expr(me + 'v', spec.key)}")
    lines.append(f"    bucket = {other}_buckets.get(key)")
    lines.append("    if bucket:")
    items = "bucket"
    skip = spec.op == "par" and SKIP_BY_END
    if skip:  # partners ending no later than this occurrence starts never overlap
        lines.append(f"        first = bisect_right(bucket, {me}s, key=END)")
        items = "islice(bucket, first, None)"
    enumerated = f"enumerate({items}, first)" if skip else f"enumerate({items})"
    loop = f"index, ({partner}) in {enumerated}" if chrono else f"{partner} in {items}"
    lines.append(f"        for {loop}:")
    depth = 3
    guards = [condition] if condition else []
    if spec.window:
        guards.append(f"({end}) - ({start}) <= window")
    if guards:
        lines.append("    " * depth + f"if {' and '.join(f'({g})' for g in guards)}:")
        depth += 1
    pad = "    " * depth
    lines.append(f"{pad}values = {values}")
    if spec.check:
        lines.append(f"{pad}if check(values):")
        depth += 1
        pad = "    " * depth
    if chrono:  # consume the partner (Store.remove, inlined)
        lines.append(f"{pad}del bucket[index]")
        lines.append(f"{pad}if not bucket:")
        lines.append(f"{pad}    del {other}_buckets[key]")
        lines.append(f"{pad}{other}_store.size -= 1")
    lines.append(f"{pad}node.emit(values, {start}, {end}, {why})")
    if chrono:
        lines.append(f"{pad}return")
    if spec.keep in (KEEP, NOW, POINT):
        pad = "    "
        if spec.keep == POINT:
            lines.append(f"    if {me}s == {me}e:")
            pad = "        "
        occurrence = f"({me}v, {me}s, {me}e, {me}w)"
        lines += store_lines(f"{me}_store", f"{me}_buckets", occurrence, spec.policy, pad)
    return "\n".join(lines) + "\n"


def store_lines(store: str, buckets: str, occurrence: str, policy: str, pad: str) -> list[str]:
    """Python source storing ``occurrence`` under ``key`` in ``store`` (whose dict of buckets
    is ``buckets``): :meth:`Store.add <reasoner.runtime.policies.Store.add>` inlined, except
    under ``recent``, whose store decides what to keep."""
    if policy == "recent":
        return [f"{pad}{store}.add(key, {occurrence})"]
    return [
        f"{pad}own = {buckets}.get(key)",
        f"{pad}if own is None:",
        f"{pad}    {buckets}[key] = [{occurrence}]",
        f"{pad}else:",
        f"{pad}    own.append({occurrence})",
        f"{pad}{store}.size += 1",
    ]


def build_probe(spec: ProbeSpec, namespace: dict[str, Any]) -> Callable[..., None]:
    """Compile :func:`probe_source` against ``namespace`` (the node, its stores, check,
    window and refresh) and return the function."""
    namespace = {**namespace, "bisect_right": bisect_right, "islice": islice, "END": END}
    return define(probe_source(spec), f"probe {spec.op}/{spec.policy}/{spec.side}", namespace)
