"""The modes the library runs in, each a closed set of names typed as a ``Literal``.

The tuples of values come from ``typing.get_args``, so checks and the command line's choices
never spell a mode's names out again. This module imports nothing else of the library, so the
command line can read it without loading the parser or the store.

>>> POLICIES
('unrestricted', 'recent', 'chronological')
"""

from __future__ import annotations

from typing import Literal, get_args

Policy = Literal["unrestricted", "recent", "chronological"]
"""Which stored occurrences an operator may still combine (the consumption policy):
``unrestricted`` every combination; ``recent`` the latest occurrence of each side, consuming
nothing; ``chronological`` the oldest eligible partner, and both are consumed."""

TieBreak = Literal["longer", "shorter"]
"""Under the ``recent`` policy, which of two occurrences ending at the same time is the
latest: the ``longer`` one (it started earlier) or the ``shorter`` one."""

Regime = Literal["none", "rdfs", "owl-rl"]
"""The entailment materialised into the background knowledge, weakest first: ``none``,
``rdfs`` (RDFS), ``owl-rl`` (OWL 2 RL)."""

POLICIES: tuple[Policy, ...] = get_args(Policy)
TIE_BREAKS: tuple[TieBreak, ...] = get_args(TieBreak)
REGIMES: tuple[Regime, ...] = get_args(Regime)
