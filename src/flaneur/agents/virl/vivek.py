"""Vivek, V-IRL's estate recommender: listings → budget filter → the amenity types the
person cares about → count and nearest distance of each within 200 m → a rating → best first
(V-IRL's code sorted ascending and kept the worst; we do not).

Offline (our own design): the amenity types are the :data:`TYPES_KEPT` taxonomy categories
closest to the person's background and intention by the sentence embedder; the rating is ::

    10 x (0.8 amenities + 0.2 price)

where *amenities* averages over the types ``0.5 min(count, 3) / 3 + 0.5 (1 - nearest /
200 m)`` (0 for a type with none) and *price* is ``1 - price / budget`` (0.5 without a
budget).
"""

from __future__ import annotations

from typing import Any

from flaneur.agents.virl.common import Thinker, prompt_template
from flaneur.agents.virl.rating import ask_rating, best_first, closest_types, weighted_rating
from flaneur.models import extract_json
from flaneur.services.nearby import nearby_search
from flaneur.world.city import City
from flaneur.world.taxonomy import normalize_category

AMENITY_RADIUS_M = 200.0
TYPES_KEPT = 3
WEIGHTS = {"amenities": 0.8, "price": 0.2}


class Vivek:
    """The estate recommender."""

    def __init__(self, city: City, thinker: Thinker | None = None) -> None:
        self.city = city
        self.thinker = thinker or Thinker()

    def amenity_types(self, background: str, intention: str) -> tuple[list[str], str]:
        """Place types the person cares about, and who chose them."""
        reply = self.thinker.ask(
            prompt_template("vivek_amenities").format(background=background, intention=intention)
        )
        if reply is not None:
            items = extract_json(reply, want=list) or []
            types = [c for c in (normalize_category(str(x)) for x in items) if c]
            if types:
                return list(dict.fromkeys(types)), "llm"
            self.thinker.fell_back()
        return list(closest_types(f"{background} {intention}", TYPES_KEPT)), "embedder"

    def amenities(self, listing: dict[str, Any], types: list[str]) -> dict[str, dict]:
        """``{type: {"count", "nearest_m"}}`` within 200 m of a listing."""
        graph = self.city.graph
        x, y = graph.projection.forward(listing["latitude"], listing["longitude"])
        out = {}
        for category in types:
            found = nearby_search(
                self.city,
                (float(x), float(y)),
                radius_m=AMENITY_RADIUS_M,
                place_type=category,
                dedupe=False,
                limit=None,
            )
            out[category] = {
                "count": len(found),
                "nearest_m": round(found[0].distance_m, 1) if found else None,
            }
        return out

    @staticmethod
    def offline_rating(
        listing: dict[str, Any], near: dict[str, dict], budget: float | None
    ) -> float:
        """The offline rating (module docstring)."""
        parts = []
        for value in near.values():
            if value["count"]:
                parts.append(
                    0.5 * min(value["count"], 3) / 3
                    + 0.5 * (1 - value["nearest_m"] / AMENITY_RADIUS_M)
                )
            else:
                parts.append(0.0)
        amenity = sum(parts) / len(parts) if parts else 0.0
        price = 0.5 if not budget else max(0.0, 1 - listing["price"] / budget)
        return weighted_rating({"amenities": amenity, "price": price}, WEIGHTS)

    def recommend(
        self,
        listings: list[dict[str, Any]],
        background: str,
        intention: str,
        budget: float | None,
        *,
        top: int = 5,
    ) -> dict[str, Any]:
        """Rank listings best first."""
        affordable = [x for x in listings if budget is None or x["price"] <= budget]
        types, chosen_by = self.amenity_types(background, intention)
        ranked = []
        for listing in affordable:
            near = self.amenities(listing, types)
            rating, why, rated_by = None, "", "offline"
            summary = ", ".join(
                f"{t.replace('_', ' ')}: {v['count']}"
                + (f" (nearest {v['nearest_m']:.0f} m)" if v["count"] else "")
                for t, v in near.items()
            )
            asked = ask_rating(
                self.thinker,
                prompt_template("vivek_rate").format(
                    background=background,
                    intention=intention,
                    budget=budget,
                    address=listing["formattedAddress"],
                    price=listing["price"],
                    bedrooms=listing.get("bedrooms", "?"),
                    area=listing.get("squareFootage", "?"),
                    amenities=summary,
                ),
            )
            if asked:
                rating, why, rated_by = (*asked, "llm")
            if rating is None:
                rating, why = self.offline_rating(listing, near, budget), summary
            ranked.append(
                {
                    **listing,
                    "amenities": near,
                    "rating": rating,
                    "explanation": why,
                    "rated_by": rated_by,
                }
            )
        best_first(ranked, lambda x: x["price"])
        return {
            "amenity_types": types,
            "types_chosen_by": chosen_by,
            "listings_total": len(listings),
            "within_budget": len(affordable),
            "ranked": ranked[:top],
        }
