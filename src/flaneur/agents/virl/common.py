"""Shared parts of V-IRL's planner agents: typed options, the persona of a scenario item and
where it starts, the run's model, and the result that carries the model's exchanges.

A planner's item (:class:`~flaneur.tasks.items.TaskItem` of a ``virl-*`` scenario kind) holds
the persona's fields (``name``, ``city``, ``start``, ``background``, ``intention``, ``status``,
``budget``) and what the scenario asks for (``sentence``, ``wishes``, ``listings``, ...).
Bad scenario data raises :class:`~flaneur.errors.DataError` and a start the city does not
have raises the services' errors: the runner ends that item's row ``task_error``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from flaneur.agents.base import Planner, SolveInfo
from flaneur.agents.virl.thinking import Thinker
from flaneur.env.navigation_env import NavigationEnv
from flaneur.errors import DataError
from flaneur.services.geocode import resolve_point
from flaneur.services.persona import Persona, persona_from_dict
from flaneur.tasks.episode import Episode
from flaneur.tasks.items import TaskItem
from flaneur.world.city import City


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


def node_ids(city: City, nodes: Iterable[int]) -> list[str]:
    """Graph node ids (the strings rows and files hold) of node indices."""
    return [str(city.graph.ids[n]) for n in nodes]


def walking_env(
    city: City,
    name: str,
    instruction: str,
    start: int,
    goal: int,
    *,
    steps: int,
    heading: float = 0.0,
    metadata: dict[str, Any] | None = None,
) -> NavigationEnv:
    """A ``headings``-scheme environment of ``steps`` moves from viewpoint ``start`` facing
    ``heading`` towards ``goal`` (Peng's walk, Ling following directions offline), the
    episode carrying ``metadata``."""
    ids = city.graph.ids
    episode = Episode(
        id=name,
        city=city.name,
        instruction=instruction,
        start_node=str(ids[start]),
        start_heading=float(heading),
        goal_nodes=(str(ids[goal]),),
        max_steps=steps + 1,
        metadata=dict(metadata or {}),
    )
    return NavigationEnv(city, episode, scheme="headings")


@dataclass
class Scenario:
    """One scenario being planned: the city, the item's persona, where it starts (``start``
    viewpoint, ``label``; ``-1`` until :meth:`ScenarioPlanner.begin` resolves it) and the
    run's model through the agent's prompts."""

    city: City
    persona: Persona
    thinker: Thinker
    start: int = -1
    label: str = ""

    def result(self, **plan: Any) -> dict[str, Any]:
        """The plan after where it starts, with the model's exchanges (moved to the row)."""
        where = {"start": self.label, "start_node": node_ids(self.city, [self.start])[0]}
        return {**where, **plan, "records": self.thinker.records}


class ScenarioPlanner(Planner):
    """A V-IRL planner whose keyword arguments are its typed :attr:`Options`."""

    def __init__(self, **options: Any) -> None:
        self.options = self.Options(**options)

    def begin(self, item: TaskItem, info: SolveInfo, *, start: bool = True) -> Scenario:
        """The item's scenario, with its start (a name, an address or ``lat,lng``) resolved
        unless ``start`` is false: :class:`~flaneur.services.errors.UnknownPlaceError` or
        :class:`~flaneur.errors.DataError` when the city has no such place or point."""
        scenario = Scenario(info.city, scenario_persona(item), Thinker(info.model, self.name))
        if start:
            scenario.start, scenario.label = resolve_point(info.city, scenario.persona.start)
        return scenario
