"""The typed abstract syntax of the ETALIS Language for Events.

Every node is a frozen, slotted dataclass. ``span`` records where the node came from and is
ignored by ``==`` so that a parsed AST equals one built by hand or by the Python rule API.

Three families of nodes:

* terms (Prolog-style data): :class:`Var`, :class:`Atom`, :class:`String`, :class:`Number`,
  :class:`Iri`, :class:`PName`, :class:`Compound`, :class:`ListTerm`. Arithmetic such as
  ``P1 + P2`` is a :class:`Compound` with functor ``"+"``; a goal conjunction ``A, B`` is a
  :class:`Compound` with functor ``","``.
* event patterns: :class:`EventAtom`, :class:`TimePoint`, :class:`Binary`, :class:`Not`,
  :class:`Where`, :class:`Window`, :class:`Multiply`, :class:`Aggregate`, :class:`Star`.
* statements: :class:`EventRule`, :class:`StaticRule` (facts have an empty body),
  :class:`Directive`, :class:`RdfEvent` (input-graph mappings), collected in a :class:`Program`;
  a run of ground facts may be one :class:`Facts` table (a fact file's, without a node per
  fact).

``dump(node)`` gives the deterministic text form used by golden tests and ``--emit ast``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields, replace
from fractions import Fraction

from reasoner.language.operators import Operator
from reasoner.spans import Span


def span_field() -> Span | None:
    """A node's ``span`` field: optional, and never part of its equality or repr."""
    return field(default=None, compare=False, repr=False)


# ----------------------------------------------------------------------------- terms


@dataclass(frozen=True, slots=True)
class Var:
    """A logic variable; ``_`` (and names starting with ``_``) are anonymous."""

    name: str
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Atom:
    """A Prolog atom: ``go``, ``'GO'``, ``none``, ``[]``."""

    name: str
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class String:
    """A double-quoted string literal."""

    value: str
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Number:
    """An integer, float or exact rational number."""

    value: int | float | Fraction
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Iri:
    """A full IRI written ``<http://...>``."""

    value: str
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class PName:
    """A prefixed name ``wt:Diablo``; resolved to an IRI with the program's prefixes."""

    prefix: str
    local: str
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Compound:
    """A compound term ``f(t1, ..., tn)``; operators (``+``, ``<``, ``,``, ``\\+``) included.

    A prefixed predicate ``wt:speed(S, V)`` has functor ``"wt:speed"``.
    """

    functor: str
    args: tuple[Term, ...]
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class ListTerm:
    """A Prolog list ``[a, b | T]`` (``tail`` is None for a proper list)."""

    items: tuple[Term, ...]
    tail: Term | None = None
    span: Span | None = span_field()


Term = Var | Atom | String | Number | Iri | PName | Compound | ListTerm

#: ETALIS's goals reading the interval of the occurrence a condition is on, and where the
#: condition finds it (keys no variable name can take): ``t1/1`` its start, ``t2/1`` its
#: end, ``current_datime/1`` ETALIS's clock when the condition runs, which is the end too.
INTERVAL_GOALS = {"t1": "$start", "t2": "$end", "current_datime": "$end"}

#: ETALIS's goals written as operands of a pattern: ``p SEQ prolog(Goal)`` is ``p WHERE Goal``.
PATTERN_GOALS = frozenset({("prolog", 1), ("check", 1)})


#: ETALIS's actions changing the rules while the stream runs: ``ins_event_rule(Rule)`` and
#: ``del_event_rule(Label or Rule)`` the event rules, ``ins_static_rule(Clause)`` and
#: ``del_static_rule(Clause)`` the static ones.
RULE_CHANGES = ("ins_event_rule", "del_event_rule", "ins_static_rule", "del_static_rule")


