"""Result files and offline maps of V-IRL agent runs (``flaneur virl``): ``result.json`` and
``map.html`` written atomically, a street base map, walks and markers whose labels are text.

These live in the report layer (they draw with :mod:`flaneur.report.leaflet_map`); the
agents in :mod:`flaneur.agents.virl` only compute results.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from flaneur.registry import import_object
from flaneur.report.episode_folium import _streets_around
from flaneur.report.leaflet_map import TextTooltip, offline_map, save_map
from flaneur.world.city import City

MAP_DRAWERS: dict[str, str] = {
    "local": "flaneur.report.virl_route_maps:local_map",
    "ling": "flaneur.report.virl_route_maps:ling_map",
    "peng": "flaneur.report.virl_agent_maps:peng_map",
    "aria": "flaneur.report.virl_agent_maps:aria_map",
    "vivek": "flaneur.report.virl_agent_maps:vivek_map",
    "diego": "flaneur.report.virl_agent_maps:diego_map",
    "rx399": "flaneur.report.virl_survey_maps:robot_map",
    "imani": "flaneur.report.virl_survey_maps:planner_map",
}
"""Per agent, ``"module:function"`` drawing its scenario's map:
``draw(city, item, row) -> (folium map or None, {file name: text})``."""


def scenario_map(name: str, city: City, item: Any, row: dict[str, Any]) -> tuple[Any, dict]:
    """The map (and extra files, e.g. an SVG) of one scenario run of agent ``name``."""

    spec = MAP_DRAWERS.get(name)
    if spec is None:
        return None, {}
    draw = import_object(spec, what=f"map of {name}")
    fmap, extra = draw(city, item, row)
    return fmap, dict(extra or {})


def write_outputs(
    folder: str | Path,
    result: dict[str, Any],
    fmap: Any | None,
    extra: dict[str, str] | None = None,
) -> Path:
    """Write ``result.json`` (and ``map.html`` from a folium map, and ``extra`` text files
    by name) into ``folder``.

    Each file is written to a temporary name and renamed, so a failed run never leaves a
    half-written file. The map is saved with :func:`flaneur.report.leaflet_map.save_map`
    (Leaflet inside the page: it opens offline).
    """

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(result, indent=2, ensure_ascii=False, default=_jsonable)
    tmp = out / ".result.json.tmp"
    tmp.write_text(text, encoding="utf-8")
    if fmap is not None:
        page = save_map(fmap, out / ".map.html.tmp")
        os.replace(page, out / "map.html")
    for file_name, text in (extra or {}).items():
        part = out / f".{file_name}.tmp"
        part.write_text(text, encoding="utf-8")
        os.replace(part, out / file_name)
    os.replace(tmp, out / "result.json")
    return out


def _jsonable(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "to_dict"):
        return value.to_dict()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def map_nodes(city: City, ids: Any) -> list[int]:
    """Node indices of the node ids a plan gives (ids the city lacks left out)."""
    graph = city.graph
    return [graph.index(str(n)) for n in ids or () if str(n) in graph]


def add_start(fmap: Any, city: City, node: int, label: str, popup: str | None = None) -> None:
    """The green marker of where a plan starts."""
    add_marker(fmap, city.graph.lat[node], city.graph.lng[node], label, "green", popup=popup)


def base_map(city: City, nodes: list[int], *, margin_m: float = 150.0):
    """An offline folium map framing ``nodes``, the city's streets around them drawn."""
    # lazy: folium takes 0.7 s to import
    import folium

    graph = city.graph
    lats = [float(graph.lat[n]) for n in nodes] or [sum(city.bbox[1::2]) / 2]
    lngs = [float(graph.lng[n]) for n in nodes] or [sum(city.bbox[0::2]) / 2]
    fmap = offline_map([sum(lats) / len(lats), sum(lngs) / len(lngs)], zoom_start=16)
    streets = _streets_around(city, list(nodes), margin_m)
    if streets:
        folium.PolyLine(streets, color="#b4b4b4", weight=3, opacity=0.9).add_to(fmap)
    if len(nodes) > 1:
        fmap.fit_bounds([[min(lats), min(lngs)], [max(lats), max(lngs)]])
    return fmap


def add_path(
    fmap: Any, city: City, nodes: list[int], colour: str, label: str, dash: str | None = None
) -> None:
    """Draw a walk on a map; the label is shown as text, whatever it holds."""
    # lazy: folium takes 0.7 s to import
    import folium

    if len(nodes) < 2:
        return
    points = [[float(city.graph.lat[n]), float(city.graph.lng[n])] for n in nodes]
    line = folium.PolyLine(points, color=colour, weight=4, dash_array=dash)
    line.add_child(TextTooltip(label)).add_to(fmap)


def add_marker(
    fmap: Any, lat: float, lng: float, label: str, colour: str = "blue", popup: str | None = None
) -> None:
    """A marker whose tooltip shows ``label`` (and ``popup`` below it) as text."""
    # lazy: folium takes 0.7 s to import
    import folium

    marker = folium.CircleMarker(
        [float(lat), float(lng)], radius=7, color=colour, fill=True, fill_opacity=0.8
    )
    text = f"{label}\n{popup}" if popup else str(label)
    marker.add_child(TextTooltip(text)).add_to(fmap)


__all__ = ["add_marker", "add_path", "add_start", "base_map", "map_nodes", "write_outputs"]
