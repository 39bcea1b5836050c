"""Errors raised by the services (one-line messages for the command line)."""

from __future__ import annotations

from collections.abc import Sequence

from flaneur.errors import FlaneurError


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
