"""VLN routes with V-IRL's filters (``collect_vln_routes.py``) and the oracle tourist's success.

Routes: the destination is a named place of the type list (V-IRL: the 20 types) with a
street viewpoint within 20 m; the start is the viewpoint of another named place 40-150 m
away (straight line); the walking route is at most 150 m with 1-2 intersections (2-3 steps);
every intersection (the end of each step but the last) has a landmark (a named place within
Local's landmark radius, :func:`flaneur.agents.virl.local.landmark_at`); at most
``per_region`` routes per region. V-IRL's collector kept the first valid start; here every
candidate start is checked and the one with the most distinct landmarks along the route is
kept (ties: the seeded order).

Evaluation (this module): Local (template instructions) and Ling with her map-based
landmark recogniser (V-IRL's oracle row), one instruction per route; Success = stopped
within 25 m of the destination, over all routes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from flaneur.bench.regions import Region, region_of_points
from flaneur.bench.types import place_virl_types
from flaneur.world.city import City

__all__ = ["VLN_VERSION", "build_vln_routes", "evaluate_vln_oracle"]

VLN_VERSION = 1
DEST_VIEWPOINT_M = 20.0
START_MIN_M, START_MAX_M, ROUTE_MAX_M = 40.0, 150.0, 150.0


def _route_landmarks(city: City, route: Any, dest_row: int) -> list[int] | None:
    from flaneur.agents.virl.local import landmark_at

    found = []
    for step in route.steps[:-1]:
        row = landmark_at(city, step.end_node, exclude=dest_row)
        if row < 0:
            return None
        found.append(row)
    return found


def build_vln_routes(
    city: City, regions: Sequence[Region], types: Sequence[str], *, seed: int = 0,
    per_region: int = 10,
) -> list[dict[str, Any]]:
    """Routes as dicts: ``route_id``, ``region``, destination place, start node, heading,
    route nodes, length, intersections and landmark names."""
    from flaneur.services.directions import UnreachableError, directions

    places, graph = city.places, city.graph
    rng = np.random.default_rng(seed)
    names = region_of_points(list(regions), places.lat, places.lng)
    named = np.flatnonzero(places.names != "")
    if named.size == 0:
        return []
    nodes = np.atleast_1d(graph.nearest_node(places.lat[named], places.lng[named]))
    gap = np.hypot(*(graph.xy[nodes] - places.xy[named]).T)
    node_of = dict(zip(named.tolist(), nodes.tolist(), strict=True))
    near = {int(r) for r, g in zip(named.tolist(), gap.tolist(), strict=True)
            if g <= DEST_VIEWPOINT_M}
    out: list[dict[str, Any]] = []
    for region in regions:
        dests = [r for r in sorted(near) if names[r] == region.name
                 and place_virl_types(places.categories[r], types)]
        kept = 0
        for dest in [dests[i] for i in rng.permutation(len(dests))]:
            if kept >= per_region:
                break
            goal = node_of[dest]
            rows, dist = places.within(places.xy[dest], START_MAX_M)
            starts = sorted({node_of[r] for r, d in zip(rows.tolist(), dist.tolist(), strict=True)
                             if r in node_of and r != dest and d >= START_MIN_M
                             and node_of[r] != goal})
            best = None
            for start in [starts[i] for i in rng.permutation(len(starts))]:
                try:
                    route = directions(city, start, goal)
                except UnreachableError:
                    continue
                if route.distance_m > ROUTE_MAX_M or not 2 <= len(route.steps) <= 3:
                    continue
                marks = _route_landmarks(city, route, dest)
                if marks is None:
                    continue
                if best is None or len(set(marks)) > len(set(best[2])):
                    best = (start, route, marks)
            if best is None:
                continue
            start, route, marks = best
            out.append({
                "route_id": f"{region.name}-{len(out)}", "region": region.name,
                "destination": str(places.names[dest]), "destination_row": int(dest),
                "destination_id": str(places.ids[dest]),
                "types": list(place_virl_types(places.categories[dest], types)),
                "start": str(graph.ids[start]), "goal": str(graph.ids[goal]),
                "heading": round(float(rng.uniform(0, 360)), 1),
                "length_m": round(route.distance_m, 1), "intersections": len(route.steps) - 1,
                "landmarks": [str(places.names[r]) for r in marks],
            })  # fmt: skip
            kept += 1
    return out


def evaluate_vln_oracle(
    city: City, routes: Iterable[dict[str, Any]],
    on_result: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Local + Ling (map landmarks = oracle), one instruction per route; Success over all."""
    from flaneur.agents.virl.ling import Ling
    from flaneur.agents.virl.local import Local
    from flaneur.services.geocode import GeocodeResult

    places, graph = city.places, city.graph
    ling, local = Ling(city, max_asks=1), Local(city)
    results = []
    for r in routes:
        row = int(r["destination_row"])
        goal = GeocodeResult(r["destination"], "place", float(places.lat[row]),
                             float(places.lng[row]), graph.index(r["goal"]), row, 100.0)
        out = ling.travel(local, f"How do I get to {r['destination']}?",
                          graph.index(r["start"]), float(r["heading"]), destination=goal)
        attempt = out["attempts"][0]
        res = {"route_id": r["route_id"], "success": bool(out["success"]),
               "ended": attempt.ended, "distance_to_goal_m": round(attempt.distance_to_goal_m, 1),
               "actions": len(attempt.actions)}
        results.append(res)
        if on_result is not None:
            on_result(res)
    n = len(results)
    return {"routes": n, "success": sum(x["success"] for x in results) / n if n else 0.0,
            "results": results}
