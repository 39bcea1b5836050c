"""An interactive map of a city (folium / Leaflet): streets, viewpoints, places by category."""

from __future__ import annotations

from pathlib import Path

import folium
import numpy as np

from flaneur.world.city import City
from flaneur.world.taxonomy import CATEGORIES, GROUPS

GROUP_COLOURS = dict(
    zip(
        GROUPS,
        (
            "#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#008080", "#808000",
            "#46f0f0", "#f032e6", "#9a6324", "#bcf60c", "#000075", "#800000", "#808080",
            "#fabebe",
        ),
        strict=False,
    )
)  # fmt: skip
UNCATEGORIZED_COLOUR = "#555555"


def place_colour(categories: tuple[str, ...]) -> str:
    """Colour of a place marker: by the group of its first category."""
    for category in categories:
        info = CATEGORIES.get(category)
        if info is not None:
            return GROUP_COLOURS.get(info.group, UNCATEGORIZED_COLOUR)
    return UNCATEGORIZED_COLOUR


def city_map(
    city: City, *, max_viewpoints: int = 20_000, show_viewpoints: bool = True
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

    Returns
    -------
    folium.Map
        Layers: streets, viewpoints, one layer per category group of places.
    """
    graph = city.graph
    west, south, east, north = city.bbox
    fmap = folium.Map(location=[(south + north) / 2, (west + east) / 2], zoom_start=15, tiles=None)
    folium.TileLayer("OpenStreetMap", name="OpenStreetMap").add_to(fmap)
    streets = folium.FeatureGroup(name="streets")
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
        points = folium.FeatureGroup(name="viewpoints", show=graph.n_nodes <= 5000)
        located = np.flatnonzero(graph.located)[:max_viewpoints]
        for i in located.tolist():
            folium.CircleMarker(
                [graph.lat[i], graph.lng[i]], radius=1.5, color="#222", weight=1,
                fill=True, fill_opacity=0.8, tooltip=str(graph.ids[i]),
            ).add_to(points)  # fmt: skip
        points.add_to(fmap)
    groups: dict[str, folium.FeatureGroup] = {}
    places = city.places
    for i in range(len(places)):
        cats = places.categories[i]
        info = CATEGORIES.get(cats[0]) if cats else None
        group = info.group if info else "uncategorized"
        layer = groups.setdefault(group, folium.FeatureGroup(name=f"places: {group}"))
        label = places.names[i] or (cats[0] if cats else "place")
        folium.CircleMarker(
            [places.lat[i], places.lng[i]], radius=4, color=place_colour(cats), fill=True,
            fill_opacity=0.9, tooltip=f"{label} ({', '.join(cats) or 'no category'})",
        ).add_to(layer)  # fmt: skip
    for layer in groups.values():
        layer.add_to(fmap)
    folium.LayerControl(collapsed=False).add_to(fmap)
    fmap.fit_bounds([[south, west], [north, east]])
    return fmap


def save_city_map(city: City, path: str | Path, **kwargs) -> Path:
    """Write :func:`city_map` to an HTML file and return its path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    city_map(city, **kwargs).save(str(out))
    return out
