"""Action schemes: ``turns`` (VELMA/Touchdown), ``headings`` (CitySeeker, V-IRL), ``nodes``
(MapGPT). Slot 0 is ``stop`` in every scheme."""

from __future__ import annotations

from typing import Any

from flaneur.env.schemes.base import (
    STOP,
    ActionScheme,
    InvalidActionError,
    UnknownActionError,
)
from flaneur.env.schemes.headings import HeadingsScheme
from flaneur.env.schemes.nodes import NodesScheme
from flaneur.env.schemes.turns import TURN_ACTIONS, TurnsScheme
from flaneur.errors import FlaneurError
from flaneur.world.graph import StreetGraph

SCHEMES: dict[str, type] = {
    "turns": TurnsScheme,
    "headings": HeadingsScheme,
    "nodes": NodesScheme,
}
"""Scheme classes by name."""


def make_scheme(name: str, graph: StreetGraph, **options: Any) -> ActionScheme:
    """Build the scheme ``name`` on ``graph`` with scheme ``options``.

    Raises
    ------
    FlaneurError
        For an unknown scheme name or option.
    """
    try:
        cls = SCHEMES[name]
    except KeyError:
        raise FlaneurError(
            f"unknown action scheme {name!r}; choose one of {', '.join(SCHEMES)}"
        ) from None
    try:
        return cls(graph, **options)
    except TypeError as err:
        raise FlaneurError(f"bad option for the {name!r} scheme: {err}") from None


__all__ = [
    "SCHEMES",
    "STOP",
    "TURN_ACTIONS",
    "ActionScheme",
    "HeadingsScheme",
    "InvalidActionError",
    "NodesScheme",
    "TurnsScheme",
    "UnknownActionError",
    "make_scheme",
]
