"""Run ETALIS's own examples through ``reasoner run`` and compare with ETALIS's expected detections.

A developer tool (it needs a checkout of ETALIS, which is not shipped; CI does not run it):

    git clone https://github.com/sspider/etalis /tmp/etalis-src
    python scripts/etalis_suite.py /tmp/etalis-src/etalis [--etalis] [--only NAME] [-v]

Every ``swipl -g "GOAL"`` line of every ``examples/*/test*.sh.bat`` script is one case. The goal
is read with the rule language's own parser (as the directive ``:- GOAL.``) and converted, in a
temporary folder, into what ``reasoner run`` reads:

* ``compile_event_file(F)`` (and ``load_static_rules(F)``, ``load_database(F)``) name the rule
  files, passed unchanged;
* ``event(E)`` fires ``E`` at ETALIS's clock, which is simulated: 1 ms after the previous event,
  ``sleep(N)`` moving it N seconds on (``reasoner run --until`` moves there at the end, for
  alarms); ``event(E, [T1, T2])`` with numbers keeps them, with
  ``datime(Y, M, D, H, Mi, S[, C])`` stamps uses the seconds since 1970 plus C ms;
  ``execute_event_stream_file(F)`` runs the terms of a stream file the same way (its
  ``event(E)`` and ``sleep(N)``, as ETALIS calls each);
* ``set_etalis_flag(event_consumption_policy, P)`` gives ``--policy P``; a ``sleep(N)`` after
  the last event gives ``--until`` (ETALIS's clock runs on while it sleeps: alarms ring);
* ``findall(stored_event(event(P, T)), ..., L)`` followed by ``L = [...]`` in the script's
  if-then-else is an expected result: the detections matching ``P``, as a multiset; a fact
  ``F`` there (one the rules may add) is asked after the events, by a rule
  ``etalis_holds_F <- etalis_end WHERE F`` and one more event ``etalis_end``.

A case whose goal has no such expected result is not a test (ETALIS prints no verdict) and is
listed as "no verdict". Each remaining case is *pass* (our detections equal the expected ones),
*different* (listed with its reason in docs/etalis.md, section "Differences in the suite") or
*fail* (with why). With ``--etalis`` and SWI-Prolog installed, each case is also run by ETALIS
itself (``swipl --traditional``) to learn which cases ETALIS passes; the totals are then given
for those.
"""

from __future__ import annotations

import argparse
import calendar
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reasoner.errors import ReasonerError  # noqa: E402
from reasoner.language.ast import Atom, Compound, Directive, ListTerm, Number, String, Term, Var  # noqa: E402
from reasoner.language.parser import parse  # noqa: E402

GOAL = re.compile(r'^\s*swipl\b[^"]*-g\s+"(.*)"\s*$')
IGNORED = {  # output, logging and explanations: they change no detection
    "open",
    "write",
    "nl",
    "halt",
    "dynamic",
    "write_list",
    "my_write_list",
    "write_space",
    "write_nl",
    "close",
    "flush_output",
    "reset_log_file",
    "justify_event",
    "write_justification",
    "write_justification_udraw",
    "ep_sparql_compile",  # with ep_sparql_parse: the query runs with --query
    "compile_internal_event_rules",
}
RULE_FLAGS = {"garbage_control", "garbage_window", "garbage_window_step"}  # directive facts
HARMLESS_FLAGS = {
    "output_temporary_files",
    "logging_to_file",
    "store_fired_events",
    "logging",
    "db_trace",
    "prolog_backend",
}
TICK = Fraction(1, 1000)
EXISTS = Atom("<at least one>")


@dataclass
class Case:
    name: str
    folder: Path
    goal: str


