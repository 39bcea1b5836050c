"""Maps of RX-399's and Imani's scenario runs (``flaneur virl rx399|imani FILE -o DIR``).

``robot_map`` draws the walked route and a marker per counted object; ``planner_map`` the
region, the sampling walk, a layer of grid cells coloured by the objects counted in each
(plain Leaflet rectangles: no plug-in script, so the page stays offline), the OpenStreetMap
ground truth as black dots and an inset heat map. Both return the visual memory as
``memory.json`` (to continue from with ``memory = "memory.json"``); the planner also the
heat map as ``heatmap.svg``. The agents write no files; this module only draws their plan.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import shapely

from flaneur.bench.survey_scenarios import truth_in_polygon
from flaneur.perception.survey import furniture_labels
from flaneur.report.escaping import html_text
from flaneur.report.leaflet_map import TextTooltip
from flaneur.report.virl_maps import add_marker, add_path, base_map, map_nodes
from flaneur.services.region import polygon_from_latlng
from flaneur.world.city import City

PALETTE = ("#fff5eb", "#fdd0a2", "#fd8d3c", "#d94801", "#7f2704")
"""Heat-map colours from no objects to the most in a cell."""


def _files(row: dict[str, Any]) -> dict[str, str]:
    memory = (row.get("result") or {}).get("memory")
    return {"memory.json": json.dumps(memory, indent=1)} if memory else {}


def _object_markers(fmap: Any, objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        add_marker(
            fmap,
            obj["lat"],
            obj["lng"],
            f"{obj['category']} #{obj['id']}",
            "red",
            popup=f"score {obj['score']}, seen {obj['sightings']}x from {obj['node']}",
        )


def robot_map(city: City, item: Any, row: dict[str, Any]) -> tuple[Any, dict[str, str]]:
    """RX-399's route and the objects it counted; the visual memory as ``memory.json``."""
    result = row.get("result") or {}
    nodes = map_nodes(city, list(result.get("walked") or item.get("route") or []))
    fmap = base_map(city, nodes)
    label = f"route {item.get('start_label', item.get('start'))} -> "
    add_path(fmap, city, nodes, "#2b6cb0", label + str(item.get("end_label", item.get("end"))))
    _object_markers(fmap, list(result.get("objects") or []))
    return fmap, _files(row)


def heat_cells(
    city: City, polygon: shapely.Polygon, points: list[tuple[float, float]], cell_m: float
) -> list[dict[str, Any]]:
    """Counts of ``(lat, lng)`` points per square cell of ``cell_m`` over the polygon."""
    proj = city.graph.projection
    ring = np.asarray(polygon.exterior.coords)
    x, y = proj.forward(ring[:, 1], ring[:, 0])
    x0, y0 = float(np.min(x)), float(np.min(y))
    counts: dict[tuple[int, int], int] = {}
    if points:
        px, py = proj.forward(
            np.asarray([p[0] for p in points]), np.asarray([p[1] for p in points])
        )
        cols, rows = ((px - x0) // cell_m).astype(int), ((py - y0) // cell_m).astype(int)
        for cx, cy in zip(cols.tolist(), rows.tolist(), strict=True):
            counts[(cx, cy)] = counts.get((cx, cy), 0) + 1
    cells = []
    for (cx, cy), n in sorted(counts.items()):
        lats, lngs = proj.inverse(
            np.asarray([x0 + cx * cell_m, x0 + (cx + 1) * cell_m]),
            np.asarray([y0 + cy * cell_m, y0 + (cy + 1) * cell_m]),
        )
        cells.append(
            {
                "south": float(lats[0]),
                "north": float(lats[1]),
                "west": float(lngs[0]),
                "east": float(lngs[1]),
                "count": n,
            }
        )
    return cells


def colour(n: int, top: int) -> str:
    """The heat-map colour of a cell holding ``n`` objects when the fullest holds ``top``."""
    return PALETTE[min(len(PALETTE) - 1, round((len(PALETTE) - 1) * n / max(top, 1)))]


def heat_svg(
    polygon: shapely.Polygon,
    cells: list[dict[str, Any]],
    truth: list[tuple[float, float]],
    title: str,
    width: int = 600,
) -> str:
    """An offline SVG heat map: cells coloured by count, the polygon, ground truth as dots."""
    west, south, east, north = polygon.bounds
    aspect = (north - south) / max((east - west) * np.cos(np.radians((north + south) / 2)), 1e-9)
    height = int(width * aspect)

    def px(lat: float, lng: float) -> tuple[float, float]:
        return ((lng - west) / (east - west) * width, (north - lat) / (north - south) * height)

    top = max((c["count"] for c in cells), default=0)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 40}" '
        f'font-family="sans-serif" font-size="12"><rect width="100%" height="100%" '
        f'fill="white"/><text x="4" y="{height + 16}">{html_text(title)}</text>'
        f'<text x="4" y="{height + 32}">cells: counted (max {top}); '
        f"dots: OSM ground truth</text>"
    ]
    for c in cells:
        ax, ay = px(c["north"], c["west"])
        bx, by = px(c["south"], c["east"])
        parts.append(
            f'<rect x="{ax:.1f}" y="{ay:.1f}" width="{bx - ax:.1f}" '
            f'height="{by - ay:.1f}" fill="{colour(c["count"], top)}" '
            f'fill-opacity="0.85"><title>{c["count"]}</title></rect>'
        )
    ring = " ".join("{:.1f},{:.1f}".format(*px(lat, lng)) for lng, lat in polygon.exterior.coords)
    parts.append(f'<polygon points="{ring}" fill="none" stroke="#2b6cb0" stroke-width="2"/>')
    for lat, lng in truth:
        x, y = px(lat, lng)
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="black"/>')
    parts.append("</svg>")
    return "".join(parts)


