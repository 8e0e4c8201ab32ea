"""``reasoner explain DETECTIONS.jsonl [--rules RULES...] [--only NAME]...``: print why.

Reads the JSON lines ``reasoner run --explain`` writes and prints, per detection, its
derivation as a tree: the rule that derived it (``file:line``; with ``--rules``, the rule's
first source line too), the events it was built from (derived ones with their own rules, down
to the input events), and under each WHERE / EVENT_MULTIPLY goal the knowledge facts it used,
each asserted or inferred (by an entailment rule such as ``rdfs9``, or by a Horn rule), with
the facts an inferred one came from. IRIs are written with the rules' prefixes (and ``rdf``,
``rdfs``, ``owl``, ``xsd``). A line without ``"why"`` (a run without ``--explain``) is an
error naming its line; a line that is not JSON likewise.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from reasoner.errors import ReasonerError

_DEFAULT_PREFIXES = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
}


def register(subparsers: Any) -> None:
    """Add the ``explain`` sub-command (its ``handler`` returns the exit status).

    Args:
        subparsers: what ``ArgumentParser.add_subparsers()`` returned.

    >>> parser = argparse.ArgumentParser()
    >>> register(parser.add_subparsers())
    >>> parser.parse_args(["explain", "d.jsonl", "--rules", "a.event"]).rules
    ['a.event']
    """
    p = subparsers.add_parser(
        "explain",
        help="print why each detection of 'reasoner run --explain' holds, as a tree",
        description="Print the derivation of each detection written by 'reasoner run "
        "--explain': its rules, the events it was built from, and the knowledge facts its "
        "conditions used, down to asserted facts.",
    )
    p.add_argument(
        "detections", metavar="DETECTIONS", help="JSON lines of run --explain ('-': stdin)"
    )
    p.add_argument(
        "--rules",
        nargs="+",
        default=[],
        metavar="RULES",
        help="the rule files of the run: their prefixes shorten IRIs and each rule's source "
        "line is printed",
    )
    p.add_argument(
        "--only", action="append", metavar="NAME", help="explain only these events (repeatable)"
    )
    p.set_defaults(handler=explain)


def explain(args: argparse.Namespace) -> int:
    """Print the tree of every detection of the file (0; a bad line raises ReasonerError)."""
    prefixes = dict(_DEFAULT_PREFIXES)
    sources: dict[str, list[str]] = {}
    if args.rules:
        from reasoner.language.loader import load_rules

        prefixes.update(load_rules([Path(p) for p in args.rules]).prefixes)
        for path in args.rules:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
            sources[str(Path(path).resolve())] = lines
    printer = _Printer(sys.stdout, prefixes, sources)
    only = set(args.only or ())
    for number, line in _lines(args.detections):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReasonerError(f"{args.detections}:{number}: not JSON: {exc.msg}") from exc
        if not isinstance(record, dict) or "why" not in record:
            raise ReasonerError(
                f"{args.detections}:{number}: no 'why' (write the detections with "
                "'reasoner run --explain')"
            )
        if only and record.get("name") not in only:
            continue
        printer.detection(record)
    return 0


def _lines(path: str) -> Iterator[tuple[int, str]]:
    stream = sys.stdin if path == "-" else open(path, encoding="utf-8")  # noqa: SIM115
    try:
        for number, line in enumerate(stream, start=1):
            if line.strip():
                yield number, line
    finally:
        if stream is not sys.stdin:
            stream.close()


def _here(at: str) -> str:
    """A ``file:line[:column]`` (or an entailment rule's name) with the file relative to the
    current folder when it lies under it.

    >>> _here(f"{Path.cwd() / 'rules' / 'a.event'}:3:1"), _here("rdfs9"), _here("/elsewhere/b:2")
    ('rules/a.event:3:1', 'rdfs9', '/elsewhere/b:2')
    """
    file, sep, rest = at.partition(":")
    path = Path(file)
    if not sep or not path.is_absolute():
        return at
    try:
        return f"{path.relative_to(Path.cwd())}:{rest}"
    except ValueError:
        return at


class _Printer:
    """Writes trees with box-drawing branches."""

    def __init__(self, out: TextIO, prefixes: dict[str, str], sources: dict[str, list[str]]):
        self.out = out
        # longest namespace first: the most specific prefix wins
        self.prefixes = sorted(prefixes.items(), key=lambda item: -len(item[1]))
        self.sources = sources

    def detection(self, record: dict[str, Any]) -> None:
        self.out.write(self.event(record) + "\n")
        self.children(self.why(record["why"]), "")
        self.out.write("\n")

    def why(self, why: dict[str, Any]) -> list[tuple[str, list[Any]]]:
        """The children of a derived event: its rule, inputs and goals."""
        rule = why["rule"]
        label = f" '{rule['label']}'" if rule.get("label") else ""
        text = f"by rule{label} {rule['head']}  {_here(rule['at'])}"
        items: list[tuple[str, list[Any]]] = [(text, self.source(rule["at"]))]
        for step in why["from"]:
            if "rule" in step:
                items.append((self.event(step["event"]), self.why(step)))
            else:
                items.append(("input " + self.event(step["event"]), []))
        for goal in why["where"]:
            facts = [self.fact(f) for f in goal["facts"]]
            at = f"  {_here(goal['at'])}" if goal.get("at") else ""
            values = ", ".join(f"{k} = {self.value(v)}" for k, v in goal.get("values", {}).items())
            items.append((f"where {goal['goal']}{at}{f'  with {values}' if values else ''}", facts))
        return items

    def fact(self, fact: dict[str, Any]) -> tuple[str, list[Any]]:
        if "triple" in fact:
            text = " ".join(self.value(v) for v in fact["triple"])
        else:
            text = f"{self.name(fact['fact'])}({', '.join(self.value(v) for v in fact['args'])})"
        how = fact["graph"]
        if "rule" in fact:
            where = _here(fact["rule"])
            how += f" by {where}" if fact["graph"] == "inferred" else f" at {where}"
        if "text" in fact:
            how += f": {fact['text']}"
        return f"{text}  [{how}]", [self.fact(f) for f in fact.get("from", ())]

    def children(self, items: list[tuple[str, list[Any]]], indent: str) -> None:
        for i, (text, below) in enumerate(items):
            last = i == len(items) - 1
            self.out.write(f"{indent}{'└─ ' if last else '├─ '}{text}\n")
            self.children(below, indent + ("   " if last else "│  "))

    def event(self, record: dict[str, Any]) -> str:
        args = ", ".join(self.value(v) for v in record["args"])
        start, end = record["start"], record["end"]
        when = f"at {start}" if start == end else f"from {start} to {end}"
        return f"{record['name']}({args}) {when}"

    def value(self, value: Any) -> str:
        if isinstance(value, dict) and "iri" in value:
            return self.name(value["iri"])
        if isinstance(value, dict) and "functor" in value:
            return f"{value['functor']}({', '.join(self.value(v) for v in value['args'])})"
        if isinstance(value, list):
            return "[" + ", ".join(self.value(v) for v in value) + "]"
        return json.dumps(value) if isinstance(value, str) else str(value)

    def name(self, iri: str) -> str:
        """A predicate or IRI, shortened with a prefix when one fits."""
        if ":" not in iri:
            return iri
        for prefix, namespace in self.prefixes:
            if iri.startswith(namespace) and iri != namespace:
                return f"{prefix}:{iri[len(namespace) :]}"
        return f"<{iri}>"

    def source(self, at: str) -> list[tuple[str, list[Any]]]:
        """With --rules: the source lines of the rule at ``file:line:column`` (up to the one
        ending it with a full stop)."""
        file, line, _ = at.rsplit(":", 2)
        lines = self.sources.get(str(Path(file).resolve()), [])
        if not line.isdigit() or not 0 < int(line) <= len(lines):
            return []
        text = []
        for source in lines[int(line) - 1 : int(line) + 5]:
            text.append(source.strip())
            if source.rstrip().endswith("."):
                break
        return [(" ".join(text), [])]
