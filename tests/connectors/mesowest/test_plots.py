"""The blizzard map: stations in view, US state borders drawn under them."""

from __future__ import annotations

from matplotlib.collections import LineCollection

from connectors.mesowest.plots import map_figure, state_borders
from connectors.mesowest.replay import Replay
from connectors.stations.table import Station


def test_map_has_the_state_borders_and_keeps_the_stations_view() -> None:
    stations = {
        "KSLC": Station("KSLC", "Salt Lake City", 40.79, -111.98, 1289.6, "UT"),
        "KEVW": Station("KEVW", "Evanston", 41.27, -111.03, 2177.2, "WY"),
    }
    ax = map_figure(Replay(stations), areas=[]).axes[0]
    borders = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert len(borders) == 1
    assert len(borders[0].get_segments()) == len(state_borders())
    # 15% margins around the stations' extent, not the whole country.
    west, east = ax.get_xlim()
    south, north = ax.get_ylim()
    assert (round(west, 3), round(east, 3)) == (-112.122, -110.888)
    assert (round(south, 3), round(north, 3)) == (40.718, 41.342)


def test_state_borders_cross_at_four_corners() -> None:
    # Utah, Colorado, Arizona and New Mexico meet at 109.05 W, 37.0 N (within 0.01 degrees).
    near = [
        ring
        for ring in state_borders()
        if any(abs(lon + 109.045) < 0.01 and abs(lat - 37.0) < 0.01 for lon, lat in ring)
    ]
    assert len(near) == 4
