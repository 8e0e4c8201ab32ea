"""Reloading rule files that change while a replay runs (``reasoner run --watch-rules``).

Between two events, :meth:`RuleWatcher.poll` looks at the rule files' modification times (and
sizes) — no more often than every ``interval`` seconds of wall time, and it reads the clock only
every ``every`` events, so a fast replay pays a counter per event. A file that changed is parsed
again and compared with its previous version rule by rule: the event rules that disappeared
are removed from the engine, the new ones added (``Engine.change_rules``; a ``ParallelEngine``
changes every stage at once, or refuses a change its stages cannot follow exactly), and
the rules that stayed the same keep their state (a rule counts as removed wherever it stands:
an equal rule of another file goes too). What changed is reported on standard error; a
file that no longer parses or compiles is reported (file:line:col) and the previous rules stay.
Only event rules are reloaded: a change to static rules, facts or directives is reported as
needing a restart.

With ``--checkpoint``, each checkpoint records the rule files' history
(:meth:`RuleWatcher.history`: their texts when the run started and every reload applied
since): a snapshot restores only into an engine with the same network, which a reload changes
(added rules get new nodes), so a resumed run builds its engine from the first texts, applies
the reloads again (:meth:`RuleWatcher.replay`), restores it, and reloads the files edited since
before the first event after the resumed position, as if they had been edited there.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reasoner.compiler.compile import Options, compile_program
from reasoner.errors import ReasonerError, SnapshotError
from reasoner.language.ast import EventRule, Program
from reasoner.language.check import check_program
from reasoner.language.loader import parse_text, read_file

if TYPE_CHECKING:
    from reasoner.runtime.engine import Engine


def _report(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class RuleWatcher:
    """Watches rule files and applies their changes to an engine, between two events.

    Args:
        paths: the rule files the engine was built from.
        interval: seconds of wall time between two looks at the files.
        every: events between two readings of the clock (1 for a live or paced stream).
        report: where changes and errors are written (default: standard error).
        clock: the wall clock (replaced in tests).
        texts: the rule text in use, by path as given (a resumed checkpoint's): the engine
            is built from it, and a file whose text differs now is reloaded at the first
            poll; None: the files as they are.

    >>> watcher = RuleWatcher(["rules/stock_ticker.event"], interval=1.0)  # doctest: +SKIP
    >>> for event in events:  # doctest: +SKIP
    ...     watcher.poll(engine)
    ...     engine.push(event)
    """

    def __init__(
        self,
        paths: Sequence[str | Path],
        *,
        interval: float,
        every: int = 1024,
        report: Callable[[str], None] = _report,
        clock: Callable[[], float] = time.monotonic,
        history: Mapping[str, Any] | None = None,
    ) -> None:
        self.interval = interval
        self.every = every
        self.report = report
        self.clock = clock
        self.reloaded = 0  # changes applied
        self.failed = 0  # changed files that were refused
        self._countdown = every
        self._next = clock() + interval
        first, self._replay = ({}, []) if history is None else _history(history, paths)
        #: per file: its stamp when last read, the text in use and its rules
        self._files: dict[Path, tuple[object, str, Program]] = {}
        #: per file: its stamp and text as found when the run started
        self._found: dict[Path, tuple[object, str]] = {}
        #: per file: its text when the engine was first built (the first run's start)
        self._first: dict[str, str] = {}
        self._reloads: list[tuple[str, str]] = []  # (path, text) of every reload since
        for path in map(Path, paths):
            # (each file's time is noted before it is read: a change in between is seen later)
            self._found[path] = stamp, text = _stamp(path), read_file(path)
            text = self._first[str(path)] = first.get(str(path), text)
            self._files[path] = (stamp, text, parse_text(text, str(path)))
        self._settle()

    def program(self) -> Program:
        """The rules of every file, as last loaded (what to build the engine from)."""
        return Program(tuple(s for *_, program in self._files.values() for s in program.statements))

    def history(self) -> dict[str, Any]:
        """What a checkpoint records (JSON data): each file's text when the engine was first
        built and the text of every reload applied since, in order (``history=``)."""
        return {"texts": self._first, "reloads": [list(r) for r in self._reloads]}

    def replay(self, engine: Engine) -> None:
        """A resumed run: apply the checkpoint's reloads (``history=``) to ``engine``, built
        from :meth:`program`, so that it has the rules and network of the engine the
        checkpoint's snapshot was taken from; then a file that differs from its text in use
        is reloaded at the first :meth:`poll`. SnapshotError when a reload fails again."""
        replay, self._replay = self._replay, []
        for path, text in replay:
            try:
                self._apply(engine, Path(path), text)
            except ReasonerError as error:
                raise SnapshotError(
                    f"the checkpoint's reload of {path} does not apply again: {error}"
                ) from None
        self._settle()

    def _settle(self) -> None:
        """Note each file as found, or as changed (looked at first) when its text is not the
        one in use."""
        for path, (stamp, text) in self._found.items():
            _, used, program = self._files[path]
            if used != text:
                stamp = _CHANGED
                self._countdown, self._next = 1, -math.inf
            self._files[path] = (stamp, used, program)

    def poll(self, engine: Engine) -> None:
        """Apply the rule files' changes to ``engine`` if it is time to look (call it
        between two events)."""
        self._countdown -= 1
        if self._countdown > 0:
            return
        self._countdown = self.every
        now = self.clock()
        if now < self._next:
            return
        self._next = now + self.interval
        for path, (stamp, _, program) in self._files.items():
            current = _stamp(path)
            if current != stamp:
                self._reload(engine, path, current, program)

    def _reload(self, engine: Engine, path: Path, stamp: object, old: Program) -> None:
        try:
            added, removed = self._apply(engine, path, read_file(path))
        except ReasonerError as error:
            self.failed += 1
            self.report(f"rules: {error}\nrules: {path} not reloaded: the previous rules stay")
            self._files[path] = (stamp, *self._files[path][1:])  # reported once, until it changes
            return
        _, text, new = self._files[path]
        self._files[path] = (stamp, text, new)
        self.reloaded += 1
        self.report(f"rules: {path} reloaded: {_summary(added, removed)}")
        if _others(old) != _others(new):
            self.report(
                f"rules: {path}: static rules, facts or directives changed; they take effect "
                "when the run starts afresh (not from a checkpoint)"
            )

    def _apply(
        self, engine: Engine, path: Path, text: str
    ) -> tuple[list[EventRule], list[EventRule]]:
        """Change ``engine``'s rules of ``path`` to those of ``text``, noted in the history;
        the rules added and removed. ReasonerError, changing nothing, when ``text`` does not
        parse or its rules do not compile (everything that could fail is tried first)."""
        stamp, _, old = self._files[path]
        new = parse_text(text, str(path))
        added, removed = _changes(old, new)
        addition = _with_prefixes(new, added)
        gone = set(removed)
        remaining = Program(tuple(s for s in engine.program.statements if s not in gone))
        check_program(remaining + addition)
        compile_program(addition, Options(engine.options()["policy"]))
        engine.change_rules(removed, addition)  # (a ParallelEngine may refuse, changing nothing)
        self._files[path] = (stamp, text, new)
        self._reloads.append((str(path), text))
        return added, removed


def _history(
    data: Mapping[str, Any], paths: Sequence[str | Path]
) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """A checkpoint's :meth:`RuleWatcher.history`, checked: the first texts, the reloads."""
    names = {str(Path(p)) for p in paths}
    try:
        texts = {str(k): str(v) for k, v in data["texts"].items()}
        reloads = [(str(p), str(t)) for p, t in data["reloads"]]
        if not set(texts) | {p for p, _ in reloads} <= names:
            raise ValueError("other rule files")
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise SnapshotError(f"the checkpoint's rules are malformed ({error})") from None
    return texts, reloads


