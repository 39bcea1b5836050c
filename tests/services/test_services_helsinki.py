"""Services on the built-in Helsinki pack (OpenStreetMap)."""

from __future__ import annotations

import pytest

from flaneur.services import (
    UnknownPlaceError,
    directions,
    geocode,
    geocode_one,
    nearby_search,
    resolve_point,
)
from flaneur.services.errors import CoordinateError, OffStreetError


def test_pack_has_osm_street_names(helsinki):
    names = set(helsinki.edge_streets.tolist())
    assert {"Mannerheimintie", "Aleksanterinkatu"} <= names
    assert len(helsinki.edge_streets) == helsinki.graph.n_edges


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Stockmann", "Stockmann"),
        ("stockman", "Stockmann"),
        ("kiasma", "Kiasma"),
        ("Aleksanterink. 52", "Aleksanterinkatu 52"),
        ("mannerheimintie", "Mannerheimintie"),
        ("Helsinki Cathedral", "Helsingin tuomiokirkko"),  # name:en and int_name
        ("Library Oodi", "Helsingin keskustakirjasto Oodi"),  # every word of its name:en
        ("Oodi", "Helsingin keskustakirjasto Oodi"),  # short_name
        ("helsingfors domkyrka", "Helsingin tuomiokirkko"),  # name:sv
    ],
)
def test_geocode_helsinki(helsinki, query, expected):
    assert geocode(helsinki, query)[0].name == expected


def test_points_outside_helsinki_or_not_finite(helsinki):
    with pytest.raises(OffStreetError, match=r"^61\.00000,25\.00000 lies 91,\d{3} m from"):
        resolve_point(helsinki, "61.0,25.0")
    with pytest.raises(CoordinateError, match="'nan,nan' is not a point"):
        resolve_point(helsinki, "nan,nan")


def test_unknown_name_helsinki(helsinki):
    with pytest.raises(UnknownPlaceError, match="closest names: '"):
        geocode_one(helsinki, "Qqqxxzz Zzyyx")


def test_directions_helsinki_steps_cover_the_route(helsinki):
    start, goal = geocode_one(helsinki, "Stockmann"), geocode_one(helsinki, "Kiasma")
    route = directions(helsinki, start.node, goal.node)
    assert route.distance_m == pytest.approx(helsinki.graph.path_length_m(route.nodes))
    assert 300 < route.distance_m < 900
    joined = [route.steps[0].start_node]
    for step in route.steps:
        assert step.nodes[0] == joined[-1]
        joined.extend(step.nodes[1:])
        assert step.instruction.endswith(f"{step.distance_m:.0f} m")
    assert tuple(joined) == route.nodes
    assert any(step.street for step in route.steps)


def test_nearby_helsinki_cafes(helsinki):
    origin = helsinki.graph.xy[geocode_one(helsinki, "Stockmann").node]
    cafes = nearby_search(helsinki, origin, radius_m=150, place_type="cafe")
    assert cafes and all("cafe" in r.categories for r in cafes)
    assert [r.distance_m for r in cafes] == sorted(r.distance_m for r in cafes)
    assert len({r.name for r in cafes}) == len(cafes)
