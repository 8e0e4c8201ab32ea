"""The blizzard rules: ``rules/blizzard.event`` and its two blizzard definitions.

``rules/blizzard.event`` holds seed 004's patterns (39)-(42) and the places rules; it asks
``blizzard_conditions(Wind, Visibility, Condition)``, which a definition file supplies:
``noaa`` (wind >= 35 mph, considerable snow, visibility < 1/4 mile) or ``weakened`` (the
seed's: wind >= 15 mph, visibility < 1/4 mile, no snow needed).
"""

from __future__ import annotations

from connectors.shipped import shipped
from reasoner.errors import ReasonerError
from reasoner.language.ast import Program

_RULES = shipped("rules")
#: The blizzard patterns.
BLIZZARD_RULES = _RULES / "blizzard.event"
#: Definition name -> the file defining ``blizzard_conditions/3``.
DEFINITIONS = {
    "noaa": _RULES / "blizzard_noaa.event",
    "weakened": _RULES / "blizzard_weakened.event",
}
#: The definition used unless another is asked for.
DEFAULT_DEFINITION = "noaa"


def blizzard_program(definition: str = DEFAULT_DEFINITION) -> Program:
    """``rules/blizzard.event`` with a blizzard definition.

    Args:
        definition: ``noaa`` or ``weakened``.
    Returns:
        the parsed program.
    Raises:
        ReasonerError: for another definition name.

    >>> len(blizzard_program("weakened").event_rules)
    10
    """
    if definition not in DEFINITIONS:
        raise ReasonerError(
            f"unknown blizzard definition {definition!r} (choose {', '.join(DEFINITIONS)})"
        )
    from reasoner.language.loader import load_rules  # here: the CLI reads DEFINITIONS alone

    return load_rules([BLIZZARD_RULES, DEFINITIONS[definition]])
