"""Sensors that need no images, the verbalizer, and the headings / nodes schemes."""

from __future__ import annotations

import pytest

from flaneur.env import NavigationEnv, make_scheme, toy_city, toy_episodes
from flaneur.env.online_map import OnlineMap
from flaneur.env.schemes.base import InvalidActionError, UnknownActionError
from flaneur.env.sensors import (
    IntersectionSensor,
    MapLandmarksSensor,
    NearbyPlacesSensor,
    OnlineMapSensor,
    make_sensors,
)
from flaneur.env.state import AgentState, direction_label
from flaneur.env.verbalizer import (
    Verbalizer,
    verbalize_intersection,
    verbalize_landmarks,
    verbalize_nearby,
    verbalize_online_map,
)
from flaneur.errors import FlaneurError


@pytest.fixture(scope="module")
def city():
    return toy_city()


def bound(sensor, city):
    sensor.bind(city, OnlineMap(city.graph))
    sensor.reset()
    return sensor


def at(city, node, heading, prev=-1):
    return AgentState(city.graph.index(node), heading, prev)


def test_direction_labels():
    expected = {
        0: "front",
        22.5: "front",
        30: "slightly right",
        -60: "slightly left",
        90: "right",
        -100: "left",
        120: "back right",
        -150: "back left",
        170: "back",
        180: "back",
    }
    assert {k: direction_label(k) for k in expected} == expected


def test_intersection_on_arrival_only(city):
    sensor = bound(IntersectionSensor(), city)
    x4, w1 = city.graph.index("X4"), city.graph.index("W1")
    assert sensor.observe(AgentState(x4, 90.0, w1)) == 4
    assert sensor.observe(AgentState(x4, 90.0, x4)) == 0  # after a rotation
    assert sensor.observe(AgentState(x4, 90.0, -1)) == 4  # at the start
    assert sensor.observe(AgentState(w1, 90.0, -1)) == 0  # a 2-way node


def test_map_landmarks_five_views(city):
    sensor = bound(MapLandmarksSensor(radius_m=30), city)
    # on X4 facing east, the cafe (north-east) is slightly left
    assert sensor.observe(at(city, "X4", 90.0)) == ((), ("Cafe Aalto",), (), (), ())
    # facing north it is slightly right; facing west it is behind (not seen)
    assert sensor.observe(at(city, "X4", 0.0))[3] == ("Cafe Aalto",)
    assert sensor.observe(at(city, "X4", 270.0)) == ((), (), (), (), ())
    # on E1 facing south: the bookshop (28 m east-south-east) is on the left; the unnamed
    # kiosk 4 m away is not a landmark (named places only)
    assert sensor.observe(at(city, "E1", 180.0)) == (("Kirja Bookshop",), (), (), (), ())


def test_nearby_places(city):
    sensor = bound(NearbyPlacesSensor(radius_m=40), city)
    items = sensor.observe(at(city, "E1", 90.0))
    assert [i[0] for i in items][:2] == ["kiosk", "Cafe Aalto"]
    _label, category, dist, direction = items[0]
    assert category == "kiosk" and dist <= 10 and direction == "right"


def test_online_map_and_its_text(city):
    scheme = make_scheme("nodes", city.graph)
    sensor = bound(OnlineMapSensor(), city)
    sensor.map = scheme.map
    state = scheme.start(city.graph.index("W1"), 90.0)
    state = scheme.step(state, scheme.parse("X4", state))
    snap = sensor.observe(state)
    assert snap["explored"] == ["W1", "X4"] and snap["current"] == "X4"
    assert set(snap["accessible"]) == {"N1", "E1", "S1", "W1"}
    assert "W2" in snap["unexplored"] and "X4" not in snap["unexplored"]
    text = verbalize_online_map(snap)
    assert text.startswith("Trajectory: Place 0, Place 1.") and "You are at Place 1." in text


def test_verbalizer_phrasing():
    assert verbalize_intersection(3) == "There is a 3-way intersection."
    assert verbalize_intersection(0) == ""
    views = (("bank",), (), ("Cafe A", "Cafe B"), (), ("park",))
    assert verbalize_landmarks(views) == (
        "Bank on your left. Cafe A and Cafe B ahead. Park on your right."
    )
    assert verbalize_nearby([("Kiosk", "kiosk", 7, "right")]) == "Nearby: Kiosk (7 m, right)."
    text = Verbalizer()({"intersection": 4}, scheme="headings", actions=((0, "stop"), (1, "left")))
    assert text == "There is a 4-way intersection. Options: 0: stop; 1: left."


def test_make_sensors_errors():
    assert [s.name for s in make_sensors("intersection,landmarks")] == [
        "intersection",
        "landmarks",
    ]
    with pytest.raises(FlaneurError, match="unknown sensor"):
        make_sensors(["radar"])


def test_headings_scheme_labels_and_moves(city):
    s = make_scheme("headings", city.graph)
    assert s.n_actions == 6
    state = s.start(city.graph.index("X4"), 90.0)  # streets at 0, 90, 180, 270
    assert s.labels(state) == ("stop", "left", "front", "right", "back", "")
    assert s.valid(state) == (True, True, True, True, True, False)
    nxt = s.step(state, s.parse("front", state))
    assert str(city.graph.ids[nxt.node]) == "E1" and round(nxt.heading) == 90
    assert s.parse("2", state) == 2 and s.parse("185°", state) == 3
    with pytest.raises(InvalidActionError):
        s.step(state, 5)
    with pytest.raises(UnknownActionError):
        s.parse("up", state)


def test_nodes_scheme_candidates(city):
    s = make_scheme("nodes", city.graph)
    state = s.start(city.graph.index("W1"), 90.0)
    assert s.candidates(state) == tuple(city.graph.adjacency[0][state.node])
    assert s.labels(state)[1:3] == ("X4", "W2")
    with pytest.raises(InvalidActionError):
        s.parse("place 99", state)
    jumps = make_scheme("nodes", city.graph, allow_jumps=True)
    state = jumps.start(city.graph.index("W1"), 90.0)
    state = jumps.step(state, jumps.parse("X4", state))
    cands = [str(city.graph.ids[v]) for v in jumps.candidates(state)]
    assert cands[:4] == ["N1", "E1", "S1", "W1"] and "W2" in cands[4:]


def test_landmark_env_readings_are_cached(city):
    env = NavigationEnv(city, toy_episodes(), sensors=["landmarks"], verbalize=True)
    env.reset(options={"episode": "toy-east"})
    first = env.step("forward")[4]["sensors"]["landmarks"]
    env.reset(options={"episode": "toy-east"})
    again = env.step("forward")[4]["sensors"]["landmarks"]
    assert first is again
