"""V-IRL's perception metrics with hand-computed values."""

from __future__ import annotations

import math

import pytest

from flaneur.bench.metrics import (
    accuracy_figures,
    circular_correct,
    expected_letter,
    mean_accuracy,
    rank_labels,
    rotate_options,
    topk_hits,
)


def test_macc_multi_type_places_add_one_over_k() -> None:
    # place 1: cafe, right -> cafe tp 1, total 1
    # place 2: cafe+bar, wrong -> cafe total +0.5, bar total +0.5
    # place 3: bar+bakery+cafe, right -> each tp +1/3, total +1/3
    # place 4: bakery, wrong -> bakery total +1
    r = mean_accuracy(
        [
            (["cafe"], True),
            (["cafe", "bar"], False),
            (["bar", "bakery", "cafe"], True),
            (["bakery"], False),
        ]
    )
    cafe = (1 + 1 / 3) / (1 + 0.5 + 1 / 3)  # 0.727272...
    bar = (1 / 3) / (0.5 + 1 / 3)  # 0.4
    bakery = (1 / 3) / (1 / 3 + 1)  # 0.25
    assert r.per_type["cafe"][0] == pytest.approx(cafe)
    assert r.per_type["bar"][0] == pytest.approx(0.4)
    assert r.per_type["bakery"][0] == pytest.approx(0.25)
    assert r.per_type["cafe"][1] == pytest.approx(1 + 0.5 + 1 / 3)
    assert r.macc == pytest.approx((cafe + bar + bakery) / 3)  # 0.459090...
    assert r.macc == pytest.approx(0.4590909, abs=1e-6)
    assert r.acc == 0.5 and r.places == 4


def test_macc_differs_from_acc_and_handles_empty() -> None:
    r = mean_accuracy([(["a"], True), (["a"], True), (["a"], True), (["b"], False)])
    assert r.acc == 0.75 and r.macc == 0.5  # types weigh equally, places do not
    empty = mean_accuracy([])
    assert empty.acc == 0.0 and math.isnan(empty.macc) and empty.per_type == {}


def test_macc_repeated_type_counts_once() -> None:
    r = mean_accuracy([(["cafe", "cafe"], True), (["cafe"], False)])
    assert r.per_type["cafe"] == (0.5, 2.0)


def test_topk_hits_with_ties_in_label_order() -> None:
    labels = ["bank", "cafe", "bar", "gym", "park", "zoo"]
    scores = [0.1, 0.9, 0.5, 0.7, 0.2, 0.3]
    ranked = rank_labels(scores, labels)
    assert ranked == ["cafe", "gym", "bar", "zoo", "park", "bank"]
    assert topk_hits(ranked, ["gym"]) == {1: False, 3: True, 5: True}
    assert topk_hits(ranked, ["bank"]) == {1: False, 3: False, 5: False}
    assert topk_hits(ranked, ["park", "cafe"])[1] is True
    flat = rank_labels([0.0] * 6, labels)  # all tied: the first labels win, nothing lucky
    assert flat == labels and topk_hits(flat, ["bank"])[1] and not topk_hits(flat, ["zoo"])[5]


def test_rotate_options_moves_the_answer_back() -> None:
    opts = ["w", "x", "y", "z"]
    assert rotate_options(opts, 2, 0) == (["w", "x", "y", "z"], 2)
    assert rotate_options(opts, 2, 1) == (["x", "y", "z", "w"], 1)
    assert rotate_options(opts, 0, 1) == (["x", "y", "z", "w"], 3)
    assert rotate_options(opts, 2, 3) == (["z", "w", "x", "y"], 3)


def test_circular_needs_all_four_passes() -> None:
    # true option at index 2: C, then B, A, D as the options shift left
    assert [expected_letter(2, shift) for shift in range(4)] == ["C", "B", "A", "D"]
    assert circular_correct(["C", "B", "A", "D"], 2)
    assert not circular_correct(["C", "B", "A"], 2)  # stopped early: not correct
    assert not circular_correct(["C", "C", "C", "C"], 2)  # position bias: right once
    assert not circular_correct([], 0)


def test_accuracy_figures_hand_computed_and_seeded() -> None:
    outcomes = [(["cafe"], True), (["cafe", "bar"], False), (["bar"], True), (["bank"], True)]
    figures = accuracy_figures(outcomes)
    # cafe 1/1.5, bar 1/1.5, bank 1/1 -> mAcc (2/3 + 2/3 + 1) / 3; acc 3/4
    assert figures["macc"]["value"] == pytest.approx((2 / 3 + 2 / 3 + 1) / 3)
    assert figures["acc"]["value"] == 0.75 and figures["acc"]["n"] == 4
    assert accuracy_figures(outcomes) == figures  # same places, same interval
    for figure in figures.values():
        lo, hi = figure["ci95"]
        assert 0.0 <= lo <= figure["value"] <= hi <= 1.0
    perfect = accuracy_figures([(["cafe"], True)] * 5)
    assert perfect["macc"] == {"value": 1.0, "n": 5, "ci95": [1.0, 1.0]}
    assert accuracy_figures([]) == {}
    untyped = accuracy_figures([([], True)])
    assert untyped["macc"] == {"value": None, "n": 1, "ci95": None}
    assert untyped["acc"]["value"] == 1.0
