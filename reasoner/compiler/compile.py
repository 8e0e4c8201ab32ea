"""The compiler's pass list: checked program -> network.

1. ``check_program`` rejects programs that break the language's rules (all errors at once);
2. rule properties become patterns: a rule window wraps the body in a window;
3. ORs hiding a variable used outside them are lifted into alternative bodies;
4. binarization builds the shared node network (conditions and windows pushed down);
5. horizons: how long each stored occurrence can still matter (window push-down).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import inf

from reasoner.compiler.binarize import Binarizer
from reasoner.compiler.disjunction import alternatives
from reasoner.compiler.network import (
    Network,
    NodeSpec,
    Output,
)
from reasoner.errors import Diagnostic, RuleCompileError
from reasoner.language.ast import (
    Atom,
    Compound,
    Directive,
    EventRule,
    Number,
    Pattern,
    Program,
    Term,
    Window,
)
from reasoner.language.check import WINDOW_PROPERTIES, check_program
from reasoner.modes import POLICIES, Policy
from reasoner.values import Time

POLICY_PROPERTIES = ("consumption_policy", "policy", "event_rule_policy")


@dataclass(frozen=True, slots=True)
class Options:
    """Program-wide compilation choices (rules may override the policy)."""

    policy: Policy = "unrestricted"


def compile_program(
    program: Program, options: Options = Options(), *, first_node: int = 0, first_rule: int = 0
) -> Network:
    """Compile a program's event rules into a network.

    Args:
        program: the parsed rules.
        options: the program-wide consumption policy.
        first_node: id of the first node (to extend a running network).
        first_rule: index of the first rule (likewise).
    Returns:
        The network; raises RuleCompileError with every problem found.

    >>> from reasoner.language.parser import parse
    >>> print(compile_program(parse("c <- a SEQ b.")).dump(), end="")
    n0 = source a  -> ()
    n1 = source b  -> ()
    n2 = seq n0 n1  -> ()
    rule 0: c <- n2
    """
    if options.policy not in POLICIES:
        raise RuleCompileError([Diagnostic(f"unknown consumption policy '{options.policy}'")])
    check_program(program)
    binarizer = Binarizer(first_node)
    outputs = []
    general = garbage_window(program)
    for index, rule in enumerate(program.event_rules, start=first_rule):
        body, policy = apply_properties(rule, options.policy)
        if general is not None:
            body = Window(body, general)
        for alternative in alternatives(rule.head, body):
            first = binarizer.next_id
            node, names = binarizer.compile(alternative, policy)
            outputs.append(
                Output(index, node, rule.head, names, rule.label, rule.span, first, rule.alarm)
            )
    nodes = tuple(binarizer.nodes)
    return Network(
        nodes=nodes,
        outputs=tuple(outputs),
        horizons=_horizons(nodes, {o.input for o in outputs}),
        prefixes=tuple(sorted(program.prefixes.items())),
    )


def apply_properties(rule: EventRule, policy: str) -> tuple[Pattern, str]:
    body: Pattern = rule.body
    for name, value in rule.properties:
        if name in WINDOW_PROPERTIES:
            size = _number(value)
            if size is None or size <= 0:
                raise RuleCompileError(
                    [Diagnostic(f"rule window must be a positive number, not {value}", rule.span)]
                )
            body = Window(body, size)
        elif name in POLICY_PROPERTIES:
            text = value.name if isinstance(value, Atom) else None
            if text not in POLICIES:
                raise RuleCompileError(
                    [Diagnostic(f"unknown consumption policy '{text}' for this rule", rule.span)]
                )
            policy = str(text)
    return body, policy


def garbage_window(program: Program) -> Time | None:
    """ETALIS's general garbage collection as a window on every rule: with the directives
    ``garbage_control(general).`` and ``garbage_window(W).`` (or ``set_etalis_flag(...)`` of
    them), partial matches older than ``W`` are dropped, i.e. an occurrence lasts at most ``W``.

    >>> from reasoner.language.parser import parse
    >>> garbage_window(parse("garbage_control(general). garbage_window(2). c <- a SEQ b."))
    2
    """
    flags: dict[str, Term] = {}
    for stmt in program.statements:
        match stmt:
            case Directive(Compound("set_etalis_flag", (Atom(name), value))):
                flags[name] = value
            case Directive(Compound(name, (value,))):
                flags[name] = value
    size = _number(flags.get("garbage_window", Number(-1)))
    general = flags.get("garbage_control") == Atom("general")
    return size if general and size is not None and size > 0 else None


def _number(term: Term) -> Time | None:
    return term.value if isinstance(term, Number) else None


def _horizons(nodes: tuple[NodeSpec, ...], roots: set[int]) -> tuple[tuple[int, Time | None], ...]:
    """Window push-down: the horizon of each node that stores occurrences.

    An occurrence stored at a node can only end up in outputs that start no later than it
    starts and end now or later, so once ``now - start`` exceeds every window above it, it
    can never contribute again. ``None`` means no window bounds it.
    """
    reach: dict[int, float | Time] = {r: inf for r in roots}  # node -> horizon of its output

    def widen(node: int, value: float | Time) -> None:
        reach[node] = max(reach.get(node, value), value)

    stored: list[tuple[int, Time | None]] = []
    for spec in reversed(nodes):  # users come after their inputs
        own = reach.get(spec.id, inf)
        inner = own if spec.bound is None else min(own, spec.bound)
        for child in spec.inputs:
            widen(child, inner)
        if spec.stores:
            stored.append((spec.id, None if inner == inf else inner))
    return tuple(sorted(stored))
