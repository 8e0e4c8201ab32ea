"""Detection on several cores: the keyed rules run in worker processes, one share of the
partition key's values each; the global remainder runs after them (docs/scale-out.md).

The router (this process) checks every input event as an engine would (whole chunks at once
when it can, :mod:`reasoner.runtime.batches`) and takes it into the batch under way. A full
batch is numbered and shared out at once: each event to the worker owning its key (a stable
hash of the key value). Two batches are in flight: the next is sent (by one thread per
worker, in order) before the answers to the one before are collected, so the workers never
wait for the router. After each batch every worker's clock is moved to the batch's last
time, so time points and aggregate windows fire exactly as in one engine. The global
remainder's engine (in this process) then reads, in the single engine's order, the input
events it reads and what the workers derived. Detections are reported in one defined order,
whatever the number of workers: by end time, then start time, then event name, then the
arguments' text; a detection is final once the stream has moved past its end.
"""

from __future__ import annotations

import hashlib
import math
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import replace
from functools import cache, cached_property, partial
from itertools import islice
from operator import itemgetter
from typing import TYPE_CHECKING, Any, cast

from reasoner.compiler.partition import Partitioning, analyse
from reasoner.errors import EngineError, EventError, ReasonerError, SnapshotError
from reasoner.knowledge.base import Knowledge
from reasoner.knowledge.program import check_conditions, program_knowledge
from reasoner.language.ast import EventRule, Program, dump, event_arities
from reasoner.language.check import check_program
from reasoner.language.loader import Rules, load_rules
from reasoner.modes import Policy, TieBreak
from reasoner.runtime import checkpoint
from reasoner.runtime.batches import OWNERS, Owners, acceptable, share
from reasoner.runtime.engine import Engine, Stats
from reasoner.runtime.events import Event, is_time
from reasoner.runtime.intake import Intake
from reasoner.runtime.options import EngineOptions
from reasoner.runtime.order import order_key, run_global, unique
from reasoner.runtime.pool import WorkerPool, pickled
from reasoner.runtime.rulechanges import quoted, refuse_static_changes
from reasoner.runtime.stages import GlobalStage, StageEngine, stage_engine
from reasoner.runtime.worker import Derived, revive, young_collections
from reasoner.values import NUMBER_TYPES

if TYPE_CHECKING:
    from reasoner.runtime.shares import Note, ShareMerge, Source

#: Events per batch sent to a worker (amortises the inter-process cost).
BATCH = 2048


