"""Place overviews: a short deterministic text about a place, the offline stand-in for reviews.

V-IRL summarises up to five Google reviews per place. Offline, :class:`TagOverview` writes
one or two sentences from the place's OpenStreetMap tags (category, cuisine, brand, opening
hours, wheelchair access, outdoor seating, takeaway, website). :class:`GooglePlacesReviews`
plugs real reviews in through the same :class:`OverviewProvider` interface, from the one
Google Places client (:mod:`flaneur.services.place_details`), with the key read from
``GOOGLE_MAPS_API_KEY`` (never printed or stored).
"""

from __future__ import annotations

from typing import Protocol

from flaneur.services.place_details import KEY_ENV, GooglePlaces, PlaceDetails, require_key
from flaneur.world.city import City
from flaneur.world.taxonomy import category_label

GOOGLE_KEY_ENV = KEY_ENV


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


def details_overview(base: str, details: PlaceDetails | None, max_reviews: int = 5) -> str:
    """``base`` followed by what Google Places says of the place: its rating and up to
    ``max_reviews`` reviews, each with its stars, written as V-IRL hands reviews to its
    model (``Review 0: <text (Rating: 5)>.``); ``base`` alone without details.

    Examples
    --------
    ``"Cafe Regatta is a cafe. Google rating 4.6 of 5 (3,112 ratings). Reviews: Review 0:
    <Cosy and cheap. (Rating: 5)>."``
    """
    if details is None:
        return base
    parts = [base]
    if details.rating is not None:
        parts.append(
            f"Google rating {details.rating:g} of 5 ({details.user_rating_count:,} ratings)."
        )
    reviews = [
        f"Review {i}: <{r.text}"
        + (f" (Rating: {r.rating:g})" if r.rating is not None else "")
        + ">."
        for i, r in enumerate(details.reviews[:max_reviews])
    ]
    if reviews:
        parts.append("Reviews: " + " ".join(reviews))
    return " ".join(parts)


class GooglePlacesReviews:
    """The tag overview followed by a place's Google rating and up to five Google reviews
    (:func:`details_overview`), from the one Google Places client
    (:class:`~flaneur.services.place_details.GooglePlaces`: found by name near the place's
    point, cached on disk).

    Needs ``GOOGLE_MAPS_API_KEY`` in the environment: a missing key is a
    :class:`~flaneur.errors.FlaneurError` naming the variable (never a silent fallback).
    """

    def __init__(self, places: GooglePlaces | None = None, *, max_reviews: int = 5) -> None:
        require_key("Google reviews")
        self.places = places if places is not None else GooglePlaces()
        self.max_reviews = max_reviews

    def overview(self, city: City, row: int) -> str:
        """The tag overview followed by the place's Google rating and reviews."""
        details = self.places.details_of(city, row)
        return details_overview(place_overview(city, row), details, self.max_reviews)