def planner_map(city: City, item: Any, row: dict[str, Any]) -> tuple[Any, dict[str, str]]:
    """Imani's region, walk, heat map and the OSM ground truth; ``heatmap.svg`` and
    ``memory.json`` beside it."""
    # lazy: folium takes 0.7 s to import
    import folium

    result = row.get("result") or {}
    polygon = polygon_from_latlng(item["polygon"])
    objects = list(result.get("objects") or [])
    cells = heat_cells(city, polygon, [(o["lat"], o["lng"]) for o in objects], item["spacing"])
    furn = city.furniture
    truth = [
        (float(furn.lat[r]), float(furn.lng[r]))
        for c in dict.fromkeys(furniture_labels(item["labels"]).values())
        for r in truth_in_polygon(city, polygon, c)
    ]
    title = f"{item.get('name', 'Imani')}: {', '.join(item['labels'])} in the region"
    fmap = base_map(city, map_nodes(city, list(item.get("viewpoints") or [])))
    ring = [[lat, lng] for lng, lat in polygon.exterior.coords]
    folium.PolyLine(ring, color="#2b6cb0", weight=3).add_to(fmap)
    top = max((c["count"] for c in cells), default=0)
    heat = folium.FeatureGroup(name="heat map (counted objects per cell)")
    for c in cells:
        folium.Rectangle(
            [[c["south"], c["west"]], [c["north"], c["east"]]],
            weight=0,
            fill=True,
            fill_color=colour(c["count"], top),
            fill_opacity=0.7,
        ).add_to(heat)
    heat.add_to(fmap)
    walk = map_nodes(city, list(result.get("walked") or item.get("walk") or []))
    add_path(fmap, city, walk, "#2f855a", "sampling walk", dash="4,4")
    for lat, lng in truth:
        dot = folium.CircleMarker(
            [lat, lng], radius=3, color="black", fill=True, weight=1, fill_opacity=0.9
        )
        dot.add_child(TextTooltip("OpenStreetMap ground truth")).add_to(fmap)
    small = heat_svg(polygon, cells, truth, f"{item.get('name', 'Imani')}: counted per cell", 320)
    fmap.get_root().html.add_child(
        folium.Element(
            f'<div style="position:absolute;right:8px;bottom:24px;z-index:1000">{small}</div>'
        )
    )
    return fmap, {"heatmap.svg": heat_svg(polygon, cells, truth, title), **_files(row)}