@dataclass
class Conversion:
    rules: list[Path] = field(default_factory=list)
    events: list[dict[str, object]] = field(default_factory=list)
    policy: str = "recent"  # ETALIS's default
    flags: list[str] = field(default_factory=list)
    lateness: Fraction = Fraction(0)
    out_of_order: bool = False
    expected: list[tuple[Term, list[Term]]] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    query: str | None = None  # an EP-SPARQL query (ETALIS's ep_sparql_parse)
    sleeps: int = 0  # the seconds ETALIS sleeps while running the goal
    until: Fraction = Fraction(0)  # ETALIS's clock when the goal ends (alarms ring up to it)


class Unconvertible(Exception):
    """The goal uses something the converter does not translate."""


def cases(checkout: Path) -> list[Case]:
    """Every uncommented ``swipl -g`` goal of every example's test scripts."""
    found = []
    for script in sorted((checkout / "examples").glob("*/test*.sh.bat")):
        goals = [
            m.group(1)
            for line in script.read_text(errors="replace").splitlines()
            if (m := GOAL.match(line))
        ]
        for i, goal in enumerate(goals):
            suffix = (
                "" if script.name == "test.sh.bat" else f"/{script.name.removesuffix('.sh.bat')}"
            )
            name = script.parent.name + suffix + (f"#{i + 1}" if len(goals) > 1 else "")
            found.append(Case(name, script.parent, goal))
    return found


def conjuncts(term: Term) -> list[Term]:
    if isinstance(term, Compound) and term.functor == "," and len(term.args) == 2:
        return conjuncts(term.args[0]) + conjuncts(term.args[1])
    return [term]


def read_goal(goal: str) -> list[Term]:
    try:
        program = parse(f":- {goal.strip().removesuffix('.')}.", file="<goal>")
    except ReasonerError as exc:
        raise Unconvertible(f"cannot read the goal: {str(exc).splitlines()[0]}") from None
    (stmt,) = program.statements
    assert isinstance(stmt, Directive)
    return conjuncts(stmt.goal)


def value(term: Term) -> object:
    """A Prolog term as a JSON-lines argument (atoms and strings are strings)."""
    match term:
        case Atom(name):
            return name
        case String(text):
            return text
        case Number(v):
            return float(v) if isinstance(v, Fraction) else v
        case ListTerm(items, None):
            return [value(i) for i in items]
        case Compound(functor, args):
            return {"functor": functor, "args": [value(a) for a in args]}
    raise Unconvertible(f"event argument {term} has no JSON form")


def stamp(term: Term) -> Fraction:
    match term:
        case Number(v):
            return Fraction(v)
        case Compound("datime", args) if len(args) in (6, 7) and all(
            isinstance(a, Number) for a in args
        ):
            y, mo, d, h, mi, s = (int(a.value) for a in args[:6])  # type: ignore[union-attr]
            counter = int(args[6].value) if len(args) == 7 else 0  # type: ignore[union-attr]
            return calendar.timegm((y, mo, d, h, mi, s)) + counter * TICK
    raise Unconvertible(f"timestamp {term} is neither a number nor a datime")


def time_value(t: Fraction) -> int | float:
    return int(t) if t.denominator == 1 else float(t)