def rule_changes(goal: Term) -> Iterator[Compound]:
    """The rule-changing actions ``goal`` runs, in order: ``do(ins_event_rule(R))``, also in
    a conjunction of actions ``do((A, B))``.

    >>> change = Compound("del_event_rule", (Atom("r1"),))
    >>> goal = Compound(",", (Var("X"), Compound("do", (Compound(",", (Atom("nl"), change)),))))
    >>> list(rule_changes(goal)) == [change]
    True
    """
    match goal:
        case Compound("do", (actions,)):
            for action in conjuncts(actions):
                match action:
                    case Compound(name, (_,)) if name in RULE_CHANGES:
                        yield action
        case Compound(_, args):
            for arg in args:
                yield from rule_changes(arg)


def term_variables(term: Term) -> Iterator[Var]:
    """Every variable occurrence in a term, left to right (anonymous ``_`` included).

    >>> [v.name for v in term_variables(Compound("f", (Var("X"), ListTerm((Var("_"),), Var("T")))))]
    ['X', '_', 'T']
    """
    match term:
        case Var():
            yield term
        case Compound(_, args):
            for a in args:
                yield from term_variables(a)
        case ListTerm(items, tail):
            for i in items:
                yield from term_variables(i)
            if tail is not None:
                yield from term_variables(tail)


def variable_names(*terms: Term) -> list[str]:
    """The named variables of the terms in first-occurrence order (``_`` excluded).

    >>> variable_names(Compound("f", (Var("X"), Var("_"), Var("Y"))), Var("X"))
    ['X', 'Y']
    """
    names: list[str] = []
    for term in terms:
        for var in term_variables(term):
            if var.name != "_" and var.name not in names:
                names.append(var.name)
    return names


def conjuncts(goal: Term) -> list[Term]:
    """The goals of a conjunction ``A, B, ...`` in order (a single goal for any other term).

    >>> goal = Compound(",", (Atom("a"), Compound(",", (Atom("b"), Atom("c")))))
    >>> [g.name for g in conjuncts(goal)]
    ['a', 'b', 'c']
    """
    if isinstance(goal, Compound) and goal.functor == "," and len(goal.args) == 2:
        return conjuncts(goal.args[0]) + conjuncts(goal.args[1])
    return [goal]


def conjunction(goals: Sequence[Term]) -> Term:
    """The conjunction ``A, B, ...`` of one or more goals (the inverse of :func:`conjuncts`)."""
    out = goals[-1]
    for goal in reversed(goals[:-1]):
        out = Compound(",", (goal, out))
    return out


# -------------------------------------------------------------------------- patterns


@dataclass(frozen=True, slots=True)
class EventAtom:
    """An event (atomic or derived) ``name(t1, ..., tn)`` in a pattern or a rule head."""

    name: str
    args: tuple[Term, ...] = ()
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class TimePoint:
    """A time point ``q`` used as a virtual event at time q (e.g. ``p DURING (0 SEQ 6)``)."""

    value: int | float | Fraction
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Binary:
    """``left OP right`` for OP an :data:`~reasoner.language.operators.Operator`."""

    op: Operator
    left: Pattern
    right: Pattern
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Not:
    """``NOT(negated).[left, right]``: left SEQ right with no ``negated`` strictly between."""

    negated: Pattern
    left: Pattern
    right: Pattern
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Where:
    """``pattern WHERE condition``; the condition is a goal term (conjunction with ``,``)."""

    pattern: Pattern
    condition: Term
    span: Span | None = span_field()


#: Seconds per window unit.
UNITS: dict[str, int] = {"s": 1, "min": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True, slots=True)
class Window:
    """``(pattern).size``: occurrences lasting at most ``size`` time units.

    ``unit`` keeps the written unit (``"h"``, ``"min"``, ``"s"``, ``"d"``) for printing;
    ``size`` is already converted to seconds when a unit was written.
    """

    pattern: Pattern
    size: int | float | Fraction
    unit: str | None = None
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Multiply:
    """ETALIS's ``pattern 'event_multiply' goal``: one occurrence per solution of the goal."""

    pattern: Pattern
    goal: Term
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Aggregate:
    """ETALIS's ``aggregate(function, pattern, Result)``.

    ``function`` is e.g. ``Atom("count")`` or ``Compound("sum", (Var("X"),))``; ``window``
    holds the optional sliding window (``("count", N)`` or ``("time", seconds)``).
    """

    function: Term
    pattern: Pattern
    result: Var
    window: tuple[str, int | float | Fraction] | None = None
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Star:
    """ETALIS's postfix ``pattern STAR_TIMES``: zero or more repetitions of ``pattern``.

    Only meaningful as the right operand of ``SEQ`` (``a SEQ b STAR_TIMES``); see
    ``docs/language.md`` for its interval semantics.
    """

    pattern: Pattern
    span: Span | None = span_field()


