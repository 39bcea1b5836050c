"""Place overviews: a short deterministic text about a place, the offline stand-in for reviews.

V-IRL summarises up to five Google reviews per place. Offline, :class:`TagOverview` writes
one or two sentences from the place's OpenStreetMap tags (category, cuisine, brand, opening
hours, wheelchair access, outdoor seating, takeaway, website). :class:`GooglePlacesReviews`
plugs real reviews in through the same :class:`OverviewProvider` interface, with the key
read from ``GOOGLE_MAPS_API_KEY`` (never printed or stored).
"""

from __future__ import annotations

import os
from typing import Protocol

from flaneur.errors import FlaneurError
from flaneur.world.city import City
from flaneur.world.taxonomy import category_label

GOOGLE_KEY_ENV = "GOOGLE_MAPS_API_KEY"
GOOGLE_PLACES_URL = "https://places.googleapis.com/v1/places:searchText"


class OverviewProvider(Protocol):
    """Something that describes a place of a city in a few sentences."""

    def overview(self, city: City, row: int) -> str:
        """Text about place ``row`` of ``city.places``."""
        ...


def _words(value: str) -> str:
    return ", ".join(v.strip().replace("_", " ") for v in value.split(";") if v.strip())


def place_overview(city: City, row: int) -> str:
    """A deterministic overview of place ``row`` built from its tags only.

    Examples
    --------
    ``"Cafe Regatta is a cafe. Cuisine: coffee shop. Open Mo-Su 08:00-23:00. Outdoor
    seating. Wheelchair access: limited."``
    """
    places = city.places
    place = places[row]
    tags = place.tags
    kind = category_label(place.categories[0]) if place.categories else "place"
    name = place.name or f"This {kind}"
    parts = [
        f"{name} is a {kind}"
        + (
            f" of the {tags['brand']} chain"
            if tags.get("brand") and tags["brand"] != place.name
            else ""
        )
        + "."
    ]
    if tags.get("cuisine"):
        parts.append(f"Cuisine: {_words(tags['cuisine'])}.")
    if tags.get("opening_hours"):
        parts.append(f"Open {tags['opening_hours']}.")
    if tags.get("outdoor_seating") == "yes":
        parts.append("Outdoor seating.")
    if tags.get("takeaway") in ("yes", "only"):
        parts.append("Takeaway available.")
    if tags.get("diet:vegan") in ("yes", "only") or tags.get("diet:vegetarian") in ("yes", "only"):
        parts.append("Vegetarian or vegan options.")
    if tags.get("wheelchair"):
        parts.append(f"Wheelchair access: {tags['wheelchair']}.")
    if tags.get("website") or tags.get("contact:website"):
        parts.append("Has a website.")
    if place.reviews:
        parts.append("Reviews: " + " ".join(place.reviews[:5]))
    return " ".join(parts)


class TagOverview:
    """The offline provider: :func:`place_overview`."""

    def overview(self, city: City, row: int) -> str:
        """Text about place ``row`` from its tags."""
        return place_overview(city, row)


class GooglePlacesReviews:
    """Up to five Google reviews of a place, found by name near its position.

    Needs ``GOOGLE_MAPS_API_KEY`` in the environment: a missing key is a
    :class:`~flaneur.errors.FlaneurError` naming the variable (never a silent fallback).
    """

    def __init__(self, *, timeout_s: float = 10.0, max_reviews: int = 5) -> None:
        self._key = os.environ.get(GOOGLE_KEY_ENV, "")
        if not self._key:
            raise FlaneurError(f"Google reviews need the environment variable {GOOGLE_KEY_ENV}")
        self.timeout_s = timeout_s
        self.max_reviews = max_reviews

    def overview(self, city: City, row: int) -> str:
        """The tag overview followed by the place's Google reviews."""
        # lazy: httpx takes 0.18 s to import
        import httpx

        place = city.places[row]
        body = {
            "textQuery": place.label,
            "locationBias": {
                "circle": {
                    "center": {"latitude": place.lat, "longitude": place.lng},
                    "radius": 50.0,
                }
            },
            "maxResultCount": 1,
        }
        headers = {"X-Goog-Api-Key": self._key, "X-Goog-FieldMask": "places.reviews"}
        try:
            reply = httpx.post(
                GOOGLE_PLACES_URL, json=body, headers=headers, timeout=self.timeout_s
            )
            reply.raise_for_status()
            found = reply.json().get("places") or []
        except (httpx.HTTPError, ValueError) as err:
            raise FlaneurError(f"Google Places request failed ({type(err).__name__})") from None
        reviews = found[0].get("reviews", []) if found else []
        texts = [str((r.get("text") or {}).get("text", "")).strip() for r in reviews]
        texts = [t for t in texts if t][: self.max_reviews]
        base = place_overview(city, row)
        return base + (" Reviews: " + " | ".join(texts) if texts else "")
