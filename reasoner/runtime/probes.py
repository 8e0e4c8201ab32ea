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

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from reasoner.language.operators import KEEP, NONE, NOW, POINT, Operator, Retention, join_interval
from reasoner.runtime.generated import define

#: The end of a stored occurrence ``(values, start, end, why)``.
END = itemgetter(2)
#: Whether PAR and NOT skip, by binary search on the sorted ends, the partners that cannot
#: match (a test turns it off to check that skipping never changes a detection).
SKIP_BY_END = True
#: What generated probes read besides their node's own objects.
HELPERS: dict[str, Any] = {
    "bisect_left": bisect_left,
    "bisect_right": bisect_right,
    "END": END,
    "NO_START": float("-inf"),
}


@dataclass(frozen=True, slots=True)
class ProbeSpec:
    """Everything that shapes one join input's code."""

    op: Operator
    policy: str
    side: int  # 0: the left input, 1: the right input
    key: Sequence[int]  # positions of the join key in the arriving side's values
    rest: Sequence[int]  # positions of the right values that extend the left ones
    right_width: int  # how many values a right occurrence has
    keep: Retention  # what the arriving side stores
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
    me = "l" if spec.side == 0 else "r"
    lines = [f"def probe({me}v, {me}s, {me}e, {me}w):"]
    if spec.volatile:
        lines.append("    refresh()")
    lines.append(f"    key = {key_expr(me + 'v', spec.key)}")
    store: list[str] = []  # storing the arriving occurrence, at depth 0
    if spec.keep in (KEEP, NOW, POINT):
        if spec.keep == POINT:
            store.append(f"if {me}s == {me}e:")
        occurrence = f"({me}v, {me}s, {me}e, {me}w)"
        inner = "    " if spec.keep == POINT else ""
        store += store_lines(f"{me}_store", f"{me}_buckets", occurrence, spec.policy, inner)
    if join_interval(spec.op).retention[1 - spec.side] == NONE:  # no partner waits (SEQ's right)
        return "\n".join(lines + _indent(store, 1)) + "\n"
    if spec.policy == "forall":
        return "\n".join(lines + _taking_all(spec)) + "\n"
    lines += _matching(spec)
    if spec.policy != "chronological":
        return "\n".join(lines + _indent(store, 1)) + "\n"
    # Chronological: the first match consumes both and breaks; only an unmatched occurrence
    # is stored (no early return: the engine inlines probes into their callers).
    if store:
        lines += ["        else:", *_indent(store, 3), "    else:", *_indent(store, 2)]
    return "\n".join(lines) + "\n"


def _matching(spec: ProbeSpec) -> list[str]:
    """The lines (at depth 1) looking up the partners of an arriving occurrence and emitting
    every pair that fits (chronological: the first, consumed, then ``break``)."""
    me, other = ("l", "r") if spec.side == 0 else ("r", "l")
    interval = join_interval(spec.op)
    condition, start, end = interval.condition, interval.start, interval.end
    values = _pair_values(spec)
    why = "(lw, rw)" if spec.provenance else "None"
    chrono = spec.policy == "chronological"
    partner = f"{other}v, {other}s, {other}e, {other}w"
    lines = [f"    bucket = {other}_buckets.get(key)", "    if bucket:"]
    if spec.op == "par" and SKIP_BY_END:
        # partners ending no later than this occurrence starts never overlap
        lines += [
            f"        first = bisect_right(bucket, {me}s, key=END)",
            "        for index in range(first, len(bucket)):",
            f"            {partner} = bucket[index]",
        ]
    elif chrono:
        lines.append(f"        for index, ({partner}) in enumerate(bucket):")
    else:
        lines.append(f"        for {partner} in bucket:")
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
        pad += "    "
    if chrono:  # consume the partner
        lines += remove_lines(f"{other}_store", f"{other}_buckets", pad)
    lines.append(f"{pad}node.emit(values, {start}, {end}, {why})")
    if chrono:
        lines.append(f"{pad}break")
    return lines


def _pair_values(spec: ProbeSpec) -> str:
    """Python source of a pair's values: the left values, then the right values they lack."""
    if tuple(spec.rest) == tuple(range(spec.right_width)):
        return "lv + rv"
    if not spec.rest:
        return "lv"
    return f"lv + {tuple_expr('rv', spec.rest)}"


