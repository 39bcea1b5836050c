"""Generated direction-following routes in the manner of V-IRL's VLN route collector.

A destination is a named place with a viewpoint within :data:`DEST_VIEWPOINT_M` (20 m); the
start is the viewpoint of another named place; the route between them is 40-200 m long and
has 2-3 steps (1-2 turns). Unlike V-IRL's collector (which stopped at the first valid start),
every candidate start is considered and one is drawn at random, seeded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flaneur.services.directions import directions
from flaneur.services.geocode import GeocodeResult
from flaneur.world.city import City

DEST_VIEWPOINT_M = 20.0
MIN_ROUTE_M, MAX_ROUTE_M = 40.0, 200.0


@dataclass(frozen=True)
class VlnRoute:
    """A start viewpoint, its heading and a destination."""

    start: int
    heading: float
    destination: GeocodeResult


def generate_routes(city: City, n: int, *, seed: int = 0) -> list[VlnRoute]:
    """``n`` routes (fewer if the city has too few candidates), reproducible by ``seed``."""
    rng = np.random.default_rng(seed)
    places, graph = city.places, city.graph
    named = np.flatnonzero(places.names != "")
    if named.size == 0:
        return []
    nodes = np.atleast_1d(graph.nearest_node(places.lat[named], places.lng[named]))
    gap = np.hypot(*(graph.xy[nodes] - places.xy[named]).T)
    dest_ok = named[gap <= DEST_VIEWPOINT_M]
    dest_nodes = dict(zip(named.tolist(), nodes.tolist(), strict=True))
    out: list[VlnRoute] = []
    used: set[int] = set()
    for row in rng.permutation(dest_ok).tolist():
        if len(out) >= n:
            break
        goal = dest_nodes[row]
        rows, dist = places.within(places.xy[row], MAX_ROUTE_M)
        starts = sorted(
            {
                dest_nodes[r]
                for r, d in zip(rows.tolist(), dist.tolist(), strict=True)
                if r in dest_nodes and d >= MIN_ROUTE_M and dest_nodes[r] != goal
            }
        )
        rng.shuffle(starts)
        for start in starts[:8]:
            route = directions(city, start, goal)
            if not MIN_ROUTE_M <= route.distance_m <= MAX_ROUTE_M or not 2 <= len(route.steps) <= 3:
                continue
            if (start, goal) in used:
                continue
            used.add(start * graph.n_nodes + goal)
            heading = float(rng.uniform(0, 360))
            destination = GeocodeResult(
                str(places.names[row]),
                "place",
                float(places.lat[row]),
                float(places.lng[row]),
                goal,
                row,
                100.0,
            )
            out.append(VlnRoute(start, heading, destination))
            break
    return out
