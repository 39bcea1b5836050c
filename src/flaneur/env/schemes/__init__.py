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
from flaneur.registry import Registry
from flaneur.world.graph import StreetGraph


def _check_scheme(name: str, entry: Any) -> None:
    if not isinstance(entry, type):
        raise FlaneurError(f"action scheme {name!r} is {entry!r}, not an action scheme class")


SCHEMES: Registry[type] = Registry("action scheme", group="flaneur.schemes", check=_check_scheme)
"""Scheme classes by name (entry-point group ``flaneur.schemes`` adds more)."""
for _name, _cls in {"turns": TurnsScheme, "headings": HeadingsScheme, "nodes": NodesScheme}.items():
    SCHEMES.register(_name, _cls)


def make_scheme(name: str, graph: StreetGraph, **options: Any) -> ActionScheme:
    """Build the scheme ``name`` on ``graph`` with scheme ``options``.

    Raises
    ------
    FlaneurError
        For an unknown scheme name or option.
    """
    cls = SCHEMES.get(name)
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
