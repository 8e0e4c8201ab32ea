"""Detection of a partition key's events (or a partition's keys' together), as a Spark task
runs it.

A :class:`Stage` says what runs on the executors: the keyed stage of the program (the partition
analysis of :mod:`reasoner.compiler.partition`), the engine options and the knowledge. Each
Python worker compiles a stage once and keeps the engine (compiling takes a tenth of a
second); for every key it puts the engine back into a blank state, or into the key's saved
state, with ``Engine.restore`` (a fraction of a millisecond), runs the key's events and
returns what they derived. Archive replay (:mod:`connectors.spark.replay`) runs each partition's
keys together, once, from blank; a streaming query keeps each key's state bytes between
micro-batches.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from reasoner.knowledge.base import Knowledge
from reasoner.language.ast import Program, dump
from reasoner.runtime import checkpoint
from reasoner.runtime.engine import Engine
from reasoner.runtime.events import Event
from reasoner.runtime.options import EngineOptions
from reasoner.runtime.program import CompiledProgram, compile_rules
from reasoner.runtime.stages import stage_engine
from reasoner.runtime.worker import Derived, run_batch


@dataclass(frozen=True)
class Stage:
    """The keyed rules and how to run them, sent to the executors with the job.

    ``knowledge`` returns the static knowledge; it is called once per Python worker (None:
    the program's own facts and Horn rules); ``version`` names that knowledge (a worker
    keeps one engine per program, options and version). ``keep``: the indexes of the rules
    of ``program`` to run (None: all), in a :class:`~reasoner.runtime.stages.StageEngine`
    that gives the detections' positions when ``marking``.
    """

    program: Program
    options: EngineOptions = EngineOptions()
    knowledge: Callable[[], Knowledge] | None = None
    version: str = ""
    keep: tuple[int, ...] | None = None
    marking: bool = False
    fingerprint: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        shown = (_written(self.options), self.keep, self.marking)
        text = dump(self.program) + repr(shown) + self.version
        object.__setattr__(self, "fingerprint", hashlib.sha256(text.encode()).hexdigest())


def _written(options: EngineOptions) -> tuple[tuple[str, Any], ...]:
    """The options as a stage's fingerprint writes them: policy, tie-break and explain, and
    the others that differ from their defaults (provenance when explain does not imply it),
    by name. (Unchanged since the options were a dictionary: the state rows of a streaming
    checkpoint carry the fingerprint, and resume across versions.)"""
    defaults = EngineOptions(explain=options.explain).as_dict()
    given = options.as_dict().items()
    return tuple(sorted((k, v) for k, v in given if k in _ALWAYS or v != defaults[k]))


#: The options a stage's fingerprint always writes.
_ALWAYS = frozenset(("policy", "tie_break", "explain"))


#: This worker's engines, one per stage, with their blank state.
_engines: dict[str, tuple[Engine, bytes]] = {}
#: This worker's compiled programs, one per stage of the program's own facts (a worker
#: builds an engine per key group from it without parsing or compiling again).
_compiled: dict[str, CompiledProgram] = {}


def new_engine(stage: Stage) -> Engine:
    """A blank engine of ``stage`` (its knowledge read with ``stage.knowledge``): of the
    program compiled once per worker (:meth:`Engine.of`) when it runs the whole program on
    its own facts, else compiled anew (a few milliseconds)."""
    knowledge = None if stage.knowledge is None else stage.knowledge()
    if stage.keep is None and knowledge is None:
        compiled = _compiled.get(stage.fingerprint)
        if compiled is None:
            compiled = compile_rules(stage.program, stage.options)
            _compiled[stage.fingerprint] = compiled
        return Engine.of(compiled)
    return stage_engine(
        stage.program, stage.keep, stage.options, knowledge=knowledge, marking=stage.marking
    )


def _engine(stage: Stage) -> tuple[Engine, bytes]:
    cached = _engines.get(stage.fingerprint)
    if cached is None:
        engine = new_engine(stage)
        cached = _engines[stage.fingerprint] = (engine, engine.snapshot())
    return cached


def detect(
    stage: Stage,
    events: Iterable[tuple[int, Event]],
    until: Any,
    state: bytes | None = None,
    keep_state: bool = False,
    *,
    accepted: bool = False,
) -> tuple[list[Derived], bytes | None]:
    """Run one key's events (archive replay: a partition's keys' events) through the stage's
    engine.

    Args:
        stage: what to run.
        events: ``(seq, event)`` pairs in the stream's order (by end time, then sequence
            number), every event of the key (of the partition's keys).
        until: the stream's time after them: the clock moves there at the end (firing time
            points and window expiries up to it, as in one engine over every key).
        state: the key's state from an earlier call (None: a blank engine).
        keep_state: return the engine's state after the events (for the next call).
        accepted: every event is an Event known to pass the engine's checks (read and
            checked as an engine checks them: not checked again).

    Returns:
        What the events derived (:data:`Derived`), and the new state (None unless asked).

    Raises:
        ReasonerError: as the engine raises it (e.g. runaway recursion).
    """
    engine, blank = _engine(stage)
    if engine.rule_changes.made:  # (actions changed its rules: a new engine for the state)
        del _engines[stage.fingerprint]
        engine, blank = _engine(stage)
    engine.restore(blank if state is None else state)
    derived = run_batch(engine, events, until, accepted=accepted)
    return derived, engine.snapshot() if keep_state else None


def derivations(stage: Stage) -> checkpoint.Derivations | None:
    """The rules that read the derivations :func:`detect` writes on the detections of an
    explaining stage (None: the stage does not explain)."""
    return checkpoint.Derivations.of(_engine(stage)[0])


def next_timer(stage: Stage) -> Any:
    """When the engine of the last :func:`detect` of ``stage`` next has something to do
    without an event (a time point, a window closing); None: nothing."""
    return _engine(stage)[0].next_timer


def snapshot(stage: Stage) -> bytes:
    """The state of the engine of the last :func:`detect` of ``stage`` (to resume it later
    with ``detect(..., state=...)``)."""
    return _engine(stage)[0].snapshot()


def use_knowledge(stage: Stage, knowledge: Knowledge) -> None:
    """Evaluate this worker's later events of ``stage`` against ``knowledge`` (a streaming
    query's micro-batch names the version of the knowledge its events use)."""
    _engine(stage)[0].use_knowledge(knowledge)