class Converter:
    def __init__(self, case: Case) -> None:
        self.case = case
        self.out = Conversion()
        self.second = 0  # ETALIS's clock: whole seconds and a counter within the second
        self.counter = 0
        self.latest = Fraction(0)
        self.ask_at_end = False  # the verdict asks a static fact once the events are in

    def fire(self, event: Term, times: Term | None = None) -> None:
        if isinstance(event, Compound) and event.functor == "event" and len(event.args) == 2:
            event, times = event.args
        if times is None:
            self.counter += 1
            start = end = self.second + self.counter * TICK
        elif isinstance(times, ListTerm) and len(times.items) == 2 and times.tail is None:
            start, end = stamp(times.items[0]), stamp(times.items[1])
        else:
            start = end = stamp(times)
        match event:
            case Atom(name):
                args: list[object] = []
            case Compound(name, targs):
                args = [value(a) for a in targs]
            case _:
                raise Unconvertible(f"event {event} is not an atom or compound")
        line: dict[str, object] = {"name": name, "args": args}
        if start == end:
            line["time"] = time_value(start)
        else:
            line["start"], line["end"] = time_value(start), time_value(end)
        self.out.lateness = max(self.out.lateness, self.latest - end)
        self.latest = max(self.latest, end)
        self.out.events.append(line)

    def stream_file(self, path: Path) -> None:
        try:
            program = parse(path.read_text(errors="replace"), file=str(path))
        except ReasonerError as exc:
            raise Unconvertible(f"cannot read {path.name}: {str(exc).splitlines()[0]}") from None
        for stmt in program.statements:  # ETALIS calls each term: event(E), sleep(N), ...
            head = getattr(stmt, "head", None) or getattr(stmt, "goal", None)
            if head is None or not isinstance(head, Compound | Atom):
                raise Unconvertible(f"{path.name}: unexpected statement {stmt}")
            self.goal(head)

    def goal(self, g: Term) -> None:
        folder = self.case.folder
        match g:
            case ListTerm():  # consulting ETALIS itself
                return
            case Compound("set_etalis_flag", (Atom(flag), Atom(v) | Number(v))):
                if flag == "event_consumption_policy":
                    if v not in ("recent", "chronological", "unrestricted"):
                        raise Unconvertible(f"consumption policy {v}")
                    self.out.policy = str(v)
                elif flag in RULE_FLAGS:
                    self.out.flags.append(f"{flag}({v}).")
                elif flag == "out_of_order":
                    self.out.out_of_order = v == "on"
                elif flag not in HARMLESS_FLAGS:
                    self.out.unsupported.append(f"set_etalis_flag({flag}, {v})")
            case Compound("compile_event_file" | "load_static_rules" | "load_database", (Atom(f),)):
                self.out.rules.append(folder / f)
            case Compound("event", (e,)):
                self.fire(e)
            case Compound("event", (e, t)):
                self.fire(e, t)
            case Compound("assert", (Compound("external_trigger"),)):
                return
            case Compound("assert", (fact,)):  # a fact the rules may ask
                self.out.flags.append(f"{str_term(fact)}.")
            case Compound("ep_sparql_parse", (Atom(query), *_)):
                self.out.query = query
            case Compound("sleep", (Number(n),)):
                self.second += int(n)
                self.counter = 0
                self.out.sleeps += int(n)
                self.out.until = max(self.out.until, Fraction(self.second))
            case Compound("execute_event_stream_file", (Atom(f),)):
                self.stream_file(folder / f)
            case Compound(
                "findall",
                (Compound("stored_event", (Compound("event", (pattern, _)),)), _, Var(lst)),
            ):
                self.pending[lst] = pattern
            case Compound(";", (Compound("->", (cond, _)), _)):
                for c in conjuncts(cond):
                    match c:
                        case Compound("=", (Var(lst), ListTerm() as items)) if lst in self.pending:
                            self.out.expected.append((self.pending[lst], expected_items(items)))
                        case Compound("=", (Var(lst), Atom("[]"))) if lst in self.pending:
                            self.out.expected.append((self.pending[lst], []))
                        case Compound("=", (Var(lst), _)) if lst not in self.pending:
                            pass  # a variable nothing bound: the unification always holds
                        case Compound("stored_event", (Compound("event", (pattern, _)),)):
                            self.out.expected.append((pattern, [EXISTS]))
                        case Atom(fact):  # a static fact (rules may add it): asked at the end
                            self.out.flags.append(
                                f"etalis_holds_{fact} <- etalis_end WHERE {fact}."
                            )
                            self.out.expected.append((Atom(f"etalis_holds_{fact}"), [EXISTS]))
                            self.ask_at_end = True
                        case _:
                            raise Unconvertible(f"the verdict also needs {str_term(c)}")
            case Atom(name) | Compound(name) if name in IGNORED:
                return
            case Atom(name) | Compound(name):
                raise Unconvertible(f"goal {name}/{len(getattr(g, 'args', ()))}")

    def run(self) -> Conversion:
        """The conversion; without an expected result, Unconvertible problems do not matter."""
        self.pending: dict[str, Term] = {}
        problem = None
        for g in read_goal(self.case.goal):
            try:
                self.goal(g)
            except Unconvertible as exc:
                problem = problem or exc
        if problem is not None and self.out.expected:
            raise problem
        if self.ask_at_end:
            self.fire(Atom("etalis_end"), Number(max(self.latest, self.out.until) + TICK))
        return self.out


