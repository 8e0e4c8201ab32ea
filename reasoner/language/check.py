"""Semantic checks of a parsed program, all collected and reported together.

Errors: unbound head variables, unbound ``WHERE`` variables, non-positive windows, ``STAR_TIMES``
outside the right of ``SEQ``, unknown aggregate functions, negation (or aggregation, or
``FORALL_SEQ``'s second operand) through recursion.
Warnings: one event name used with different arities, ``event_rule_property`` for an unknown label,
and rules that can never fire (:mod:`reasoner.language.never`).
The binding rules are those of ``SEMANTICS.md`` / ``docs/language.md``; :func:`bound_variables`
is exported for the compiler.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence, Set
from fractions import Fraction

from reasoner.errors import Diagnostic, RuleCompileError
from reasoner.language.aggregates import aggregate_function, group_variables
from reasoner.language.ast import (
    PATTERN_GOALS,
    Aggregate,
    Alarm,
    Atom,
    Binary,
    Compound,
    Directive,
    EventAtom,
    EventRule,
    Iri,
    ListTerm,
    Multiply,
    Not,
    Number,
    Pattern,
    PName,
    Program,
    RdfEvent,
    Span,
    Star,
    StaticRule,
    String,
    Term,
    TimePoint,
    Var,
    Where,
    Window,
    term_variables,
    variable_names,
    walk,
)
from reasoner.language.never import never_fires
from reasoner.language.operators import OPERATORS

#: Rule properties whose value is a window size and must be positive.
WINDOW_PROPERTIES = frozenset({"event_rule_window", "window"})


def bound_variables(pattern: Pattern) -> frozenset[str]:
    """The names of the variables every occurrence of ``pattern`` gives a value.

    An event binds its variables (never the anonymous ``_``); ``OR`` binds what both sides
    bind; ``CNOT``/``FNOT`` what their left side binds; the other binary operators what either
    side binds; ``NOT(q).[p1, p2]`` what ``p1`` and ``p2`` bind; windows what their pattern binds;
    ``p WHERE c`` what ``p`` binds plus what ``c`` binds (:func:`condition_bindings`; not the
    ``_Name`` variables, local to ``c``); ``EVENT_MULTIPLY`` its pattern's plus the goal's
    variables; ``p SEQ aggregate(...)`` what ``p`` binds and the result variable; a sliding
    ``aggregate(...)`` its group (its pattern's variables but the aggregated one) and the
    result; ``STAR_TIMES`` nothing (it may repeat zero times).

    Args:
        pattern: an event pattern.

    Returns:
        A frozen set of variable names.

    >>> from reasoner.language.ast import Var
    >>> sorted(bound_variables(Binary("or", EventAtom("a", (Var("X"), Var("Y"))),
    ...                                      EventAtom("b", (Var("X"),)))))
    ['X']
    """
    match pattern:
        case EventAtom(_, args):
            return frozenset(variable_names(*args))
        case TimePoint() | Star():
            return frozenset()
        case Binary("or", left, right):
            return bound_variables(left) & bound_variables(right)
        case Binary(op, left, _) if OPERATORS[op].negation:
            return bound_variables(left)
        case Binary("seq", left, Aggregate(result=result)):
            return bound_variables(left) | {result.name}
        case Binary(_, left, right):
            return bound_variables(left) | bound_variables(right)
        case Not(_, left, right):
            return bound_variables(left) | bound_variables(right)
        case Where(inner, condition):
            inner_bound = bound_variables(inner)
            binds, _ = condition_bindings(condition, inner_bound)
            return inner_bound | {name for name in binds if not name.startswith("_")}
        case Window(inner):
            return bound_variables(inner)
        case Multiply(inner, goal):
            return bound_variables(inner) | frozenset(variable_names(goal))
        case Aggregate(pattern=inner, result=result) as aggregate:
            group = group_variables(aggregate, bound_variables(inner))
            return frozenset({*group, result.name})
    raise TypeError(f"not a pattern: {pattern!r}")


#: Whether a call can be made with the variables given bound (see :func:`condition_bindings`).
Ready = Callable[[Term, Set[str]], bool]

#: Goals that test (or act: ``do`` and the printing goals) and bind nothing: every variable
#: in them must be bound before them, except in what is printed (a variable not bound yet
#: prints as ``_``, as Prolog prints a fresh one).
TESTS = frozenset(
    {"<", ">", "=<", ">=", "=:=", "=\\=", "==", "\\==", "\\=", "\\+", "not"}
    | {"@<", "@>", "@=<", "@>="}
    | {"do", "write", "print", "writeln"}
)


def condition_bindings(
    condition: Term, bound: frozenset[str], ready: Ready | None = None
) -> tuple[frozenset[str], list[Var]]:
    """What a WHERE condition binds, read left to right as Prolog runs it, given the
    variables ``bound`` before it; and the variables it uses before anything binds them.

    A knowledge or static predicate binds its arguments; ``X = t`` binds the variables of one
    side when the other side's are bound (two compounds of the same functor: argument by
    argument); ``X is E`` binds X and needs E's variables; comparisons, ``\\+`` and ``not``
    bind nothing and need their variables; ``A ; B`` binds what both branches bind; a printing
    goal (``write/1``, ``print/1``, ``writeln/1``) may print a variable that the condition binds
    later (it prints as ``_``). ``_`` and ``_Name`` variables never count as used unbound.
    Given ``ready``, a call binds nothing when ``ready(call, bound)`` is false (a predicate
    answered per call, asked before what it needs is bound: ``knowledge/datalog/modes.py``).

    Args:
        condition: the condition term.
        bound: the variables bound before it (by the pattern).
        ready: whether a call can be made with the variables bound (default: every call).
    Returns:
        The variables bound after it (``bound`` included), and the variables used unbound.

    >>> from reasoner.language.parser import parse
    >>> rule = parse("c(S, R) <- a(S, T) WHERE (region(S, R), T > R, U < 1).").event_rules[0]
    >>> binds, unbound = condition_bindings(rule.body.condition, frozenset({"S", "T"}))
    >>> sorted(binds), [v.name for v in unbound]
    (['R', 'S', 'T'], ['U'])
    """
    unbound: list[Var] = []
    printed: list[Var] = []
    binds = _binds(condition, bound, unbound, printed, ready)
    # A printed variable may be bound later (it prints as ``_``), not never.
    return binds, unbound + [v for v in printed if v.name not in binds]


def _binds(
    goal: Term,
    bound: frozenset[str],
    unbound: list[Var],
    printed: list[Var],
    ready: Ready | None,
) -> frozenset[str]:
    def names(term: Term) -> frozenset[str]:
        return frozenset(variable_names(term))

    def need(*terms: Term) -> None:
        for term in terms:
            for var in term_variables(term):
                if not var.name.startswith("_") and var.name not in bound:
                    unbound.append(var)

    match goal:
        case Compound(",", (first, second)):
            return _binds(
                second, _binds(first, bound, unbound, printed, ready), unbound, printed, ready
            )
        case Compound(";", (Compound("->", (test, then)), otherwise)):
            taken = _binds(
                then, _binds(test, bound, unbound, printed, ready), unbound, printed, ready
            )
            return taken & _binds(otherwise, bound, unbound, printed, ready)
        case Compound(";", (first, second)):
            return _binds(first, bound, unbound, printed, ready) & _binds(
                second, bound, unbound, printed, ready
            )
        case Compound("->", (test, then)):
            return _binds(
                then, _binds(test, bound, unbound, printed, ready), unbound, printed, ready
            )
        case Compound("write" | "print" | "writeln", (shown,)) | Compound(
            "do", (Compound("write" | "print" | "writeln", (shown,)),)
        ):
            printed.extend(
                v for v in term_variables(shown) if v.name not in bound and v.name[0] != "_"
            )
            return bound
        case Compound("do", (Compound(",", (first, second)),)):
            _binds(Compound("do", (first,)), bound, unbound, printed, ready)
            return _binds(Compound("do", (second,)), bound, unbound, printed, ready)
        case Compound(functor, args) if functor in TESTS:
            need(*args)
            return bound
        case Compound("is", (target, expression)):
            need(expression)
            return bound | names(target)
        case Compound("=", (Compound(f, left), Compound(g, right))) if (f, len(left)) == (
            g,
            len(right),
        ):
            for a, b in zip(left, right, strict=True):
                bound = _binds(Compound("=", (a, b)), bound, unbound, printed, ready)
            return bound
        case Compound("=", (left, right)):
            if names(left) <= bound or names(right) <= bound:
                return bound | names(left) | names(right)
            need(left, right)
            return bound
        case Compound(_, args):
            return bound if ready and not ready(goal, bound) else bound | names(goal)
    return bound


def check(
    program: Program, unread_heads: bool = False, others: Program | None = None
) -> list[Diagnostic]:
    """Every problem of ``program``: errors and warnings, in file order per kind.

    Args:
        program: a parsed program (``program.source`` supplies the source lines).
        unread_heads: also warn about each head no rule reads (normally an output).
        others: the rule files checked together with this one: events they derive or read are
            known names (their own problems are theirs to report).

    Returns:
        The diagnostics; an empty list for a valid program.

    >>> from reasoner.language.parser import parse
    >>> [d.message for d in check(parse("c(X, Y) <- a(X)."))]
    ["unbound variable 'Y' in the rule head"]
    """
    lines = program.source.splitlines() if program.source else []
    out = _problems(program)
    out.extend(_arity_warnings(program))
    out.extend(_property_warnings(program))
    out.extend(never_fires(program, unread_heads, others))
    return [_diagnostic(message, span, severity, lines) for message, span, severity in out]


def check_program(program: Program) -> Program:
    """Check ``program`` and return it unchanged if it has no errors.

    Args:
        program: a parsed program.

    Returns:
        ``program`` itself.

    Raises:
        RuleCompileError: with every error diagnostic (and the warnings after them).

    >>> from reasoner.language.parser import parse
    >>> check_program(parse("c(X) <- a(X).")).event_rules[0].head.name
    'c'
    """
    # The other passes only warn (the typo search is quadratic in the event names): they run
    # only to go with errors.
    if any(severity == "error" for _, _, severity in _problems(program)):
        diagnostics = check(program)
        errors = [d for d in diagnostics if d.severity == "error"]
        raise RuleCompileError(errors + [d for d in diagnostics if d.severity != "error"])
    return program


# ----------------------------------------------------------------------------- per rule

_Problem = tuple[str, Span | None, str]


def _problems(program: Program) -> list[_Problem]:
    """What the passes that can find errors find (warnings too)."""
    out: list[_Problem] = []
    for rule in program.event_rules:
        out.extend(_rule_problems(rule))
    out.extend(_prolog_problems(program))
    for mapping in program.rdf_events:
        out.extend(_rdf_event_problems(mapping))
    out.extend(_recursion_problems(program))
    return out


def _alarm_time_ok(alarm: Alarm) -> bool:
    """Whether an alarm's time can be a time: anything but a constant that is not a number
    (or, for a delay, not positive)."""
    match alarm.time:
        case Number(value):
            return alarm.absolute or value > 0
        case Atom() | String() | ListTerm() | Iri() | PName():
            return False
    return True


def _rule_problems(rule: EventRule) -> Iterator[_Problem]:
    alarm = () if rule.alarm is None else (rule.alarm.time,)
    if rule.alarm is not None and not _alarm_time_ok(rule.alarm):
        yield (
            f"{rule.alarm.functor}'s time must be "
            + ("a number" if rule.alarm.absolute else "a positive number of seconds")
            + f", not {_show(rule.alarm.time)}",
            getattr(rule.alarm.time, "span", None) or rule.span,
            "error",
        )
    head = (*rule.head.args, *alarm)
    yield from _unbound(head, bound_variables(rule.body), "rule", rule.head.span or rule.span)
    yield from _pattern_problems(rule.body, rule.span, right_of_seq=False)
    for name, value in rule.properties:
        if name in WINDOW_PROPERTIES and not _positive(value):
            yield (f"window size must be positive, found {_show(value)}", rule.span, "error")


#: Prolog that rule files cannot use: conditions and static rules are Datalog.
PROLOG_ONLY = {"!": "the cut '!'", "=..": "'=..' (univ)"}


def _prolog_problems(program: Program) -> Iterator[_Problem]:
    # (a fact table's facts have no body)
    goals: list[Term] = [
        g for rule in program.clauses if isinstance(rule, StaticRule) for g in rule.body
    ]
    for rule in program.event_rules:
        for p in walk(rule.body):
            if isinstance(p, Where):
                goals.append(p.condition)
            elif isinstance(p, Multiply):
                goals.append(p.goal)
    for goal in goals:
        for term in _subterms(goal):
            name = term.name if isinstance(term, Atom) else getattr(term, "functor", None)
            if name in PROLOG_ONLY:
                yield (
                    f"{PROLOG_ONLY[name]} is not supported: rule files are not Prolog "
                    "(conditions and static rules are Datalog with built-ins)",
                    term.span,
                    "error",
                )


def _unbound(
    head: Sequence[Term], bound: Set[str], what: str, span: Span | None
) -> Iterator[_Problem]:
    """An error for each variable of a ``what`` head not in ``bound``, once each."""
    reported: set[str] = set()
    for arg in head:
        for var in term_variables(arg):
            if var.name not in bound and var.name not in reported:
                reported.add(var.name)
                yield (
                    f"unbound variable '{var.name}' in the {what} head",
                    var.span or span,
                    "error",
                )


def _subterms(term: Term) -> Iterator[Term]:
    yield term
    if isinstance(term, Compound):
        for arg in term.args:
            yield from _subterms(arg)


def _rdf_event_problems(mapping: RdfEvent) -> Iterator[_Problem]:
    # Occurring in the body is what "bound" can mean for a goal; a variable left unbound in a
    # branch is caught per graph, which is then rejected (docs/rdf-streams.md).
    body = {v.name for goal in mapping.body for v in term_variables(goal)}
    span = mapping.head.span or mapping.span
    yield from _unbound(mapping.head.args, body, "rdf_event", span)


def _pattern_problems(p: Pattern, where: Span | None, right_of_seq: bool) -> Iterator[_Problem]:
    span = p.span or where
    match p:
        case EventAtom(name, args) if (name, len(args)) in PATTERN_GOALS:
            yield (
                f"ETALIS's {name}(Goal) is supported only as the right operand of SEQ "
                f"(p SEQ {name}(Goal) means p WHERE Goal): it would read as an event that "
                "never occurs",
                span,
                "error",
            )
        case Where(inner, condition):
            _, unbound = condition_bindings(condition, bound_variables(inner))
            reported: set[str] = set()
            for var in unbound:
                if var.name not in reported:
                    reported.add(var.name)
                    yield (f"unbound variable '{var.name}' in WHERE", var.span or span, "error")
            yield from _pattern_problems(inner, span, False)
        case Window(inner, size):
            if not _positive(Number(size)):
                yield (f"window size must be positive, found {_show(Number(size))}", span, "error")
            yield from _pattern_problems(inner, span, False)
        case Multiply(inner):
            yield from _pattern_problems(inner, span, False)
        case Star(inner):
            if not right_of_seq:
                yield ("STAR_TIMES may only be the right operand of SEQ", span, "error")
            yield from _pattern_problems(inner, span, False)
        case Aggregate(function, inner, _, window):
            try:
                aggregate_function(function)
            except ValueError as error:
                yield (str(error), span, "error")
            if window is not None and not _positive(Number(window[1])):
                yield (
                    f"aggregate window must be positive, found {_show(Number(window[1]))}",
                    span,
                    "error",
                )
            yield from _pattern_problems(inner, span, False)
        case Binary(op, left, right):
            yield from _pattern_problems(left, span, False)
            yield from _pattern_problems(right, span, op == "seq")
        case Not(negated, left, right):
            for part in (negated, left, right):
                yield from _pattern_problems(part, span, False)


def _positive(value: Term) -> bool:
    if not isinstance(value, Number):
        return False
    v = value.value
    return isinstance(v, int | float | Fraction) and not isinstance(v, bool) and v > 0


def _show(value: Term) -> str:
    from reasoner.language.printer import to_source  # printer imports the parser: keep lazy

    return to_source(value)


# -------------------------------------------------------------- negation through recursion


def _recursion_problems(program: Program) -> Iterator[_Problem]:
    """Reject a non-monotonic dependency (:func:`event_dependencies`) that leads back to its
    own rule's head."""
    edges: dict[str, set[str]] = {}
    negative: list[tuple[str, str, str, EventRule]] = []
    for rule in program.event_rules:
        head = rule.head.name
        for name, how in event_dependencies(rule.body):
            edges.setdefault(head, set()).add(name)
            if how is not None:
                negative.append((head, name, how, rule))
    seen: set[tuple[str, ...]] = set()
    for head, dep, how, rule in negative:
        path = _path(dep, head, edges)
        if path is None:
            continue
        cycle = (head, *path)
        key = tuple(sorted(set(cycle)))
        if key in seen:
            continue
        seen.add(key)
        yield (f"{how} through recursion: {' -> '.join(cycle)}", rule.span, "error")