Pattern = EventAtom | TimePoint | Binary | Not | Where | Window | Multiply | Aggregate | Star


def subpatterns(pattern: Pattern) -> tuple[Pattern, ...]:
    """The patterns directly inside ``pattern``, as written (``NOT``: negated, left, right).

    >>> [p.name for p in subpatterns(Binary("seq", EventAtom("a"), EventAtom("b")))]
    ['a', 'b']
    """
    match pattern:
        case Binary(_, left, right):
            return (left, right)
        case Not(negated, left, right):
            return (negated, left, right)
        case Where(inner) | Window(inner) | Multiply(inner) | Star(inner):
            return (inner,)
        case Aggregate(pattern=inner):
            return (inner,)
    return ()


def with_subpatterns(pattern: Pattern, inner: Sequence[Pattern]) -> Pattern:
    """``pattern`` with the patterns directly inside it replaced, in :func:`subpatterns` order.

    >>> seq = Binary("seq", EventAtom("a"), EventAtom("b"))
    >>> dump(with_subpatterns(seq, [TimePoint(1), EventAtom("c")]))
    'Binary(op=seq, left=TimePoint(value=1), right=EventAtom(name=c, args=[]))'
    """
    match pattern:
        case Binary():
            return replace(pattern, left=inner[0], right=inner[1])
        case Not():
            return replace(pattern, negated=inner[0], left=inner[1], right=inner[2])
        case Where() | Window() | Multiply() | Star() | Aggregate():
            return replace(pattern, pattern=inner[0])
    return pattern


def walk(pattern: Pattern) -> Iterator[Pattern]:
    """``pattern`` and every pattern inside it, outer before inner, left to right.

    >>> [type(p).__name__ for p in walk(Window(Binary("seq", EventAtom("a"), TimePoint(3)), 5))]
    ['Window', 'Binary', 'EventAtom', 'TimePoint']
    """
    yield pattern
    for inner in subpatterns(pattern):
        yield from walk(inner)


def event_arities(program: Program) -> dict[str, set[int]]:
    """The argument counts of every event name the program's event rules read or derive.

    >>> event_arities(Program((EventRule(EventAtom("c", (Var("X"),)), EventAtom("a")),)))
    {'c': {1}, 'a': {0}}
    """
    arities: dict[str, set[int]] = {}
    for rule in program.event_rules:
        atoms = [rule.head, *(p for p in walk(rule.body) if isinstance(p, EventAtom))]
        for atom in atoms:
            arities.setdefault(atom.name, set()).add(len(atom.args))
    return arities


# ------------------------------------------------------------------------ statements


@dataclass(frozen=True, slots=True)
class Alarm:
    """ETALIS's timer on a rule's head (``exceptionAlarm(Head, Delay) <- body``, or with
    ``absolute``, ``exceptionAlarmAbsoluteDatime(Head, Time)``): the head is derived when the
    stream's clock reaches ``end + Delay`` (or ``Time``), not when the body is detected."""

    time: Term
    absolute: bool = False

    @property
    def functor(self) -> str:
        """ETALIS's name for it."""
        return "exceptionAlarmAbsoluteDatime" if self.absolute else "exceptionAlarm"


#: ETALIS's alarm heads by functor: whether the time is absolute.
ALARMS = {"exceptionAlarm": False, "exceptionAlarmAbsoluteDatime": True}


@dataclass(frozen=True, slots=True)
class EventRule:
    """``[label 'rule:'] head <- body.`` with optional rule properties.

    ``properties`` holds ``(name, value)`` pairs such as ``("event_rule_window", Number(3))``
    or ``("consumption_policy", Atom("recent"))``, from the label's list or from
    ``event_rule_property/3`` directives. ``alarm``: the head is derived later (ETALIS's
    ``exceptionAlarm(head, Delay) <- body``).
    """

    head: EventAtom
    body: Pattern
    label: str | None = None
    properties: tuple[tuple[str, Term], ...] = ()
    span: Span | None = span_field()
    alarm: Alarm | None = field(default=None, metadata={"dump": "when set"})


