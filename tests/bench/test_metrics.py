"""V-IRL's perception metrics with hand-computed values."""

from __future__ import annotations

import math

import pytest

from flaneur.bench.metrics import circular_correct, mean_accuracy, rotate_options, topk_hits


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
    scores = [0.1, 0.9, 0.5, 0.7, 0.2, 0.3]  # ranked: cafe, gym, bar, zoo, park, bank
    assert topk_hits(scores, labels, ["gym"]) == {1: False, 3: True, 5: True}
    assert topk_hits(scores, labels, ["bank"]) == {1: False, 3: False, 5: False}
    assert topk_hits(scores, labels, ["park", "cafe"])[1] is True
    flat = [0.0] * 6  # all tied: the first labels win, nothing lucky
    assert topk_hits(flat, labels, ["bank"])[1] and not topk_hits(flat, labels, ["zoo"])[5]


def test_rotate_options_moves_the_answer_back() -> None:
    opts = ["w", "x", "y", "z"]
    assert rotate_options(opts, 2, 0) == (["w", "x", "y", "z"], 2)
    assert rotate_options(opts, 2, 1) == (["x", "y", "z", "w"], 1)
    assert rotate_options(opts, 0, 1) == (["x", "y", "z", "w"], 3)
    assert rotate_options(opts, 2, 3) == (["z", "w", "x", "y"], 3)


def test_circular_needs_all_four_passes_and_stops_at_first_wrong() -> None:
    opts = ["true", "f1", "f2", "f3"]
    calls: list[list[str]] = []

    def always_right(options: list[str], idx: int) -> bool:
        calls.append(options)
        return options[idx] == "true"

    assert circular_correct(always_right, opts, 0) == (True, 4)
    assert [c.index("true") for c in calls] == [0, 3, 2, 1]

    def always_a(options: list[str], idx: int) -> bool:  # position bias: always "A"
        return idx == 0

    assert circular_correct(always_a, opts, 0) == (False, 2)  # right once, wrong at pass 2
    assert circular_correct(always_a, opts, 1) == (False, 1)
