"""``spd_mercator_m``: CitySeeker's SPD in its data's unit (Web-Mercator metres), with
hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from metric_grid import make_episode

from flaneur.geo import haversine
from flaneur.metrics import METRIC_FIELDS, episode_metrics
from flaneur.metrics.cityseeker import mercator_edge_lengths
from flaneur.world import City, StreetGraph

R = 6_378_137.0  # EPSG:3857's sphere (the WGS84 equatorial radius)
MILLI = R * math.radians(0.001)  # Web-Mercator metres of 0.001 degrees of longitude: 111.3195


def two_way(ids, lat, lng, pairs) -> City:
    src = [a for a, b in pairs] + [b for a, b in pairs]
    dst = [b for a, b in pairs] + [a for a, b in pairs]
    return City(name="m", graph=StreetGraph.from_edges(ids, lat, lng, src, dst))


def test_mercator_lengths_by_hand():
    # x = R λ at any latitude; y = R ln tan(π/4 + φ/2), R φ to 1e-15 near the equator
    city = two_way(["a", "b", "c", "p", "q"], [0.0, 0.0, 0.001, 60.0, 60.0],
                   [0.0, 0.001, 0.001, 0.0, 0.001], [(0, 1), (1, 2), (3, 4)])  # fmt: skip
    lengths = dict(
        zip(
            zip(city.graph.edge_sources.tolist(), city.graph.targets.tolist(), strict=True),
            mercator_edge_lengths(city.graph).tolist(),
            strict=True,
        )
    )
    assert lengths[(0, 1)] == pytest.approx(MILLI, abs=1e-6)  # 111.3195 m east
    assert lengths[(2, 1)] == pytest.approx(MILLI, abs=1e-6)  # the same north-south
    assert lengths[(3, 4)] == pytest.approx(MILLI, abs=1e-6)  # at 60°N: still 111.3195 m
    ground = float(haversine(60.0, 0.0, 60.0, 0.001))  # 55.60 m: Mercator is 1/cos(60°) = 2x
    assert lengths[(3, 4)] / ground == pytest.approx(2 * R / 6_371_008.8, rel=1e-6)


def test_spd_mercator_is_the_shortest_path_by_mercator_metres():
    #   n           a -> c: a - n - c, 2 streets of hypot(0.001, 0.003) deg = 352.0 m each,
    #  / \          or a - m1 - m2 - c along the equator, 3 streets, 0.002 deg = 222.6 m
    # a-m1-m2-c
    ids = ["a", "m1", "m2", "c", "n", "far"]
    lat = [0.0, 0.0, 0.0, 0.0, 0.003, 0.0]
    lng = [0.0, 0.0007, 0.0014, 0.002, 0.001, 0.01]
    city = two_way(ids, lat, lng, [(0, 1), (1, 2), (2, 3), (0, 4), (4, 3)])
    assert "spd_mercator_m" in METRIC_FIELDS
    episode = make_episode(goal_nodes=("c",), reference=("a", "m1", "m2", "c"), city="m")
    row = episode_metrics(city, episode, [0])
    assert row["spd_mercator_m"] == pytest.approx(2 * MILLI, abs=1e-6)  # 222.639 m, 3 streets
    assert row["spd_hops"] == 2  # the fewest streets go over n
    assert row["spd_mercator_m"] / row["spd_m"] == pytest.approx(R / 6_371_008.8, rel=1e-6)
    assert episode_metrics(city, episode, [3])["spd_mercator_m"] == 0.0
    assert episode_metrics(city, episode, [5])["spd_mercator_m"] is None  # far: unreachable


def test_nodes_without_coordinates_carry_no_mercator_street():
    lat = [0.0, 0.0, np.nan, 0.0]
    lng = [0.0, 0.001, np.nan, 0.002]
    city = two_way(["a", "b", "x", "c"], lat, lng, [(0, 1), (1, 3), (0, 2), (2, 3)])
    assert np.isnan(mercator_edge_lengths(city.graph)).sum() == 4  # a-x, x-c both ways
    episode = make_episode(goal_nodes=("c",), reference="abc", city="m")
    row = episode_metrics(city, episode, [0])
    assert row["spd_mercator_m"] == pytest.approx(2 * MILLI, abs=1e-6)  # around x, via b