@dataclass(frozen=True, slots=True)
class StaticRule:
    """A Horn clause ``head :- g1, ..., gn.``; a fact has ``body == ()``."""

    head: Term
    body: tuple[Term, ...] = ()
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class Directive:
    """``:- goal.`` or an ETALIS directive fact such as ``print_trigger(a/1).``"""

    goal: Term
    span: Span | None = span_field()


@dataclass(frozen=True, slots=True)
class RdfEvent:
    """``rdf_event head :- g1, ..., gn.``: how an input RDF graph becomes events.

    One ``head`` event per solution of the goals at the graph's time, where ``rdf(S, P, O)``
    asks the graph's triples and ``time(T)`` its time (see ``docs/rdf-streams.md``).
    """

    head: EventAtom
    body: tuple[Term, ...]
    span: Span | None = span_field()


#: What a :class:`Facts` table stores per argument: ``a`` an :class:`Atom` (its name), ``s``
#: a :class:`String`, ``n`` a :class:`Number` (their value), ``i`` an :class:`Iri` (the IRI),
#: ``p`` a :class:`PName` (``prefix:local``).
FACT_KINDS = "asnip"


@dataclass(frozen=True, slots=True)
class Facts:
    """A run of ground facts ``f(c1, ..., cn).`` stored as a table: one row per fact, the
    functor, the arguments' kinds (:data:`FACT_KINDS`, one letter each) and their plain values,
    so that a large fact file loads, caches and fills a fact base without an AST node per
    fact. :attr:`rules` gives the facts as the :class:`StaticRule` nodes the parser would
    build (spans included, from ``text``), made on first use.

    Equal to another table with the same rows; ``lines`` (each fact's line), ``text`` (the
    source they were read from: the whole file's) and ``file`` only give the spans.

    >>> table = Facts(("p", "p"), ("an", "an"), (("a", 1), ("b", 2)))
    >>> [dump(rule) for rule in table.rules][0]
    'StaticRule(head=Compound(functor=p, args=[Atom(name=a), Number(value=1)]), body=[])'
    """

    functors: tuple[str, ...]
    kinds: tuple[str, ...]
    args: tuple[tuple[object, ...], ...]
    lines: tuple[int, ...] = field(default=(), compare=False, repr=False)
    text: str | None = field(default=None, compare=False, repr=False)
    file: str | None = field(default=None, compare=False, repr=False)
    _rules: list[tuple[StaticRule, ...]] = field(
        default_factory=list, init=False, compare=False, repr=False
    )

    def __len__(self) -> int:
        return len(self.functors)

    @property
    def rules(self) -> tuple[StaticRule, ...]:
        """The facts as :class:`StaticRule` nodes, in order (made once, then kept: the same
        objects on every call)."""
        if not self._rules:
            # (the scanner re-reads each fact's line for its spans; it imports this module)
            from reasoner.language.facts import fact_rules

            self._rules.append(fact_rules(self))
        return self._rules[0]

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # plain tuples and strings: a cached table loads in one pass of pickle's C code
        return Facts, (self.functors, self.kinds, self.args, self.lines, self.text, self.file)


Statement = EventRule | StaticRule | Directive | RdfEvent | Facts