#: How :func:`event_dependencies` names a name read non-monotonically.
NEGATION = "negation"
FORALL_SEQ_SECOND = "FORALL_SEQ's second operand"


def event_dependencies(p: Pattern, how: str | None = None) -> Iterator[tuple[str, str | None]]:
    """Event names a pattern reads, each with None when it is read monotonically, or else
    how: :data:`NEGATION` under a negation (NOT, CNOT, FNOT) or an aggregate, and
    :data:`FORALL_SEQ_SECOND` as FORALL_SEQ's second operand (a pair holds unless an
    occurrence of it ending earlier took the first); the innermost such construct names it.

    >>> from reasoner.language.parser import parse
    >>> (rule,) = parse("d <- a FORALL_SEQ (b CNOT n).").event_rules
    >>> list(event_dependencies(rule.body))
    [('a', None), ('b', "FORALL_SEQ's second operand"), ('n', 'negation')]
    """
    match p:
        case EventAtom(name):
            yield name, how
        case Binary(op, left, right) if OPERATORS[op].negation:
            yield from event_dependencies(left, how)
            yield from event_dependencies(right, NEGATION)
        case Binary("forall_seq", left, right):
            yield from event_dependencies(left, how)
            yield from event_dependencies(right, FORALL_SEQ_SECOND)
        case Binary(_, left, right):
            yield from event_dependencies(left, how)
            yield from event_dependencies(right, how)
        case Not(neg, left, right):
            yield from event_dependencies(neg, NEGATION)
            yield from event_dependencies(left, how)
            yield from event_dependencies(right, how)
        case Aggregate(pattern=inner):
            yield from event_dependencies(inner, NEGATION)
        case Where(inner) | Window(inner) | Multiply(inner) | Star(inner):
            yield from event_dependencies(inner, how)


