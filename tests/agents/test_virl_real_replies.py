"""Replies SmolLM2-135M-Instruct really gave the V-IRL agents (benchmarks/virl_real_model.py,
llama.cpp's server): each is used when usable, else counted and the offline step answers."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from flaneur.agents.virl.common import Thinker
from flaneur.agents.virl.diego import clean_draft
from flaneur.agents.virl.local import Local
from flaneur.agents.virl.rating import ask_rating
from flaneur.services import geocode_one


class Replies:
    """A model double answering with the given texts in turn."""

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)

    def complete_sync(self, messages, **options):
        return SimpleNamespace(text=self.texts.pop(0))


@pytest.fixture(scope="module")
def helsinki():
    from flaneur.world.builtin import load_builtin

    return load_builtin("helsinki")


def test_local_falls_back_on_a_sentence_and_on_a_list_of_names(helsinki):
    thinker = Thinker(
        Replies(
            "To get to Kiasma, you can take the bus from the city center.",
            "Kolme Seppää\nAleksanterinkatu 18\nMikkeli 200\nSilluunen 3770\nTilmak 459",
        )
    )
    start = geocode_one(helsinki, "Stockmann").node
    answer = Local(helsinki, thinker).answer("How do I get to Kiasma?", start)
    # the sentence matched some place loosely before; now the question's own phrase is used
    assert answer.destination.name == "Kiasma"
    assert answer.written_by == "template" and answer.instruction.startswith("Face ")
    assert thinker.calls == 2 and thinker.fallbacks == 2


def test_local_keeps_a_model_instruction_that_says_where_to_walk(helsinki):
    thinker = Thinker(Replies("Kiasma", "Walk north-west for 400 m, then turn right."))
    start = geocode_one(helsinki, "Stockmann").node
    answer = Local(helsinki, thinker).answer("How do I get to Kiasma?", start)
    assert answer.written_by == "llm" and thinker.fallbacks == 0


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
        )
    )
    assert ask_rating(thinker, "rate") is None  # cut off, rating nested: unusable
    assert ask_rating(thinker, "rate") == (1.0, "The home meets the person's expectations.")
    assert thinker.fallbacks == 1


def test_diego_with_the_real_draft_runs_max_rounds(helsinki, tmp_path):
    from flaneur.report.virl_run import run_agent
    from flaneur.services.persona import persona_from_dict

    persona = persona_from_dict(
        {
            "name": "D",
            "city": "helsinki",
            "start": "Kiasma",
            "background": "a visitor",
            "intention": "see art",
            "max_rounds": 2,
            "ablation": False,
        }
    )
    thinker = Thinker(Replies(*(['{\n  "type": "normal",\n  "name": "Elder"\n}'] * 12)))
    result = run_agent("diego", helsinki, persona, tmp_path / "out", thinker=thinker)
    plan = result["grounded_plan"]["plan"]
    assert [(a["type"], a["content"], a["minutes"]) for a in plan] == [
        ("normal", "Elder", 60.0)
    ] * 2
