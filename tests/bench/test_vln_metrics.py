"""V-IRL's six VLN metrics on hand-built routes (positions given in metres north/east), and
from run rows through the navigation kind's task-set figures."""

import math

import pytest

from flaneur.bench.vln_metrics import VlnOutcome, score_route, vln_counts, vln_figures

LAT0, LNG0 = 60.17, 24.94
M_PER_DEG = 6_371_008.8 * math.pi / 180.0


def at(north: float, east: float) -> tuple[float, float]:
    """A point ``north`` / ``east`` metres from the origin."""
    return (LAT0 + north / M_PER_DEG, LNG0 + east / (M_PER_DEG * math.cos(math.radians(LAT0))))


def pts(*pairs):
    return tuple(at(n, e) for n, e in pairs)


N, E = "turn_direction(north)", "turn_direction(east)"
F, S = "forward()", "stop()"

# A: ends 10 m from the destination -> success, counts as right on every key position
ROUTE_A = VlnOutcome(
    at(100, 0), pts((40, 0), (60, 0)), N, (E, E), pts((0, 0), (200, 200), (90, 0)), (F, S)
)
# B: start reaction right, arrives at its one intersection (3 m) but never turns east,
#    ends 60 m short (never within 20 m of the destination)
ROUTE_B = VlnOutcome(
    at(200, 0), pts((100, 0)), N, (E,), pts((0, 0), (50, 0), (97, 0), (140, 0)), (N, F, F)
)
# C: wrong first action; arrives at I1 (1 m) and turns east there; misses I2 (14 m);
#    passes 18 m from the destination, ends 46 m away
ROUTE_C = VlnOutcome(
    at(50, 75),
    pts((50, 0), (50, 50)),
    N,
    (E, E),
    pts((0, 0), (0, 0), (50, 1), (50, 1), (60, 60), (60, 120)),
    (E, F, E, F, F),
)


def test_route_scores_by_hand():
    a, b, c = (score_route(r) for r in (ROUTE_A, ROUTE_B, ROUTE_C))
    assert (a.success, a.start_reaction, a.stop_arrival, a.arrived, a.reacted) == (
        True,
        True,
        True,
        2,
        2,
    )
    assert (b.success, b.start_reaction, b.stop_arrival, b.arrived, b.reacted) == (
        False,
        True,
        False,
        1,
        0,
    )
    assert (c.success, c.start_reaction, c.stop_arrival, c.arrived, c.reacted) == (
        False,
        False,
        True,
        1,
        1,
    )


def test_six_metrics_and_denominators():
    counts = vln_counts([ROUTE_A, ROUTE_B, ROUTE_C])
    assert counts["success"] == (1, 3)  # A of 3 routes
    assert counts["start_reaction"] == (2, 3)  # A, B of all 3 (not of 2 failed)
    assert counts["intersection_arrival"] == (4, 5)  # of all intersections
    assert counts["intersection_reaction"] == (3, 4)  # of arrived intersections
    assert counts["stop_arrival"] == (2, 3)  # A, C of all 3
    assert counts["stop_reaction"] == (1, 3)
    figures = vln_figures([ROUTE_A, ROUTE_B, ROUTE_C])
    assert figures["success"]["value"] == pytest.approx(1 / 3) and figures["success"]["n"] == 3
    lo, hi = figures["success"]["ci95"]  # Wilson, 1 of 3
    assert lo == pytest.approx(0.0615, abs=1e-4) and hi == pytest.approx(0.7923, abs=1e-4)


def test_reaction_window_is_v_irl_slice():
    # nearest trajectory point to the intersection is index 4; actions[1:7] are looked at
    traj = pts((0, 0), (10, 0), (20, 0), (30, 0), (50, 0), (70, 0), (90, 0), (110, 0), (130, 0))
    before = VlnOutcome(at(500, 0), pts((50, 0)), N, (E,), traj, (F, E, F, F, F, F, F, F))
    after = VlnOutcome(at(500, 0), pts((50, 0)), N, (E,), traj, (F, F, F, F, F, F, F, E))
    too_early = VlnOutcome(at(500, 0), pts((50, 0)), N, (E,), traj, (E, F, F, F, F, F, F, F))
    assert score_route(before).reacted == 1  # m - 3
    assert score_route(after).reacted == 0  # m + 3 lies outside V-IRL's slice
    assert score_route(too_early).reacted == 0  # m - 4