def _path(start: str, goal: str, edges: dict[str, set[str]]) -> list[str] | None:
    """A shortest path start -> ... -> goal (breadth first), or None."""
    previous: dict[str, str | None] = {start: None}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            if node == goal:
                path: list[str] = []
                step: str | None = node
                while step is not None:
                    path.append(step)
                    step = previous[step]
                return path[::-1]
            for nxt in sorted(edges.get(node, ())):
                if nxt not in previous:
                    previous[nxt] = node
                    following.append(nxt)
        frontier = following
    return None


# ------------------------------------------------------------------------------ warnings


def _arity_warnings(program: Program) -> Iterator[_Problem]:
    first: dict[str, tuple[int, Span | None]] = {}
    warned: set[tuple[str, int]] = set()
    atoms = [(m.head, m.span) for m in program.rdf_events] + [
        (atom, rule.span)
        for rule in program.event_rules
        for atom in (rule.head, *_event_atoms(rule.body))
    ]
    for atom, where in atoms:
        arity = len(atom.args)
        known = first.setdefault(atom.name, (arity, atom.span or where))
        if known[0] != arity and (atom.name, arity) not in warned:
            warned.add((atom.name, arity))
            yield (
                f"event '{atom.name}' is used with {known[0]} and with {arity} arguments",
                atom.span or where,
                "warning",
            )


def _event_atoms(p: Pattern) -> Iterator[EventAtom]:
    return (q for q in walk(p) if isinstance(q, EventAtom))


def _property_warnings(program: Program) -> Iterator[_Problem]:
    for d in program.directives:
        match d:
            case Directive(Compound("event_rule_property", (Atom(label), _, _))):
                yield (
                    f"event_rule_property names rule '{label}', but no rule has that label",
                    d.span,
                    "warning",
                )


def _diagnostic(message: str, span: Span | None, severity: str, lines: list[str]) -> Diagnostic:
    line = lines[span.line - 1] if span is not None and 0 < span.line <= len(lines) else None
    return Diagnostic(message, span, severity, line)
