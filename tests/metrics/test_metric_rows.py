"""episode_metrics / batch_metrics on the hand-made grid, with hand-computed values."""

from __future__ import annotations

import math

import pytest
from metric_grid import S, ids, make_episode

from flaneur.metrics import METRIC_FIELDS, ROW_FIELDS, batch_metrics, episode_metrics
from flaneur.metrics.distances import MetricCache


def test_gold_path_scores_perfectly(grid):
    row = episode_metrics(grid, make_episode(), ids(grid, "abcfi"))
    assert set(row) == set(ROW_FIELDS) | set(METRIC_FIELDS)
    assert row["episode_id"] == "e1" and row["stop_node"] == "i" and row["steps"] == 4
    assert row["path_length_m"] == pytest.approx(4 * S, rel=1e-6)
    for key in ("tc", "sr", "osr", "tce", "tcp", "virl_success"):
        assert row[key] is True, key
    assert row["spd_hops"] == 0 and row["ne_m"] == 0 and row["spd_m"] == 0
    assert row["spl"] == pytest.approx(1.0)
    assert row["dtw_m"] == pytest.approx(0.0, abs=1e-9)
    assert row["ndtw"] == pytest.approx(1.0) and row["sdtw"] == pytest.approx(1.0)
    assert row["arrival_ratio"] == 1.0
    assert row["kpa"] == 1.0  # VELMA's KPA needs only the paths
    assert row["kpa_prefix"] is None and row["reaction_accuracy"] is None  # no actions given
    assert row["tcc"] is None  # no goal category


def test_stop_next_to_goal(grid):
    # a -> d -> e -> f: stops one street (S = 44.5 m) south of the goal i
    row = episode_metrics(grid, make_episode(), ids(grid, "adef"))
    assert row["steps"] == 3
    assert row["tc"] is True  # f is a graph neighbour of i
    assert row["spd_hops"] == 1
    assert row["ne_m"] == pytest.approx(S, rel=1e-6)
    assert row["sr"] is False and row["osr"] is False  # 44.5 m > 25 m
    assert row["spl"] == 0.0 and row["sdtw"] == 0.0
    # DTW of R = a b c f i against Q = a d e f, worked by hand: (1 + 2 sqrt 2) S
    dtw = (1 + 2 * math.sqrt(2)) * S
    assert row["dtw_m"] == pytest.approx(dtw, rel=1e-3)
    assert row["ndtw"] == pytest.approx(math.exp(-dtw / (5 * 25.0)), rel=1e-3)
    assert row["tce"] is False
    assert row["tcp"] is True  # 44.5 m <= 50 m
    assert row["virl_success"] is False  # 44.5 m > 25 m
    assert row["arrival_ratio"] == 0.0  # key positions c (turn) and i (goal) not visited


def test_radius_changes_sr_spl_and_ndtw(grid):
    row = episode_metrics(grid, make_episode(), ids(grid, "adef"), success_radius_m=50.0)
    assert row["sr"] is True and row["osr"] is True
    assert row["spl"] == pytest.approx(4 * S / max(3 * S, 4 * S))
    dtw = (1 + 2 * math.sqrt(2)) * S
    assert row["ndtw"] == pytest.approx(math.exp(-dtw / (5 * 50.0)), rel=1e-3)
    assert row["sdtw"] == pytest.approx(row["ndtw"])


def test_detour_lowers_spl_and_oracle_success(grid):
    # a b c f i f: passes the goal, ends one street away; 5 moves against the shortest 4
    row = episode_metrics(grid, make_episode(), ids(grid, "abcfif"), success_radius_m=50.0)
    assert row["osr"] is True and row["sr"] is True
    assert row["spl"] == pytest.approx(4 / 5)
    row = episode_metrics(grid, make_episode(), ids(grid, "abcfif"))
    assert row["osr"] is True and row["sr"] is False and row["spl"] == 0.0
    assert row["arrival_ratio"] == 1.0 and row["tce"] is False


def test_far_stop(grid):
    row = episode_metrics(grid, make_episode(), ids(grid, "adg"))
    assert row["tc"] is False and row["spd_hops"] == 2
    assert row["ne_m"] == pytest.approx(2 * S, rel=1e-6)
    assert row["tcp"] is False
    assert row["arrival_ratio"] == 0.0