class ParallelEngine:
    """The engine's detections, computed by ``workers`` processes (see the module doc).

    Args:
        rules: as for :class:`~reasoner.runtime.engine.Engine`.
        workers: worker processes for the keyed rules (a program with no keyed rule runs in
            this process alone).
        knowledge: a function returning the static knowledge, called once in every worker
            (and here, for the global remainder); None: the program's facts and Horn rules,
            evaluated once here (each worker inherits its own copy).
        policy, tie_break, max_derivations, lateness, max_span, provenance, explain: as for
            :class:`~reasoner.runtime.engine.Engine` (with ``explain``, the workers send each
            detection's derivation, and the keyed rules are compiled here too, to read them).
        batch: input events per batch.

    Use it as a context manager (or call :meth:`close`) to stop the workers.
    """

    def __init__(
        self,
        rules: Rules,
        *,
        workers: int = 2,
        knowledge: Callable[[], Knowledge] | None = None,
        policy: Policy = "unrestricted",
        tie_break: TieBreak = "longer",
        max_derivations: int = 100_000,
        lateness: Any = 0,
        max_span: Any = None,
        provenance: bool = False,
        explain: bool = False,
        batch: int = BATCH,
    ) -> None:
        if not isinstance(workers, int) or workers < 1:
            raise EngineError(f"workers must be a positive integer, not {workers!r}")
        program = load_rules(rules)
        self.partitioning = analyse(program, policy)
        #: the options as given: the router applies the lateness bound, the stages none
        self.settings = EngineOptions(
            policy, tie_break, max_derivations, lateness, max_span, provenance, explain
        )
        self._provenance = provenance  # (as asked for: snapshots' fingerprints write it)
        options = replace(self.settings, lateness=0)
        partitioning = self.partitioning
        if not partitioning.partitioned:
            workers = 0
        self.workers = workers
        self._keys = self.partitioning.key_positions()
        self._reads = set(self.partitioning.reads) if workers else set()
        self._arities = event_arities(program)
        self._span_limit, self._lateness = self.settings.span_limit, lateness  # (read per push)
        own = knowledge is None
        if knowledge is None:  # the program's facts and Horn rules, evaluated once
            knowledge = cache(partial(program_knowledge, program))
            if workers:  # (before the workers fork: they inherit it)
                knowledge()
        self._knowledge = knowledge  # (what change_rules checks the new rules against)
        # The keyed stage marks positions only when the global stage reads what it derives;
        # else the global stage takes its input events as one engine does.
        feeds = bool(self._reads & partitioning.keyed_types(program))
        self._global = self._global_stage(program, options, None if own else knowledge, feeds)
        # the keyed stage: the program, its rules' indexes, whether it marks positions
        stage = (program, partitioning.keyed, feeds)
        #: With explain: the rules of both stages (the keyed stage's first, at the places the
        #: workers name them), to read the workers' derivations and to write all in snapshots.
        self._rules: checkpoint.Derivations | None = None
        self._explaining: list[Engine] = []  # (the stages those rules are read from)
        if explain:
            self._explain(stage, options, knowledge)
        self._batch = batch
        self._program = program
        self._pool = WorkerPool()
        if workers:
            self._pool.start(workers, stage, options, knowledge, self._reads)
        self._owners = Owners(max(workers, 1))
        self._now: Any = -math.inf  # the end of the last event taken
        self._seq = 0  # the sequence number of the first event of _chunk
        self._chunk: list[Event] = []  # the events taken, not sent yet
        #: the batches sent and not collected yet, oldest first: (until, the input events
        #: the global stage reads, with their sequence numbers)
        self._flight: deque[tuple[Any, list[tuple[int, Event]]]] = deque()
        self._pending: list[tuple[Any, Event]] = []  # (order key, detection) not final yet
        self._counts = {"events_in": 0, "detections": 0, "rejected": 0}
        # checks, admission and the lateness buffer, as one engine's
        self._intake = Intake(self._arities, max_span, lateness, self._counts)
        #: errors of events taken, not raised yet (see _report), in order
        self._errors: list[ReasonerError] = []

    def _global_stage(
        self,
        program: Program,
        options: EngineOptions,
        knowledge: Callable[[], Knowledge] | None,
        feeds: bool,
    ) -> Engine | None:
        """The engine of the global remainder (all rules without workers; None: no global
        rule). The router applies the lateness bound."""
        partitioning = self.partitioning
        if not self.workers:  # one engine, owning the program's knowledge when none is given
            given = None if knowledge is None else knowledge()
            return stage_engine(program, None, options, knowledge=given)
        if not partitioning.remainder:
            return None
        base = self._knowledge()
        return stage_engine(
            program,
            partitioning.remainder,
            options,
            knowledge=base,
            remainder=True,
            reads_keyed=feeds,
        )

    def _explain(
        self,
        stage: tuple[Program, tuple[int, ...], bool],
        options: EngineOptions,
        knowledge: Callable[[], Knowledge],
    ) -> None:
        """Compile the keyed rules here too, to read the workers' derivations."""
        engines = [] if self._global is None else [self._global]
        if self.workers:
            base = engines[0].knowledge if engines else knowledge()
            engines.insert(0, stage_engine(*stage[:2], options, knowledge=base))
        self._rules = checkpoint.Derivations.of(*engines)
        self._explaining = engines

    # ------------------------------------------------------------------ workers

    def close(self) -> None:
        """Stop the workers (what they still run is dropped)."""
        self._pool.close()
        self._flight.clear()

    def __enter__(self) -> ParallelEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ask(self, message: tuple[Any, ...]) -> list[Any]:
        """Every worker's answer to ``message`` (no batch in flight: answers come in order)."""
        assert not self._flight
        self._pool.post(message)
        return self._pool.answers()

    # ------------------------------------------------------------------ streaming

    def push(self, event: Event) -> list[Event]:
        """Take one input event; return the detections that became final, in the defined
        order. Raises EventError (and takes nothing) for an event an engine would reject.
        An event taken before runs later, in a batch: its error (one engine's, raised by
        its push) is raised by the push or flush that ran it, the other detections kept
        for the next (see :meth:`_report`)."""
        return self._report(self._push(event))

    def _push(self, event: Event) -> list[Event]:
        """:meth:`push` without raising the errors of the events it runs."""
        intake = self._intake
        if self._lateness:
            intake.admit(event, self._now)
            return self._release(intake.released)
        # The common case (an Event of a known arity, on time) checked inline, as the engine.
        if (
            type(event) is not Event
            or type(start := event[2]) not in NUMBER_TYPES
            or type(end := event[3]) not in NUMBER_TYPES
            or not 0 <= start <= end
            or end < self._now
            or end - start > self._span_limit
            or len(event[1]) not in self._arities.get(event[0], (len(event[1]),))
        ):
            intake.check(event, self._now)
        self._counts["events_in"] += 1
        self._now = event[3]
        self._chunk.append(event)
        return self._cycle() if len(self._chunk) >= self._batch else []

    def push_many(self, events: Iterable[Event]) -> tuple[list[Event], list[EventError]]:
        """:meth:`push` every event; return the detections that became final, in the defined
        order, and an EventError for each event refused, in order. Chunks of events that
        all pass an engine's checks are taken at once (see :mod:`reasoner.runtime.batches`);
        a chunk holding one that does not is pushed event by event."""
        out: list[Event] = []
        errors: list[EventError] = []
        for chunk in self._chunks(events):
            taken = self._take(chunk)
            if taken is not None:
                out += taken
                continue
            for event in chunk:
                try:
                    out += self._push(event)
                except EventError as error:
                    errors.append(error)
        errors += [e for e in self._errors if isinstance(e, EventError)]
        self._errors = [e for e in self._errors if not isinstance(e, EventError)]
        return self._report(out), errors

    def flush(self) -> list[Event]:
        """Process everything taken so far and return every remaining detection (at the end
        of a stream)."""
        out = self._release(math.inf)
        out += self._drain()
        if self._errors:
            return self._report(out)
        out += self._final(self._pending)
        self._pending = []
        return out

    def advance(self, time: Any) -> list[Event]:
        """Move every engine's clock to ``time`` without an event, as
        :meth:`Engine.advance <reasoner.runtime.engine.Engine.advance>` (time points,
        aggregate windows and alarms due by then fire); return the detections that became
        final (those ending at ``time`` wait for the next event or :meth:`flush`). With a
        lateness bound, :meth:`flush` first."""
        if not is_time(time):
            raise EventError(f"time must be a non-negative number, not {time!r}")
        if time < self._now:
            raise EventError(f"cannot move the clock back from {self._now} to {time}")
        if self._intake.buffer:
            raise EngineError("events wait in the lateness buffer: flush before advance")
        self._now = time
        self._send()
        return self._report(self._drain())

    @property
    def now(self) -> Any:
        """The end of the last event processed, or the time last advanced to (-infinity
        before either)."""
        return self._now

    def run(self, events: Iterable[Event]) -> Iterator[Event]:
        """Push every event and yield the detections as they become final (then flush); the
        first event refused raises its EventError. Takes chunks at once, as :meth:`push_many`."""
        for chunk in self._chunks(events):
            taken = self._take(chunk)
            if taken is not None:
                yield from self._report(taken)
            else:
                for event in chunk:
                    yield from self.push(event)
        yield from self.flush()

    def read_shares(
        self, sources: Sequence[Callable[[], Source]], on_note: Callable[[Note], None]
    ) -> Generator[list[Event]] | None:
        """Have worker ``i`` read and run its own share of the input (``sources[i]()``, the
        events of the keys it owns); the router runs the global stage and merges
        (:mod:`reasoner.runtime.shares`). Returns the detections as they become final (lists,
        in the defined order; then the stream is at its end), each note (rejection) handed
        to ``on_note`` in input order; None, nothing run, when a share cannot run alone (push
        the events instead). Closing the generator before its end (a stop) ends the workers'
        shares where they are: the stream is cut, :meth:`stats` and :meth:`close` still
        answer. EngineError without workers or with a lateness bound."""
        from reasoner.runtime.shares import ShareMerge

        if not self.workers or len(sources) != self.workers or self._lateness:
            raise EngineError("workers read their shares only, without a lateness bound")
        self._process_all()
        for i, source in enumerate(sources):
            self._pool.post(("share", source, self._batch), i)
        merge = ShareMerge(
            self._pool,
            self._global,
            self._reads,
            self._rules,
            self._counts,
        )
        if merge.opened():
            self._pool.post(("skip",))
            return None
        merge.hold(self._pending)
        self._pending = []
        return self._merged(merge, on_note)

    def _merged(self, merge: ShareMerge, on_note: Callable[[Note], None]) -> Generator[list[Event]]:
        # The router's young collections are as rare as a worker's while it merges (and its
        # caller writes): the detections it holds and revives are a few tuples each, and a
        # collection every 700 allocations was a sixth of its CPU.
        with young_collections():
            yield from merge.run(on_note)
        self._now = max(self._now, merge.last)

    def _chunks(self, events: Iterable[Event]) -> Iterator[list[Event]]:
        """``events`` in chunks that fill the batch under way."""
        it = iter(events)
        while chunk := list(islice(it, self._batch - len(self._chunk))):
            yield chunk

    def _take(self, chunk: list[Event]) -> list[Event] | None:
        """Take every event of ``chunk`` if all pass an engine's checks (and no lateness
        bound reorders them); return the detections that became final. None: nothing taken,
        push them one by one."""
        if self._lateness or not acceptable(chunk, self._now, self._arities, self._span_limit):
            return None
        self._counts["events_in"] += len(chunk)
        self._now = chunk[-1][3]
        self._chunk += chunk
        return self._cycle() if len(self._chunk) >= self._batch else []

    def use_knowledge(self, knowledge: Knowledge) -> None:
        """Evaluate every event taken after this call against ``knowledge`` (e.g. a refreshed
        ``KnowledgeBase.current()``), in every worker and the global stage alike, as
        :meth:`Engine.use_knowledge <reasoner.runtime.engine.Engine.use_knowledge>` does
        between two events: the events taken so far are run first, against the previous
        knowledge (their detections are reported by the next :meth:`push` or :meth:`flush`),
        then the new version is sent to the workers (pickled once), so the switch falls at
        the same event as in one engine. Events waiting in the lateness buffer are not taken
        yet: they use the new version, as in one engine. Raises EngineError, changing
        nothing, when a rule changes the program's static rules."""
        refuse_static_changes(self._program)
        self._process_all()
        if self.workers:
            self._ask(("knowledge", knowledge))
            self._knowledge = partial(_given, knowledge)
        if self._global is not None:
            self._global.use_knowledge(knowledge)
        if self._rules is not None:  # the workers' later derivations are justified against it
            self._rules = replace(self._rules, knowledge=knowledge)

    @property
    def program(self) -> Program:
        """The rules in use, both stages'."""
        return self._program

    def options(self) -> dict[str, Any]:
        """The options it was built with, as :meth:`Engine.options
        <reasoner.runtime.engine.Engine.options>` gives them."""
        return self.settings.as_dict()

    def change_rules(self, removed: Iterable[EventRule], added: Program) -> None:
        """Change the rules between two events as :meth:`Engine.change_rules
        <reasoner.runtime.engine.Engine.change_rules>` does in one engine: the events taken
        so far are run first, with the previous rules (their detections are reported by the
        next :meth:`push` or :meth:`flush`); then every stage makes the change, keeping its
        own rules (:meth:`StageEngine.change_stage`). Exact when the partition analysis of
        the new program keeps every remaining rule in its stage and every event type's key;
        otherwise, or when a rule added needs a global stage this engine has not, raises
        EngineError, changing nothing."""
        program, workers = self._program, self.workers
        gone = set(removed)
        for rule in gone:
            if rule not in program.event_rules:
                raise EngineError(f"no rule is labelled or derives {quoted(rule)}")
        new = Program(tuple(s for s in program.statements if s not in gone)) + added
        check_program(new)
        check_conditions(self._knowledge() if self._global is None else self._global.knowledge, new)
        part = analyse(new, self.settings.policy)
        if workers:
            self._check_stages(program, new, part)
        self._process_all()
        if not workers:
            assert self._global is not None
            self._global.change_rules(gone, added)
        else:
            keyed = {id(new.event_rules[i]) for i in part.keyed}
            mine = [r for r in added.event_rules if id(r) in keyed]
            others = [r for r in added.event_rules if id(r) not in keyed]
            self._ask(("rules", gone, added, others, set(part.reads)))
            if isinstance(self._global, StageEngine):
                self._global.change_stage(gone, added, mine)
            if self._explaining:  # the router's copy of the keyed stage first
                stages = cast(list[StageEngine], self._explaining)
                stages[0].change_stage(gone, added, others)
                self._rules = checkpoint.Derivations.of(*stages)
            self.partitioning, self._keys, self._reads = part, part.key_positions(), set(part.reads)
        self._arities = self._intake.arities = event_arities(new)
        self._program = new
        vars(self).pop("_fingerprint", None)  # (the previous program's)

    def _check_stages(self, program: Program, new: Program, part: Partitioning) -> None:
        """EngineError unless ``part`` (of ``new``) keeps the rules of ``program`` still in
        use in their stages and the event types' keys, has the global stage read what the
        keyed stage derives only if it did, and has a global stage for new global rules."""
        rules = program.event_rules
        before = {id(rules[i]) for i in self.partitioning.keyed}
        after = {id(new.event_rules[i]) for i in part.keyed}
        for rule in program.event_rules:
            if rule in new.event_rules and ((id(rule) in before) != (id(rule) in after)):
                stages = ("the global stage", "the workers")[:: 1 if id(rule) in after else -1]
                raise EngineError(
                    f"{rule.span or quoted(rule)}: the partition analysis of the new rules "
                    f"moves this rule from {stages[0]} to {stages[1]}: its partial matches "
                    "cannot follow; restart with the new rules"
                )
        for event_type, position in part.keys:
            if self._keys.get(event_type, position) != position:
                raise EngineError(
                    f"this change keys {event_type[0]}/{event_type[1]} by another argument "
                    "(the partition analysis of the new rules): the workers' state cannot "
                    "follow; restart with the new rules"
                )
        # (a global stage that stops reading the workers' events may go on as it is)
        feeds = bool(set(part.reads) & part.keyed_types(new))
        if (feeds and not isinstance(self._global, GlobalStage)) or (
            self._global is None and part.remainder
        ):
            raise EngineError(
                "this change makes the global stage read what the workers derive, or needs "
                "a global stage this run has not: restart with the new rules"
            )

    def _release(self, up_to: Any) -> list[Event]:
        out: list[Event] = []
        for event in self._intake.due(up_to):
            self._now = event[3]
            self._chunk.append(event)
            if len(self._chunk) >= self._batch:
                out += self._cycle()
        return out

    def _cycle(self) -> list[Event]:
        """Send the batch taken, then collect the one before it: the workers always have the
        next batch queued while the router collects one and takes the next."""
        self._send()
        return self._collect() if len(self._flight) > 1 else []

    def _drain(self) -> list[Event]:
        """Run every event taken so far; return the detections now final."""
        if self._chunk:
            self._send()
        out: list[Event] = []
        while self._flight:
            out += self._collect()
        return out

    def _send(self) -> None:
        """Send the events taken to the workers owning them (every worker gets a batch: its
        clock moves on to the last event's end). Every share is pickled before any is sent:
        an event that cannot be (an argument that is no value, e.g. a lock) is refused,
        with an EventError in :attr:`_errors`, and the others are sent."""
        chunk, first, until = self._chunk, self._seq, self._now
        if self.workers:
            try:
                owner, shares, raw = share(chunk, self._keys, self._reads, self._owners)
                data = [pickled(("batch", first, owner, rows, until)) for rows in shares]
            except Exception:  # (pickling may raise anything)
                chunk = [event for event in chunk if self._sendable(event)]
                owner, shares, raw = share(chunk, self._keys, self._reads, self._owners)
                data = [pickled(("batch", first, owner, rows, until)) for rows in shares]
            self._pool.send_each(data)
        else:  # one engine, here
            raw = list(enumerate(chunk))
        self._chunk = []
        self._seq += len(chunk)
        self._flight.append((until, [(first + i, event) for i, event in raw]))

    def _sendable(self, event: Event) -> bool:
        """Whether ``event`` can be sent to a worker; if not, it is refused (counted, and
        its EventError added to :attr:`_errors`)."""
        try:
            pickled(event)
        except Exception as error:  # (pickling may raise anything)
            reason = (
                f"{event[0]}/{len(event[1])}: an argument is not a value that can be sent to "
                f"a worker process ({error})"
            )
            self._errors.append(EventError(reason, event))
            self._counts["events_in"] -= 1
            self._counts["rejected"] += 1
            return False
        return True

    def _report(self, out: list[Event]) -> list[Event]:
        """``out``, the detections now final; or, when an event run has failed, raise its
        error (the first; the next call raises the next), ``out`` kept for the next
        :meth:`push` or :meth:`flush` to report, as one engine goes on after an event whose
        push raised."""
        if not self._errors:
            return out
        self._keep(out)
        raise self._errors.pop(0)

    def _keep(self, final: list[Event]) -> None:
        """Keep detections that were final pending (not reported yet: the next to report
        them; they end before anything the workers derive later)."""
        self._counts["detections"] -= len(final)
        self._pending = [(order_key(d), d) for d in final] + self._pending

    def _collect(self) -> list[Event]:
        """The workers' answers for the oldest batch in flight, then the remainder on them;
        return the detections now final.

        Every worker sends its detections already in the defined order, with their order
        keys (:func:`~reasoner.runtime.worker.ordered_batch`): the pending detections, the
        workers' runs and the remainder's detections, one after the other, are sorted runs
        that one sort merges (stable: the same order as one sort of them all)."""
        until, raw = self._flight.popleft()
        rows = self._pending[:]
        derived: list[Derived] = []
        failed: list[tuple[int, ReasonerError]] = []
        for run, feed, errors in self._pool.answers():
            rows += [(key, revive(d, self._rules)) for key, d in run]
            derived += [
                (seq, [revive(d, self._rules) for d in plain], paths) for seq, plain, paths in feed
            ]
            failed += errors
        self._errors += [error for _, error in sorted(failed, key=_first)]
        engine = self._global
        if engine is not None:
            if isinstance(engine, GlobalStage):
                found = run_global(engine, raw, derived, self._reads)
            else:
                found = [d for _, event in raw for d in engine.push(event)]
            found += engine.advance(until)
            rows += sorted(((order_key(d), d) for d in found), key=_first)
        rows.sort(key=_first)
        cut = bisect_left(rows, until, key=_end)
        self._pending = rows[cut:]
        return self._final(rows[:cut])

    def _final(self, rows: list[tuple[Any, Event]]) -> list[Event]:
        out = list(unique(d for _, d in rows))
        self._counts["detections"] += len(out)
        return out

    # ------------------------------------------------------------------ state

    def stats(self) -> Stats:
        """Events in, detections out; stored and expired summed over the engines (after
        running every event taken so far)."""
        self._process_all()
        engines = self._ask(("stats",)) if self.workers else []
        if self._global is not None:
            engines.append(self._global.stats())
        return Stats(
            events_in=self._counts["events_in"],
            detections=self._counts["detections"],
            stored=sum(s.stored for s in engines),
            expired=sum(s.expired for s in engines),
            rejected=self._counts["rejected"],
            duplicates=sum(s.duplicates for s in engines),
        )

    @cached_property
    def _fingerprint(self) -> str:
        """What a snapshot must match: the program, the options, the number of workers, and
        how keys are shared out (``OWNERS``: a snapshot whose workers hold keys another
        version would send elsewhere is refused)."""
        # The text has not changed since the options were a dictionary (a checkpoint of
        # --workers resumes across versions): the options but the lateness, sorted, then the
        # lateness; provenance as asked for (the settings turn it on with explain).
        options = self.settings.fingerprinted()
        lateness = options.pop("lateness")
        options["provenance"] = self._provenance
        shared = (lateness, self.workers, OWNERS)
        text = dump(self._program) + repr(sorted(options.items())) + repr(shared)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def snapshot(self) -> bytes:
        """Every engine's state and the router's (the detections not final yet, the lateness
        buffer, the counters), in the snapshot format of :mod:`reasoner.runtime.checkpoint`.
        Processes what was taken first: call it between two events."""
        self._process_all()
        encode = checkpoint.encode
        state = {
            "fingerprint": self._fingerprint,
            "workers": [d.decode("utf-8") for d in self._ask(("snapshot",))]
            if self.workers
            else [],
            "global": None
            if self._global is None
            else checkpoint.snapshot(self._global, self._rules).decode("utf-8"),
            "now": encode(self._now),
            "latest": encode(self._intake.latest),
            "seq": self._seq,
            "buffer": [[encode(end), n, encode(e)] for end, n, e in self._intake.buffer],
            "pending": [encode(d, self._rules) for _, d in self._pending],
            "counts": self._counts,
        }
        return checkpoint.pack(state)

    def restore(self, data: bytes) -> None:
        """Put back a :meth:`snapshot` taken with the same rules, options and number of
        workers; SnapshotError (nothing changed) otherwise."""
        state = checkpoint.unpack(data)
        if state.get("fingerprint") != self._fingerprint:
            raise SnapshotError(
                "the snapshot was taken from another program, other engine options, "
                "another number of workers or a version sharing keys out otherwise"
            )
        decode = checkpoint.decode
        try:
            buffer = [(decode(end), int(n), decode(e)) for end, n, e in state["buffer"]]
            pending = [
                (order_key(d), d) for d in (decode(d, self._rules) for d in state["pending"])
            ]
            now, latest, seq = decode(state["now"]), decode(state["latest"]), int(state["seq"])
            counts = {k: int(state["counts"][k]) for k in self._counts}
            workers = [d.encode("utf-8") for d in state["workers"]]
            own = state["global"]
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
            raise SnapshotError(f"the snapshot's contents are malformed ({error})") from None
        if len(workers) != self.workers or (own is None) != (self._global is None):
            raise SnapshotError("the snapshot's engines do not match these workers")
        self._process_all()  # (the workers answer in order)
        # Every engine checks its part before any changes (restore is all or nothing).
        for i, part in enumerate(workers):
            self._pool.post(("check", part), i)
        self._pool.answers()
        if self._global is not None:
            # (checks before it changes anything)
            checkpoint.restore(self._global, own.encode("utf-8"), self._rules)
        self._ask(("restore",))
        self._intake.buffer[:], self._pending = buffer, pending
        self._now, self._intake.latest, self._seq = now, latest, seq
        self._counts.update(counts)

    def _process_all(self) -> None:
        """Run every event taken so far, keeping the detections pending (not reported yet:
        the next to report them; they end before anything the workers derive later)."""
        self._keep(self._drain())


_first = itemgetter(0)


def _end(row: tuple[Any, Event]) -> Any:
    return row[0][0]


def _given(knowledge: Knowledge) -> Knowledge:
    """``knowledge`` (what :meth:`ParallelEngine.use_knowledge` was given, as a factory)."""
    return knowledge