def expected_items(items: ListTerm) -> list[Term]:
    out = []
    for item in items.items:
        match item:
            case Compound("stored_event", (Compound("event", (e, _)),)):
                out.append(e)
            case _:
                raise Unconvertible(f"expected item {item} is not stored_event(event(E, T))")
    return out


def matches(pattern: Term, name: str, args: list[object], binding: dict[str, object]) -> bool:
    """Whether a detection unifies with an expected term (variables bind consistently)."""
    match pattern:
        case Atom(n):
            return n == name and not args
        case Compound(n, pargs):
            return (
                n == name
                and len(pargs) == len(args)
                and all(arg_matches(p, a, binding) for p, a in zip(pargs, args, strict=True))
            )
    return False


def arg_matches(p: Term, a: object, binding: dict[str, object]) -> bool:
    match p:
        case Var(n):
            if n.startswith("_"):
                return True
            if n in binding:
                return binding[n] == a
            binding[n] = a
            return True
        case Atom(x) | String(x):
            return a == x
        case Number(x):
            return isinstance(a, int | float) and not isinstance(a, bool) and a == x
        case ListTerm(items, None):
            return (
                isinstance(a, list)
                and len(a) == len(items)
                and all(arg_matches(i, x, binding) for i, x in zip(items, a, strict=True))
            )
        case Compound(f, args):
            return (
                isinstance(a, dict)
                and a.get("functor") == f
                and len(a["args"]) == len(args)
                and all(arg_matches(i, x, binding) for i, x in zip(args, a["args"], strict=True))
            )
    return False


def show(name: str, args: list[object]) -> str:
    return name + (
        f"({', '.join(json.dumps(a) if not isinstance(a, str) else a for a in args)})"
        if args
        else ""
    )


def compare(conv: Conversion, detections: list[dict]) -> str | None:
    """None when every expected result holds, else what differs."""
    for pattern, expected in conv.expected:
        got = [d for d in detections if matches(pattern, d["name"], d["args"], {})]
        if expected == [EXISTS]:
            if not got:
                return f"missing {str_term(pattern)}"
            continue
        left = list(got)
        missing = []
        for e in expected:
            hit = next((d for d in left if matches(e, d["name"], d["args"], {})), None)
            if hit is None:
                missing.append(str_term(e))
            else:
                left.remove(hit)
        if missing or left:
            parts = []
            if missing:
                parts.append("missing " + ", ".join(missing))
            if left:
                parts.append("extra " + ", ".join(show(d["name"], d["args"]) for d in left))
            return "; ".join(parts)
    return None


def str_term(t: Term) -> str:
    from reasoner.language.printer import to_source

    return to_source(t)


