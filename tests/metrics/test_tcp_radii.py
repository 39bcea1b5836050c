"""TCP-40 and TCP-60 (CitySeeker's proximity rate at 40 m and 60 m), with hand-computed values."""

from __future__ import annotations

import pytest
from metric_grid import S, ids, make_episode

from flaneur.geo import haversine
from flaneur.metrics import METRIC_FIELDS, episode_metrics
from flaneur.metrics.cityseeker import PROXIMITY_RADII_M
from flaneur.metrics.summary import summarize
from flaneur.world import City, StreetGraph

DIAGONAL = (2 * S**2) ** 0.5  # 62.9 m: one street east and one north


def test_radii_are_the_papers():
    assert PROXIMITY_RADII_M == {"tcp": 50.0, "tcp40": 40.0, "tcp60": 60.0}
    assert {"tcp", "tcp40", "tcp60"} <= set(METRIC_FIELDS)


@pytest.mark.parametrize(
    ("path", "straight_m", "expected"),
    [
        ("abcfi", 0.0, (True, True, True)),  # on the goal
        ("adef", S, (False, True, True)),  # f: 44.5 m south of i
        ("abe", DIAGONAL, (False, False, False)),  # e: 62.9 m south-west of i
        ("adg", 2 * S, (False, False, False)),  # g: 89 m west of i
    ],
)
def test_tcp40_and_tcp60_on_the_grid(grid, path, straight_m, expected):
    row = episode_metrics(grid, make_episode(), ids(grid, path))
    assert (row["tcp40"], row["tcp"], row["tcp60"]) == expected, straight_m


def test_tcp60_counts_a_stop_between_50_and_60_m():
    # three nodes on a meridian, 0.0005 degrees (55.6 m) apart: a - b - c
    step = 0.0005
    graph = StreetGraph.from_edges(
        ["a", "b", "c"], [0.0, step, 2 * step], [0.0, 0.0, 0.0], [0, 1, 1, 2], [1, 0, 2, 1]
    )
    city = City(name="line", graph=graph)
    gap = float(haversine(0.0, 0.0, step, 0.0))
    assert 50.0 < gap <= 60.0  # 55.6 m
    episode = make_episode(goal_nodes=("c",), reference="abc", city="line")
    row = episode_metrics(city, episode, ids_of(city, "ab"))
    assert (row["tcp40"], row["tcp"], row["tcp60"]) == (False, False, True)
    row = episode_metrics(city, episode, ids_of(city, "a"))
    assert row["tcp60"] is False  # 111 m


def test_ordered_goals_hold_at_every_radius(grid):
    episode = make_episode(goal_nodes=("c", "i"), metadata={"ordered": True})
    near_c = episode_metrics(grid, episode, ids(grid, "abefi"))  # passes b, 44.5 m from c
    assert (near_c["tcp40"], near_c["tcp"], near_c["tcp60"]) == (False, True, True)
    via_c = episode_metrics(grid, episode, ids(grid, "abcfi"))
    assert via_c["tcp40"] is True and via_c["tcp60"] is True


def test_summaries_carry_tcp40_and_tcp60(grid):
    rows = [episode_metrics(grid, make_episode(), ids(grid, p)) for p in ("abcfi", "adef", "abe")]
    overall = summarize(rows)["overall"]["metrics"]
    assert overall["tcp40"]["mean"] == pytest.approx(1 / 3) and overall["tcp40"]["kind"] == "rate"
    assert overall["tcp"]["mean"] == pytest.approx(2 / 3)
    assert overall["tcp60"]["mean"] == pytest.approx(2 / 3) and overall["tcp60"]["n"] == 3


def ids_of(city: City, names: str) -> list[int]:
    return [city.graph.index(n) for n in names]
