"""Errors raised by the services (one-line messages for the command line)."""

from __future__ import annotations

from collections.abc import Sequence

from flaneur.errors import DataError, FlaneurError


class UnknownPlaceError(FlaneurError, LookupError):
    """A place name, address or street matched nothing close enough.

    Parameters
    ----------
    query
        What the user asked for.
    suggestions
        The closest names in the city (best first), shown in the message.
    """

    def __init__(self, query: str, suggestions: Sequence[str] = ()):
        self.query = query
        self.suggestions = tuple(suggestions)
        hint = ""
        if self.suggestions:
            hint = "; closest names: " + ", ".join(repr(s) for s in self.suggestions)
        super().__init__(f"no place, address or street matches {query!r}{hint}")


class UnreachableError(FlaneurError, ValueError):
    """A waypoint cannot be reached on the street graph from the others."""


class RegionError(FlaneurError, ValueError):
    """A region polygon is invalid or does not overlap the city."""


class CoordinateError(DataError):
    """A ``"lat,lng"`` text that is no point on Earth: not two numbers, not finite (``nan``,
    ``inf``) or out of range (latitude beyond ±90, longitude beyond ±180).

    Parameters
    ----------
    text
        The text as given.
    problem
        What is wrong with it (one line).
    """

    def __init__(self, text: str, problem: str):
        self.text = text
        super().__init__(f"{text.strip()!r} is not a point: {problem}")


class OffStreetError(CoordinateError):
    """A ``"lat,lng"`` point farther than the allowed distance from every viewpoint.

    Parameters
    ----------
    lat, lng
        The point in degrees.
    distance_m
        Its distance to the nearest viewpoint (street) of the city, metres.
    limit_m
        The largest distance allowed, metres.
    city
        Name of the city.
    """

    def __init__(self, lat: float, lng: float, distance_m: float, limit_m: float, city: str):
        self.lat, self.lng = lat, lng
        self.distance_m, self.limit_m = distance_m, limit_m
        point = f"{lat:.5f},{lng:.5f}"
        DataError.__init__(
            self,
            f"{point} lies {distance_m:,.0f} m from the nearest street of {city}, more than "
            f"{limit_m:,.0f} m (outside the city)",
        )
        self.text = point