def _taking_all(spec: ProbeSpec) -> list[str]:
    """FORALL_SEQ's right input (at depth 1): every stored left occurrence that fits is
    paired with this one, oldest first, and taken: moved from the left store to the right one
    under ``(key, re)``. There it still pairs with the other right occurrences ending at
    ``re`` (ties take together, whatever their order), until time moves on (``refresh``)."""
    window = " and (re - ls <= window)" if spec.window else ""
    values = _pair_values(spec)
    why = "(lw, rw)" if spec.provenance else "None"
    return [
        "    taken = r_buckets.get((key, re))",
        "    if taken:",
        "        for lv, ls, le, lw in taken:",
        f"            if (le < rs){window}:",
        f"                node.emit({values}, ls, re, {why})",
        "    bucket = l_buckets.get(key)",
        "    if bucket:",
        "        kept = []",
        "        for occurrence in bucket:",
        "            lv, ls, le, lw = occurrence",
        f"            if (le < rs){window}:",
        "                r_store.add((key, re), occurrence)",
        f"                node.emit({values}, ls, re, {why})",
        "            else:",
        "                kept.append(occurrence)",
        "        if len(kept) < len(bucket):",
        "            l_store.size -= len(bucket) - len(kept)",
        "            if kept:",
        "                l_buckets[key] = kept",
        "            else:",
        "                del l_buckets[key]",
    ]


def negation_source(
    right_key: Sequence[int],
    right_rest: Sequence[int],
    blocker_rest: Sequence[int] | None,
    blocker_values: Sequence[int],
    window: bool,
    check: bool,
    policy: str,
    provenance: bool,
) -> str:
    """The Python source of ``NOT(n).[left, right]``'s right input ``probe(v, s, e, w)``:
    every stored left occurrence that ends before this one starts, with no blocker (an
    occurrence of n) strictly between them.

    When the blocker key comes from the right occurrence alone (``blocker_rest``: its
    positions in the right values the left lack), one look-up finds the latest blocker
    before this occurrence, and the left occurrences ending before that blocker starts (a
    prefix of the bucket, which is sorted by end) are skipped by binary search. Otherwise
    each candidate pair asks the blockers with its own key (``blocker_values``: positions in
    the joined values).
    """
    chrono = policy == "chronological"
    lines = [
        "def probe(rv, rs, re, rw):",
        f"    key = {key_expr('rv', right_key)}",
        "    bucket = buckets.get(key)",
        "    if bucket:",
        f"        rest = {tuple_expr('rv', right_rest)}",
    ]
    if blocker_rest is not None and SKIP_BY_END:
        lines.append(f"        latest = latest_start({key_expr('rest', blocker_rest)}, rs)")
        lines.append(
            "        first = bisect_left(bucket, latest, key=END) if latest > NO_START else 0"
        )
        lines += [
            "        for index in range(first, len(bucket)):",
            "            lv, ls, le, lw = bucket[index]",
        ]
    elif chrono:
        lines.append("        for index, (lv, ls, le, lw) in enumerate(bucket):")
    else:
        lines.append("        for lv, ls, le, lw in bucket:")
    lines.append("            if (le < rs)" + (" and (re - ls <= window):" if window else ":"))
    lines.append("                values = lv + rest")
    depth = 4
    if blocker_rest is None or not SKIP_BY_END:
        key = key_expr("values", blocker_values)
        lines.append("    " * depth + f"if not latest_start({key}, rs) > le:")
        depth += 1
    if check:
        lines.append("    " * depth + "if check(values):")
        depth += 1
    pad = "    " * depth
    if chrono:  # consume the left occurrence
        lines += remove_lines("store", "buckets", pad)
    why = "(lw, rw)" if provenance else "None"
    lines.append(f"{pad}node.emit(values, ls, re, {why})")
    if chrono:
        lines.append(f"{pad}break")
    return "\n".join(lines) + "\n"


def _indent(lines: list[str], depth: int) -> list[str]:
    return ["    " * depth + line for line in lines]


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


def remove_lines(store: str, buckets: str, pad: str) -> list[str]:
    """Python source removing ``bucket[index]`` (found under ``key``) from ``store``:
    :meth:`Store.remove <reasoner.runtime.policies.Store.remove>` inlined."""
    return [
        f"{pad}del bucket[index]",
        f"{pad}if not bucket:",
        f"{pad}    del {buckets}[key]",
        f"{pad}{store}.size -= 1",
    ]


def build_probe(spec: ProbeSpec, namespace: dict[str, Any]) -> Callable[..., None]:
    """Compile :func:`probe_source` against ``namespace`` (the node, its stores, check,
    window and refresh) and return the function."""
    namespace = {**namespace, **HELPERS}
    return define(probe_source(spec), f"probe {spec.op}/{spec.policy}/{spec.side}", namespace)
