"""A hand-made grid city with street names and addresses, and the built-in Helsinki."""

from __future__ import annotations

import numpy as np
import pytest

from flaneur.world import City, Places, StreetGraph

LAT0, LNG0 = 60.0, 25.0
DLAT = 0.0009  # about 100 m north-south
DLNG = 0.0018  # about 100 m east-west at 60 N
N = 4


def grid_city() -> City:
    """A 4 x 4 grid of junctions 100 m apart; rows are "Rivikatu <r>", columns "Sarakatu <c>".

    Node ``r * 4 + c`` is at row ``r`` (north-south index) and column ``c``.
    """
    ids, lat, lng = [], [], []
    for r in range(N):
        for c in range(N):
            ids.append(f"n{r}{c}")
            lat.append(LAT0 + r * DLAT)
            lng.append(LNG0 + c * DLNG)
    src, dst, names = [], [], {}
    for r in range(N):
        for c in range(N):
            a = r * N + c
            if c + 1 < N:
                b = a + 1
                src += [a, b]
                dst += [b, a]
                names[(a, b)] = names[(b, a)] = f"Rivikatu {r}"
            if r + 1 < N:
                b = a + N
                src += [a, b]
                dst += [b, a]
                names[(a, b)] = names[(b, a)] = f"Sarakatu {c}"
    graph = StreetGraph.from_edges(ids, lat, lng, src, dst)
    streets = [
        names[(s, t)]
        for s, t in zip(graph.edge_sources.tolist(), graph.targets.tolist(), strict=True)
    ]
    places = Places.from_records(
        [
            {
                "id": "p0",
                "name": "Café Kärpänen",
                "lat": LAT0 + 0.1 * DLAT,
                "lng": LNG0 + 0.1 * DLNG,
                "categories": ["cafe"],
                "tags": {
                    "amenity": "cafe",
                    "cuisine": "coffee_shop",
                    "opening_hours": "Mo-Fr 08-18",
                    "outdoor_seating": "yes",
                    "wheelchair": "yes",
                    "addr:street": "Rivikatu 0",
                    "addr:housenumber": "3",
                },
            },
            {
                "id": "p1",
                "name": "Stockmann",
                "lat": LAT0 + 2 * DLAT,
                "lng": LNG0 + 2.1 * DLNG,
                "categories": ["department_store"],
                "tags": {
                    "shop": "department_store",
                    "wikidata": "Q1",
                    "website": "x",
                    "addr:street": "Aleksanterinkatu",
                    "addr:housenumber": "52",
                },
            },
            {
                "id": "p2",
                "name": "Alepa",
                "lat": LAT0 + 0.3 * DLAT,
                "lng": LNG0 + 0.2 * DLNG,
                "categories": ["supermarket"],
                "tags": {"shop": "supermarket", "brand": "Alepa"},
            },
            {
                "id": "p3",
                "name": "Alepa",
                "lat": LAT0 + 0.6 * DLAT,
                "lng": LNG0 + 0.1 * DLNG,
                "categories": ["supermarket"],
                "tags": {"shop": "supermarket", "brand": "Alepa"},
            },
            {
                "id": "p4",
                "name": "Ravintola Sävel",
                "lat": LAT0 + 0.05 * DLAT,
                "lng": LNG0 + 0.5 * DLNG,
                "categories": ["restaurant"],
                "tags": {"amenity": "restaurant"},
            },
            {
                "id": "p5",
                "name": "",
                "lat": LAT0 + 3 * DLAT,
                "lng": LNG0 + 3 * DLNG,
                "categories": ["bench"],
                "tags": {"amenity": "bench"},
            },
        ]
    )
    return City(
        name="grid",
        graph=graph,
        places=places,
        source="hand-made",
        licence="CC0",
        edge_streets=np.asarray(streets),
    )


@pytest.fixture(scope="module")
def grid() -> City:
    return grid_city()


@pytest.fixture(scope="session")
def helsinki() -> City:
    from flaneur.world.builtin import load_builtin

    return load_builtin("helsinki")
