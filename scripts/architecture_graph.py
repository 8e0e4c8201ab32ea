"""Draw the house: the import graph of the packages of reasoner/ and connectors/.

Reads every module's imports (``import`` statements anywhere in it, with the standard
library's ``ast``), groups modules by package (``reasoner.runtime``, ``connectors.spark``...;
``reasoner``'s own ``errors``, ``spans``, ``values``, ``vocab`` and ``modes`` as
``reasoner.core``), puts each package one layer above the highest package it imports, and writes
docs/img/architecture.png: an arrow from a package to each package it imports, red when it
points sideways or up (a cycle between layers). Run it after moving code between packages:

    python scripts/architecture_graph.py
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOPS = ("reasoner", "connectors")
CORE = {"errors", "spans", "values", "vocab", "modes"}


def package_of(module: str) -> str | None:
    """The graph node a dotted module name belongs to (None outside the project)."""
    parts = module.split(".")
    if parts[0] not in TOPS:
        return None
    if len(parts) == 1:
        return parts[0]
    if parts[0] == "reasoner" and parts[1] in CORE:
        return "reasoner.core"
    return f"{parts[0]}.{parts[1]}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> set[str]:
    """The dotted names a module imports (absolute and relative)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    here = module_name(path).split(".")
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + (path.name == "__init__.py")]
                found.add(".".join(base + ([node.module] if node.module else [])))
            elif node.module:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def package_graph() -> dict[str, set[str]]:
    """Package -> the packages it imports."""
    graph: dict[str, set[str]] = defaultdict(set)
    for top in TOPS:
        for path in sorted((ROOT / top).rglob("*.py")):
            source = package_of(module_name(path))
            if source is None:
                continue
            graph[source]
            for name in imports(path):
                target = package_of(name)
                if target is not None and target != source:
                    graph[source].add(target)
    # a bare package (its __init__ alone) that nothing links is left out
    return {p: ts for p, ts in graph.items() if ts or any(p in t for t in graph.values())}


def layers(graph: dict[str, set[str]]) -> dict[str, int]:
    """Each package's layer: one above the highest package it imports; the packages of an
    import cycle share one layer."""
    reach = {node: _reachable(graph, node) for node in graph}
    cycle = {node: frozenset(m for m in reach[node] if node in reach[m]) | {node} for node in graph}
    layer: dict[str, int] = {}

    def visit(node: str) -> int:
        if node not in layer:
            below = {t for member in cycle[node] for t in graph[member]} - cycle[node]
            height = 1 + max((visit(t) for t in sorted(below)), default=-1)
            for member in cycle[node]:
                layer[member] = height
        return layer[node]

    for node in sorted(graph):
        visit(node)
    return layer


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(graph[node])
    return seen


def draw(graph: dict[str, set[str]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    layer = layers(graph)
    rows: dict[int, list[str]] = defaultdict(list)
    for node in sorted(graph, key=lambda n: (n.split(".")[0] != "reasoner", n)):
        rows[layer[node]].append(node)
    width = max(len(r) for r in rows.values())
    place = {
        node: ((i + 0.5) * width / len(row), level)
        for level, row in rows.items()
        for i, node in enumerate(row)
    }
    fig, ax = plt.subplots(figsize=(2.1 * width + 1, 1.25 * len(rows) + 1))
    for source, targets in sorted(graph.items()):
        for target in sorted(targets):
            upward = layer[target] >= layer[source]  # same layer: a cycle
            ax.annotate(
                "",
                xy=place[target],
                xytext=place[source],
                arrowprops={
                    "arrowstyle": "-|>",
                    "color": "#c0392b" if upward else "#8a8a8a",
                    "lw": 1.4 if upward else 0.7,
                    "shrinkA": 16,
                    "shrinkB": 16,
                    "connectionstyle": "arc3,rad=0.08",
                },
            )
    for node, (x, y) in place.items():
        colour = "#d6e6f5" if node.startswith("reasoner") else "#dcefd8"
        ax.text(
            x,
            y,
            node,
            ha="center",
            va="center",
            fontsize=9,
            bbox={"boxstyle": "round,pad=0.4", "fc": colour, "ec": "#555555"},
        )
    ax.set_xlim(-0.2, width + 0.2)
    ax.set_ylim(-0.6, max(rows) + 0.6)
    ax.axis("off")
    ax.set_title("Packages by layer (an arrow: imports; red: sideways or up, a cycle)", fontsize=10)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110, metadata={"Software": None})
    plt.close(fig)


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else ROOT / "docs" / "img" / "architecture.png"
    graph = package_graph()
    draw(graph, out)
    layer = layers(graph)
    for node in sorted(graph, key=lambda n: (layer[n], n)):
        print(f"{layer[node]}  {node:24} -> {', '.join(sorted(graph[node])) or '-'}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
