"""Unit conversion for MesoWest columns into the units the engine sees.

A ``sensor_reading`` event always carries °F, %, mph, mph, statute miles and inches,
whatever the export used; the units row of a file names the source unit of each column.
Converted values are rounded to 3 decimals: far below sensor precision, and it keeps
written files and JSON output readable and round trips exact.
"""

from __future__ import annotations

from collections.abc import Callable

#: The quantities a reading carries, with the canonical unit written by the writer.
CANONICAL = {
    "temperature": "Fahrenheit",
    "humidity": "%",
    "speed": "mph",
    "distance": "Statute miles",
    "precipitation": "Inches",
}

Converter = Callable[[float], float]

_MPH_PER_MS = 3600 / 1609.344
_MPH_PER_KNOT = 1852 / 1609.344
_MPH_PER_KMH = 1000 / 1609.344


def identity(x: float) -> float:
    """The converter of a column already in the canonical unit (readers may skip calling it)."""
    return x


# Unit spellings seen in Synoptic/MesoWest exports and in hand-written files, lower-cased.
_UNITS: dict[str, dict[str, Converter]] = {
    "temperature": {
        **dict.fromkeys(("fahrenheit", "°f", "degf", "f"), identity),
        **dict.fromkeys(("celsius", "°c", "degc", "c"), lambda x: x * 9 / 5 + 32),
        **dict.fromkeys(("kelvin", "k"), lambda x: (x - 273.15) * 9 / 5 + 32),
    },
    "humidity": dict.fromkeys(("%", "percent", "pct"), identity),
    "speed": {
        **dict.fromkeys(("mph", "miles/hour", "mi/h"), identity),
        **dict.fromkeys(("m/s", "meters/second", "ms-1", "m s-1"), lambda x: x * _MPH_PER_MS),
        **dict.fromkeys(("knots", "knot", "kt", "kts"), lambda x: x * _MPH_PER_KNOT),
        **dict.fromkeys(("km/h", "kph", "kmh", "kilometers/hour"), lambda x: x * _MPH_PER_KMH),
    },
    "distance": {
        **dict.fromkeys(("statute miles", "miles", "mi", "statute_miles"), identity),
        **dict.fromkeys(("kilometers", "km"), lambda x: x * 1000 / 1609.344),
        **dict.fromkeys(("meters", "m"), lambda x: x / 1609.344),
    },
    "precipitation": {
        **dict.fromkeys(("inches", "in", "inch"), identity),
        **dict.fromkeys(("millimeters", "mm"), lambda x: x / 25.4),
        **dict.fromkeys(("centimeters", "cm"), lambda x: x / 2.54),
    },
}


def converter(quantity: str, unit: str) -> Converter | None:
    """The function converting ``quantity`` from ``unit`` to the canonical unit.

    Args:
        quantity: one of the keys of :data:`CANONICAL`.
        unit: the unit as written in a units row (case and surrounding space ignored).

    Returns:
        A float-to-float function (rounding to 3 decimals), or ``None`` for an unknown unit.

    Example:
        >>> converter("speed", "m/s")(10.0)
        22.369
    """
    convert = _UNITS[quantity].get(unit.strip().lower())
    if convert is None:
        return None
    if convert is identity:
        return identity
    return lambda x: round(convert(x), 3)


def known_units(quantity: str) -> list[str]:
    """The unit spellings accepted for ``quantity`` (for error messages).

    Example:
        >>> known_units("humidity")
        ['%', 'percent', 'pct']
    """
    return list(_UNITS[quantity])
