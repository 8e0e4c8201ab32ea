"""Reloading rule files that change while a replay runs (``reasoner run --watch-rules``).

Between two events, :meth:`RuleWatcher.poll` looks at the rule files' modification times (and
sizes) — no more often than every ``interval`` seconds of wall time, and it reads the clock only
every ``every`` events, so a fast replay pays a counter per event. A file that changed is parsed
again and compared with its previous version rule by rule: the event rules that disappeared
are removed from the engine, the new ones added (``Engine.remove_rules`` / ``add_rules``), and
the rules that stayed the same keep their state (a rule counts as removed wherever it stands:
an equal rule of another file goes too). What changed is reported on standard error; a
file that no longer parses or compiles is reported (file:line:col) and the previous rules stay.
Only event rules are reloaded: a change to static rules, facts or directives is reported as
needing a restart.

With ``--checkpoint``, each checkpoint records the text of every rule file as last loaded
(:meth:`RuleWatcher.texts`, the rules the engine's snapshot was taken with); a resumed run
builds its engine from those texts and reloads, before the first event after the resumed
position, the files that changed since (``texts=``): as if they had been edited there.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from reasoner.compiler.compile import Options, compile_program
from reasoner.errors import ReasonerError
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
        texts: Mapping[str, str] | None = None,
    ) -> None:
        self.interval = interval
        self.every = every
        self.report = report
        self.clock = clock
        self.reloaded = 0  # changes applied
        self.failed = 0  # changed files that were refused
        self._countdown = every
        self._next = clock() + interval
        #: per file: its stamp when last read, the text in use and its rules
        self._files: dict[Path, tuple[object, str, Program]] = {}
        for path in map(Path, paths):
            # (each file's time is noted before it is read: a change in between is seen later)
            stamp, text = _stamp(path), read_file(path)
            used = text if texts is None else texts.get(str(path), text)
            if used != text:  # changed since the checkpoint: reloaded at the first poll
                stamp, text = _CHANGED, used
                self._countdown, self._next = 1, -math.inf
            self._files[path] = (stamp, text, parse_text(text, str(path)))

    def program(self) -> Program:
        """The rules of every file, as last loaded (what to build the engine from)."""
        return Program(tuple(s for *_, program in self._files.values() for s in program.statements))

    def texts(self) -> dict[str, str]:
        """The text of every file, as last loaded (the rules in use), by path."""
        return {str(path): text for path, (_, text, _) in self._files.items()}

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
        for path, (stamp, text, program) in self._files.items():
            current = _stamp(path)
            if current != stamp:
                self._reload(engine, path, current, text, program)

    def _reload(
        self, engine: Engine, path: Path, stamp: object, old_text: str, old: Program
    ) -> None:
        try:
            text = read_file(path)
            new = parse_text(text, str(path))
            added, removed = _changes(old, new)
            addition = _with_prefixes(new, added)
            # Everything that could fail is tried before the engine changes.
            gone = set(removed)
            remaining = Program(tuple(s for s in engine.program.statements if s not in gone))
            check_program(remaining + addition)
            compile_program(addition, Options(engine.options()["policy"]))
        except ReasonerError as error:
            self.failed += 1
            self.report(f"rules: {error}\nrules: {path} not reloaded: the previous rules stay")
            self._files[path] = (stamp, old_text, old)  # reported once, until it changes again
            return
        for rule in removed:
            engine.remove_rules(rule)
        if added:
            engine.add_rules(addition)
        self._files[path] = (stamp, text, new)
        self.reloaded += 1
        self.report(f"rules: {path} reloaded: {_summary(added, removed)}")
        if _others(old) != _others(new):
            self.report(
                f"rules: {path}: static rules, facts or directives changed; they take effect "
                "at the next start"
            )


#: The stamp of a file whose text differs from the one in use (see ``texts``).
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
