"""A compiled program: everything an engine runs that does not depend on the events seen.

:func:`compile_rules` parses, checks and compiles a program once for one set of options (and
evaluates its knowledge); every engine built from the result (:meth:`Engine.of
<reasoner.runtime.engine.Engine.of>`) only instantiates it: a copy of the program's template
nodes (:mod:`reasoner.runtime.instances`: built, with their generated code, fused dispatchers
and condition goals, by the first engine of it), bound to the code compiled for the template.
One compiled program serves many keys, each with its own state, at the cost of copying the
nodes (docs/benchmarks.md: well under a millisecond per key).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reasoner.compiler.compile import Options, compile_program
from reasoner.compiler.network import Network
from reasoner.knowledge.base import Knowledge
from reasoner.knowledge.program import check_conditions, program_knowledge
from reasoner.language.ast import Program
from reasoner.language.loader import Rules, load_rules
from reasoner.runtime.instances import Template
from reasoner.runtime.options import EngineOptions
from reasoner.runtime.rulechanges import refuse_static_changes


@dataclass(frozen=True, slots=True)
class CompiledProgram:
    """A program compiled for one set of engine options.

    Attributes:
        program: the rules and static clauses.
        options: the engine options it was compiled for.
        network: its compiled network (node ids from 0).
        knowledge: what its conditions ask: its own facts and Horn rules evaluated, or the
            knowledge it was compiled against.
        own_facts: whether ``knowledge`` is the program's own (rebuilt as actions change
            static rules).
        template: its nodes, built once for every engine of it to copy.
    """

    program: Program
    options: EngineOptions
    network: Network
    knowledge: Knowledge
    own_facts: bool
    template: Template = field(default_factory=Template, compare=False, repr=False)


def compile_rules(
    rules: Rules, options: EngineOptions | None = None, knowledge: Knowledge | None = None
) -> CompiledProgram:
    """Parse, check and compile ``rules`` once (RuleSyntaxError, RuleCompileError or
    EngineError as :class:`~reasoner.runtime.engine.Engine` raises them).

    Args:
        rules: rule text, ``.event`` paths, or parsed programs.
        options: the engine options (None: the defaults).
        knowledge: what the conditions ask (None: the program's own facts and rules).
    Returns:
        The compiled program.

    >>> from reasoner.runtime.engine import Engine
    >>> from reasoner.runtime.events import Event
    >>> compiled = compile_rules("c <- a SEQ b.")
    >>> keys = [Engine.of(compiled) for _ in range(2)]  # two keys, one compilation
    >>> _ = keys[0].push(Event.at("a", (), 1))
    >>> keys[0].push(Event.at("b", (), 2)), keys[1].push(Event.at("b", (), 2))
    ([Event(name='c', args=(), start=1, end=2)], [])
    """
    options = options or EngineOptions()
    program = load_rules(rules)
    if knowledge is not None:
        refuse_static_changes(program)
    network = compile_program(program, Options(options.policy))
    if knowledge is None:
        return CompiledProgram(program, options, network, program_knowledge(program), True)
    check_conditions(knowledge, program)
    return CompiledProgram(program, options, network, knowledge, False)
