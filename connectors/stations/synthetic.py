"""Seeded synthetic station tables of any size, in the CSV format of :mod:`.table`."""

from __future__ import annotations

import os
import random
from pathlib import Path

from connectors.geonames.synthetic import CONUS
from connectors.stations.table import Station, write_station_csv


def synthetic_stations(
    count: int, *, seed: int = 0, box: tuple[float, float, float, float] = CONUS
) -> list[Station]:
    """Make stations with ids ``S000000``, ``S000001``, ... uniformly spread over a box.

    Args:
        count: how many stations.
        seed: the random seed; the same seed gives the same stations.
        box: ``(min_lat, max_lat, min_lon, max_lon)``.
    Returns:
        the stations.

    >>> synthetic_stations(2, seed=1)[1].id
    'S000001'
    """
    rng = random.Random(seed)
    min_lat, max_lat, min_lon, max_lon = box
    return [
        Station(
            id=f"S{i:06d}",
            name=f"Synthetic station {i}",
            lat=round(rng.uniform(min_lat, max_lat), 5),
            lon=round(rng.uniform(min_lon, max_lon), 5),
            elevation=round(rng.uniform(0.0, 3500.0), 1),
            state="XX",
        )
        for i in range(count)
    ]


def write_synthetic_stations(
    path: str | os.PathLike[str],
    count: int,
    *,
    seed: int = 0,
    box: tuple[float, float, float, float] = CONUS,
) -> Path:
    """Write a synthetic station table.

    Args:
        path: the CSV file to write.
        count: how many stations.
        seed: the random seed.
        box: ``(min_lat, max_lat, min_lon, max_lon)``.
    Returns:
        the path written.

    >>> write_synthetic_stations("/tmp/st.csv", 3).name
    'st.csv'
    """
    write_station_csv(synthetic_stations(count, seed=seed, box=box), path)
    return Path(path)
