"""The maps of Local's and Ling's scenario runs (``flaneur virl local|ling FILE -o DIR``).

``local_map``: Local's route, a marker at each milestone (its fields as text) and the
destination. ``ling_map``: every route Local gave (dashed, one per ask), Ling's walk, the
start and the destination. Both read only the scenario and its run row.
"""

from __future__ import annotations

from typing import Any

from flaneur.report.virl_maps import add_marker, add_path, add_start, base_map, map_nodes
from flaneur.world.city import City

ROUTE_COLOUR = "#2b6cb0"
WALK_COLOUR = "#2f855a"


def local_map(city: City, item: Any, row: dict[str, Any]) -> tuple[Any, dict[str, str]]:
    """Local's answer on a map (``None`` when the row holds no answer)."""
    result = row.get("result") or {}
    route = map_nodes(city, (result.get("route") or {}).get("node_ids") or [])
    if not route:
        return None, {}
    graph = city.graph
    fmap = base_map(city, route)
    add_path(fmap, city, route, ROUTE_COLOUR, "Local's route")
    for milestone in result.get("milestones") or []:
        node = int(milestone["node"])
        label = f"milestone {milestone['index']}"
        add_marker(fmap, graph.lat[node], graph.lng[node], label, "orange", popup=str(milestone))
    goal = result.get("destination") or {}
    if "lat" in goal:
        add_marker(fmap, goal["lat"], goal["lng"], str(goal.get("name", "")), "red")
    add_start(fmap, city, route[0], f"start: {result.get('start', '')}")
    return fmap, {}


def ling_map(city: City, item: Any, row: dict[str, Any]) -> tuple[Any, dict[str, str]]:
    """Ling's trip on a map: Local's routes and her walk (``None`` without a walk)."""
    walk = map_nodes(city, list(row.get("path") or []))
    if not walk:
        return None, {}
    asked = [a for r in row.get("records") or [] for a in r.get("asked") or []]
    routes = [map_nodes(city, a.get("route") or []) for a in asked]
    fmap = base_map(city, walk + [n for r in routes for n in r])
    for k, route in enumerate(routes, start=1):
        add_path(fmap, city, route, ROUTE_COLOUR, f"Local's route {k}", dash="6,4")
    add_path(fmap, city, walk, WALK_COLOUR, "Ling's walk")
    metadata = getattr(item, "metadata", {}) or {}
    goal = metadata.get("destination_latlng")
    if goal:
        add_marker(fmap, goal[0], goal[1], str(metadata.get("destination", "")), "red")
    question = metadata.get("question") or getattr(item, "instruction", "")
    add_start(fmap, city, walk[0], "start", popup=str(question))
    return fmap, {}


__all__ = ["ling_map", "local_map"]
