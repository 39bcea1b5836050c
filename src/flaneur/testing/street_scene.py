"""A hand-made straight street with street furniture at chosen positions (tests, docs).

The street runs south to north along ``x = 0`` from ``y = -length/2`` to ``y = +length/2``
with a viewpoint every ``spacing`` metres; the metric frame of the city is this frame, so a
test places an object at ``(x, y)`` metres and knows exactly where it is seen from.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from flaneur.geo import LocalProjection
from flaneur.world.city import City
from flaneur.world.furniture import Furniture
from flaneur.world.graph import StreetGraph

CENTRE = (60.17, 24.94)


def street_city(
    objects: Sequence[tuple[str, float, float]],
    *,
    length: float = 200.0,
    spacing: float = 10.0,
    name: str = "street",
) -> City:
    """A straight street with furniture ``[(kind, x, y), ...]`` (ids ``obj0, obj1, ...``).

    Viewpoint ids are ``s<y>`` with ``y`` the metres north of the centre (``s0`` is the
    centre, ``s-50`` is 50 m south).
    """
    proj = LocalProjection(*CENTRE)
    ys = np.arange(-length / 2, length / 2 + 1e-9, spacing)
    lat, lng = proj.inverse(np.zeros_like(ys), ys)
    ids = [f"s{round(y)}" for y in ys]
    src = list(range(len(ys) - 1)) + list(range(1, len(ys)))
    dst = list(range(1, len(ys))) + list(range(len(ys) - 1))
    graph = StreetGraph.from_edges(ids, lat, lng, src, dst)
    records = []
    for k, (kind, x, y) in enumerate(objects):
        la, ln = proj.inverse(x, y)
        records.append({"id": f"obj{k}", "kind": kind, "lat": float(la), "lng": float(ln)})
    return City(
        name=name,
        graph=graph,
        source="flaneur.testing.street_scene",
        licence="CC0-1.0",
        furniture=Furniture.from_records(records),
    )
