"""Shared parts of V-IRL's planner agents: the persona of a scenario item, where it starts,
and the per-item random seed.

A planner's item (:class:`~flaneur.tasks.items.TaskItem` of a ``virl-*`` scenario kind) holds
the persona's fields (``name``, ``city``, ``start``, ``background``, ``intention``, ``status``,
``budget``) and what the scenario asks for (``sentence``, ``wishes``, ``listings``, ...).
Bad scenario data raises :class:`~flaneur.errors.DataError` and a start the city does not
have raises the services' errors: the runner ends that item's row ``task_error``.
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np

from flaneur.agents.baselines import episode_seed
from flaneur.errors import DataError
from flaneur.services.geocode import resolve_point
from flaneur.services.persona import Persona, persona_from_dict
from flaneur.tasks.items import TaskItem
from flaneur.world.city import City


def esc(value: Any) -> str:
    """HTML-escape a data string (for SVG text and other markup written by hand)."""
    return html.escape(str(value), quote=True)


def scenario_persona(item: TaskItem) -> Persona:
    """The persona of a scenario item (its other fields in :attr:`Persona.options`).

    Raises
    ------
    DataError
        A missing or malformed persona field, naming the item.
    """
    try:
        return persona_from_dict(dict(item.data))
    except DataError as err:
        raise DataError(f"scenario {item.id!r}: {err.reason}") from None


def scenario_start(city: City, persona: Persona) -> tuple[int, str]:
    """``(viewpoint, label)`` of the persona's start (a name, an address or ``lat,lng``).

    Raises
    ------
    UnknownPlaceError, DataError
        The city has no such place, or the point lies outside it.
    """
    return resolve_point(city, persona.start)


def item_rng(seed: int, item: TaskItem) -> np.random.Generator:
    """The random generator of one item of a run (same run seed and item id, same draws,
    whatever the order items run in)."""
    return np.random.default_rng(episode_seed(seed, item.id))


def node_ids(city: City, nodes: list[int]) -> list[str]:
    """Graph node ids (the strings rows and files hold) of node indices."""
    return [str(city.graph.ids[n]) for n in nodes]


__all__ = ["esc", "item_rng", "node_ids", "scenario_persona", "scenario_start"]
