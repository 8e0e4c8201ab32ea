"""Strata from the predicate dependency graph's strongly connected components.

Each SCC of rule-defined predicates is one stratum, in dependency order (callees first), so
negation as failure and on-demand (top-down) predicates always see complete relations. A
negative edge inside an SCC is a cycle through negation: the program has no stratified
model and is rejected, naming the cycle. On-demand predicates must not be recursive.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from reasoner.errors import Diagnostic, RuleCompileError
from reasoner.knowledge.datalog.rules import Rule

Key = tuple[str, int]


@dataclass(frozen=True, slots=True)
class Stratum:
    """One SCC: its predicates, its rules, whether it is recursive, and how it is answered
    (``materialised`` bottom-up, or ``on-demand`` top-down)."""

    predicates: tuple[Key, ...]
    rules: tuple[Rule, ...]
    recursive: bool
    materialised: bool


@dataclass(frozen=True, slots=True)
class Strata:
    """The program's strata in evaluation order."""

    strata: tuple[Stratum, ...]

    @property
    def on_demand(self) -> dict[Key, tuple[Rule, ...]]:
        """Rules of the predicates answered top-down, by predicate."""
        out: dict[Key, tuple[Rule, ...]] = {}
        for s in self.strata:
            if not s.materialised:
                for key in s.predicates:
                    out[key] = tuple(r for r in s.rules if (r.predicate, r.arity) == key)
        return out

    def dump(self) -> str:
        """A deterministic text form: one block per stratum, rules in program order.

        >>> Strata(()).dump()
        ''
        """
        lines = []
        for i, s in enumerate(self.strata):
            names = " ".join(f"{p}/{a}" for p, a in s.predicates)
            kind = "materialised" if s.materialised else "on-demand"
            lines.append(f"stratum {i}: {names} ({kind}{', recursive' if s.recursive else ''})")
            lines.extend("  " + r.dump() for r in s.rules)
        return "".join(line + "\n" for line in lines)


def stratify(rules: Iterable[Rule]) -> Strata:
    """Group rules into strata (Tarjan's SCCs, callees first).

    Args:
        rules: the compiled rules.
    Returns:
        the :class:`Strata`.
    Raises:
        RuleCompileError: for a cycle through negation or a recursive on-demand predicate.

    >>> from reasoner.language.ast import Var
    >>> r = Rule("p", (Var("X"),), (), True)
    >>> stratify([r]).dump()
    'stratum 0: p/1 (materialised)\\n  p/1 <- [] safe\\n'
    """
    rules = tuple(rules)
    by_key: dict[Key, list[Rule]] = defaultdict(list)
    for r in rules:
        by_key[(r.predicate, r.arity)].append(r)
    edges: dict[Key, list[tuple[Key, bool]]] = {k: [] for k in by_key}
    for r in rules:
        for lit in r.body:
            callee = (lit.predicate, lit.arity)
            if lit.predicate is not None and callee in by_key:
                edges[(r.predicate, r.arity)].append((callee, lit.negated))
    strata = []
    for component in _sccs(list(by_key), edges):
        members = set(component)
        recursive = len(component) > 1 or any(c == component[0] for c, _ in edges[component[0]])
        for key in component:
            for callee, negated in edges[key]:
                if negated and callee in members:
                    cycle = " -> ".join(f"{p}/{a}" for p, a in _cycle(key, callee, edges, members))
                    span = next(r.span for r in by_key[key])
                    raise RuleCompileError([Diagnostic(f"cycle through negation: {cycle}", span)])
        materialised = all(r.safe for key in component for r in by_key[key])
        if recursive and not materialised:
            names = ", ".join(f"{p}/{a}" for p, a in component)
            span = next(r.span for key in component for r in by_key[key] if not r.safe)
            raise RuleCompileError(
                [
                    Diagnostic(
                        f"recursive predicate {names} has a rule that is not range-restricted "
                        "(every head variable must be bound by the body)",
                        span,
                    )
                ]
            )
        in_order = tuple(r for r in rules if (r.predicate, r.arity) in members)
        strata.append(Stratum(tuple(sorted(component)), in_order, recursive, materialised))
    return Strata(tuple(strata))


def _sccs(nodes: list[Key], edges: dict[Key, list[tuple[Key, bool]]]) -> list[list[Key]]:
    """Tarjan's algorithm, iterative (deep rule chains must not hit the recursion limit);
    components come out callees first."""
    index: dict[Key, int] = {}
    low: dict[Key, int] = {}
    on_stack: set[Key] = set()
    stack: list[Key] = []
    out: list[list[Key]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work: list[tuple[Key, int]] = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            succ = edges[node]
            if i < len(succ):
                work.append((node, i + 1))
                child = succ[i][0]
                if child not in index:
                    work.append((child, 0))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == node:
                        break
                out.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return out


def _cycle(
    start: Key, via: Key, edges: dict[Key, list[tuple[Key, bool]]], members: set[Key]
) -> list[Key]:
    """A path start -> via -> ... -> start inside one SCC (breadth-first, for the message)."""
    previous: dict[Key, Key] = {via: start}
    queue = [via]
    while queue:
        node = queue.pop(0)
        if node == start:
            break
        for child, _ in edges[node]:
            if child in members and child not in previous:
                previous[child] = node
                queue.append(child)
    path = [start]
    node = start
    while True:
        node = previous[node]
        path.append(node)
        if node == start:
            break
    return list(reversed(path))
