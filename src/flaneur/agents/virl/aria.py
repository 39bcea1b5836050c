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

Ratings, reviews and photos (option ``place_details``): ``offline`` (the default) has none,
and every recommendation and the result say so (``"place_details": "absent (offline: no
Google Places key)"``); ``google`` asks Google Places for each candidate
(:mod:`flaneur.services.place_details`, needs ``GOOGLE_MAPS_API_KEY``): its overview then
ends with Google's rating and up to five reviews with their stars (what V-IRL's model reads,
V-IRL after summarising them; here they go to ``aria/rate`` as they are), the offline rating
takes Google's stars over 5 for *prominence*, and the recommendation carries the details
(``google``: rating, rating count, reviews, photo names).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal

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
from flaneur.services.overview import OverviewProvider, TagOverview, details_overview
from flaneur.services.place_details import (
    FOUND,
    OFFLINE,
    GooglePlaces,
    PlaceDetails,
    not_found,
    require_key,
)
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
    google_rating: float | None = None,
) -> dict[str, Any]:
    """The offline rating of one candidate (module docstring): its overview (from the tags
    unless given), ``rating`` and the ``explanation`` of the parts. With a
    ``google_rating`` (1-5 stars) the prominence part is that rating over 5 instead of the
    tag stand-in."""
    text = TagOverview().overview(city, result.row) if overview is None else overview
    best_type = max(types.values()) if types else 1.0
    fit = max((types.get(c, 0.0) for c in result.categories), default=0.0)
    type_fit = max(0.0, fit / best_type) if best_type > 0 else 0.0
    over = float(max(0.0, embedder().similarity([intention], [text])[0, 0]))
    near = max(0.0, 1.0 - result.distance_m / radius_m)
    if google_rating is None:
        prom, quality = min(result.prominence, 4.0) / 4.0, f"prominence {result.prominence:g}"
    else:
        prom, quality = min(max(google_rating / 5.0, 0.0), 1.0), f"Google rating {google_rating:g}"
    parts = {"type": type_fit, "overview": over, "near": near, "prominence": prom}
    why = (
        f"type fit {type_fit:.2f}, overview fit {over:.2f}, "
        f"{result.distance_m:.0f} m away, {quality}"
    )
    return {"overview": text, "rating": weighted_rating(parts, WEIGHTS), "explanation": why}


@dataclass
class Recommender:
    """Aria's steps for one scenario (also Diego's meal search) in ``city``: the run's model
    through the ``aria`` prompts (``thinker``; offline without a model), the search radius
    and number of candidates (``radius_m``, ``keep``), the ``overviews`` (default: text
    from OSM tags) and the Google Places client of ratings, reviews and photos (``places``;
    ``None``: offline, and every candidate says they are absent)."""

    city: City
    thinker: Thinker
    radius_m: float = RADIUS_M
    keep: int = KEEP
    overviews: OverviewProvider = field(default_factory=TagOverview)
    places: GooglePlaces | None = None

    @property
    def place_details(self) -> str:
        """Where ratings, reviews and photos come from: ``"google"``, or absent offline."""
        return OFFLINE if self.places is None else FOUND

    async def details(self, row: int) -> tuple[PlaceDetails | None, str]:
        """Google's details of place ``row`` (off the event loop) and what the row says of
        them: ``"google"``, absent offline, or absent because Google has no such place."""
        if self.places is None:
            return None, OFFLINE
        found = await asyncio.to_thread(self.places.details_of, self.city, row)
        return found, FOUND if found is not None else not_found(self.places.match_radius_m)

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
        """Overview and rating of one candidate (the model's, else the offline one); with
        Google details the overview holds Google's rating and reviews and the offline rating
        takes Google's stars for prominence."""
        details, status = await self.details(result.row)
        overview = details_overview(self.overviews.overview(self.city, result.row), details)
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
            stars = details.rating if details is not None else None
            rated = rate_offline(
                self.city,
                intention,
                types,
                result,
                radius_m=self.radius_m,
                overview=overview,
                google_rating=stars,
            )
        place_id = str(self.city.places.ids[result.row])
        by = "llm" if asked is not None else "offline"
        out = {**result.to_dict(), "place_id": place_id, **rated, "rated_by": by}
        out["place_details"] = status
        if details is not None:
            out["google"] = details.to_dict()
        return out

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
            "place_details": self.place_details,
            "recommendations": rated,
        }


@dataclass(frozen=True)
class AriaOptions:
    """Aria's options (``flaneur virl aria FILE radius_m=300``, ``--option aria.keep=5``)."""

    radius_m: Annotated[float, Range(10, 5000)] = option(RADIUS_M, "search radius in metres")
    keep: Annotated[int, Range(1, 50)] = option(KEEP, "candidates rated (the nearest)")
    place_details: Literal["offline", "google"] = option(
        "offline",
        "ratings, reviews and photos of places: google asks Google Places (needs "
        "GOOGLE_MAPS_API_KEY; billed per place, cached); offline says they are absent",
    )


class AriaAgent(ScenarioPlanner):
    """The place recommender on ``virl-aria`` scenarios (see the module docstring).

    ``places`` (not an option) is the Google Places client ``place_details=google`` uses
    (default: one made on first use, reading ``GOOGLE_MAPS_API_KEY``).
    """

    name: ClassVar[str] = "aria"
    solves: ClassVar[tuple[str, ...]] = ("virl-aria",)
    Options: ClassVar[type] = AriaOptions

    def __init__(self, *, places: GooglePlaces | None = None, **options: Any) -> None:
        super().__init__(**options)
        self._places = places

    @classmethod
    def check_setup(cls, options: dict[str, Any], setup: Any) -> None:
        """``place_details=google`` needs ``GOOGLE_MAPS_API_KEY``."""
        if options.get("place_details") == "google":
            require_key("place_details=google")

    def places(self) -> GooglePlaces | None:
        """The Google Places client with ``place_details=google``, else ``None``."""
        if self.options.place_details != "google":
            return None
        if self._places is None:
            self._places = GooglePlaces()
        return self._places

    async def solve(self, item: TaskItem, info: SolveInfo) -> dict[str, Any]:
        """Places for the persona's intention around its start, best first."""
        scene = self.begin(item, info)
        persona, options = scene.persona, self.options
        found = await Recommender(
            info.city, scene.thinker, options.radius_m, options.keep, places=self.places()
        ).recommend(info.city.graph.xy[scene.start], persona.intention, persona.background)
        return scene.result(intention=persona.intention, **found)
