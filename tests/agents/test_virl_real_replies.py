"""Replies SmolLM2-135M-Instruct really gave the V-IRL planners (benchmarks/virl_real_model.py,
llama.cpp's server): each is used when usable, else marked unusable and the offline step
answers."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from flaneur.agents.base import SolveInfo
from flaneur.agents.virl.day_rules import clean_draft
from flaneur.agents.virl.diego import DiegoAgent
from flaneur.agents.virl.rating import ask_rating
from flaneur.agents.virl.thinking import Thinker
from flaneur.tasks.items import TaskItem


class Replies:
    """A model double answering with the given texts in turn."""

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)

    async def complete(self, messages, **options):
        return SimpleNamespace(text=self.texts.pop(0))


@pytest.fixture(scope="module")
def helsinki():
    from flaneur.world.builtin import load_city

    return load_city("helsinki")


def test_diego_draft_without_content_or_minutes_is_cleaned():
    assert clean_draft({"type": "normal", "name": "Elder"}) == {
        "type": "normal",
        "content": "Elder",
        "minutes": 60.0,
    }
    assert clean_draft({"type": "eat", "minutes": "an hour", "place": 7}) == {
        "type": "eat",
        "content": "eat",
        "place": "7",
        "minutes": 60.0,
    }
    assert clean_draft({"type": "normal", "content": "museum", "minutes": 90})["minutes"] == 90.0


def test_ratings_from_real_replies():
    thinker = Thinker(
        Replies(
            'JSON Object:\n{\n  "id": 1,\n  "name": "Foto Cafe",\n  "description": {\n'
            '    "rating": 4.5,\n    "explanation": "This',
            '{\n  "rating": 1.0,\n  "explanation": "The home meets the person\'s expectations."\n}',
        ),
        "vivek",
    )
    values = dict.fromkeys(
        ("background", "intention", "budget", "address", "price", "bedrooms", "area"), "x"
    )
    values.update(radius_m=200, amenities="")

    async def both():
        return [await ask_rating(thinker, "rate", **values) for _ in range(2)]

    first, second = asyncio.run(both())
    assert first is None  # cut off, the rating nested: unusable
    assert second == (1.0, "The home meets the person's expectations.")
    assert thinker.fallbacks == 1 and [r.get("parse_failures", 0) for r in thinker.records] == [
        1,
        0,
    ]


def test_diego_with_the_real_draft_runs_max_rounds(helsinki):
    item = TaskItem(
        "d",
        "virl-diego",
        {
            "name": "D",
            "city": "helsinki",
            "start": "Kiasma",
            "background": "a visitor",
            "intention": "see art",
        },
    )
    model = Replies(*(['{\n  "type": "normal",\n  "name": "Elder"\n}'] * 12))
    info = SolveInfo(task_id="t", city=helsinki, items=[item], seed=0, model=model)
    result = asyncio.run(DiegoAgent(max_rounds=2, ablation=False).solve(item, info))
    plan = result["grounded_plan"]["plan"]
    assert [(a["type"], a["content"], a["minutes"]) for a in plan] == [
        ("normal", "Elder", 60.0)
    ] * 2
    # next, estimate (no cost: free), supervise (no "ok": unusable) in each round
    prompts = [r["prompt_id"].split(":")[0] for r in result["records"]]
    assert prompts == ["diego-next-1", "diego-estimate-1", "diego-supervise-1"] * 2
    assert [bool(r.get("parse_failures")) for r in result["records"]] == [False, False, True] * 2
    assert "ungrounded_plan" not in result
