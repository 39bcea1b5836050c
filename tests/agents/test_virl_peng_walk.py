"""Peng's greedy-bearing walk and its key positions on small hand-made graphs."""

from __future__ import annotations

import numpy as np

from flaneur.agents.virl.peng import REACHED_M, greedy_bearing_walk, key_positions
from flaneur.geo import LocalProjection
from flaneur.services.directions import directions_via
from flaneur.world.city import City
from flaneur.world.graph import StreetGraph
from flaneur.world.places import Places


def city_of(points: dict[str, tuple[float, float]], streets: list[str]) -> City:
    """A city from named points in metres (x east, y north) and two-way edges ``"A-B"``."""
    proj = LocalProjection(60.17, 24.94)
    names = list(points)
    xy = np.array([points[n] for n in names], dtype=float)
    lat, lng = proj.inverse(xy[:, 0], xy[:, 1])
    src, dst = [], []
    for street in streets:
        a, b = (names.index(x) for x in street.split("-"))
        src += [a, b]
        dst += [b, a]
    graph = StreetGraph.from_edges(names, lat, lng, src, dst)
    return City(name="hand", graph=graph, places=Places.from_records([]))


def idx(city: City, *names: str) -> list[int]:
    return [city.graph.index(n) for n in names]


def test_a_key_position_across_a_crossing_is_not_reached_from_the_kerb():
    # P and K are 4 m apart across a crossing; T lies south of K; D is a dead end south of P.
    city = city_of(
        {"S": (0, 30), "P": (0, 0), "K": (4, 0), "T": (4, -30), "D": (0, -20)},
        ["S-P", "P-K", "K-T", "P-D"],
    )
    s, p, k, t, d = idx(city, "S", "P", "K", "T", "D")
    # Standing on K is needed: from P the bearing to K is east (90), then T is south.
    walk = greedy_bearing_walk(city, s, [k, t], avoid_returns=False)
    assert walk.nodes == [s, p, k, t] and walk.reached == [k, t] and not walk.skipped
    # V-IRL's 5 m radius counts K reached at P; the bearing to T (172) leads into the dead
    # end, the walker goes back and forth three times and T is skipped.
    radius = greedy_bearing_walk(city, s, [k, t], avoid_returns=False, reach_m=REACHED_M)
    assert radius.reached == [k] and radius.skipped == [t]
    assert radius.nodes[:6] == [s, p, d, p, d, p] and t not in radius.nodes


def test_key_positions_mark_forks_and_the_walk_keeps_to_the_route():
    # A street north from S; at J it forks: the route takes F (12.7 deg right of straight
    # on) and goes on north to E; the street straight on is a dead end at G.
    city = city_of(
        {"S": (0, 0), "M": (0, 30), "J": (0, 60), "G": (0, 100), "F": (9, 100), "E": (9, 180)},
        ["S-M", "M-J", "J-G", "J-F", "F-E"],
    )
    s, j, g, f, e = idx(city, "S", "J", "G", "F", "E")
    route = directions_via(city, [s, e])
    assert route.nodes == tuple(idx(city, "S", "M", "J", "F", "E"))
    assert key_positions(city, route, key_every_m=0, bend_deg=0) == [e]  # V-IRL: step ends
    assert key_positions(city, route, key_every_m=0) == [f, e]  # F: past the fork at J
    assert key_positions(city, route) == [j, f, e]  # J: 60 m walked since the start
    # V-IRL's step ends: from J the bearing to E (4.3 deg) is closer to G (0) than to F
    # (12.7); G is a dead end, three go-backs, E is skipped.
    virl = greedy_bearing_walk(city, s, [e], avoid_returns=False, reach_m=REACHED_M)
    assert virl.skipped == [e] and virl.nodes[2:7] == [j, g, j, g, j]
    walk = greedy_bearing_walk(city, s, key_positions(city, route))
    assert walk.nodes == list(route.nodes) and walk.reached == [j, f, e] and not walk.skipped
