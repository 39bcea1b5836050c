"""An interactive map of a city (folium / Leaflet): streets, viewpoints, places by category.

The page works offline (Leaflet is inside it; tiles only with ``tiles=True``) and shows place
names and node ids literally (see :mod:`flaneur.report.leaflet_map`).
"""

from __future__ import annotations

from pathlib import Path

import folium
import numpy as np

from flaneur.report.leaflet_map import TextTooltip, layer, offline_map, save_map
from flaneur.world.city import City
from flaneur.world.taxonomy import CATEGORIES, GROUPS

GROUP_COLOURS = dict(
    zip(
        GROUPS,
        (
            "#e6194b",
            "#3cb44b",
            "#4363d8",
            "#f58231",
            "#911eb4",
            "#008080",
            "#808000",
            "#46f0f0",
            "#f032e6",
            "#9a6324",
            "#bcf60c",
            "#000075",
            "#800000",
            "#808080",
            "#fabebe",
        ),
        strict=False,
    )
)
UNCATEGORIZED_COLOUR = "#555555"


def place_colour(categories: tuple[str, ...]) -> str:
    """Colour of a place marker: by the group of its first category."""
    for category in categories:
        info = CATEGORIES.get(category)
        if info is not None:
            return GROUP_COLOURS.get(info.group, UNCATEGORIZED_COLOUR)
    return UNCATEGORIZED_COLOUR


def city_map(
    city: City, *, max_viewpoints: int = 20_000, show_viewpoints: bool = True, tiles: bool = False
) -> folium.Map:
    """Build a folium map of ``city``.

    Parameters
    ----------
    city
        The city to draw.
    max_viewpoints
        Viewpoint markers beyond this count are left out (streets are always drawn).
    show_viewpoints
        Draw a small dot per viewpoint.
    tiles
        Add OpenStreetMap tiles under the streets (the browser fetches them when online).

    Returns
    -------
    folium.Map
        Layers: streets, viewpoints, one layer per category group of places.
    """
    graph = city.graph
    west, south, east, north = city.bbox
    fmap = offline_map([(south + north) / 2, (west + east) / 2], zoom_start=15, tiles=tiles)
    streets = layer("streets")
    src, dst = graph.edge_sources, graph.targets.astype(np.int64)
    once = (src < dst) & graph.located[src] & graph.located[dst]
    lines = [
        [[graph.lat[a], graph.lng[a]], [graph.lat[b], graph.lng[b]]]
        for a, b in zip(src[once].tolist(), dst[once].tolist(), strict=True)
    ]
    if lines:
        folium.PolyLine(lines, color="#3388ff", weight=2, opacity=0.7).add_to(streets)
    streets.add_to(fmap)
    if show_viewpoints:
        points = layer("viewpoints", show=graph.n_nodes <= 5000)
        located = np.flatnonzero(graph.located)[:max_viewpoints]
        for i in located.tolist():
            marker = folium.CircleMarker(
                [graph.lat[i], graph.lng[i]],
                radius=1.5,
                color="#222",
                weight=1,
                fill=True,
                fill_opacity=0.8,
            ).add_to(points)
            marker.add_child(TextTooltip(graph.ids[i]))
        points.add_to(fmap)
    groups: dict[str, folium.FeatureGroup] = {}
    places = city.places
    for i in range(len(places)):
        cats = places.categories[i]
        info = CATEGORIES.get(cats[0]) if cats else None
        group = info.group if info else "uncategorized"
        group_layer = groups.setdefault(group, layer(f"places: {group}"))
        label = places.names[i] or (cats[0] if cats else "place")
        marker = folium.CircleMarker(
            [places.lat[i], places.lng[i]],
            radius=4,
            color=place_colour(cats),
            fill=True,
            fill_opacity=0.9,
        ).add_to(group_layer)
        marker.add_child(TextTooltip(f"{label} ({', '.join(cats) or 'no category'})"))
    for group_layer in groups.values():
        group_layer.add_to(fmap)
    folium.LayerControl(collapsed=False).add_to(fmap)
    fmap.fit_bounds([[south, west], [north, east]])
    return fmap


def save_city_map(city: City, path: str | Path, **kwargs) -> Path:
    """Write :func:`city_map` to a self-contained HTML file and return its path."""
    return save_map(city_map(city, **kwargs), path)
