"""Why a detection holds: its derivation, from input events and knowledge.

An engine built with ``explain=True`` keeps on every detection what its rule head saw: the
rule, the values of the rule's variables and the ``why`` tree of the occurrence (the input
events and derived events it was built from, as ``provenance=True`` records them), and the
knowledge version asked. Nothing more is done per event; :func:`explain` builds the tree
when asked:

* a :class:`Step` per event: an input event, or a derived one with its rule (head, label,
  ``file:line``), the steps of the events it was built from, in pattern order;
* per WHERE condition and ``EVENT_MULTIPLY`` goal the rule passed (its conditions on negated
  patterns excepted), the knowledge facts it used, each justified down to asserted facts by
  :class:`~reasoner.knowledge.justify.Justifier` (entailment rule or Horn rule).

The goals are evaluated again with the detection's values against the knowledge version the
detection saw, traced (:func:`~reasoner.knowledge.goals.compile_goal` with ``trace=True``), so
the facts are exactly those a solution needs. A goal with no solution under those values
belongs to an OR branch the detection did not take, and is left out.

>>> from reasoner.runtime.engine import Engine
>>> from reasoner.runtime.events import Event
>>> engine = Engine("near(a, b). warn(X, Y) <- alarm(X) WHERE near(X, Y).", explain=True)
>>> [step] = [explain(d) for d in engine.push(Event.at("alarm", ("a",), 1))]
>>> step.rule.at, step.goals[0].goal, [(f.predicate, f.args) for f in step.goals[0].facts]
('<rules>:1:13', 'near(X, Y)', [('near', ('a', 'b'))])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from reasoner.compiler.network import Expand, Filter, Join, Negation, NodeSpec, Output
from reasoner.errors import EngineError
from reasoner.knowledge.base import Knowledge
from reasoner.knowledge.goals import Goal, compile_goal, used_facts
from reasoner.knowledge.justify import Fact, Justifier
from reasoner.language.ast import Program, Span, Term, variable_names
from reasoner.runtime.events import Event
from reasoner.values import Value, json_value


@dataclass(frozen=True, slots=True)
class RuleInfo:
    """What an explanation says about one rule body (built once, when the rule is compiled)."""

    head: str
    label: str | None
    span: Span | None
    variables: tuple[str, ...]
    #: The body's WHERE conditions and EVENT_MULTIPLY goals: (source text, where, traced goal).
    goals: tuple[tuple[str, Span | None, Goal], ...] = field(repr=False)
    #: Where each fact written in the rule files is written (to name it in explanations).
    facts_at: dict[tuple[str, tuple[Value, ...]], Span] = field(repr=False, compare=False)

    @property
    def at(self) -> str:
        """``file:line:column`` of the rule."""
        return "<rules>" if self.span is None else str(self.span)


@dataclass(frozen=True, slots=True)
class Derivation:
    """What a rule head saw when it derived a detection (kept on it as ``derivation``)."""

    rule: RuleInfo
    values: tuple[Value, ...]
    why: Any
    knowledge: Knowledge


@dataclass(frozen=True, slots=True)
class GoalUse:
    """A condition a rule passed: its text, where it is written, the values of its variables
    (in order of appearance) and the knowledge facts it used."""

    goal: str
    at: str | None
    facts: tuple[Fact, ...]
    values: tuple[tuple[str, Value], ...] = ()


@dataclass(frozen=True, slots=True)
class Step:
    """One event of a derivation: an input event (``rule`` None), or a derived event with its
    rule, the steps of the events it was built from and the conditions it passed."""

    event: Event
    rule: RuleInfo | None = None
    inputs: tuple[Step, ...] = ()
    goals: tuple[GoalUse, ...] = ()

    def events(self) -> Iterator[Event]:
        """The input events at the leaves, left to right (repeats included)."""
        if self.rule is None:
            yield self.event
        for step in self.inputs:
            yield from step.events()

    def facts(self) -> Iterator[Fact]:
        """Every fact used anywhere below, with the premises of each, depth first."""
        for goal in self.goals:
            for fact in goal.facts:
                yield from fact.facts()
        for step in self.inputs:
            yield from step.facts()


def written_facts(program: Program) -> dict[tuple[str, tuple[Value, ...]], Span]:
    """Where each ground fact of a program is written (explanations name it)."""
    from reasoner.knowledge.facts import ground_facts

    return {fact: rule.span for fact, rule in ground_facts(program) if rule.span is not None}


def rule_info(
    out: Output,
    specs: Sequence[NodeSpec],
    prefixes: dict[str, str],
    facts_at: dict[tuple[str, tuple[Value, ...]], Span],
) -> RuleInfo:
    """The :class:`RuleInfo` of a compiled rule body (``specs``: the network's nodes;
    ``facts_at``: :func:`written_facts` of the program)."""
    from reasoner.language.printer import to_source

    goals: list[tuple[str, Span | None, Goal]] = []
    for spec in _body(out.input, specs):
        terms: tuple[Term, ...] = ()
        if isinstance(spec, Filter | Join | Negation):
            terms = spec.conditions
        elif isinstance(spec, Expand):
            terms = (spec.goal,)
        for term in terms:
            goals.append(
                (
                    to_source(term),
                    getattr(term, "span", None),
                    compile_goal(term, prefixes, trace=True),
                )
            )
    return RuleInfo(out.head_text(), out.label, out.span, out.variables, tuple(goals), facts_at)


def _body(root: int, specs: Sequence[NodeSpec]) -> list[NodeSpec]:
    """The nodes of a rule body in creation order, without its negated patterns."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        spec = specs[node]
        negated = getattr(spec, "negated", None)
        todo.extend(i for i in spec.inputs if i != negated)
    return [specs[i] for i in sorted(seen)]


