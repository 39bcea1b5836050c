"""Vivek, V-IRL's estate recommender: listings → budget filter → the amenity types the
person cares about → count and nearest distance of each within ``amenity_radius_m`` (200 m)
→ a rating → best first (V-IRL's code sorted ascending and kept the worst; we do not).

Offline (our own design): the amenity types are the :data:`TYPES_KEPT` taxonomy categories
closest to the person's background and intention by the sentence embedder; the rating is ::

    10 x (0.8 amenities + 0.2 price)

where *amenities* averages over the types ``0.5 min(count, 3) / 3 + 0.5 (1 - nearest /
radius)`` (0 for a type with none) and *price* is ``1 - price / budget`` (0.5 without a
budget). With a model (``--llm``), the model names the amenity types (prompt
``vivek/amenities``) and rates each listing (``vivek/rate``).

The listings are the scenario's (:func:`~flaneur.agents.virl.listings.scenario_listings`):
given with it, read from a RentCast file, or made up from building footprints (labelled
synthetic, drawn from the run's seed and the item's id).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

from flaneur.agents.base import SolveInfo
from flaneur.agents.baselines import episode_seed
from flaneur.agents.virl.common import ScenarioPlanner
from flaneur.agents.virl.listings import scenario_listings
from flaneur.agents.virl.rating import ask_rating, best_first, closest_types, weighted_rating
from flaneur.agents.virl.thinking import Thinker
from flaneur.models import extract_json
from flaneur.options import Range, option
from flaneur.services.nearby import nearby_search
from flaneur.tasks.items import TaskItem
from flaneur.world.city import City
from flaneur.world.taxonomy import normalize_category

AMENITY_RADIUS_M = 200.0
TYPES_KEPT = 3
TOP = 5
WEIGHTS = {"amenities": 0.8, "price": 0.2}


def amenities_near(
    city: City, lat: float, lng: float, types: list[str], radius_m: float = AMENITY_RADIUS_M
) -> dict[str, dict[str, Any]]:
    """``{type: {"count", "nearest_m"}}`` of the places of each type within ``radius_m`` of
    a point (``nearest_m`` is ``None`` where there is none)."""
    x, y = city.graph.projection.forward(lat, lng)
    where, out = (float(x), float(y)), {}
    for category in types:
        found = nearby_search(
            city, where, radius_m=radius_m, place_type=category, dedupe=False, limit=None
        )
        nearest = round(found[0].distance_m, 1) if found else None
        out[category] = {"count": len(found), "nearest_m": nearest}
    return out


def offline_rating(
    listing: dict[str, Any],
    near: dict[str, dict[str, Any]],
    budget: float | None,
    radius_m: float = AMENITY_RADIUS_M,
) -> float:
    """The offline rating of a listing (module docstring)."""
    parts = [
        0.5 * min(v["count"], 3) / 3 + 0.5 * (1 - v["nearest_m"] / radius_m) if v["count"] else 0.0
        for v in near.values()
    ]
    amenity = sum(parts) / len(parts) if parts else 0.0
    price = 0.5 if not budget else max(0.0, 1 - listing["price"] / budget)
    return weighted_rating({"amenities": amenity, "price": price}, WEIGHTS)


def amenity_summary(near: dict[str, dict[str, Any]]) -> str:
    """``"supermarket: 2 (nearest 50 m), gym: 0"``."""
    return ", ".join(
        f"{t.replace('_', ' ')}: {v['count']}"
        + (f" (nearest {v['nearest_m']:.0f} m)" if v["count"] else "")
        for t, v in near.items()
    )


@dataclass(frozen=True)
class VivekOptions:
    """Vivek's options (``flaneur virl vivek FILE top=3``,
    ``--option vivek.amenity_radius_m=300``)."""

    top: Annotated[int, Range(1, 50)] = option(TOP, "listings kept, best first")
    amenity_radius_m: Annotated[float, Range(25, 2000)] = option(
        AMENITY_RADIUS_M, "amenities are counted within this many metres of a listing"
    )


class VivekAgent(ScenarioPlanner):
    """The estate recommender on ``virl-vivek`` scenarios (see the module docstring)."""

    name: ClassVar[str] = "vivek"
    solves: ClassVar[tuple[str, ...]] = ("virl-vivek",)
    Options: ClassVar[type] = VivekOptions

    @staticmethod
    async def amenity_types(
        thinker: Thinker, background: str, intention: str
    ) -> tuple[list[str], str]:
        """Place types the person cares about, and who chose them."""
        reply = await thinker.ask("amenities", background=background, intention=intention)
        if reply is not None:
            items = extract_json(reply, want=list) or []
            types = [c for c in (normalize_category(str(x)) for x in items) if c]
            if types:
                return list(dict.fromkeys(types)), "llm"
            thinker.fell_back()
        return list(closest_types(f"{background} {intention}", TYPES_KEPT)), "embedder"

    async def solve(self, item: TaskItem, info: SolveInfo) -> dict[str, Any]:
        """The scenario's listings within budget, ranked best first."""
        city, radius = info.city, self.options.amenity_radius_m
        scene = self.begin(item, info, start=False)
        persona, thinker, budget = scene.persona, scene.thinker, scene.persona.budget
        seed = episode_seed(info.seed, item.id)
        listings, source = scenario_listings(city, dict(item.data), seed=seed)
        affordable = [x for x in listings if budget is None or x["price"] <= budget]
        types, chosen_by = await self.amenity_types(thinker, persona.background, persona.intention)
        ranked = []
        for listing in affordable:
            near = amenities_near(city, listing["latitude"], listing["longitude"], types, radius)
            summary = amenity_summary(near)
            asked = await ask_rating(
                thinker,
                "rate",
                background=persona.background,
                intention=persona.intention,
                budget=budget,
                address=listing["formattedAddress"],
                price=listing["price"],
                bedrooms=listing.get("bedrooms", "?"),
                area=listing.get("squareFootage", "?"),
                radius_m=round(radius),
                amenities=summary,
            )
            if asked is not None:
                rating, why, by = asked[0], asked[1], "llm"
            else:
                rating, why, by = offline_rating(listing, near, budget, radius), summary, "offline"
            ranked.append(
                {**listing, "amenities": near, "rating": rating, "explanation": why, "rated_by": by}
            )
        best_first(ranked, lambda x: (x["price"], x["formattedAddress"]))
        return {
            "listings_source": source,
            "amenity_types": types,
            "types_chosen_by": chosen_by,
            "listings_total": len(listings),
            "within_budget": len(affordable),
            "ranked": ranked[: self.options.top],
            "records": thinker.records,
        }


__all__ = [
    "AMENITY_RADIUS_M",
    "TYPES_KEPT",
    "WEIGHTS",
    "VivekAgent",
    "VivekOptions",
    "amenities_near",
    "offline_rating",
]
