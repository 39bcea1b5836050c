"""Rating parts shared by the recommenders (Aria, Vivek, and Hiro through Aria).

* place types from text: the sentence embedder (all-MiniLM-L6-v2) against the taxonomy's
  category labels and synonyms, a category named word for word ranking first
  (:func:`type_similarities`, :func:`closest_types`);
* a 0-10 rating from the run's language model: a JSON ``{"rating": x, "explanation": ...}``
  reply, anything else marked unusable in the exchange's record (:func:`ask_rating`);
* the offline ratings of our own design: ``10 x`` a weighted sum of parts in ``[0, 1]``
  (:func:`weighted_rating`);
* the order: best first (:func:`best_first`), as V-IRL's Aria (its estate ranking sorted
  ascending and kept the worst; Vivek does not).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from flaneur.agents.virl.thinking import Thinker
from flaneur.models import extract_json
from flaneur.text.embedder import shared_embedder
from flaneur.world.taxonomy import CATEGORIES, normalize_category


@lru_cache(maxsize=1)
def _type_texts() -> tuple[tuple[str, ...], tuple[str, ...]]:
    names, texts = [], []
    for name, info in CATEGORIES.items():
        for text in (info.label, *info.synonyms):
            names.append(name)
            texts.append(text)
    return tuple(names), tuple(texts)


def embedder():
    """The shared sentence embedder."""

    return shared_embedder()


def types_named_in(text: str) -> list[str]:
    """Categories named word for word in ``text`` (1-3 word phrases, longest first)."""
    words = re.findall(r"[\w'-]+", text.lower())
    found: list[str] = []
    for size in (3, 2, 1):
        for i in range(len(words) - size + 1):
            category = normalize_category(" ".join(words[i : i + size]))
            if category and category not in found:
                found.append(category)
    return found


def type_similarities(intention: str) -> dict[str, float]:
    """Similarity of ``intention`` to each category (best of its label and synonyms);
    categories named word for word in it rank above all others."""
    names, texts = _type_texts()
    sims = embedder().similarity([intention], list(texts))[0]
    best: dict[str, float] = {}
    for name, sim in zip(names, sims.tolist(), strict=True):
        best[name] = max(best.get(name, -1.0), sim)
    top = max(best.values(), default=0.0)
    for k, category in enumerate(types_named_in(intention)):
        best[category] = top + 0.1 - 0.01 * k
    return best


def closest_types(text: str, n: int) -> dict[str, float]:
    """The ``n`` categories closest to ``text`` with their similarities, best first."""
    sims = type_similarities(text)
    return {k: sims[k] for k in sorted(sims, key=lambda k: -sims[k])[:n]}


async def ask_rating(thinker: Thinker, prompt: str, **values: Any) -> tuple[float, str] | None:
    """The model's 0-10 rating and explanation, asked with prompt ``prompt`` of the
    thinker's agent filled with ``values``.

    Returns ``None`` offline, when the call failed, or when the reply holds no JSON object
    with a numeric ``rating`` in ``[0, 10]`` (that reply is marked unusable).
    """
    reply = await thinker.ask(prompt, **values)
    if reply is None:
        return None
    data = extract_json(reply)
    value = data.get("rating") if isinstance(data, dict) else None
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 10:
        return float(value), str(data.get("explanation", ""))
    thinker.fell_back()
    return None


def weighted_rating(parts: Mapping[str, float], weights: Mapping[str, float]) -> float:
    """``10 x sum(weight x part)`` over ``weights`` (parts in ``[0, 1]``), to 2 decimals."""
    return round(10.0 * sum(weights[k] * parts[k] for k in weights), 2)


def best_first(items: list[dict[str, Any]], tiebreak: Callable[[dict[str, Any]], Any]) -> None:
    """Sort rated items in place: highest ``rating`` first, ties by ``tiebreak`` ascending."""
    items.sort(key=lambda x: (-x["rating"], tiebreak(x)))
