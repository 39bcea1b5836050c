"""Interactive per-episode maps (folium / Leaflet), offline: streets from the city graph.

Leaflet is inlined into the page or linked from the copy next to it (see
:mod:`flaneur.report.leaflet_map`); map tiles are drawn only with ``tiles=True``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import folium
import numpy as np

from flaneur.report.leaflet_map import TextTooltip, offline_map, save_map
from flaneur.report.svg_map import COLOURS
from flaneur.world.city import City


def _streets_around(city: City, nodes: Sequence[int], margin_m: float) -> list[list[list[float]]]:
    """Street segments (``[[lat, lng], [lat, lng]]``) within ``margin_m`` of the nodes' box."""
    graph = city.graph
    located = [n for n in nodes if graph.located[n]]
    if not located:
        return []
    xy = graph.xy
    pts = xy[np.asarray(located)]
    lo, hi = pts.min(axis=0) - margin_m, pts.max(axis=0) + margin_m
    inside = np.all((xy >= lo) & (xy <= hi), axis=1) & graph.located
    src, dst = graph.edge_sources, graph.targets.astype(np.int64)
    keep = (src < dst) & inside[src] & inside[dst]
    lat = np.round(graph.lat, 6).tolist()  # 0.1 m: shorter pages
    lng = np.round(graph.lng, 6).tolist()
    return [
        [[lat[a], lng[a]], [lat[b], lng[b]]]
        for a, b in zip(src[keep].tolist(), dst[keep].tolist(), strict=True)
    ]


def episode_map(
    city: City,
    reference: Sequence[int],
    path: Sequence[int],
    *,
    goals: Sequence[int] = (),
    goal_places: Sequence[int] = (),
    near_radius_m: float = 50.0,
    margin_m: float = 150.0,
    tiles: bool = False,
) -> folium.Map:
    """A folium map of one episode: streets, reference and agent paths, start, goals, places.

    Parameters
    ----------
    city
        The city of the episode.
    reference, path
        Node indices of the reference path and of the agent's path.
    goals, goal_places
        Goal node indices and target place rows.
    near_radius_m
        Named places within this radius of the agent's last node are marked.
    margin_m
        Streets of the city graph are drawn this far around the episode.
    tiles
        Add OpenStreetMap tiles under the streets (the browser fetches them when online).
    """
    graph, places = city.graph, city.places
    points = _latlng(city, [*reference, *path, *goals])
    points += [[float(places.lat[r]), float(places.lng[r])] for r in goal_places]
    fmap = offline_map(points[0] if points else [0.0, 0.0], zoom_start=17, tiles=tiles)
    streets = _streets_around(city, [*reference, *path, *goals], margin_m)
    if streets:
        folium.PolyLine(streets, color="#b4b4b4", weight=3, opacity=0.9).add_to(fmap)
    if len(reference) > 1:
        line = folium.PolyLine(_latlng(city, reference), color=COLOURS["reference"], weight=6)
        line.add_child(TextTooltip("reference")).add_to(fmap)
    if len(path) > 1:
        line = folium.PolyLine(
            _latlng(city, path), color=COLOURS["agent"], weight=3, dash_array="6,4"
        )
        line.add_child(TextTooltip("agent")).add_to(fmap)
    _add_markers(fmap, city, reference, path, goals, goal_places)
    if path and graph.located[path[-1]]:
        _add_near_places(fmap, city, path[-1], near_radius_m)
    if points:
        fmap.fit_bounds(
            [
                [min(p[0] for p in points), min(p[1] for p in points)],
                [max(p[0] for p in points), max(p[1] for p in points)],
            ]
        )
    return fmap


def _latlng(city: City, nodes: Sequence[int]) -> list[list[float]]:
    """``[lat, lng]`` of the located ones of ``nodes``."""
    graph = city.graph
    return [[float(graph.lat[n]), float(graph.lng[n])] for n in nodes if graph.located[n]]


def _add_markers(
    fmap: folium.Map,
    city: City,
    reference: Sequence[int],
    path: Sequence[int],
    goals: Sequence[int],
    goal_places: Sequence[int],
) -> None:
    """Mark the start, the goal nodes and the target places, each with its tooltip."""
    graph, places = city.graph, city.places
    start = reference[0] if reference else (path[0] if path else None)
    if start is not None and graph.located[start]:
        marker = folium.CircleMarker(
            _latlng(city, [start])[0], radius=7, color=COLOURS["start"], fill=True
        )
        marker.add_child(TextTooltip(f"start ({graph.ids[start]})")).add_to(fmap)
    for n in goals:
        if graph.located[n]:
            marker = folium.CircleMarker(_latlng(city, [n])[0], radius=8, color=COLOURS["goal"])
            marker.add_child(TextTooltip(f"goal ({graph.ids[n]})")).add_to(fmap)
    for r in goal_places:
        marker = folium.CircleMarker(
            [places.lat[r], places.lng[r]],
            radius=6,
            fill=True,
            color=COLOURS["place"],
            fill_opacity=0.9,
        )
        marker.add_child(TextTooltip(f"target: {places.names[r] or places[r].label}")).add_to(fmap)


def _add_near_places(fmap: folium.Map, city: City, node: int, radius_m: float) -> None:
    """Mark the named places within ``radius_m`` of ``node`` (where the agent stopped)."""
    places = city.places
    rows, dist = places.within(city.graph.xy[node], radius_m)
    for r, d in zip(rows.tolist(), dist.tolist(), strict=True):
        if places.names[r]:
            marker = folium.CircleMarker(
                [places.lat[r], places.lng[r]], radius=3, color=COLOURS["near"]
            )
            text = f"{places.names[r]} ({d:.0f} m from the stop)"
            marker.add_child(TextTooltip(text)).add_to(fmap)


def save_episode_map(
    city: City,
    out: str | Path,
    *args,
    assets_dir: str | Path | None = None,
    **kwargs,
) -> Path:
    """Write :func:`episode_map` to an HTML file that works offline.

    ``assets_dir`` (the folder of ``out``) holds one shared copy of Leaflet that the page
    links; by default Leaflet is inlined into the page.
    """
    return save_map(episode_map(city, *args, **kwargs), out, assets_dir=assets_dir)
