import math

import numpy as np
import pytest

from flaneur.geo import EARTH_RADIUS_M, LocalProjection, angle_diff, bearing, destination, haversine


def test_bearing_cardinal_directions():
    assert bearing(0, 0, 1, 0) == pytest.approx(0.0)
    assert bearing(0, 0, 0, 1) == pytest.approx(90.0)
    assert bearing(0, 0, -1, 0) == pytest.approx(180.0)
    assert bearing(0, 0, 0, -1) == pytest.approx(270.0)
    # north-east on the equator, small step: 45 degrees
    assert bearing(0, 0, 0.001, 0.001) == pytest.approx(45.0, abs=1e-3)


def test_haversine_one_degree_of_latitude():
    # one degree along a meridian is R * pi / 180
    assert haversine(10, 20, 11, 20) == pytest.approx(EARTH_RADIUS_M * math.pi / 180, rel=1e-9)
    # one degree of longitude at 60 N is half of that at the equator
    assert haversine(60, 0, 60, 1) == pytest.approx(0.5 * 111_195.08, rel=2e-3)
    assert haversine(1, 2, 1, 2) == 0.0


@pytest.mark.parametrize(
    ("target", "source", "expected"),
    [
        (10, 350, 20),
        (350, 10, -20),
        (180, 0, 180),
        (0, 180, 180),
        (-180, 0, 180),
        (90, 0, 90),
        (270, 0, -90),
        (0, 0, 0),
        (720, 0, 0),
        (181, 0, -179),
    ],
)
def test_angle_diff_range_and_sign(target, source, expected):
    assert angle_diff(target, source) == pytest.approx(expected)


def test_angle_diff_vectorised_in_half_open_range():
    d = angle_diff(np.arange(-720, 720, 7.5), 33.0)
    assert np.all(d > -180) and np.all(d <= 180)


def test_one_angle_formula_for_scalars_arrays_and_the_env_names():
    from flaneur.env.state import angular_distance as env_distance
    from flaneur.env.state import relative_angle
    from flaneur.geo import angular_distance

    targets = np.arange(-720, 720, 7.5)
    scalar = [angle_diff(float(t), 33.0) for t in targets]
    assert all(isinstance(v, float) for v in scalar)
    assert np.array_equal(np.array(scalar), angle_diff(targets, 33.0))
    assert relative_angle is angle_diff and env_distance is angular_distance
    assert angular_distance(350.0, 10.0) == 20.0 and angular_distance(0.0, 180.0) == 180.0


def test_projection_round_trip_and_scale():
    proj = LocalProjection(60.17, 24.94)
    x, y = proj.forward(60.18, 24.95)
    lat, lng = proj.inverse(x, y)
    assert (float(lat), float(lng)) == pytest.approx((60.18, 24.95), abs=1e-9)
    assert math.hypot(x, y) == pytest.approx(haversine(60.17, 24.94, 60.18, 24.95), rel=5e-3)
    assert float(y) > 0 and float(x) > 0  # north-east of the centre


def test_destination_inverts_bearing_and_distance():
    lat, lng = destination(31.28, 121.49, 70.0, 250.0)
    assert haversine(31.28, 121.49, lat, lng) == pytest.approx(250.0, rel=1e-9)
    assert bearing(31.28, 121.49, lat, lng) == pytest.approx(70.0, abs=1e-6)
