"""Hand-made cities shared by the world tests."""

from __future__ import annotations

import numpy as np
import pytest
import shapely

from flaneur.world import City, Places, StreetGraph

# A "plus" intersection C with four arms of two viewpoints each, plus a dead-end spur.
#
#              N2
#              |
#              N1
#              |
#   W2 -- W1 -- C -- E1 -- E2
#              |
#              S1
#
# Points are 0.0001 degrees apart (about 11.1 m north-south, 5.6 m east-west at 60 N).
LAT0, LNG0, STEP = 60.0, 25.0, 0.0001


def plus_graph() -> StreetGraph:
    coords = {
        "C": (0, 0),
        "N1": (1, 0),
        "N2": (2, 0),
        "E1": (0, 1),
        "E2": (0, 2),
        "S1": (-1, 0),
        "W1": (0, -1),
        "W2": (0, -2),
    }
    ids = list(coords)
    lat = [LAT0 + STEP * coords[i][0] for i in ids]
    lng = [LNG0 + STEP * coords[i][1] for i in ids]
    pairs = [
        ("C", "N1"),
        ("N1", "N2"),
        ("C", "E1"),
        ("E1", "E2"),
        ("C", "S1"),
        ("C", "W1"),
        ("W1", "W2"),
    ]
    src, dst = [], []
    for a, b in pairs:
        src += [ids.index(a), ids.index(b)]
        dst += [ids.index(b), ids.index(a)]
    return StreetGraph.from_edges(ids, lat, lng, src, dst)


@pytest.fixture
def graph() -> StreetGraph:
    return plus_graph()


@pytest.fixture
def city() -> City:
    graph = plus_graph()
    places = Places.from_records(
        [
            {
                "id": "p1",
                "name": "Cafe North",
                "lat": LAT0 + 1.5 * STEP,
                "lng": LNG0 + 0.3 * STEP,
                "categories": ["cafe"],
                "attributes": {"wheelchair": "yes"},
            },
            {
                "id": "p2",
                "name": "East Bank",
                "lat": LAT0 + 0.2 * STEP,
                "lng": LNG0 + 2 * STEP,
                "categories": ["bank", "atm"],
            },
            {
                "id": "p3",
                "name": "",
                "lat": LAT0 - 1 * STEP,
                "lng": LNG0 - 0.5 * STEP,
                "categories": ["bench"],
                "rating": 4.5,
                "reviews": ["nice"],
            },
        ]
    )
    square = shapely.Polygon(
        [
            (LNG0 + 0.5 * STEP, LAT0 + 0.5 * STEP),
            (LNG0 + 1.5 * STEP, LAT0 + 0.5 * STEP),
            (LNG0 + 1.5 * STEP, LAT0 + 1.5 * STEP),
            (LNG0 + 0.5 * STEP, LAT0 + 1.5 * STEP),
        ]
    )
    north = np.asarray([i.startswith("N") for i in graph.ids])
    return City(
        name="plus",
        graph=graph,
        places=places,
        source="hand-made",
        licence="CC0",
        buildings=np.asarray([square], dtype=object),
        building_heights=np.asarray([12.0]),
        node_sets={"north": north},
    )
