"""Seeded synthetic GeoNames dumps of any size, for benchmarks and scale tests.

Rows follow the real 19-column format (:data:`~connectors.geonames.dump.COLUMNS`) with feature
codes the blizzard application cares about (schools, hospitals, airports, roads, tunnels, ...)
spread uniformly over a latitude/longitude box (by default the contiguous United States).
"""

from __future__ import annotations

import gzip
import os
import random
from pathlib import Path

#: (feature class, feature code, name stem) drawn uniformly for each row.
KINDS: tuple[tuple[str, str, str], ...] = (
    ("P", "PPL", "Town"),
    ("S", "SCH", "School"),
    ("S", "HSP", "Hospital"),
    ("S", "AIRP", "Airport"),
    ("R", "RD", "Road"),
    ("R", "RR", "Railroad"),
    ("S", "TNL", "Tunnel"),
    ("T", "MT", "Mountain"),
    ("H", "STM", "Creek"),
    ("L", "PRK", "Park"),
)

#: The contiguous United States: (min lat, max lat, min lon, max lon).
CONUS = (25.0, 49.0, -124.5, -67.0)

#: Ids start here so that synthetic features never collide with real GeoNames ids.
FIRST_ID = 90_000_000


def write_synthetic_dump(
    path: str | os.PathLike[str],
    rows: int,
    *,
    seed: int = 0,
    box: tuple[float, float, float, float] = CONUS,
) -> Path:
    """Write a synthetic GeoNames dump (gzip-compressed when the name ends in ``.gz``).

    Args:
        path: the file to write.
        rows: how many features.
        seed: the random seed; the same seed gives the same file.
        box: ``(min_lat, max_lat, min_lon, max_lon)`` the features fall in.
    Returns:
        the path written.

    >>> write_synthetic_dump("/tmp/gn.txt", 10, seed=1).name
    'gn.txt'
    """
    file = Path(path)
    rng = random.Random(seed)
    min_lat, max_lat, min_lon, max_lon = box
    opener = gzip.open if file.suffix == ".gz" else open
    with opener(file, "wt", encoding="utf-8", newline="\n") as out:
        for i in range(rows):
            fclass, fcode, stem = KINDS[rng.randrange(len(KINDS))]
            name = f"{stem} {i}"
            population = rng.randrange(100, 200_000) if fclass == "P" else 0
            cols = (
                str(FIRST_ID + i),
                name,
                name,
                "",
                f"{rng.uniform(min_lat, max_lat):.5f}",
                f"{rng.uniform(min_lon, max_lon):.5f}",
                fclass,
                fcode,
                "US",
                "",
                "",
                "",
                "",
                "",
                str(population),
                "",
                str(rng.randrange(0, 3500)),
                "America/Denver",
                "2024-01-01",
            )
            out.write("\t".join(cols) + "\n")
    return file
