"""V-IRL's platform services over a :class:`~flaneur.world.city.City`, offline.

Geocoding (:mod:`.geocode`), nearby search (:mod:`.nearby`), place overviews
(:mod:`.overview`), directions with steps and key positions (:mod:`.directions`), waypoint
order optimisation with OR-Tools (:mod:`.optimize`), region sampling (:mod:`.region`) and
personas (:mod:`.persona`). Every function is pure over the city it is given.
"""

from __future__ import annotations

from flaneur.services.directions import SPEEDS_KMH, Route, Step, directions, directions_via
from flaneur.services.errors import (
    CoordinateError,
    OffStreetError,
    RegionError,
    UnknownPlaceError,
    UnreachableError,
)
from flaneur.services.geocode import (
    OFF_STREET_M,
    Gazetteer,
    GeocodeResult,
    gazetteer,
    geocode,
    geocode_one,
    locate_point,
    parse_point,
    resolve_point,
)
from flaneur.services.nearby import NearbyResult, nearby_search, prominence
from flaneur.services.optimize import OptimizedOrder, brute_force_order, optimize_order
from flaneur.services.overview import OverviewProvider, TagOverview, place_overview

__all__ = [
    "OFF_STREET_M",
    "SPEEDS_KMH",
    "CoordinateError",
    "Gazetteer",
    "GeocodeResult",
    "NearbyResult",
    "OffStreetError",
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
    "locate_point",
    "nearby_search",
    "optimize_order",
    "parse_point",
    "place_overview",
    "prominence",
    "resolve_point",
]
