"""Interactive per-episode maps (folium / Leaflet; tiles and scripts need the network)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import folium

from flaneur.report.svg_map import COLOURS
from flaneur.world.city import City


def episode_map(
    city: City,
    reference: Sequence[int],
    path: Sequence[int],
    *,
    goals: Sequence[int] = (),
    goal_places: Sequence[int] = (),
    near_radius_m: float = 50.0,
) -> folium.Map:
    """A folium map of one episode: reference and agent paths, start, goals, places in view.

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
    """
    graph = city.graph

    def latlng(nodes: Sequence[int]) -> list[list[float]]:
        return [[float(graph.lat[n]), float(graph.lng[n])] for n in nodes if graph.located[n]]

    points = latlng([*reference, *path, *goals])
    fmap = folium.Map(location=points[0] if points else [0, 0], zoom_start=17)
    if len(reference) > 1:
        folium.PolyLine(
            latlng(reference), color=COLOURS["reference"], weight=6, tooltip="reference"
        ).add_to(fmap)
    if len(path) > 1:
        folium.PolyLine(
            latlng(path), color=COLOURS["agent"], weight=3, dash_array="6,4", tooltip="agent"
        ).add_to(fmap)
    start = reference[0] if reference else (path[0] if path else None)
    if start is not None:
        folium.CircleMarker(
            latlng([start])[0], radius=7, color=COLOURS["start"], fill=True, tooltip="start"
        ).add_to(fmap)
    for n in goals:
        folium.CircleMarker(latlng([n])[0], radius=8, color=COLOURS["goal"], tooltip="goal").add_to(
            fmap
        )
    places = city.places
    for r in goal_places:
        folium.Marker(
            [places.lat[r], places.lng[r]],
            tooltip=f"target: {places.names[r] or places[r].label}",
            icon=folium.Icon(color="purple"),
        ).add_to(fmap)
    if path and graph.located[path[-1]]:
        rows, dist = places.within(graph.xy[path[-1]], near_radius_m)
        for r, d in zip(rows.tolist(), dist.tolist(), strict=True):
            if places.names[r]:
                folium.CircleMarker(
                    [places.lat[r], places.lng[r]],
                    radius=3,
                    color=COLOURS["near"],
                    tooltip=f"{places.names[r]} ({d:.0f} m from the stop)",
                ).add_to(fmap)
    if points:
        fmap.fit_bounds(
            [
                [min(p[0] for p in points), min(p[1] for p in points)],
                [max(p[0] for p in points), max(p[1] for p in points)],
            ]
        )
    return fmap


def save_episode_map(city: City, out: str | Path, *args, **kwargs) -> Path:
    """Write :func:`episode_map` to an HTML file."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    episode_map(city, *args, **kwargs).save(str(path))
    return path