def test_kpa_and_reaction_accuracy(grid):
    a, b, c, f, i = ids(grid, "abcfi")
    gold = [("FORWARD", a), ("FORWARD", b), ("LEFT", c), ("FORWARD", f), ("STOP", i)]
    # VELMA's key points of a b c f i: a, b, b->c, f->i -> denominator 5 (with the stop)
    # kpa_prefix: first step, b and f (3 out-links), the stop -> 4 key points
    same = episode_metrics(
        grid, make_episode(), [a, b, c, f, i], gold_actions=gold, agent_actions=gold
    )
    assert same["kpa"] == 1.0 and same["kpa_prefix"] == 1.0
    assert same["reaction_accuracy"] == 1.0
    wrong_turn = [("forward", a), ("forward", b), ("forward", c), ("stop", c)]
    row = episode_metrics(
        grid, make_episode(), [a, b, c], gold_actions=gold, agent_actions=wrong_turn
    )
    assert row["kpa"] == pytest.approx(3 / 5)  # a, b, b->c; c is not next to the goal
    assert row["kpa_prefix"] == pytest.approx(2 / 4)  # right at a and b, then off the path
    assert row["reaction_accuracy"] == 0.0  # FORWARD at c (gold LEFT), never at i
    late_stop = [*gold[:4], ("FORWARD", i), ("STOP", f)]
    row = episode_metrics(
        grid, make_episode(), [a, b, c, f, i, f], gold_actions=gold, agent_actions=late_stop
    )
    assert row["kpa"] == 1.0  # every gold key point, and f is a neighbour of the goal
    assert row["kpa_prefix"] == pytest.approx(3 / 4)  # misses only the stop decision
    assert row["reaction_accuracy"] == pytest.approx(1 / 2)  # c right, i wrong
    first_wrong = [("LEFT", a), *gold[1:]]
    row = episode_metrics(
        grid, make_episode(), [a, b, c, f, i], gold_actions=gold, agent_actions=first_wrong
    )
    assert row["kpa_prefix"] == 0.0 and row["kpa"] == 1.0  # same path, other actions


def test_ordered_goals(grid):
    episode = make_episode(goal_nodes=("c", "i"), metadata={"ordered": True})
    via_c = episode_metrics(grid, episode, ids(grid, "abcfi"))
    assert via_c["tce"] is True and via_c["tcp"] is True
    around = episode_metrics(grid, episode, ids(grid, "adghi"))
    assert around["tce"] is False and around["tcp"] is False  # never near c
    assert around["sr"] is True and around["tc"] is True  # final goal reached
    near_c = episode_metrics(grid, episode, ids(grid, "abefi"))
    assert near_c["tce"] is False and near_c["tcp"] is True  # b is 44.5 m from c
    wrong_order = episode_metrics(grid, episode, ids(grid, "adefic"))
    assert wrong_order["tce"] is False  # i first, then stops at c


def test_ordered_spl_reference_goes_through_every_goal(grid):
    episode = make_episode(goal_nodes=("g", "c"), reference="adgdabc", metadata={"ordered": True})
    row = episode_metrics(grid, episode, ids(grid, "adgdabc"), success_radius_m=50.0)
    assert row["spl"] == pytest.approx(1.0)  # shortest a -> g -> c is 2 + 4 streets
    assert row["tce"] is True and row["steps"] == 6


def test_unordered_goals_any_counts(grid):
    episode = make_episode(goal_nodes=("g", "i"), reference="adg")
    row = episode_metrics(grid, episode, ids(grid, "ab"))
    assert row["spd_hops"] == 3  # b -> a -> d -> g and b -> c -> f -> i
    row = episode_metrics(grid, episode, ids(grid, "abcfi"))
    assert row["tce"] is True and row["ne_m"] == 0.0 and row["tc"] is True


def test_category_completion(grid, bare_grid):
    cafe = make_episode(goal_categories=("cafe",))
    assert episode_metrics(grid, cafe, ids(grid, "abcfi"))["tcc"] is True
    assert episode_metrics(grid, cafe, ids(grid, "abeh"))["tcc"] is True  # h is 44.5 m away
    assert episode_metrics(grid, cafe, ids(grid, "abe"))["tcc"] is False  # e is 62.9 m away
    assert episode_metrics(bare_grid, cafe, ids(bare_grid, "abe"))["tcc"] is None
    ordered = make_episode(
        goal_nodes=("c", "i"), goal_categories=("bank", "cafe"), metadata={"ordered": True}
    )
    assert episode_metrics(grid, ordered, ids(grid, "abefi"))["tcc"] is True  # b near bank
    assert episode_metrics(grid, ordered, ids(grid, "adghi"))["tcc"] is False


def test_batch_equals_single_and_is_deterministic(grid):
    episodes = [make_episode(id=f"e{k}") for k in range(4)]
    paths = [ids(grid, p) for p in ("abcfi", "adef", "adg", "a")]
    rows = batch_metrics(grid, episodes, paths)
    again = batch_metrics(grid, episodes, paths, dist_cache=MetricCache(grid))
    assert rows == again
    for episode, path, row in zip(episodes, paths, rows, strict=True):
        assert episode_metrics(grid, episode, path, dist_cache=MetricCache(grid)) == row
    assert rows[3]["steps"] == 0 and rows[3]["path_length_m"] == 0.0
    assert batch_metrics(grid, [], []) == []


def test_string_ids_and_bad_input(grid):
    row = episode_metrics(grid, make_episode(), list("abcfi"))
    assert row["tce"] is True
    with pytest.raises(ValueError, match="at least the start"):
        episode_metrics(grid, make_episode(), [])
    with pytest.raises(ValueError, match="2 paths for 1 episodes"):
        batch_metrics(grid, [make_episode()], [[0], [0]])
    with pytest.raises(ValueError, match="label, node_index"):
        episode_metrics(grid, make_episode(), [0], gold_actions=["FORWARD"], agent_actions=[])
