"""Aria, V-IRL's place recommender: intention → place type → nearby candidates → overviews →
a rating 0-10 with an explanation → a list sorted best first (V-IRL's code sorts it worst
first; we do not repeat that).

Offline (our own design, not V-IRL's): the place type comes from the sentence embedder
(all-MiniLM-L6-v2) against the taxonomy's category labels and synonyms (a category named
word for word in the intention ranks first), keeping the
:data:`TYPES_KEPT` closest types; candidates are the nearest :data:`KEEP` places of those
types within the radius; the rating is ::

    10 x (0.55 type fit + 0.2 overview fit + 0.15 nearness + 0.1 prominence)

where *type fit* is the candidate's best type similarity divided by the best similarity
of any type, *overview fit* the similarity of intention and overview (clipped at 0),
*nearness* ``1 - distance / radius`` and *prominence* the tag-based stand-in over 4. When
the intention names a place or brand found within the radius ("the nearest Hesburger"),
those places are the candidates.
With ``--llm``, the model names the type and rates each candidate from its overview.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import numpy as np

from flaneur.agents.virl.common import Thinker, prompt_template
from flaneur.models import extract_json
from flaneur.services.geocode import normalize
from flaneur.services.nearby import nearby_search
from flaneur.services.overview import TagOverview
from flaneur.world.city import City
from flaneur.world.taxonomy import CATEGORIES, normalize_category

KEEP = 15
TYPES_KEPT = 3
RADIUS_M = 500.0
WEIGHTS = {"type": 0.55, "overview": 0.2, "near": 0.15, "prominence": 0.1}


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
    from flaneur.text.embedder import shared_embedder

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


class Aria:
    """The place recommender.

    Parameters
    ----------
    city
        The city.
    thinker
        Language model wrapper (offline without a model).
    overviews
        Overview provider (default: text from OSM tags).
    """

    def __init__(
        self,
        city: City,
        thinker: Thinker | None = None,
        overviews=None,
        *,
        radius_m: float = RADIUS_M,
        keep: int = KEEP,
    ) -> None:
        self.city = city
        self.thinker = thinker or Thinker()
        self.overviews = overviews or TagOverview()
        self.radius_m = radius_m
        self.keep = keep

    def place_types(self, intention: str, background: str = "") -> tuple[dict[str, float], str]:
        """Type scores (best first) and who chose them (``"llm"`` or ``"embedder"``)."""
        reply = self.thinker.ask(
            prompt_template("aria_type").format(intention=intention, background=background)
        )
        if reply is not None:
            category = normalize_category(
                reply.strip().strip('".').splitlines()[0] if reply.strip() else ""
            )
            if category:
                return {category: 1.0}, "llm"
            self.thinker.fell_back()
        sims = type_similarities(intention)
        top = sorted(sims, key=lambda k: -sims[k])[:TYPES_KEPT]
        return {k: sims[k] for k in top}, "embedder"

    def candidates(self, xy: Any, types: dict[str, float]) -> list:
        """The nearest :attr:`keep` places of the given types within the radius."""
        found = {}
        for category in types:
            for r in nearby_search(
                self.city,
                xy,
                radius_m=self.radius_m,
                place_type=category,
                named_only=True,
                limit=None,
            ):
                found.setdefault(r.row, r)
        return sorted(found.values(), key=lambda r: r.distance_m)[: self.keep]

    def _offline_rating(
        self, intention: str, types: dict[str, float], result, overview: str
    ) -> tuple[float, str]:
        best_type = max(types.values()) if types else 1.0
        fit = max((types.get(c, 0.0) for c in result.categories), default=0.0)
        type_fit = max(0.0, fit / best_type) if best_type > 0 else 0.0
        over = float(max(0.0, embedder().similarity([intention], [overview])[0, 0]))
        near = max(0.0, 1.0 - result.distance_m / self.radius_m)
        prom = min(result.prominence, 4.0) / 4.0
        score = 10.0 * (
            WEIGHTS["type"] * type_fit
            + WEIGHTS["overview"] * over
            + WEIGHTS["near"] * near
            + WEIGHTS["prominence"] * prom
        )
        why = (
            f"type fit {type_fit:.2f}, overview fit {over:.2f}, "
            f"{result.distance_m:.0f} m away, prominence {result.prominence:g}"
        )
        return round(score, 2), why

    def rate(
        self, intention: str, background: str, types: dict[str, float], result
    ) -> dict[str, Any]:
        """Overview and rating of one candidate."""
        overview = self.overviews.overview(self.city, result.row)
        rating, why, rated_by = None, "", "offline"
        reply = self.thinker.ask(
            prompt_template("aria_rate").format(
                background=background,
                intention=intention,
                name=result.name,
                distance_m=round(result.distance_m),
                overview=overview,
            )
        )
        if reply is not None:
            data = extract_json(reply)
            value = data.get("rating") if isinstance(data, dict) else None
            if isinstance(value, int | float) and 0 <= value <= 10:
                rating, why, rated_by = float(value), str(data.get("explanation", "")), "llm"
            else:
                self.thinker.fell_back()
        if rating is None:
            rating, why = self._offline_rating(intention, types, result, overview)
        return {
            **result.to_dict(),
            "overview": overview,
            "rating": rating,
            "explanation": why,
            "rated_by": rated_by,
        }

    def mentioned(self, xy: Any, intention: str) -> list:
        """Places within the radius whose name or brand the intention names word for word."""
        text = f" {normalize(intention)} "
        out = []
        for r in nearby_search(
            self.city, xy, radius_m=self.radius_m, named_only=True, dedupe=False, limit=None
        ):
            tags = self.city.places.tags[r.row]
            keys = {normalize(r.name), normalize(tags.get("brand", ""))} - {""}
            if any(len(k) >= 3 and f" {k} " in text for k in keys):
                out.append(r)
        return out

    def recommend(self, xy: Any, intention: str, background: str = "") -> dict[str, Any]:
        """Ranked recommendations around a metric point, best first."""
        xy = np.asarray(xy, dtype=float)
        types, chosen_by = self.place_types(intention, background)
        named = self.mentioned(xy, intention)
        if named:  # a brand or name in the intention: those places are the candidates
            top = max(types.values(), default=1.0)
            types = {**{c: top for r in named for c in r.categories}, **types}
            pool = named[: self.keep]
        else:
            pool = self.candidates(xy, types)
        rated = [self.rate(intention, background, types, r) for r in pool]
        rated.sort(key=lambda x: (-x["rating"], x["distance_m"]))
        return {
            "place_types": {k: round(v, 3) for k, v in types.items()},
            "types_chosen_by": chosen_by,
            "recommendations": rated,
        }
