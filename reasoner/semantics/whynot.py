"""Why didn't it fire? The partial matches that came closest to an expected detection, and what
stopped each.

:func:`why_not` replays a stream through the engine (the run ``reasoner run`` makes), and when
the expected detection is not among what it derived, examines every rule with that head with a
plain evaluator: the reference semantics (:class:`reasoner.semantics.reference.World`) over the
inputs the engine accepted plus everything the engine derived, each event atom of the body traced
so that a match names the events it is made of. The head's given arguments are put into the body
first (``blizzardWarning("KSLC")`` looks at station KSLC only). Then:

* a body event no event matches: *missing*, with the events of that name that do exist; the
  rest of the body is matched without it, to show how far it got;
* else the body relaxed one constraint at a time: a window dropped (*window* exceeded, by how
  much), one ``WHERE`` conjunct or an ``EVENT_MULTIPLY`` goal dropped (*where*: false, with
  the values it saw), a negation dropped (*blocked*, by which events), an operator's time
  relation loosened to ``AND`` (*order*), a variable shared by two operands split in two
  (*join*: which values differed);
  each match of a relaxed body is a near miss, stopped by that one constraint (two at a time
  when no match breaks only one);
* the body matches as written, but the engine derived nothing from it: the consumption policy
  (*consumed*: the event that went to another detection, found by the engine's provenance);
* an event the engine refused (a late one) would complete a match: *rejected* (file:line).

Near misses are ranked by how many events they matched, most first. Input lines skipped as
malformed are listed with the answer: their events are unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reasoner.errors import EventError, ReasonerError
from reasoner.knowledge.base import Knowledge
from reasoner.knowledge.program import program_knowledge
from reasoner.language.ast import EventAtom, Program
from reasoner.modes import Policy, TieBreak
from reasoner.runtime.events import Event
from reasoner.semantics.nearmiss import (
    KINDS,
    Context,
    Inquiry,
    NearMiss,
    Reason,
    Rejection,
    TimeText,
    TracedWorld,
    event_json,
    event_text,
    ranked,
    reason_json,
    rule_place,
    show,
)
from reasoner.semantics.reference import unify
from reasoner.values import Time

if TYPE_CHECKING:
    from reasoner.runtime.engine import Engine

__all__ = ["KINDS", "Answer", "NearMiss", "Reason", "Rejection", "parse_expected", "why_not"]


@dataclass(frozen=True)
class Answer:
    """The answer of :func:`why_not`: the detections that fit the expectation (it fired), else
    the closest near misses (best first) and notes (no rule derives it, it occurred outside the
    time range or with other arguments, skipped input lines)."""

    expected: EventAtom
    between: tuple[Time, Time] | None
    detections: tuple[Event, ...]
    near_misses: tuple[NearMiss, ...] = ()
    notes: tuple[Reason, ...] = ()

    @property
    def fired(self) -> bool:
        return bool(self.detections)

    def to_json(self, time: Callable[[Time], Any] = lambda t: t) -> dict[str, Any]:
        """The answer as JSON data (times through ``time``, e.g. to ISO text)."""
        return {
            "expected": show(self.expected),
            "between": None if self.between is None else [time(t) for t in self.between],
            "fired": self.fired,
            "detections": [event_json(e, time) for e in self.detections],
            "near_misses": [
                {
                    "rule": rule_place(m.rule),
                    "matched": len(m.events),
                    "needed": m.needed,
                    "events": [event_json(e, time) for e in m.events],
                    "start": None if m.start is None else time(m.start),
                    "end": None if m.end is None else time(m.end),
                    "reasons": [reason_json(r) for r in m.reasons],
                }
                for m in self.near_misses
            ],
            "notes": [reason_json(n) for n in self.notes],
        }

    def render(self, time: TimeText = str) -> str:
        """The answer as text for a terminal."""
        head = show(self.expected)
        span = "" if self.between is None else f" between {time(self.between[0])} and "
        span += "" if self.between is None else time(self.between[1])
        if self.fired:
            lines = [f"{head} occurred{span}:"]
            lines += [f"  {event_text(e, time)}" for e in self.detections]
            return "\n".join(lines) + "\n"
        lines = [f"{head} did not occur{span}."]
        if self.near_misses:
            lines.append("The closest partial matches, and what stopped each:")
        for number, miss in enumerate(self.near_misses, 1):
            rule = f"{show(miss.rule.head)} <- ... ({rule_place(miss.rule)})"
            matched = f": {len(miss.events)} of {miss.needed} events matched" if miss.needed else ""
            lines.append(f"{number}. {rule}{matched}")
            if miss.events:
                lines.append("   " + ", ".join(event_text(e, time) for e in miss.events))
            lines.append(f"   stopped: {'; and '.join(r.message for r in miss.reasons)}")
        for note in self.notes:
            lines.append(f"note: {note.message}")
        return "\n".join(lines) + "\n"


def why_not(
    program: Program,
    events: Iterable[Event],
    expect: str | EventAtom,
    *,
    between: tuple[Time, Time] | None = None,
    knowledge: Knowledge | None = None,
    policy: Policy = "unrestricted",
    tie_break: TieBreak = "longer",
    lateness: Time = 0,
    max_span: Time | None = None,
    rejected: Iterable[Rejection] = (),
    locate: Callable[[Event], str | None] | None = None,
    limit: int = 5,
    time: TimeText = str,
) -> Answer:
    """Replay ``events`` and say whether ``expect`` was detected, and if not, why not.

    Args:
        program: the rules.
        events: the input stream (in time order, as for :class:`~reasoner.Engine`).
        expect: the expected detection, e.g. ``'blizzardWarning("KSLC")'``: its name and its
            leading arguments (variables and ``_`` match anything; fewer arguments than the
            head has leave the rest open).
        between: only a detection ending at a time in [T1, T2] counts (events ending after
            T2 are then not processed, and detections after it are not seen).
        knowledge: the background knowledge for WHERE (default: the program's facts and
            Horn rules).
        policy, tie_break, lateness, max_span: as for :class:`~reasoner.Engine`.
        rejected: input lines the reader skipped (listed in the answer; read after the
            replay, so a list the reader fills while ``events`` is consumed will do).
        locate: where an event the engine refuses came from (``file:line``), asked at once.
        limit: how many near misses to give at most.
        time: how times are written in the reasons (e.g. as ISO text).
    Returns:
        The :class:`Answer`.

    >>> from reasoner.language.parser import parse
    >>> rules = parse("c(X) <- (a(X) SEQ b(X)).5.")
    >>> stream = [Event.at("a", (1,), 1), Event.at("b", (1,), 9)]
    >>> why_not(rules, stream, "c(1)").near_misses[0].reason.message
    'the window of 5 was exceeded: it lasted 8, 3 too long'
    """
    from reasoner.runtime.engine import Engine  # the engine loads only when a replay runs

    expected = parse_expected(expect) if isinstance(expect, str) else expect
    engine = Engine(
        program,
        knowledge=knowledge,
        policy=policy,
        tie_break=tie_break,
        lateness=lateness,
        max_span=max_span,
        provenance=True,
    )
    run = _replay(engine, events, between, lateness, locate)
    refused = [*rejected, *run.refused]  # (a reader's list fills while the stream is read)
    kb = knowledge if knowledge is not None else program_knowledge(program)
    fits = [d for d in run.detections if _fits_head(expected, d, program.prefixes)]
    inside = [d for d in fits if between is None or between[0] <= d.end <= between[1]]
    if inside:
        return Answer(expected, between, tuple(inside))
    rules = [
        r
        for r in program.event_rules
        if r.head.name == expected.name and len(r.head.args) >= len(expected.args)
    ]
    notes = _notes(expected, program, bool(rules), run.detections, fits, refused, time)
    context = _context(program, between, run, refused, kb, policy, time)
    misses = [m for rule in rules for m in Inquiry(context, rule, expected, between).near_misses()]
    return Answer(expected, between, (), tuple(ranked(misses)[:limit]), tuple(notes))


@dataclass(frozen=True)
class _Replay:
    """What the engine made of the stream: the events it accepted, those it refused (each
    with where it came from and why) and what it detected, in order."""

    accepted: list[Event]
    refused: list[Rejection]
    detections: list[Event]


def _replay(
    engine: Engine,
    events: Iterable[Event],
    between: tuple[Time, Time] | None,
    lateness: Time,
    locate: Callable[[Event], str | None] | None,
) -> _Replay:
    """Push ``events`` through ``engine`` and flush it.

    Past T2 (and the lateness), only events ending by T2 can matter: they are pushed (the
    engine refuses them as late, with its reason); the rest is read, not processed.
    """
    refused: list[Rejection] = []
    accepted: list[Event] = []
    detections: list[Event] = []
    cutoff = None if between is None else between[1] + lateness
    passed = False
    for count, event in enumerate(events, 1):
        if passed and event.end > between[1]:  # type: ignore[index]
            continue
        passed = cutoff is not None and event.end > cutoff
        try:
            detections += engine.push(event)
        except EventError as error:
            where = (locate(event) if locate else None) or f"input event {count}"
            refused.append(Rejection(where, error.reason, event))
            continue
        accepted.append(event)
    detections += engine.flush()
    return _Replay(accepted, refused, detections)


def _context(
    program: Program,
    between: tuple[Time, Time] | None,
    run: _Replay,
    refused: list[Rejection],
    kb: Knowledge,
    policy: Policy,
    time: TimeText,
) -> Context:
    """What every rule's inquiry reads: the traced world of the events up to the horizon (T2,
    else the last accepted event's end) that the engine accepted or derived, and the refused
    events that end by then."""
    horizon = between[1] if between is not None else max((e.end for e in run.accepted), default=0)
    world = TracedWorld(
        {e for e in (*run.accepted, *run.detections) if e.end <= horizon},
        horizon,
        kb,
        program.prefixes,
    )
    late = [r for r in refused if r.event is None or r.event.end <= horizon]
    return Context(world, kb, program.prefixes, program, policy, tuple(run.detections), late, time)


def _notes(
    expected: EventAtom,
    program: Program,
    derivable: bool,
    detections: list[Event],
    fits: list[Event],
    refused: list[Rejection],
    time: TimeText,
) -> list[Reason]:
    """What the answer says besides its near misses, most telling first: no rule derives the
    expected name (``derivable`` false), it occurred with other arguments, it occurred
    outside the time range (``fits``), and each input line skipped as malformed."""
    notes = []
    if not derivable:
        arities = sorted(
            {len(r.head.args) for r in program.event_rules if r.head.name == expected.name}
        )
        text = f"no rule derives '{expected.name}'"
        if arities:
            given = " or ".join(map(str, arities))
            text += f" with {len(expected.args)} arguments (its rules give {given})"
        notes.append(Reason("missing", text))
    others = [d for d in detections if d.name == expected.name and d not in fits]
    if others:
        text = f"'{expected.name}' occurred with other arguments: {event_text(others[0], time)}"
        text += f" and {len(others) - 1} more" if len(others) > 1 else ""
        notes.append(Reason("other", text, {"detections": [event_json(e) for e in others]}))
    if fits:
        notes.append(_outside(fits, time))
    return notes + [_skipped(r) for r in refused if r.event is None]


def parse_expected(text: str) -> EventAtom:
    """The expected detection ``name(args...)`` written as in a rule head.

    >>> show(parse_expected('blizzardWarning("KSLC", _)'))
    'blizzardWarning("KSLC", _)'
    """
    from reasoner.errors import DiagnosticsError
    from reasoner.language.parser import parse

    try:
        program = parse(f"{text} <- whynot_expected.")
    except DiagnosticsError as exc:
        raise ReasonerError(
            f"expected detection {text!r} is not an event like name(args): {exc.message}"
        ) from None
    rules = program.event_rules
    if len(program.statements) != 1 or len(rules) != 1:
        raise ReasonerError(f"expected detection {text!r} is not one event like name(args)")
    return rules[0].head


def _fits_head(expected: EventAtom, event: Event, prefixes: Mapping[str, str]) -> bool:
    if event.name != expected.name or len(event.args) < len(expected.args):
        return False
    env: dict[str, Any] = {}
    return all(unify(t, v, env, prefixes) for t, v in zip(expected.args, event.args, strict=False))


def _skipped(rejection: Rejection) -> Reason:
    text = f"input line skipped, its event unknown: {rejection}"
    return Reason("rejected", text, {"where": rejection.where, "why": rejection.reason})


def _outside(fits: list[Event], time: TimeText) -> Reason:
    text = f"it occurred outside the time range: {event_text(fits[0], time)}"
    if len(fits) > 1:
        text += f" and {len(fits) - 1} more"
    return Reason("outside", text, {"detections": [event_json(e) for e in fits]})