@dataclass(frozen=True, slots=True, eq=False)
class Program:
    """A parsed rule file (or several, concatenated).

    Runs of ground facts may be kept as :class:`Facts` tables among the statements (the
    parser does so for fact lines): :attr:`static_rules` and :attr:`written` give their facts
    as :class:`StaticRule` nodes, and two programs are equal when their statements as
    written are, tables or not.
    """

    statements: tuple[Statement, ...] = ()
    source: str | None = field(default=None, compare=False, repr=False)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Program):
            return NotImplemented
        return self.statements == other.statements or self.written == other.written

    def __hash__(self) -> int:
        return hash(self.event_rules)  # (equal programs have equal event rules)

    @property
    def written(self) -> tuple[EventRule | StaticRule | Directive | RdfEvent, ...]:
        """The statements with each fact table's facts in its place, one :class:`StaticRule`
        each (as the parser builds them without tables)."""
        out: list[EventRule | StaticRule | Directive | RdfEvent] = []
        for s in self.statements:
            if isinstance(s, Facts):
                out.extend(s.rules)
            else:
                out.append(s)
        return tuple(out)

    def without(self, rules: Iterable[StaticRule]) -> Program:
        """The program without its static rules equal to one of ``rules`` (facts of fact
        tables included).

        >>> p = Program((StaticRule(Atom("a")), StaticRule(Atom("b"))))
        >>> p.without([StaticRule(Atom("a"))]).statements
        (StaticRule(head=Atom(name='b'), body=()),)
        """
        gone = set(rules)
        out: list[Statement] = []
        for s in self.statements:
            if isinstance(s, Facts):
                # (the scanner reads a fact into a row; it imports this module)
                from reasoner.language.facts import facts_without

                kept = facts_without(s, gone)
                if kept is not None:
                    out.append(kept)
            elif s not in gone:
                out.append(s)
        return Program(tuple(out))

    @property
    def clauses(self) -> tuple[StaticRule | Facts, ...]:
        """The static rules as stored: fact tables kept whole (no node made per fact)."""
        return tuple(s for s in self.statements if isinstance(s, StaticRule | Facts))

    @property
    def event_rules(self) -> tuple[EventRule, ...]:
        return tuple(s for s in self.statements if isinstance(s, EventRule))

    @property
    def static_rules(self) -> tuple[StaticRule, ...]:
        """Every static rule and fact, fact tables' facts included (see :attr:`clauses`)."""
        return tuple(s for s in self.written if isinstance(s, StaticRule))

    @property
    def directives(self) -> tuple[Directive, ...]:
        return tuple(s for s in self.statements if isinstance(s, Directive))

    @property
    def rdf_events(self) -> tuple[RdfEvent, ...]:
        return tuple(s for s in self.statements if isinstance(s, RdfEvent))

    @property
    def prefixes(self) -> dict[str, str]:
        """Prefixes declared with ``:- prefix(p, 'http://...').``"""
        out: dict[str, str] = {}
        for d in self.directives:
            g = d.goal
            if (
                isinstance(g, Compound)
                and g.functor == "prefix"
                and len(g.args) == 2
                and isinstance(g.args[0], Atom)
                and isinstance(g.args[1], Atom | String | Iri)
            ):
                iri = g.args[1]
                out[g.args[0].name] = iri.name if isinstance(iri, Atom) else iri.value
        return out

    def __add__(self, other: Program) -> Program:
        return Program(self.statements + other.statements)


Node = Term | Pattern | Statement | Program


def dump(node: object) -> str:
    """A deterministic text form of any AST node (spans omitted); a program gives one
    statement per line.

    >>> dump(EventAtom("a", (Var("X"),)))
    'EventAtom(name=a, args=[Var(name=X)])'
    """
    if isinstance(node, Program):
        return "".join(_dump(s) + "\n" for s in node.written)
    if isinstance(node, Facts):
        return "\n".join(_dump(s) for s in node.rules)
    return _dump(node)


def _dump(node: object) -> str:
    match node:
        case tuple() | list():
            return "[" + ", ".join(_dump(x) for x in node) + "]"
        case str():
            return node
        case Fraction():
            return f"{node.numerator}/{node.denominator}"
        case None | bool() | int() | float():
            return repr(node)
        case _ if hasattr(node, "__dataclass_fields__"):
            parts = [
                f"{f.name}={_dump(getattr(node, f.name))}"
                for f in fields(node)  # type: ignore[arg-type]
                if f.compare
                and f.name != "source"
                and (getattr(node, f.name) is not None or "dump" not in f.metadata)
            ]
            return f"{type(node).__name__}({', '.join(parts)})"
        case _:
            return repr(node)