def run_ours(case: Case, conv: Conversion, tmp: Path) -> tuple[list[dict] | None, str]:
    events = tmp / "events.jsonl"
    events.write_text("".join(json.dumps(e) + "\n" for e in conv.events))
    rules = list(map(str, conv.rules))
    if conv.flags:
        (tmp / "flags.event").write_text("\n".join(conv.flags) + "\n")
        rules.append(str(tmp / "flags.event"))
    cmd = [
        sys.executable,
        "-m",
        "connectors.cli",
        "run",
        *rules,
        "--events",
        str(events),
        "--policy",
        conv.policy,
        "--tie-break",
        "shorter",
    ]
    if conv.query is not None:
        # ETALIS's rdf(S, P, O) events are the triple view's triple(S, P, O).
        (tmp / "query.rq").write_text(conv.query + "\n")
        cmd += ["--query", str(tmp / "query.rq")]
        lines = [dict(e, name="triple") if e["name"] == "rdf" else e for e in conv.events]
        events.write_text("".join(json.dumps(e) + "\n" for e in lines))
    if conv.until > max((Fraction(e.get("end", e.get("time", 0))) for e in conv.events), default=0):
        cmd += ["--until", str(time_value(conv.until))]
    if conv.out_of_order and conv.lateness:
        cmd += ["--lateness", str(time_value(conv.lateness))]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        cmd, capture_output=True, text=True, env=env, cwd=case.folder, timeout=300
    )
    if proc.returncode not in (0, 3):
        errors = [line for line in proc.stderr.splitlines() if line.startswith("reasoner:")]
        return None, errors[0] if errors else f"exit {proc.returncode}"
    found = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    construct = conv.query is not None and conv.query.lstrip().upper().startswith("CONSTRUCT")
    return [query_result(d, construct) if "results" in d else d for d in found], proc.stderr


def query_result(line: dict, construct: bool) -> dict:
    """A results line of --query as ETALIS writes it: ``select_event([V1, ...])`` (selected
    order), or for CONSTRUCT the triple ``rdf(S, P, O)``."""
    (binding,) = line["results"]["bindings"]
    values: list[object] = []
    for var in line["head"]["vars"]:
        cell = binding.get(var)
        if cell is None:
            values.append(None)
        elif cell.get("datatype", "").endswith(("#integer", "#decimal", "#double")):
            values.append(json.loads(cell["value"]))
        else:
            values.append(cell["value"])
    if construct:
        return {"name": "rdf", "args": values}
    return {"name": "select_event", "args": [values]}


def run_etalis(case: Case, checkout: Path, tmp: Path, sleeps: int) -> str:
    """ETALIS's own verdict: 'passed', 'failed' or 'no verdict'.

    The case runs in a copy of its folder (ETALIS writes files there) beside the other
    examples (some rule files are in a sibling folder), with a minute more than its sleeps;
    the verdict is the line the goal writes on standard output or, as some goals do only, in
    ``../results.txt``."""
    examples = tmp / "etalis" / "examples"
    shutil.copytree(case.folder, examples / case.folder.name)
    for sibling in (checkout / "examples").iterdir():
        if sibling.is_dir() and sibling.name != case.folder.name:
            (examples / sibling.name).symlink_to(sibling)
    for sub in ("src", "lib"):
        if (checkout / sub).exists():
            (tmp / "etalis" / sub).symlink_to(checkout / sub)
    try:
        proc = subprocess.run(
            ["swipl", "--traditional", "-g", case.goal, "-t", "halt"],
            cwd=examples / case.folder.name,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60 + sleeps,
        )
        out = proc.stdout
    except subprocess.TimeoutExpired as exc:
        out = (
            exc.stdout.decode(errors="replace")
            if isinstance(exc.stdout, bytes)
            else (exc.stdout or "")
        )
    results = examples / "results.txt"
    out += results.read_text(errors="replace") if results.exists() else ""
    if re.search(r"\tpassed", out):
        return "passed"
    if re.search(r"\tfailed", out):
        return "failed"
    return "no verdict"


