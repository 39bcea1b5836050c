"""A hand-made 3 x 3 grid city for the metric tests.

    g - h - i        row 2 (north)
    |   |   |
    d - e - f        row 1
    |   |   |
    a - b - c        row 0

Nodes are STEP = 0.0004 degrees apart at the equator, so neighbouring nodes are S = 44.48 m
apart both ways (between the 25 m V-IRL radius and the 50 m CitySeeker radius). Every street
is two-way. Out-degrees: corners 2, sides 3, centre 4.
"""

from __future__ import annotations

from flaneur.geo import haversine
from flaneur.tasks import Episode
from flaneur.world import City, Places, StreetGraph

STEP = 0.0004
NAMES = "abcdefghi"
S = float(haversine(0.0, 0.0, 0.0, STEP))


def grid_graph() -> StreetGraph:
    lat = [STEP * (k // 3) for k in range(9)]
    lng = [STEP * (k % 3) for k in range(9)]
    src, dst = [], []
    for k in range(9):
        r, c = divmod(k, 3)
        for rr, cc in ((r + 1, c), (r, c + 1)):
            if rr < 3 and cc < 3:
                other = rr * 3 + cc
                src += [k, other]
                dst += [other, k]
    return StreetGraph.from_edges(list(NAMES), lat, lng, src, dst)


def place(pid: str, node: str, category: str) -> dict:
    k = NAMES.index(node)
    return {
        "id": pid,
        "name": pid,
        "lat": STEP * (k // 3),
        "lng": STEP * (k % 3),
        "categories": [category],
    }


def grid_city() -> City:
    """The grid with a cafe at i and a bank at c."""
    places = Places.from_records([place("cafe", "i", "cafe"), place("bank", "c", "bank")])
    return City(name="grid", graph=grid_graph(), places=places)


def bare_grid_city() -> City:
    """The grid without places."""
    return City(name="grid", graph=grid_graph())


def make_episode(goal_nodes=("i",), reference="abcfi", **kw) -> Episode:
    fields = {
        "id": "e1",
        "city": "grid",
        "instruction": "go",
        "start_node": reference[0] if reference else "a",
        "start_heading": 90.0,
        "goal_nodes": tuple(goal_nodes),
        "reference_path": tuple(reference),
        "category": "test",
    }
    fields.update(kw)
    return Episode(**fields)


def ids(city: City, names: str) -> list[int]:
    return [city.graph.index(n) for n in names]
