"""Figures of a blizzard replay: a map (seed 004's Figure 5) and a timeline.

Both return a matplotlib :class:`~matplotlib.figure.Figure` built without pyplot, so they work
the same in scripts, tests (no display needed) and notebooks; ``fig.savefig(path)`` writes it.
The map's US state borders are the ones the ``/live`` page draws (``us-atlas``, shipped in
``reasoner/server/static/vendor``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import UTC, datetime

from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from connectors.mesowest.replay import Replay
from connectors.mesowest.tables import AreaRow, PlaceRow, area_rows
from reasoner.knowledge.builtins import is_number
from reasoner.server.pages import asset
from reasoner.values import Time

#: Outline margin around an area's stations, degrees of latitude (about 33 km).
_MARGIN_DEG = 0.3


def map_figure(
    result: Replay,
    areas: Sequence[AreaRow] | None = None,
    places: Sequence[PlaceRow] = (),
) -> Figure:
    """Stations by longitude and latitude: blizzard stations (a warning) large and yellow,
    others small and blue; each area outlined in red; affected places as black crosses (their
    names are in the places table).

    Args:
        result: the replay (its stations and detections).
        areas: the areas to outline (default: every area of the replay).
        places: places to mark (rows with a position; see ``tables.place_rows``).
    Returns:
        the figure.

    >>> places = place_rows(result, kb.current())  # doctest: +SKIP
    >>> map_figure(result, places=places).savefig("map.png")  # doctest: +SKIP
    """
    areas = area_rows(result) if areas is None else areas
    warned = {str(d.args[0]) for d in result.named("blizzardWarning")}
    fig = Figure(figsize=(8, 7), layout="constrained")
    ax = fig.add_subplot()
    stations = result.stations
    for index, area in enumerate(areas):
        points = [(stations[s].lon, stations[s].lat) for s in area.stations if s in stations]
        xs, ys = zip(*_outline(points), strict=True)
        label = "blizzard area" if index == 0 else None
        ax.fill(xs, ys, facecolor="red", alpha=0.15, edgecolor="red", linewidth=2, label=label)
    for kind, chosen, style in (
        ("station", [s for s in stations.values() if s.id not in warned], dict(s=25, c="tab:blue")),
        (
            "blizzard station",
            [s for s in stations.values() if s.id in warned],
            dict(s=140, c="gold", edgecolors="black", zorder=3),
        ),
    ):
        if chosen:
            ax.scatter([s.lon for s in chosen], [s.lat for s in chosen], label=kind, **style)  # type: ignore[arg-type]
    for s in stations.values():
        ax.annotate(s.id, (s.lon, s.lat), xytext=(6, 4), textcoords="offset points", fontsize=9)
    located = [(p.lon, p.lat) for p in places if p.lon is not None and p.lat is not None]
    if located:
        ax.scatter(
            [lon for lon, _ in located],
            [lat for _, lat in located],
            marker="x",
            c="black",
            s=18,
            label="affected place",
            zorder=4,
        )
    ax.margins(0.15)
    _draw_state_borders(ax)
    mean_lat = sum(s.lat for s in stations.values()) / max(1, len(stations))
    ax.set_aspect(1 / math.cos(math.radians(mean_lat)))
    ax.xaxis.set_major_locator(MaxNLocator(6))
    ax.set_xlabel("longitude")
    ax.set_ylabel("latitude")
    ax.set_title("Weather stations and blizzard areas")
    ax.legend(loc="best", fontsize=8)
    return fig


def state_borders() -> list[list[tuple[float, float]]]:
    """Every ring of the shipped US state outlines, as (longitude, latitude) points.

    >>> len(state_borders()) > 50
    True
    """
    states = json.loads(asset("vendor/us-states.geojson")[0])
    rings = []
    for feature in states["features"]:
        geometry = feature["geometry"]
        polygons = (
            [geometry["coordinates"]] if geometry["type"] == "Polygon" else geometry["coordinates"]
        )
        rings += [[(lon, lat) for lon, lat in ring] for polygon in polygons for ring in polygon]
    return rings


def _draw_state_borders(ax: Axes) -> None:
    """State borders under everything, without widening the view the stations set."""
    ax.autoscale_view()
    ax.set_autoscale_on(False)
    borders = LineCollection(state_borders(), colors="0.55", linewidths=0.8, zorder=0)
    ax.add_collection(borders, autolim=False)


def timeline_figure(result: Replay) -> Figure:
    """Wind and visibility per station over time, and below them the detections: settlings
    as thin bars, warnings as thick red bars, areas as shaded spans.

    Args:
        result: the replay.
    Returns:
        the figure.

    >>> timeline_figure(result).savefig("timeline.png")  # doctest: +SKIP
    """
    fig = Figure(figsize=(11, 8), layout="constrained")
    wind, visibility, found = fig.subplots(3, 1, sharex=True, height_ratios=[2, 2, 1.5])
    for station, series in sorted(result.series.items()):
        times = [_date(t) for t, _, _ in series]
        wind.plot(times, [_number(w) for _, w, _ in series], linewidth=1, label=station)
        visibility.plot(times, [_number(v) for _, _, v in series], linewidth=1, label=station)
    for threshold, text in ((35, "NOAA 35 mph"), (15, "weakened 15 mph")):
        wind.axhline(threshold, color="grey", linestyle="--", linewidth=0.8)
        wind.annotate(text, (0.005, threshold), xycoords=("axes fraction", "data"), fontsize=7)
    visibility.axhline(0.25, color="grey", linestyle="--", linewidth=0.8)
    visibility.set_yscale("log")
    wind.set_ylabel("wind (mph)")
    visibility.set_ylabel("visibility (mi)")
    wind.legend(loc="upper right", fontsize=7, ncol=3)

    rows = {station: i for i, station in enumerate(sorted(result.stations))}
    for (station, _), (start, end) in _settlings(result).items():
        found.plot([_date(start), _date(end)], [rows[station]] * 2, color="tab:orange", lw=3)
    for d in result.named("blizzardWarning"):
        y = rows[str(d.args[0])]
        found.plot([_date(d.start), _date(d.end)], [y, y], color="red", linewidth=7)
    for area in area_rows(result):
        for axis in (wind, visibility, found):
            axis.axvspan(_date(area.start), _date(area.end), color="red", alpha=0.08)
    found.set_yticks(list(rows.values()), list(rows))
    found.set_ylim(-0.8, len(rows) - 0.2)
    found.set_ylabel("detections")
    found.set_xlabel("time (UTC)")
    found.set_title(
        "settlings (orange), warnings (red), blizzard areas (shaded)", fontsize=9, loc="left"
    )
    return fig


def _settlings(result: Replay) -> dict[tuple[str, Time], tuple[Time, Time]]:
    """Each settling that grew (two readings or more), by (station, start): its extent."""
    chains: dict[tuple[str, Time], tuple[Time, Time]] = {}
    for d in result.named("blizzardSettling"):
        if d.args[1] < 2:  # type: ignore[operator]
            continue
        key = (str(d.args[0]), d.start)
        if key not in chains or d.end > chains[key][1]:
            chains[key] = (d.start, d.end)
    return chains


def _outline(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The convex hull of circles of :data:`_MARGIN_DEG` around the points (closed)."""
    ring = [
        (x + _MARGIN_DEG * math.cos(a) / math.cos(math.radians(y)), y + _MARGIN_DEG * math.sin(a))
        for x, y in points
        for a in (2 * math.pi * k / 24 for k in range(24))
    ]
    hull = _convex_hull(ring)
    return [*hull, hull[0]]


def _convex_hull(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Andrew's monotone chain, counter-clockwise."""
    pts = sorted(set(points))
    if len(pts) < 3:
        return pts

    def half(seq: list[tuple[float, float]]) -> list[tuple[float, float]]:
        out: list[tuple[float, float]] = []
        for p in seq:
            while len(out) >= 2 and _cross(out[-2], out[-1], p) <= 0:
                out.pop()
            out.append(p)
        return out[:-1]

    return half(pts) + half(pts[::-1])


def _cross(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _date(t: Time) -> datetime:
    return datetime.fromtimestamp(float(t), UTC)


def _number(value: object) -> float:
    return float(value) if is_number(value) else math.nan  # type: ignore[arg-type]