def documented_differences() -> dict[str, tuple[str, str]]:
    """Case name -> (status, reason), from the two tables of docs/etalis.md on the suite:
    "Intended differences" (status ``different``) and "Not supported" (``unsupported``)."""
    text = (ROOT / "docs" / "etalis.md").read_text()
    out = {}
    for heading, status in (
        ("### Intended differences", "different"),
        ("### Not supported", "unsupported"),
    ):
        section = text.split(heading, 1)[1].split("\n#", 1)[0] if heading in text else ""
        for line in section.splitlines():
            m = re.match(r"\|\s*`([^`]+)`\s*\|\s*(.+?)\s*\|\s*$", line)
            if m:
                out[m.group(1)] = (status, m.group(2))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "checkout",
        type=Path,
        help="the etalis/ folder of an ETALIS checkout (has examples/ and src/)",
    )
    ap.add_argument("--etalis", action="store_true", help="also run ETALIS itself (needs swipl)")
    ap.add_argument(
        "--etalis-cache",
        type=Path,
        help="with --etalis: keep ETALIS's verdicts in this JSON file (reused when present)",
    )
    ap.add_argument(
        "--only", action="append", help="run only the cases whose name starts with this"
    )
    ap.add_argument(
        "-v", "--verbose", action="store_true", help="print the converted events and detections"
    )
    args = ap.parse_args(argv)
    if args.etalis and shutil.which("swipl") is None:
        ap.error("--etalis needs swipl (Debian: apt-get install swi-prolog-nox)")
    differences = documented_differences()
    cache: dict[str, str] = {}
    if args.etalis_cache and args.etalis_cache.exists():
        cache = json.loads(args.etalis_cache.read_text())
    totals: Counter[str] = Counter()
    rows = []
    for case in cases(args.checkout):
        if args.only and not any(case.name.startswith(o) for o in args.only):
            continue
        with tempfile.TemporaryDirectory() as t:
            tmp = Path(t)
            converter = Converter(case)
            try:
                conv: Conversion | None = converter.run()
            except Unconvertible as exc:
                conv, why = None, f"not converted: {exc}"
            etalis = "-"
            if args.etalis:
                sleeps = converter.out.sleeps
                etalis = cache.get(case.name) or run_etalis(case, args.checkout, tmp, sleeps)
                if etalis != "passed" and case.name not in cache and sleeps:
                    # ETALIS's clock is the wall clock: under load, a goal that sleeps
                    # may miss its time; it gets a second run.
                    shutil.rmtree(tmp / "etalis")
                    etalis = run_etalis(case, args.checkout, tmp, sleeps)
                cache[case.name] = etalis
            if conv is not None and not conv.expected:
                status, why = "no verdict", "the script checks no detections"
            elif conv is None:
                status = "fail"
            else:
                detections, err = run_ours(case, conv, tmp)
                if detections is None:
                    status, why = "fail", f"reasoner run: {err}"
                else:
                    diff = compare(conv, detections)
                    status, why = ("pass", "") if diff is None else ("fail", diff)
                    if args.verbose:
                        print(case.name, conv.events, detections, err, sep="\n  ")
            if status == "no verdict" and etalis == "passed":
                status, why = "fail", "ETALIS's verdict checks no detections"
            if status == "fail" and case.name in differences:
                status, why = differences[case.name]
        totals[(etalis, status)] += 1
        rows.append((case.name, etalis, status, why))
        print(f"{case.name:42} {etalis:10} {status:10} {why}", flush=True)
    if args.etalis_cache:
        args.etalis_cache.write_text(json.dumps(cache, indent=1) + "\n")
    print()
    for group in ["passed"] if args.etalis else ["-"]:
        n = sum(v for (e, _), v in totals.items() if e == group)
        label = "cases ETALIS passes" if args.etalis else "cases"
        counts = {
            s: totals[(group, s)]
            for s in ("pass", "different", "unsupported", "fail", "no verdict")
        }
        print(f"{label}: {n}; " + ", ".join(f"{s} {c}" for s, c in counts.items()))
    if args.etalis:
        print(
            "all cases: "
            + ", ".join(f"ETALIS {e} / ours {s}: {c}" for (e, s), c in sorted(totals.items()))
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