def explain(detection: Event) -> Step:
    """The derivation of a detection of an engine built with ``explain=True``.

    The justifications of the last knowledge version asked are kept: explaining many
    detections justifies each fact once.

    Args:
        detection: what the engine returned (an input event gives a leaf step).
    Returns:
        the :class:`Step` tree.
    Raises:
        EngineError: for a detection of an engine built without ``explain``.
    """
    if getattr(detection, "derivation", None) is None and getattr(detection, "sources", None):
        raise EngineError("this detection has no derivation: build the engine with explain=True")
    return _step(detection)


def _step(event: Event) -> Step:
    derivation: Derivation | None = getattr(event, "derivation", None)
    if derivation is None:
        return Step(event)
    rule, knowledge = derivation.rule, derivation.knowledge
    inputs = tuple(_step(e) for e in _leaves(derivation.why))
    env: dict[str, Value] = dict(zip(rule.variables, derivation.values, strict=True))
    justifier = _justifier(knowledge, rule.facts_at)
    goals = []
    for text, span, goal in rule.goals:
        try:
            solution = next(iter(goal.solutions(env, knowledge)), None)
        except EngineError:  # a variable of a branch not taken
            solution = None
        if solution is None:
            continue
        facts = []
        for predicate, row in used_facts(solution):
            fact = justifier.justify(predicate, row)
            facts.append(fact if fact is not None else Fact(predicate, row, "inferred"))
        values = tuple((n, solution[n]) for n in variable_names(goal.term) if n in solution)
        goals.append(GoalUse(text, None if span is None else str(span), tuple(facts), values))
    return Step(event, rule, inputs, tuple(goals))


#: The justifier of the last knowledge version (and written facts) asked.
_last: list[tuple[Knowledge, dict[tuple[str, tuple[Value, ...]], Span], Justifier]] = []


def _justifier(
    knowledge: Knowledge, facts_at: dict[tuple[str, tuple[Value, ...]], Span]
) -> Justifier:
    if _last and _last[0][0] is knowledge and _last[0][1] is facts_at:
        return _last[0][2]
    justifier = Justifier(knowledge, facts_at)
    _last[:] = [(knowledge, facts_at, justifier)]
    return justifier


def _leaves(why: Any) -> list[Event]:
    """The events of a ``why`` tree (nested pairs), left to right, each once (equal events
    are one event, as in provenance: a tree read back from a snapshot explains the same)."""
    found: dict[Event, Event] = {}
    todo = [why]
    while todo:
        item = todo.pop()
        if item is None:
            continue
        if isinstance(item, Event):
            found.setdefault(item, item)
        else:
            todo.extend(reversed(item))
    return list(found.values())


def to_json(step: Step, event: Callable[[Event], Any] | None = None) -> dict[str, Any]:
    """A step as JSON data: ``{"event": ..., "rule": {...}, "from": [steps], "where":
    [{"goal", "at", "values", "facts"}]}`` (an input event has only ``"event"``); a fact is
    ``{"triple": [s, p, o]}`` or ``{"fact": predicate, "args": [...]}``, with its ``"graph"``
    and, when inferred or written in a rule file, its ``"rule"`` (and a Horn rule's
    ``"text"``) and the facts it came ``"from"``.

    Args:
        step: from :func:`explain`.
        event: how to write an event (default: name, args, start and end, as JSON lines do
            with numeric times).
    Returns:
        the tree as dicts and lists of JSON values.

    >>> to_json(Step(Event.at("a", (1,), 2)))
    {'event': {'name': 'a', 'args': [1], 'start': 2, 'end': 2}}
    """
    write = event or _event_json
    out: dict[str, Any] = {"event": write(step.event)}
    if step.rule is None:
        return out
    rule = {"head": step.rule.head, "at": step.rule.at}
    if step.rule.label:
        rule["label"] = step.rule.label
    out["rule"] = rule
    out["from"] = [to_json(s, write) for s in step.inputs]
    out["where"] = [
        {
            "goal": g.goal,
            "at": g.at,
            "values": {name: json_value(value) for name, value in g.values},
            "facts": [_fact_json(f) for f in g.facts],
        }
        for g in step.goals
    ]
    return out


def _event_json(event: Event) -> dict[str, Any]:
    return {"name": event.name, "args": json_value(event.args), "start": json_value(event.start),
            "end": json_value(event.end)}  # fmt: skip


def _fact_json(fact: Fact) -> dict[str, Any]:
    out: dict[str, Any]
    if fact.is_triple:
        out = {"triple": [json_value(fact.args[0]), {"iri": fact.predicate},
                          json_value(fact.args[1])]}  # fmt: skip
    else:
        out = {"fact": fact.predicate, "args": json_value(fact.args)}
    out["graph"] = fact.graph
    if fact.rule is not None:
        out["rule"] = fact.rule
    if fact.text is not None:
        out["text"] = fact.text
    if fact.premises:
        out["from"] = [_fact_json(p) for p in fact.premises]
    return out
