"""Maps of the planner agents' scenario runs (``flaneur virl peng|aria|vivek|diego``).

Each drawer is ``draw(city, item, row) -> (folium map, {extra file: text})`` (see
:data:`flaneur.report.virl_maps.MAP_DRAWERS`), reading the plan from ``row["result"]``.
Labels are data (place names, model explanations) and are shown as text by
:func:`~flaneur.report.virl_maps.add_marker` and :func:`~flaneur.report.virl_maps.add_path`;
Diego's ``travel_times.svg`` escapes every string it writes.
"""

from __future__ import annotations

from typing import Any

from flaneur.report.escaping import html_text
from flaneur.report.virl_maps import add_marker, add_path, add_start, base_map, map_nodes
from flaneur.world.city import City


def peng_map(city: City, item: Any, row: dict[str, Any]) -> tuple[Any, dict[str, str]]:
    """The order given, the optimised route, the greedy-bearing walk and the numbered stops."""
    result = row["result"]
    given = map_nodes(city, result["given"]["node_ids"])
    fmap = base_map(city, given)
    add_path(fmap, city, given, "#999999", "given order", dash="4,6")
    add_path(fmap, city, map_nodes(city, result["route"]["node_ids"]), "#2b6cb0", "optimized order")
    walk = map_nodes(city, result["walk"]["node_ids"])
    add_path(fmap, city, walk, "#2f855a", "greedy-bearing walk", dash="2,4")
    places = {p["name"]: p for p in result["places"]}
    for k, name in enumerate(result["optimized_order"][1:], start=1):
        place = places[name]
        add_marker(fmap, place["lat"], place["lng"], f"{k}. {name}", "red")
    add_start(fmap, city, map_nodes(city, result["stops"][:1])[0], f"start: {result['start']}")
    return fmap, {}


def aria_map(city: City, item: Any, row: dict[str, Any]) -> tuple[Any, dict[str, str]]:
    """The start and the recommendations, numbered best first (the best in red)."""
    result = row["result"]
    start = map_nodes(city, [result["start_node"]])[0]
    recs = result["recommendations"]
    places = city.places
    nodes = [int(city.graph.nearest_node(places.lat[r["row"]], places.lng[r["row"]])) for r in recs]
    fmap = base_map(city, [start, *nodes])
    add_start(fmap, city, start, f"start: {result['start']}")
    for k, rec in enumerate(recs, start=1):
        add_marker(
            fmap,
            places.lat[rec["row"]],
            places.lng[rec["row"]],
            f"{k}. {rec['name']} ({rec['rating']})",
            "red" if k == 1 else "blue",
            popup=f"{rec['overview']} {rec['explanation']}",
        )
    return fmap, {}


def vivek_map(city: City, item: Any, row: dict[str, Any]) -> tuple[Any, dict[str, str]]:
    """The ranked listings, numbered best first (the best in red), framed with the rest."""
    ranked = row["result"]["ranked"]
    offered = item.get("listings") if isinstance(item.get("listings"), list) else ranked
    graph = city.graph
    fmap = base_map(
        city, [int(graph.nearest_node(x["latitude"], x["longitude"])) for x in offered or ranked]
    )
    for k, x in enumerate(ranked, start=1):
        add_marker(
            fmap,
            x["latitude"],
            x["longitude"],
            f"{k}. {x['formattedAddress']} ({x['price']:.0f}, rating {x['rating']})",
            "red" if k == 1 else "blue",
            popup=str(x["explanation"]),
        )
    return fmap, {}


def diego_map(city: City, item: Any, row: dict[str, Any]) -> tuple[Any, dict[str, str]]:
    """The grounded plan's legs and stops; ``travel_times.svg`` when the ablation ran."""
    result = row["result"]
    grounded = result["grounded_plan"]
    legs = [a for a in grounded["plan"] if a["type"] == "transport"]
    start = map_nodes(city, [result["start_node"]])[0]
    fmap = base_map(
        city, [n for a in legs for n in map_nodes(city, a["route_node_ids"])] or [start]
    )
    add_start(fmap, city, start, f"start: {result['start']}")
    for a in legs:
        add_path(
            fmap,
            city,
            map_nodes(city, a["route_node_ids"]),
            "#2b6cb0",
            f"{a['start']} {a['content']}",
        )
        end = map_nodes(city, [a["node_id"]])[0]
        add_marker(
            fmap, city.graph.lat[end], city.graph.lng[end], f"{a['end']} {a['place']}", "red"
        )
    extra = {}
    if result.get("ungrounded_plan"):
        extra["travel_times.svg"] = travel_time_svg(grounded, result["ungrounded_plan"])
    return fmap, extra


def travel_time_svg(grounded: dict[str, Any], ungrounded: dict[str, Any]) -> str:
    """A bar figure: planned vs graph minutes per travel leg, for both plans (escaped)."""
    rows = [("grounded", a) for a in grounded["plan"] if a["type"] == "transport"]
    rows += [("ungrounded", a) for a in ungrounded["plan"] if a["type"] == "transport"]
    top = max([1.0] + [max(a["planned_min"], a["graph_min"]) for _, a in rows])
    width, label_w, bar_h = 720, 260, 10
    height = 40 + 2 * bar_h * len(rows) + 8 * len(rows) + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">',
        '<text x="4" y="16" font-size="13" font-weight="bold">Travel time per leg: '
        "planned (blue) vs street graph (orange), minutes</text>",
        f'<text x="4" y="32" font-size="11">MAE grounded {grounded["travel_time_mae_min"]}'
        f" min, ungrounded {ungrounded['travel_time_mae_min']} min</text>",
    ]
    y = 44
    scale = (width - label_w - 60) / top
    for which, a in rows:
        parts.append(
            f'<text x="4" y="{y + bar_h + 3}" font-size="10">'
            f"{which}: {html_text(a['place'], limit=40)}</text>"
        )
        for k, (value, colour) in enumerate(
            ((a["planned_min"], "#2b6cb0"), (a["graph_min"], "#dd6b20"))
        ):
            parts.append(
                f'<rect x="{label_w}" y="{y + k * bar_h}" width="{value * scale:.1f}" '
                f'height="{bar_h - 1}" fill="{colour}"/><text x="'
                f'{label_w + value * scale + 3:.1f}" y="{y + k * bar_h + 8}" '
                f'font-size="8">{value:.1f}</text>'
            )
        y += 2 * bar_h + 8
    parts.append("</svg>")
    return "".join(parts)
