"""The individual metric formulas, pair distances and summaries, with hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from metric_grid import ids

from flaneur.metrics import r2r, summarize, velma, virl, wilson_interval
from flaneur.metrics.cityseeker import average_steps, ordered_completion
from flaneur.metrics.distances import MetricCache
from flaneur.metrics.summary import mean_interval
from flaneur.world import City, StreetGraph


def naive_dtw(r, q):
    n, m = len(r), len(q)
    d = np.full((n + 1, m + 1), np.inf)
    d[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            c = math.dist(r[i - 1], q[j - 1])
            d[i, j] = c + min(d[i - 1, j], d[i, j - 1], d[i - 1, j - 1])
    return d[n, m]


def test_dtw_hand_values():
    assert r2r.dtw([[0, 0], [1, 0]], [[0, 0], [1, 0]]) == 0.0
    assert r2r.dtw([[0, 0]], [[0, 0], [3, 4]]) == pytest.approx(5.0)
    # R = (0,0) (2,0); Q = (0,1) (2,1): each point is matched 1 m away -> 2
    assert r2r.dtw([[0, 0], [2, 0]], [[0, 1], [2, 1]]) == pytest.approx(2.0)


def test_dtw_batch_matches_naive_recursion():
    rng = np.random.default_rng(7)
    refs = [rng.uniform(0, 100, (int(rng.integers(1, 12)), 2)) for _ in range(40)]
    qrys = [rng.uniform(0, 100, (int(rng.integers(1, 15)), 2)) for _ in range(40)]
    got = r2r.dtw_batch(refs, qrys)
    want = [naive_dtw(r, q) for r, q in zip(refs, qrys, strict=True)]
    assert got == pytest.approx(want, rel=1e-9)


def test_ndtw_sdtw_spl_formulas():
    assert r2r.ndtw(0.0, 5, 3.0) == 1.0
    assert r2r.ndtw(15.0, 5, 3.0) == pytest.approx(math.exp(-1))
    assert r2r.sdtw(True, 0.4) == 0.4 and r2r.sdtw(False, 0.4) == 0.0
    assert r2r.spl(True, 100.0, 125.0) == pytest.approx(0.8)
    assert r2r.spl(True, 100.0, 80.0) == 1.0  # p < l can happen with straight-line p
    assert r2r.spl(False, 100.0, 100.0) == 0.0
    assert r2r.spl(True, 0.0, 0.0) == 1.0
    assert r2r.success(3.0, 3.0) and not r2r.success(3.1, 3.0)
    assert r2r.oracle_success([9.0, 2.0, 8.0], 3.0) and not r2r.oracle_success([], 3.0)


def test_velma_kpa_prefix(grid):
    a, b, c, f, i = ids(grid, "abcfi")
    gold = [("FORWARD", a), ("FORWARD", b), ("LEFT", c), ("FORWARD", f), ("STOP", i)]
    assert velma.key_point_indices(gold, grid.graph.degree) == [0, 1, 3, 4]
    assert velma.key_point_accuracy_prefix(gold, gold[:2], grid.graph.degree) == 0.5
    assert velma.key_point_accuracy_prefix([], gold, grid.graph.degree) is None
    assert velma.shortest_path_hops(np.inf) is None and velma.shortest_path_hops(2.0) == 2.0


def test_velma_key_points_as_released(grid):
    a, b, c, d, f, i = ids(grid, "abcdfi")
    deg = grid.graph.degree  # corners 2, sides 3, centre 4
    # first two nodes as single nodes; moves leaving b (3 links) and f (3 links)
    assert velma.key_points([a, b, c, f, i], deg) == [a, b, (b, c), (f, i)]
    assert velma.key_points([a], deg) == [] and velma.key_points([], deg) == []
    assert velma.key_points([a, d], deg) == [a, d]  # d is the last node: no move leaves it
    assert velma.dedupe_path([a, a, b, b, a]).tolist() == [a, b, a]


def test_velma_kpa_hand_values(grid):
    a, b, c, d, e, f, i = ids(grid, "abcdefi")
    deg, gold = grid.graph.degree, [a, b, c, f, i]  # 4 key points -> denominator 5
    assert velma.key_point_accuracy(gold, gold, deg, True) == 1.0
    assert velma.key_point_accuracy(gold, [a, b, c], deg, False) == pytest.approx(3 / 5)
    # a d e f i: only a and the move f->i are gold key points, plus the stop on the goal
    assert velma.key_point_accuracy(gold, [a, d, e, f, i], deg, True) == pytest.approx(3 / 5)
    # leaves the gold path and rejoins: the later gold moves b->c and f->i still count
    assert velma.key_point_accuracy(gold, [a, d, e, b, c, f, i], deg, True) == pytest.approx(4 / 5)
    # rotations repeat a node in the path; they change nothing
    assert velma.key_point_accuracy(gold, [a, a, b, c, c, f, i], deg, True) == 1.0
    # a gold path through e->f twice: the list counts it twice (denominator 7 + 1 = 8),
    # the set intersection once: a, b, b->e, e->f, f->i + the stop = 6
    loop = [a, b, e, f, e, f, i]
    assert velma.key_points(loop, deg) == [a, b, (b, e), (e, f), (f, e), (e, f), (f, i)]
    assert velma.key_point_accuracy(loop, [a, b, e, f, i], deg, True) == pytest.approx(6 / 8)
    assert velma.key_point_accuracy([], gold, deg, True) is None
    assert velma.key_point_accuracy([a], [a], deg, True) == 1.0  # no key points, stop only


def test_velma_kpa_batch_equals_one_by_one(grid):
    rng = np.random.default_rng(3)
    deg = grid.graph.degree
    golds = [rng.integers(0, 9, int(rng.integers(0, 9))) for _ in range(60)]
    agents = [rng.integers(0, 9, int(rng.integers(1, 12))) for _ in range(60)]
    stops = rng.random(60) < 0.3
    batch = velma.key_point_accuracy_batch(golds, agents, deg, stops)
    for g, a, tc, got in zip(golds, agents, stops, batch, strict=True):
        gp, ap = (
            velma.key_points(velma.dedupe_path(g), deg),
            velma.key_points(velma.dedupe_path(a), deg),
        )
        want = (len(set(gp) & set(ap)) + tc) / (len(gp) + 1) if len(g) else None
        assert (np.isnan(got) and want is None) or got == pytest.approx(want)


def test_velma_task_completion_counts_neighbours_both_ways(grid):
    a, f, i = ids(grid, "afi")
    assert velma.task_completion(grid.graph, f, [i]) and velma.task_completion(grid.graph, i, [i])
    assert not velma.task_completion(grid.graph, a, [i])
    # one-way street x -> y: stopping at x counts for goal y and stopping at y for goal x
    one_way = StreetGraph.from_edges(
        ["x", "y", "z"], [0.0, 0.0, 0.0], [0.0, 0.0004, 0.0008], [0, 1], [1, 2]
    )
    assert velma.task_completion(one_way, 0, [1]) and velma.task_completion(one_way, 1, [0])
    assert not velma.task_completion(one_way, 0, [2])


def test_virl_key_positions(grid):
    g = grid.graph
    assert virl.key_positions(g, np.asarray(ids(grid, "abcfi"))) == ids(grid, "ci")
    assert virl.key_positions(g, np.asarray(ids(grid, "adgh"))) == ids(grid, "gh")
    assert virl.key_positions(g, np.asarray(ids(grid, "a"))) == ids(grid, "a")
    assert virl.key_positions(g, np.asarray(ids(grid, "abe"))) == ids(grid, "be")
    assert virl.arrival_ratio([], np.asarray([0])) is None
    assert virl.virl_success(25.0) and not virl.virl_success(25.1)


def test_ordered_completion_rule():
    t, f = True, False
    assert ordered_completion([np.array([f, t, f]), np.array([f, f, t])])
    assert ordered_completion([np.array([f, f, t]), np.array([f, f, t])])  # same stop
    assert not ordered_completion([np.array([f, f, t]), np.array([f, t, f])])
    assert not ordered_completion([np.array([f, f, f]), np.array([f, f, t])])
    assert average_steps([4, 6]) == 5.0


def one_way_city() -> City:
    # 0 -> 1 -> 2 one way, and 2 <-> 3; 10 m apart on the equator
    step = 10 / 111_195.0
    graph = StreetGraph.from_edges(
        ["n0", "n1", "n2", "n3"],
        [0, 0, 0, 0],
        [0, step, 2 * step, 3 * step],
        [0, 1, 2, 3],
        [1, 2, 3, 2],
    )
    return City(name="oneway", graph=graph)


def test_pair_distances_match_full_search():
    city = one_way_city()
    cache = MetricCache(city)
    src, dst = [0, 0, 2, 3, 1, 2], [2, 3, 0, 1, 1, 3]
    metres = cache.pair_distances(src, dst, "length")
    full = city.graph.metre_distances_to(dst)[np.arange(len(dst)), src]
    assert metres == pytest.approx(full)
    assert np.isinf(metres[2]) and np.isinf(metres[3])  # against the one-way street
    hops = cache.pair_distances(src, dst, "hops")
    assert hops.tolist() == [2, 3, np.inf, np.inf, 0, 1]
    assert np.isinf(cache.pair_distances([0], [3], "length", cap=25.0)[0])
    assert cache.pair_distances([0], [3], "length", cap=35.0)[0] == pytest.approx(30.0, rel=1e-3)


def test_wilson_and_normal_intervals():
    lo, hi = wilson_interval(8, 10)
    assert (lo, hi) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    assert wilson_interval(0, 5)[0] == 0.0 and wilson_interval(5, 5)[1] == 1.0
    lo, hi = mean_interval([1.0, 2.0, 3.0, 4.0])
    half = 1.959963984540054 * math.sqrt((5 / 3) / 4)
    assert (lo, hi) == pytest.approx((2.5 - half, 2.5 + half))


def test_summarize_overall_and_groups():
    rows = [
        {"episode_id": "1", "city": "x", "category": "A", "sr": True, "ne_m": 1.0, "kpa": None},
        {"episode_id": "2", "city": "x", "category": "A", "sr": False, "ne_m": 3.0, "kpa": 0.5},
        {"episode_id": "3", "city": "y", "category": "B", "sr": True, "ne_m": 5.0, "kpa": None},
    ]
    out = summarize(rows)
    sr = out["overall"]["metrics"]["sr"]
    assert sr["mean"] == pytest.approx(2 / 3) and sr["n"] == 3 and sr["kind"] == "rate"
    assert sr["ci95"] == pytest.approx(list(wilson_interval(2, 3)))
    assert out["overall"]["metrics"]["ne_m"]["mean"] == 3.0
    assert out["overall"]["metrics"]["kpa"] == {
        "mean": 0.5,
        "n": 1,
        "ci95": [0.5, 0.5],
        "kind": "mean",
    }
    assert "episode_id" not in out["overall"]["metrics"]
    assert out["by"]["category"]["A"]["episodes"] == 2
    assert out["by"]["category"]["B"]["metrics"]["kpa"]["n"] == 0
    assert sorted(out["by"]["city"]) == ["x", "y"]
    assert summarize(rows, by=())["by"] == {}
