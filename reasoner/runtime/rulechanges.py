"""Rule changes: what a change names (the rules a label, head or rule selects; the rules
whose actions change static rules, which an engine asking knowledge it was given refuses),
and :class:`RuleChanges`, which makes them on a running engine's wiring."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from reasoner.compiler.compile import Options, compile_program
from reasoner.errors import EngineError
from reasoner.knowledge.program import check_conditions, program_knowledge
from reasoner.language.ast import EventRule, Facts, Program, StaticRule, Where, rule_changes, walk
from reasoner.language.check import check_program
from reasoner.language.loader import Rules, load_rules
from reasoner.language.printer import to_source

if TYPE_CHECKING:
    from reasoner.runtime.wiring import Wiring


def select_rules(rules: Sequence[EventRule], which: str | EventRule) -> list[EventRule]:
    """The rules ``which`` names (see :meth:`~reasoner.runtime.engine.Engine.remove_rules`).

    >>> rules = load_rules("r1 'rule:' c <- a. d(X) <- b(X). r1 'rule:' e <- b(1).").event_rules
    >>> [to_source(r.head) for r in select_rules(rules, "r1")]
    ['c', 'e']
    >>> [to_source(r.head) for r in select_rules(rules, "d/1")]
    ['d(X)']
    >>> [to_source(r.head) for r in select_rules(rules, "c <- a.")]
    []
    """
    if isinstance(which, EventRule) or "<-" in which:
        wanted = load_rules(which).event_rules if isinstance(which, str) else (which,)
        return [rule for rule in rules if rule in wanted]
    labelled = [rule for rule in rules if rule.label == which]
    if labelled:
        return labelled
    name, slash, arity = which.rpartition("/")
    if slash and arity.isdigit():
        return [r for r in rules if r.head.name == name and len(r.head.args) == int(arity)]
    return [rule for rule in rules if rule.head.name == which]


def refuse_static_changes(program: Program) -> None:
    """EngineError naming the first rule of ``program`` whose action changes static rules
    (``ins_static_rule``, ``del_static_rule``): an engine asking knowledge it was given
    cannot make them."""
    for rule in program.event_rules:
        for pattern in walk(rule.body):
            if isinstance(pattern, Where) and any(
                change.functor.endswith("_static_rule")
                for change in rule_changes(pattern.condition)
            ):
                raise EngineError(
                    f"{rule.span or to_source(rule.head)}: ins_static_rule and "
                    "del_static_rule change the program's own facts and rules; this engine "
                    "asks knowledge it was given"
                )


def quoted(which: str | EventRule) -> str:
    return repr(which) if isinstance(which, str) else repr(to_source(which))


class RuleChanges:
    """The rule changes of one engine: ``add_rules``, ``remove_rules``, ``change_rules`` and
    ETALIS's rule-changing actions, each checked whole before anything changes, and deferred
    while a callback runs (they take effect between two events).

    Attributes:
        own_facts: whether the conditions ask the program's own knowledge (rebuilt as static
            rules change) rather than knowledge the engine was given.
        deferred: the changes asked for while callbacks ran or by actions, in order.
        made: the changes actions made, ``(action, text)`` in order (snapshots carry them).
        written: the program before the first of them (None: none made).
        given_static: the static rules the engine was given (the actions' changes aside).
    """

    def __init__(self, wiring: Wiring, own_facts: bool) -> None:
        self.wiring = wiring
        self.own_facts = own_facts
        self.deferred: list[Callable[[], object]] = []
        self.made: list[tuple[str, str]] = []
        self.written: Program | None = None
        self.given_static: tuple[StaticRule | Facts, ...] = ()

    def add_rules(self, rules: Rules) -> None:
        """:meth:`Engine.add_rules <reasoner.runtime.engine.Engine.add_rules>`."""
        program = load_rules(rules)
        if not self.own_facts:
            refuse_static_changes(program)
        if self.wiring.in_callback:
            self.deferred.append(partial(self.add_rules, program))
            return
        self.add(program)
        self.given_static += program.clauses

    def add(self, rules: Rules, removed: Sequence[EventRule] = ()) -> None:
        """Remove ``removed`` (of the program in use) and compile ``rules`` in
        (``ins_event_rule`` and ``ins_static_rule`` too). Everything that may refuse the
        change runs before anything changes."""
        wiring = self.wiring
        program = load_rules(rules)
        doomed = {id(rule) for rule in removed}
        kept = Program(tuple(s for s in wiring.program.statements if id(s) not in doomed))
        if kept.event_rules:  # problems between the running rules and the new ones
            check_program(kept + program)
        rules_before, outputs_before = wiring.compiled
        network = compile_program(
            program,
            Options(wiring.options.policy),
            first_node=len(wiring.nodes),
            first_rule=rules_before,
        )
        combined = kept + program
        if self.own_facts:
            knowledge = program_knowledge(combined)
        else:
            check_conditions(wiring.runtime.knowledge, combined)
            knowledge = wiring.runtime.knowledge
        if removed:
            wiring.rewire(wiring.remove(removed))
        wiring.runtime.knowledge = knowledge
        wiring.program = combined
        wiring.compiled = [rules_before + len(program.event_rules), outputs_before]
        wiring.instantiate(network, program.event_rules, rules_before)

    def remove_rules(self, which: str | EventRule) -> tuple[EventRule, ...]:
        """:meth:`Engine.remove_rules <reasoner.runtime.engine.Engine.remove_rules>`."""
        selected = select_rules(self.wiring.program.event_rules, which)
        if not selected:
            raise EngineError(f"no rule is labelled or derives {quoted(which)}")
        if self.wiring.in_callback:
            self.deferred.append(partial(self.remove_rules, which))
            return tuple(selected)
        self.wiring.rewire(self.wiring.remove(selected))
        return tuple(selected)

    def change_rules(self, removed: Iterable[EventRule], added: Program) -> None:
        """:meth:`Engine.change_rules <reasoner.runtime.engine.Engine.change_rules>`."""
        selected: list[EventRule] = []
        for rule in removed:
            found = select_rules(self.wiring.program.event_rules, rule)
            if not found:
                raise EngineError(f"no rule is labelled or derives {quoted(rule)}")
            selected += [r for r in found if all(r is not s for s in selected)]
        self.replace(selected, added)

    def replace(self, selected: Sequence[EventRule], added: Rules) -> None:
        """Remove ``selected`` (of the program in use) and add the event rules of ``added``,
        as :meth:`change_rules` describes."""
        program = load_rules(added)
        if not self.own_facts:
            refuse_static_changes(program)
        if self.wiring.in_callback:
            self.deferred.append(partial(self.replace, selected, program))
            return
        if program.event_rules:
            self.add(program, selected)
            self.given_static += program.clauses
        elif selected:
            self.wiring.rewire(self.wiring.remove(selected))

    def action(self, name: str, text: str) -> None:
        """ETALIS's rule changes, made once the event is processed (so every event sees one
        version of the rules and knowledge): ``ins_event_rule(Rule)``, ``del_event_rule(Label
        or Rule)``, ``ins_static_rule(Clause)``, ``del_static_rule(Clause)``. A deletion
        matching nothing does nothing, as in ETALIS."""
        if name != "del_event_rule" or "<-" in text:  # a rule or clause, maybe unterminated
            text = text if text.rstrip().endswith(".") else text + "."
        self.deferred.append(partial(self.make, name, text))

    def make(self, name: str, text: str) -> None:
        """Make one rule change of :meth:`action` (the event is processed) and record it."""
        wiring = self.wiring
        if not self.made:
            self.written = wiring.program
        if name in ("ins_event_rule", "ins_static_rule"):
            self.add(text)
        elif name == "del_event_rule":
            if select_rules(wiring.program.event_rules, text):
                self.remove_rules(text)
        else:  # del_static_rule: the clauses equal to those of text go; knowledge rebuilt
            wiring.program = wiring.program.without(load_rules(text).static_rules)
            wiring.runtime.knowledge = program_knowledge(wiring.program)
        self.made.append((name, text))

    def apply_deferred(self) -> None:
        """Make the rule changes callbacks asked for (the event that triggered them is
        processed: they take effect between two events)."""
        changes = self.deferred[:]
        self.deferred.clear()  # (in place: the clock holds this list)
        for change in changes:
            change()
