"""Driving directions over the edges a car may use (OpenStreetMap car access)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from flaneur.bench.vln_routes import VlnRoutes, collect_routes
from flaneur.errors import FlaneurError
from flaneur.services.directions import directions, has_car_access
from flaneur.services.errors import UnreachableError
from flaneur.world import City, StreetGraph
from flaneur.world.sources.osm import _chain_car, car_directions

LAT0, LNG0 = 60.0, 25.0
DLAT = 0.0009  # about 100 m north-south
DLNG = 0.0018  # about 100 m east-west at 60 N


def square_city(with_car: bool = True) -> City:
    """A 100 m square 0 (south-west), 1 (south-east), 2 (north-east), 3 (north-west).

    Cars: 0-1, 1-2 and 2-3 both ways, 3 -> 0 one way only. A footway runs diagonally 0-2
    (about 141 m, shorter than 200 m round the square) and on to node 4, west of 0.
    """
    lat = [LAT0, LAT0, LAT0 + DLAT, LAT0 + DLAT, LAT0]
    lng = [LNG0, LNG0 + DLNG, LNG0 + DLNG, LNG0, LNG0 - DLNG]
    links = {  # (a, b): car may drive a -> b
        (0, 1): True,
        (1, 0): True,
        (1, 2): True,
        (2, 1): True,
        (2, 3): True,
        (3, 2): True,
        (3, 0): True,
        (0, 3): False,  # the one-way street
        (0, 2): False,  # the footway
        (2, 0): False,
        (0, 4): False,
        (4, 0): False,
    }
    src, dst = zip(*links, strict=True)
    graph = StreetGraph.from_edges([f"n{i}" for i in range(5)], lat, lng, src, dst)
    pairs = zip(graph.edge_sources.tolist(), graph.targets.tolist(), strict=True)
    car = [links[pair] for pair in pairs] if with_car else []
    return City(name="square", graph=graph, edge_car=np.asarray(car, dtype=bool))


def test_a_one_way_street_is_driven_only_its_way():
    city = square_city()
    assert directions(city, 3, 0, mode="driving", car_only=True).nodes == (3, 0)
    # against the one-way street: round the square (0 -> 2 by car skips the footway too)
    assert directions(city, 0, 3, mode="driving", car_only=True).nodes == (0, 1, 2, 3)
    assert directions(city, 0, 3).nodes == (0, 3)  # walking: straight along it


def test_a_footway_is_not_driven_and_routes_differ_from_walking():
    city = square_city()
    walk, drive = directions(city, 0, 2), directions(city, 0, 2, mode="driving", car_only=True)
    assert walk.nodes == (0, 2) and drive.nodes == (0, 1, 2)
    assert drive.distance_m > walk.distance_m + 50
    assert drive.mode == "driving" and walk.mode == "walking"
    # the other modes, and driving not asked to keep to car edges (the planners' legs),
    # keep the walking streets
    assert directions(city, 0, 2, mode="bicycling").nodes == walk.nodes
    assert directions(city, 0, 4, mode="driving").nodes == directions(city, 0, 4).nodes
    with pytest.raises(ValueError, match="car_only routes are driving routes"):
        directions(city, 0, 2, mode="walking", car_only=True)
    with pytest.raises(UnreachableError, match=r"^no car route in square from node 'n0'"):
        directions(city, 0, 4, mode="driving", car_only=True)  # node 4 lies on the footway only


def test_driving_in_a_city_without_car_access_data_is_one_line_naming_it():
    city = square_city(with_car=False)
    assert not has_car_access(city)
    with pytest.raises(UnreachableError, match=r"^no driving directions in square: .*car"):
        directions(city, 0, 1, mode="driving", car_only=True)
    assert directions(city, 0, 2).nodes == (0, 2)
    with pytest.raises(FlaneurError, match="no driving VLN routes in square"):
        collect_routes(city, [], mode="driving")


def test_car_access_survives_the_pack_round_trip(tmp_path):
    city = square_city()
    city.save(tmp_path / "pack")
    again = City.load(tmp_path / "pack")
    assert again.edge_car.dtype == bool and np.array_equal(again.edge_car, city.edge_car)
    square_city(with_car=False).save(tmp_path / "pack")  # none: no file left behind
    assert not (tmp_path / "pack" / "car.npz").exists()
    assert len(City.load(tmp_path / "pack").edge_car) == 0
    with pytest.raises(ValueError, match="one flag per edge"):
        City(name="bad", graph=city.graph, edge_car=np.ones(3, dtype=bool))


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        ({"highway": "residential"}, (True, True)),
        ({"highway": "primary", "oneway": "yes"}, (True, False)),
        ({"highway": "secondary", "oneway": "-1"}, (False, True)),
        ({"highway": "tertiary", "junction": "roundabout"}, (True, False)),
        ({"highway": "tertiary", "junction": "roundabout", "oneway": "no"}, (True, True)),
        ({"highway": "motorway"}, (True, False)),
        ({"highway": "footway"}, (False, False)),
        ({"highway": "footway", "oneway": "yes"}, (False, False)),
        ({"highway": "footway", "access": "yes"}, (False, False)),  # access only closes
        ({"highway": "pedestrian", "motor_vehicle": "destination"}, (True, True)),
        ({"highway": "residential", "access": "private"}, (False, False)),
        ({"highway": "service", "motorcar": "no", "access": "yes"}, (False, False)),
        ({"highway": "residential", "motor_vehicle": "yes", "access": "no"}, (True, True)),
        ({"highway": "steps"}, (False, False)),
        ({"highway": "cycleway"}, (False, False)),
        ({"highway": "track"}, (False, False)),
    ],
)
def test_car_directions_from_osm_tags(tags, expected):
    assert car_directions(tags) == expected


def test_a_merged_street_keeps_each_way_pieces_flags():
    # 50 m of two-way street, then 50 m of footway, cut in 4 and in 3 equal parts
    runs = ((50.0, True, True), (50.0, False, False))
    assert _chain_car(runs, 4) == [(True, True), (True, True), (False, False), (False, False)]
    assert _chain_car(runs, 3) == [(True, True), (False, False), (False, False)]
    assert _chain_car(((30.0, True, False),), 2) == [(True, False), (True, False)]


def test_paper_vln_routes_drive_where_the_city_has_car_access_data():
    assert VlnRoutes.paper_options(square_city(), {}) == {"mode": "driving"}
    assert VlnRoutes.paper_options(square_city(), {"mode": "walking"}) == {"mode": "walking"}
    walking_only = City(name="no-car-test", graph=square_city().graph)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert VlnRoutes.paper_options(walking_only, {}) == {}
        assert VlnRoutes.paper_options(walking_only, {}) == {}
    assert len(caught) == 1 and "no-car-test has no car access data" in str(caught[0].message)


def test_helsinki_has_car_access_and_drives_other_routes_than_it_walks(helsinki):
    graph, car = helsinki.graph, helsinki.edge_car
    assert has_car_access(helsinki)
    assert 0.1 < car.mean() < 0.6  # central Helsinki maps its sidewalks as footways
    sources, targets = graph.edge_sources, graph.targets
    back = {
        (s, t): i for i, (s, t) in enumerate(zip(sources.tolist(), targets.tolist(), strict=True))
    }
    one_way = [
        i for i in np.flatnonzero(car).tolist() if not car[back[int(targets[i]), int(sources[i])]]
    ]
    assert len(one_way) > 100
    for i in one_way[:50]:  # against a one-way street: walked straight, driven round
        a, b = int(targets[i]), int(sources[i])
        try:
            drive = directions(helsinki, a, b, mode="driving", car_only=True)
        except UnreachableError:
            continue
        assert directions(helsinki, a, b).nodes == (a, b)
        assert drive.nodes != (a, b) and drive.distance_m > graph.lengths[back[a, b]]
        used = [graph.edge_index(x, y) for x, y in itertools.pairwise(drive.nodes)]
        assert car[used].all()
        break
    else:
        pytest.fail("no one-way street of Helsinki can be driven round")
