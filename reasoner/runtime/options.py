"""Engine options: one frozen record of the choices an engine is built with.

Every runtime piece reads its settings from one :class:`EngineOptions` (the engine, the stage
factory, the workers, the Spark paths, the snapshot fingerprints), so an option is spelt,
checked and named once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from reasoner.errors import EngineError
from reasoner.modes import TIE_BREAKS, Policy, TieBreak
from reasoner.runtime.events import is_time
from reasoner.values import Time


@dataclass(frozen=True, slots=True)
class EngineOptions:
    """The options of :class:`~reasoner.runtime.engine.Engine` (its docstring says what each
    means); ``provenance`` is on whenever ``explain`` is.

    Raises EngineError for a tie-break, lateness or max_span out of range (the consumption
    policy is checked by the compiler, with the rules).

    >>> EngineOptions(lateness=5).as_dict()["lateness"]
    5
    >>> EngineOptions(explain=True).provenance
    True
    """

    policy: Policy = "unrestricted"
    tie_break: TieBreak = "longer"
    max_derivations: int = 100_000
    lateness: Time = 0
    max_span: Time | None = None
    provenance: bool = False
    explain: bool = False

    def __post_init__(self) -> None:
        if self.tie_break not in TIE_BREAKS:
            raise EngineError(
                f"unknown tie-break '{self.tie_break}' (choose {', '.join(TIE_BREAKS)})"
            )
        if not is_time(self.lateness):
            raise EngineError(f"lateness must be a non-negative number, not {self.lateness!r}")
        if self.max_span is not None and not is_time(self.max_span):
            raise EngineError(
                f"max_span must be a non-negative number or None, not {self.max_span!r}"
            )
        if self.explain and not self.provenance:
            object.__setattr__(self, "provenance", True)

    @property
    def span_limit(self) -> Time:
        """``max_span`` as a number (infinity for None): what the push fast path compares."""
        return math.inf if self.max_span is None else self.max_span

    def as_dict(self) -> dict[str, Any]:
        """The options by name, as :meth:`Engine.options
        <reasoner.runtime.engine.Engine.options>` returns them (keyword arguments of an
        engine)."""
        return {
            "policy": self.policy,
            "tie_break": self.tie_break,
            "max_derivations": self.max_derivations,
            "lateness": self.lateness,
            "max_span": self.max_span,
            "provenance": self.provenance,
            "explain": self.explain,
        }

    def fingerprinted(self) -> dict[str, Any]:
        """What a snapshot's fingerprint counts: every option, ``explain`` only when on (off,
        the fingerprint is that of engines that had no such option, whose snapshots still
        restore)."""
        fields = self.as_dict()
        if not self.explain:
            del fields["explain"]
        return fields
