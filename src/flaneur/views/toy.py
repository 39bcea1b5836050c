"""A small hand-made city for examples, documentation and tests of the view layer.

Three streets each way on a 100 m grid (viewpoints every 20 m, both directions), two real
building footprints with a courtyard in one block (the other blocks get synthesised
facades), and a dozen named shops and cafés.
"""

from __future__ import annotations

import itertools

import numpy as np
import shapely

from flaneur.geo import LocalProjection
from flaneur.world.city import City
from flaneur.world.graph import StreetGraph
from flaneur.world.places import Places

CENTRE = (60.1675, 24.9450)

TOY_PLACES = [
    # name, x, y (metres; streets run along x, y in {-100, 0, 100})
    ("Café Ekberg", -30.0, 12.0),
    ("Hotel Kämp", -72.0, 14.0),
    ("Stockmann", 14.0, -40.0),
    ("Apteekki", 16.0, 44.0),
    ("Akateeminen Kirjakauppa", 55.0, 13.0),
    ("Ravintola Savoy", -45.0, -14.0),
    ("Fazer Café", -13.0, -70.0),
    ("Pizzeria Napoli", 86.0, -13.0),
    ("Kukkakauppa Flora", -86.0, 60.0),
    ("Musiikkitalo", 60.0, 87.0),
    ("Bar Loose", -14.0, 80.0),
    ("Kaffa Roastery", 40.0, -87.0),
]


def grid_city() -> City:
    """A 200 m x 200 m grid city with buildings and named places (metric frame = grid)."""
    proj = LocalProjection(*CENTRE)
    coords = np.arange(-100, 101, 20, dtype=float)
    lines = (-100.0, 0.0, 100.0)
    points: dict[tuple[float, float], int] = {}
    edges: list[tuple[int, int]] = []

    def node(x: float, y: float) -> int:
        return points.setdefault((x, y), len(points))

    for fixed in lines:
        for c0, c1 in itertools.pairwise(coords):
            for p, q in (((c0, fixed), (c1, fixed)), ((fixed, c0), (fixed, c1))):
                u, v = node(*p), node(*q)
                edges += [(u, v), (v, u)]
    xy = np.array(list(points), dtype=float)
    lat, lng = proj.inverse(xy[:, 0], xy[:, 1])
    ids = [f"n{int(x) + 100:03d}_{int(y) + 100:03d}" for x, y in xy]
    src, dst = np.array(edges).T
    graph = StreetGraph.from_edges(ids, lat, lng, src, dst)

    def to_lnglat(poly: shapely.Polygon) -> shapely.Polygon:
        def fwd(c: np.ndarray) -> np.ndarray:
            la, ln = proj.inverse(c[:, 0], c[:, 1])
            return np.column_stack([ln, la])

        return shapely.transform(poly, fwd)

    block = shapely.Polygon(
        [(-90, 10), (-10, 10), (-10, 90), (-90, 90)],
        holes=[[(-70, 30), (-70, 70), (-30, 70), (-30, 30)]],
    )
    tower = shapely.box(-90, -90, -55, -10)
    hall = shapely.box(-45, -90, -10, -10)
    buildings = np.array([to_lnglat(p) for p in (block, tower, hall)], dtype=object)
    heights = np.array([18.0, 26.0, np.nan])

    records = []
    for k, (name, x, y) in enumerate(TOY_PLACES):
        pl_lat, pl_lng = proj.inverse(x, y)
        records.append(
            {
                "id": f"p{k}",
                "name": name,
                "lat": float(pl_lat),
                "lng": float(pl_lng),
                "categories": ["shop"],
            }
        )
    pl_lat, pl_lng = proj.inverse(60.0, 60.0)
    records.append(
        {
            "id": "p_unnamed",
            "name": "",
            "lat": float(pl_lat),
            "lng": float(pl_lng),
            "categories": ["bench"],
        }
    )
    return City(
        name="toy",
        graph=graph,
        places=Places.from_records(records),
        source="flaneur.views.toy",
        licence="CC0-1.0",
        buildings=buildings,
        building_heights=heights,
    )
