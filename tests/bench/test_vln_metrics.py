"""V-IRL's six VLN metrics on hand-built routes (positions given in metres north/east)."""

import math

import pytest

from flaneur.bench.vln_metrics import VlnOutcome, score_route, vln_metrics

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
    m = vln_metrics([ROUTE_A, ROUTE_B, ROUTE_C])
    assert m["routes"] == 3
    assert m["success"] == pytest.approx(1 / 3)  # A of 3 routes
    assert m["start_reaction"] == pytest.approx(2 / 3)  # A, B of all 3 (not of 2 failed)
    assert m["intersections"] == 5 and m["intersections_arrived"] == 4
    assert m["intersection_arrival"] == pytest.approx(4 / 5)  # of all intersections
    assert m["intersection_reaction"] == pytest.approx(3 / 4)  # of arrived intersections
    assert m["stop_arrival"] == pytest.approx(2 / 3)  # A, C of all 3
    assert m["stop_reaction"] == pytest.approx(1 / 3)


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
    m = vln_metrics([])
    assert m["routes"] == 0 and m["success"] is None and m["intersection_reaction"] is None
