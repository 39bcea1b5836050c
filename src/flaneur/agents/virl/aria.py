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

from typing import Any

import numpy as np

from flaneur.agents.virl.common import Thinker, prompt_template
from flaneur.agents.virl.rating import (
    ask_rating,
    best_first,
    closest_types,
    embedder,
    type_similarities,
    types_named_in,
    weighted_rating,
)
from flaneur.services.geocode import normalize
from flaneur.services.nearby import nearby_search
from flaneur.services.overview import TagOverview
from flaneur.world.city import City
from flaneur.world.taxonomy import normalize_category

# embedder, type_similarities and types_named_in live in flaneur.agents.virl.rating (shared
# with Vivek) and stay importable from here
__all__ = [
    "KEEP",
    "RADIUS_M",
    "TYPES_KEPT",
    "WEIGHTS",
    "Aria",
    "embedder",
    "type_similarities",
    "types_named_in",
]

KEEP = 15
TYPES_KEPT = 3
RADIUS_M = 500.0
WEIGHTS = {"type": 0.55, "overview": 0.2, "near": 0.15, "prominence": 0.1}


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
        return closest_types(intention, TYPES_KEPT), "embedder"

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
        parts = {"type": type_fit, "overview": over, "near": near, "prominence": prom}
        why = (
            f"type fit {type_fit:.2f}, overview fit {over:.2f}, "
            f"{result.distance_m:.0f} m away, prominence {result.prominence:g}"
        )
        return weighted_rating(parts, WEIGHTS), why

    def rate(
        self, intention: str, background: str, types: dict[str, float], result
    ) -> dict[str, Any]:
        """Overview and rating of one candidate."""
        overview = self.overviews.overview(self.city, result.row)
        asked = ask_rating(
            self.thinker,
            prompt_template("aria_rate").format(
                background=background,
                intention=intention,
                name=result.name,
                distance_m=round(result.distance_m),
                overview=overview,
            ),
        )
        rating, why, rated_by = (*asked, "llm") if asked else (None, "", "offline")
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
        best_first(rated, lambda x: x["distance_m"])
        return {
            "place_types": {k: round(v, 3) for k, v in types.items()},
            "types_chosen_by": chosen_by,
            "recommendations": rated,
        }
