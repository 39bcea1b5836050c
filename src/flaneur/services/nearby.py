"""Nearby search: places of a type or matching a keyword around a point, with heading and
distance, ranked by distance or by a *prominence* stand-in for ratings.

OpenStreetMap has no ratings or review counts, so ``rank_by="prominence"`` uses how well
known a place is on the map, from its tags (our own documented stand-in)::

    wikidata 3, wikipedia 2, brand or brand:wikidata 1, website (or contact:website) 1,
    opening_hours 1, phone (or contact:phone) 0.5

Ties break by distance. Results are de-duplicated by normalized name (the nearest place of a
name is kept; unnamed places are never merged), like V-IRL's name filter.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from flaneur.geo import normalize_heading
from flaneur.services.names import normalize
from flaneur.world.city import City
from flaneur.world.places import Places
from flaneur.world.taxonomy import normalize_category

PROMINENCE_WEIGHTS: tuple[tuple[tuple[str, ...], float], ...] = (
    (("wikidata",), 3.0),
    (("wikipedia",), 2.0),
    (("brand", "brand:wikidata"), 1.0),
    (("website", "contact:website"), 1.0),
    (("opening_hours",), 1.0),
    (("phone", "contact:phone"), 0.5),
)
RANKINGS = ("distance", "prominence")


def prominence(tags: Mapping[str, str]) -> float:
    """Prominence of a place from its OSM tags (see the module docstring for the weights)."""
    return float(sum(w for keys, w in PROMINENCE_WEIGHTS if any(tags.get(k) for k in keys)))


@dataclass(frozen=True)
class NearbyResult:
    """One place found by :func:`nearby_search`.

    Attributes
    ----------
    row
        Row in ``city.places``.
    name
        Name, or the category label for unnamed places.
    categories
        Normalized categories.
    distance_m
        Straight-line distance from the query point.
    heading
        Bearing from the query point to the place, degrees clockwise from north.
    prominence
        :func:`prominence` of the place.
    """

    row: int
    name: str
    categories: tuple[str, ...]
    distance_m: float
    heading: float
    prominence: float

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "row": self.row,
            "name": self.name,
            "categories": list(self.categories),
            "distance_m": round(self.distance_m, 1),
            "heading": round(self.heading, 1),
            "prominence": self.prominence,
        }


def _matches_keyword(city: City, row: int, words: list[str]) -> bool:
    places = city.places
    text = " ".join([str(places.names[row]), *places.categories[row], *places.tags[row].values()])
    haystack = normalize(text.replace("_", " "))
    return all(w in haystack for w in words)


def nearby_search(
    city: City,
    xy: tuple[float, float] | np.ndarray,
    *,
    radius_m: float = 100.0,
    place_type: str | None = None,
    keyword: str | None = None,
    rank_by: str = "distance",
    dedupe: bool = True,
    named_only: bool = False,
    limit: int | None = 20,
) -> list[NearbyResult]:
    """Places around a metric point.

    Parameters
    ----------
    city
        The city.
    xy
        Query point in metres in the city's projection (``city.graph.xy[node]``).
    radius_m
        Search radius.
    place_type
        A taxonomy category or any synonym of one (``"coffee shop"`` → ``cafe``).
    keyword
        Words that must all appear in the name, categories or tag values (case- and
        diacritic-blind).
    rank_by
        ``"distance"`` or ``"prominence"``.
    dedupe
        Keep only the nearest place of each name.
    named_only
        Skip unnamed places.
    limit
        Maximum number of results (``None``: all).

    Raises
    ------
    ValueError
        Unknown ``place_type`` or ``rank_by``, or a negative radius.
    """
    category = _checked_query(radius_m, place_type, rank_by)
    words = normalize(keyword).split() if keyword else []
    places = city.places
    point = np.asarray(xy, dtype=np.float64)
    rows, dist = places.within(point, radius_m)
    results: list[NearbyResult] = []
    seen: set[str] = set()
    for row, d in zip(rows.tolist(), dist.tolist(), strict=True):
        name = str(places.names[row])
        if named_only and not name:
            continue
        if category and category not in places.categories[row]:
            continue
        if words and not _matches_keyword(city, row, words):
            continue
        if dedupe and name:
            key = normalize(name)
            if key in seen:
                continue
            seen.add(key)
        results.append(_result(places, row, d, point))
    if rank_by == "prominence":
        results.sort(key=lambda r: (-r.prominence, r.distance_m))
    return results if limit is None else results[:limit]


def _checked_query(radius_m: float, place_type: str | None, rank_by: str) -> str | None:
    """The taxonomy category of ``place_type`` (None without one); a ValueError for an
    unknown ``rank_by`` or place type, or a negative radius."""
    if rank_by not in RANKINGS:
        raise ValueError(f"rank_by must be one of {RANKINGS}, not {rank_by!r}")
    if radius_m < 0:
        raise ValueError("radius_m must not be negative")
    category = None
    if place_type:
        category = normalize_category(place_type)
        if category is None:
            raise ValueError(f"unknown place type {place_type!r}")
    return category


def _result(places: Places, row: int, d: float, point: np.ndarray) -> NearbyResult:
    """The result of place ``row`` at ``d`` metres from ``point`` (heading 0 at the point)."""
    dx, dy = places.xy[row] - point
    heading = float(normalize_heading(math.degrees(math.atan2(dx, dy)))) if d > 0 else 0.0
    return NearbyResult(
        row=row,
        name=places[row].label,
        categories=places.categories[row],
        distance_m=float(d),
        heading=heading,
        prominence=prominence(places.tags[row]),
    )
