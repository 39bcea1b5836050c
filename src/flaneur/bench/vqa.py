"""Place VQA sets (V-IRL §5, ``generate_place_vqa_data.py`` / ``place_centric_vqa.py``).

Each place of the recognition set of the same city, seed and options
(:func:`flaneur.bench.recognition.recognition_places`) gets the question "which human
intention can be accomplished here" with four options, one true. The options come from
:file:`intentions.json` (one or more per V-IRL type) and the ``latent_poi`` /
``abstract_need`` needs of :file:`flaneur/tasks/needs.json`: the true option is an intention
whose categories meet the place's, the three distractors are intentions whose categories are
disjoint from the place's (and from each other's). Choice and order are drawn with a seed of
the set's seed and the place id. V-IRL had GPT write the options; flaneur's generator writes
them offline only (a generator has no model to ask).

An item is the recognition item plus ``question``, ``options`` (4 texts) and ``answer`` (the
index of the true one). The ``virl-vqa`` task kind asks an answerer
(:mod:`flaneur.bench.answerers`) in four rotations (circular evaluation,
:func:`flaneur.bench.metrics.circular_correct`); the first pass alone is V-IRL's plain score.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

from flaneur.agents import episode_seed
from flaneur.bench.metrics import LETTERS
from flaneur.bench.recognition import RecognitionSet, recognition_places
from flaneur.bench.types import VIRL_TO_FLANEUR
from flaneur.errors import FlaneurError
from flaneur.tasks.items import TaskItem
from flaneur.world.city import City

VQA_VERSION = 1
"""Version of the VQA set's construction rules."""

QUESTION = "Which human intention can be accomplished at this place?"


@dataclass(frozen=True)
class Intention:
    """A thing to do and the flaneur categories where it can be done."""

    text: str
    categories: frozenset[str]


def intention_pool() -> list[Intention]:
    """All offline intentions: per V-IRL type, then the needs table's latent needs."""
    table = json.loads(
        resources.files("flaneur.bench").joinpath("intentions.json").read_text(encoding="utf-8")
    )
    pool = [
        Intention(text, frozenset(VIRL_TO_FLANEUR[t]))
        for t, texts in table.items()
        if not t.startswith("_")
        for text in texts
    ]
    needs = json.loads(
        resources.files("flaneur.tasks").joinpath("needs.json").read_text(encoding="utf-8")
    )
    for tpl in needs["templates"]:
        if tpl.get("category") in ("latent_poi", "abstract_need") and "{" not in tpl["text"]:
            pool.append(Intention(tpl["text"], frozenset(tpl.get("categories", ()))))
    return pool


def offline_options(
    categories: Iterable[str], pool: Sequence[Intention], rng: np.random.Generator
) -> tuple[list[str], int] | None:
    """Four option texts for a place of ``categories`` and the index of the true one, or
    ``None`` when the pool has no true intention or not three disjoint false ones."""
    cats = set(categories)
    true = [x for x in pool if x.categories & cats]
    false = [x for x in pool if x.categories and not x.categories & cats]
    if not true or len(false) < 3:
        return None
    answer = true[int(rng.integers(len(true)))]
    picked: list[Intention] = []
    for i in rng.permutation(len(false)):
        cand = false[int(i)]
        if all(not cand.categories & p.categories for p in picked):
            picked.append(cand)
        if len(picked) == 3:
            break
    if len(picked) < 3:
        return None
    slot = int(rng.integers(4))
    options = [p.text for p in picked]
    options.insert(slot, answer.text)
    return options, slot


def format_question(question: str, options: Sequence[str]) -> str:
    """The multiple-choice prompt: question, lettered options, and how to answer."""
    lines = [f"Q: {question} Choices:"]
    lines += [f"{letter}. {text}" for letter, text in zip(LETTERS, options, strict=False)]
    lines.append("Answer with the option's letter (A, B, C or D).")
    return "\n".join(lines)


class VqaSet(RecognitionSet):
    """V-IRL's place VQA: a four-option intention question about each place of the
    recognition set of the same seed and options (``size`` caps the set)."""

    kind = "virl-vqa"
    version = VQA_VERSION
    success_metric = "correct"
    description = "V-IRL's place VQA: which intention can be accomplished at this place"

    def make(
        self, city: City, *, seed: int, size: int, set_name: str, options: Any
    ) -> tuple[list[TaskItem], dict[str, Any]]:
        kept, skipped, regions = recognition_places(city, options, seed=seed)
        pool = intention_pool()
        items: list[TaskItem] = []
        for row, place in kept:
            rng = np.random.default_rng(episode_seed(seed, place.id))
            made = offline_options(city.places.categories[row], pool, rng)
            if made is None:
                skipped[f"place {place.id}"] = "no fitting true option and 3 disjoint false ones"
                continue
            texts, answer = made
            data = {**place.data, "question": QUESTION, "options": texts, "answer": answer}
            items.append(TaskItem(place.id, place.category, data))
        if not items:
            raise FlaneurError(f"no place of {city.name!r} has offline VQA options")
        return self.report(items[:size], skipped, regions)