#: The stamp of a file whose text differs from the one in use (looked at first).
_CHANGED = object()


def _stamp(path: Path) -> object:
    """What tells a file changed: its modification time and size (None: it is missing)."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_mtime_ns, status.st_size)


def _changes(old: Program, new: Program) -> tuple[list[EventRule], list[EventRule]]:
    """The event rules added and removed from ``old`` to ``new`` (equal rules, wherever they
    stand and whatever their spans, are the same rule)."""
    before, after = Counter(old.event_rules), Counter(new.event_rules)
    added = [rule for rule in new.event_rules if (after - before)[rule]]
    removed = [rule for rule in old.event_rules if (before - after)[rule]]
    return list(dict.fromkeys(added)), list(dict.fromkeys(removed))


def _with_prefixes(program: Program, rules: list[EventRule]) -> Program:
    """``rules`` with the directives of ``program`` they may need (prefixes)."""
    return Program((*program.directives, *rules))


def _others(program: Program) -> list[object]:
    """A program's statements other than event rules (what a reload does not apply)."""
    return [s for s in program.statements if not isinstance(s, EventRule)]


def _summary(added: list[EventRule], removed: list[EventRule]) -> str:
    if not added and not removed:
        return "no event rule changed"
    parts = []
    if added:
        parts.append(f"{len(added)} added ({', '.join(_name(r) for r in added)})")
    if removed:
        parts.append(f"{len(removed)} removed ({', '.join(_name(r) for r in removed)})")
    return ", ".join(parts)


def _name(rule: EventRule) -> str:
    head = f"{rule.head.name}/{len(rule.head.args)}"
    return f"{rule.label} {head}" if rule.label else head
