"""What a rule change names: the rules a label, head or rule selects, and the rules whose
actions change static rules (which an engine asking knowledge it was given refuses)."""

from __future__ import annotations

from collections.abc import Sequence

from reasoner.errors import EngineError
from reasoner.language.ast import EventRule, Program, Where, rule_changes, walk
from reasoner.language.loader import load_rules
from reasoner.language.printer import to_source


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