def test_success_radius_and_empty_set():
    near = VlnOutcome(at(0, 24.9), (), N, (), pts((0, 0)), ())
    far = VlnOutcome(at(0, 25.1), (), N, (), pts((0, 0)), ())
    assert score_route(near).success and not score_route(far).success
    empty = vln_figures([])
    assert empty["success"] == {"value": None, "n": 0, "ci95": None}


def _line_city():
    """n0 -> n1 -> n2 northwards 50 m apart; e1 50 m east of n1."""
    from flaneur.world import City, Places, StreetGraph

    ids = ["n0", "n1", "n2", "e1"]
    points = [at(0, 0), at(50, 0), at(100, 0), at(50, 50)]
    src, dst = [0, 1, 1, 2, 1, 3], [1, 0, 2, 1, 3, 1]
    graph = StreetGraph.from_edges(ids, [p[0] for p in points], [p[1] for p in points], src, dst)
    return City(name="line", graph=graph, places=Places.empty(), source="test")


def test_six_metrics_from_rows_with_and_without_moves():
    from flaneur.evaluate.kinds.base import TaskContext
    from flaneur.evaluate.kinds.navigation import NavigationKind
    from flaneur.tasks.episode import Episode
    from flaneur.tasks.spec import TaskSpec

    city = _line_city()
    episode = Episode(
        id="r1",
        city="line",
        instruction="",
        start_node="n0",
        start_heading=0.0,
        metadata={
            "key_latlng": [list(at(50, 0)), list(at(50, 50))],
            "destination_latlng": list(at(53, 50)),
            "milestones": [
                {"heading_words": "north", "next_heading_words": "east"},
                {"heading_words": "east", "destination": "X"},
            ],
        },
    )
    ling = {  # Ling: her turns in place are her moves
        "episode_id": "r1",
        "trajectory": [["n0", 0], ["n1", 0], ["e1", 90], ["e1", 90]],
        "actions": ["1:front", "3:right", "stop"],
        "records": [
            {"moves": [N], "parsed_action": F},
            {"moves": [E], "parsed_action": F},
            {"moves": [], "parsed_action": S},
        ],
    }
    straight_on = {  # no moves: a forward per move; walks past the turn
        "episode_id": "r1",
        "trajectory": [["n0", 0], ["n1", 0], ["n2", 0], ["n2", 0]],
        "actions": ["1:front", "2:front", "stop"],
        "records": [{}, {}, {}],
    }
    turning = {  # no moves: the change of heading at n1 is a turn_direction(east)
        **straight_on,
        "trajectory": [["n0", 0], ["n1", 0], ["e1", 90], ["e1", 90]],
    }
    context = TaskContext(NavigationKind(), TaskSpec("t", "test"), city, [episode])
    figures = NavigationKind().aggregate([ling, straight_on, turning], context)
    values = {k: (v["value"], v["n"]) for k, v in figures.items()}
    # ling and turning succeed (3 m from the place): right everywhere; straight_on starts
    # with forward() (not turn_direction(north)), arrives at n1 without turning east there,
    # and never comes within 20 m of the place (50 m at n1)
    assert values == {
        "success": (2 / 3, 3),
        "start_reaction": (2 / 3, 3),
        "intersection_arrival": (1.0, 3),
        "intersection_reaction": (2 / 3, 3),
        "stop_arrival": (2 / 3, 3),
        "stop_reaction": (2 / 3, 3),
    }
    from flaneur.bench.vln_metrics import row_outcome

    derived = row_outcome(city.graph, episode, turning)
    assert derived.actions == (F, E, F, S)  # V-IRL sees the oracle turn east at n1
    assert derived.trajectory == (at(0, 0), at(50, 0), at(50, 0), at(50, 50), at(50, 50))
    assert row_outcome(city.graph, episode, ling).actions == (N, F, E, F, S)
    other = Episode(id="r2", city="line", instruction="", start_node="n0", start_heading=0.0)
    plain = TaskContext(NavigationKind(), TaskSpec("t", "test"), city, [other])
    assert NavigationKind().aggregate([ling], plain) is None  # no VLN metadata: no figures
