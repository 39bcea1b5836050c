"""V-IRL's platform services over a :class:`~flaneur.world.city.City`, offline.

Geocoding (:mod:`.geocode`), nearby search (:mod:`.nearby`), place overviews
(:mod:`.overview`), directions with steps and key positions (:mod:`.directions`), waypoint
order optimisation with OR-Tools (:mod:`.optimize`), region sampling (:mod:`.region`) and
personas (:mod:`.persona`). Every function is pure over the city it is given.
"""

from __future__ import annotations

from flaneur.services.directions import SPEEDS_KMH, Route, Step, directions, directions_via
from flaneur.services.errors import RegionError, UnknownPlaceError, UnreachableError
from flaneur.services.geocode import (
    Gazetteer,
    GeocodeResult,
    gazetteer,
    geocode,
    geocode_one,
    resolve_point,
)
from flaneur.services.nearby import NearbyResult, nearby_search, prominence
from flaneur.services.optimize import OptimizedOrder, brute_force_order, optimize_order
from flaneur.services.overview import OverviewProvider, TagOverview, place_overview

__all__ = [
    "SPEEDS_KMH",
    "Gazetteer",
    "GeocodeResult",
    "NearbyResult",
    "OptimizedOrder",
    "OverviewProvider",
    "RegionError",
    "Route",
    "Step",
    "TagOverview",
    "UnknownPlaceError",
    "UnreachableError",
    "brute_force_order",
    "directions",
    "directions_via",
    "gazetteer",
    "geocode",
    "geocode_one",
    "nearby_search",
    "optimize_order",
    "place_overview",
    "prominence",
    "resolve_point",
]
