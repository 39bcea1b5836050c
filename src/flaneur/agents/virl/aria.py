"""Aria, V-IRL's place recommender: intention → place type → nearby candidates → overviews →
a rating 0-10 with an explanation → a list sorted best first (as V-IRL's, whose priority
queue pops the highest rating first).

Offline (our own design, not V-IRL's): the place type comes from the sentence embedder
(all-MiniLM-L6-v2) against the taxonomy's category labels and synonyms (a category named
word for word in the intention ranks first), keeping the :data:`TYPES_KEPT` closest types;
candidates are the nearest ``keep`` named places of those types within ``radius_m``; the
rating is ::

    10 x (0.55 type fit + 0.2 overview fit + 0.15 nearness + 0.1 prominence)

where *type fit* is the candidate's best type similarity divided by the best similarity
of any type, *overview fit* the similarity of intention and overview (clipped at 0),
*nearness* ``1 - distance / radius`` and *prominence* the tag-based stand-in over 4. When
the intention names a place or brand found within the radius ("the nearest Hesburger"),
those places are the candidates. With a model (``--llm``), the model names the type (prompt
``aria/type``) and rates each candidate from its overview (``aria/rate``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar

import numpy as np

from flaneur.agents.base import SolveInfo
from flaneur.agents.virl.common import ScenarioPlanner
from flaneur.agents.virl.rating import (
    ask_rating,
    best_first,
    closest_types,
    embedder,
    weighted_rating,
)
from flaneur.agents.virl.thinking import Thinker
from flaneur.options import Range, option
from flaneur.services.geocode import normalize
from flaneur.services.nearby import NearbyResult, nearby_search
from flaneur.services.overview import OverviewProvider, TagOverview
from flaneur.tasks.items import TaskItem
from flaneur.world.city import City
from flaneur.world.taxonomy import normalize_category

KEEP = 15
TYPES_KEPT = 3
RADIUS_M = 500.0
WEIGHTS = {"type": 0.55, "overview": 0.2, "near": 0.15, "prominence": 0.1}


def rate_offline(
    city: City,
    intention: str,
    types: dict[str, float],
    result: NearbyResult,
    *,
    radius_m: float = RADIUS_M,
    overview: str | None = None,
) -> dict[str, Any]:
    """The offline rating of one candidate (module docstring): its overview (from the tags
    unless given), ``rating`` and the ``explanation`` of the parts."""
    text = TagOverview().overview(city, result.row) if overview is None else overview
    best_type = max(types.values()) if types else 1.0
    fit = max((types.get(c, 0.0) for c in result.categories), default=0.0)
    type_fit = max(0.0, fit / best_type) if best_type > 0 else 0.0
    over = float(max(0.0, embedder().similarity([intention], [text])[0, 0]))
    near = max(0.0, 1.0 - result.distance_m / radius_m)
    prom = min(result.prominence, 4.0) / 4.0
    parts = {"type": type_fit, "overview": over, "near": near, "prominence": prom}
    why = (
        f"type fit {type_fit:.2f}, overview fit {over:.2f}, "
        f"{result.distance_m:.0f} m away, prominence {result.prominence:g}"
    )
    return {"overview": text, "rating": weighted_rating(parts, WEIGHTS), "explanation": why}


@dataclass
class Recommender:
    """Aria's steps for one scenario (also Diego's meal search) in ``city``: the run's model
    through the ``aria`` prompts (``thinker``; offline without a model), the search radius
    and number of candidates (``radius_m``, ``keep``) and the ``overviews`` (default: text
    from OSM tags)."""

    city: City
    thinker: Thinker
    radius_m: float = RADIUS_M
    keep: int = KEEP
    overviews: OverviewProvider = field(default_factory=TagOverview)

    async def place_types(self, intention: str, background: str = "") -> tuple[dict, str]:
        """Type scores (best first) and who chose them (``"llm"`` or ``"embedder"``)."""
        reply = await self.thinker.ask("type", intention=intention, background=background)
        if reply is not None:
            first = reply.strip().strip('".').splitlines()[0] if reply.strip() else ""
            category = normalize_category(first)
            if category:
                return {category: 1.0}, "llm"
            self.thinker.fell_back()
        return closest_types(intention, TYPES_KEPT), "embedder"

    def candidates(self, xy: Any, types: dict[str, float]) -> list[NearbyResult]:
        """The nearest :attr:`keep` named places of the given types within the radius."""
        found: dict[int, NearbyResult] = {}
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
        return sorted(found.values(), key=lambda r: (r.distance_m, r.row))[: self.keep]

    def mentioned(self, xy: Any, intention: str) -> list[NearbyResult]:
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

    async def rate(
        self, intention: str, background: str, types: dict[str, float], result: NearbyResult
    ) -> dict[str, Any]:
        """Overview and rating of one candidate (the model's, else the offline one)."""
        overview = self.overviews.overview(self.city, result.row)
        asked = await ask_rating(
            self.thinker,
            "rate",
            background=background,
            intention=intention,
            name=result.name,
            distance_m=round(result.distance_m),
            overview=overview,
        )
        if asked is not None:
            rated = {"overview": overview, "rating": asked[0], "explanation": asked[1]}
        else:
            rated = rate_offline(
                self.city, intention, types, result, radius_m=self.radius_m, overview=overview
            )
        place_id = str(self.city.places.ids[result.row])
        by = "llm" if asked is not None else "offline"
        return {**result.to_dict(), "place_id": place_id, **rated, "rated_by": by}

    async def recommend(self, xy: Any, intention: str, background: str = "") -> dict[str, Any]:
        """Ranked recommendations around a metric point, best first."""
        xy = np.asarray(xy, dtype=float)
        types, chosen_by = await self.place_types(intention, background)
        named = self.mentioned(xy, intention)
        if named:  # a brand or name in the intention: those places are the candidates
            top = max(types.values(), default=1.0)
            types = {**{c: top for r in named for c in r.categories}, **types}
            pool = named[: self.keep]
        else:
            pool = self.candidates(xy, types)
        rated = [await self.rate(intention, background, types, r) for r in pool]
        best_first(rated, lambda x: (x["distance_m"], x["row"]))
        return {
            "place_types": {k: round(v, 3) for k, v in types.items()},
            "types_chosen_by": chosen_by,
            "recommendations": rated,
        }


@dataclass(frozen=True)
class AriaOptions:
    """Aria's options (``flaneur virl aria FILE radius_m=300``, ``--option aria.keep=5``)."""

    radius_m: Annotated[float, Range(10, 5000)] = option(RADIUS_M, "search radius in metres")
    keep: Annotated[int, Range(1, 50)] = option(KEEP, "candidates rated (the nearest)")


class AriaAgent(ScenarioPlanner):
    """The place recommender on ``virl-aria`` scenarios (see the module docstring)."""

    name: ClassVar[str] = "aria"
    solves: ClassVar[tuple[str, ...]] = ("virl-aria",)
    Options: ClassVar[type] = AriaOptions

    async def solve(self, item: TaskItem, info: SolveInfo) -> dict[str, Any]:
        """Places for the persona's intention around its start, best first."""
        scene = self.begin(item, info)
        persona, options = scene.persona, self.options
        found = await Recommender(
            info.city, scene.thinker, options.radius_m, options.keep
        ).recommend(info.city.graph.xy[scene.start], persona.intention, persona.background)
        return scene.result(intention=persona.intention, **found)
