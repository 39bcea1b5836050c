"""What an agent is told about its environment: :class:`EnvInfo` (typed, frozen).

The runner (and anything else that runs agents) builds one :class:`EnvInfo` per episode
with :func:`env_info_for`. Everything an agent may use without knowing the goal is a plain
field: the scheme and its slot labels, the step limit, the city map, a read-only
:class:`EnvView` of the environment (the agent's own state and the scheme's moves), the run
resources (model, views, landmark scorer) and task-set facts (average reference length,
the task set's episodes for in-context examples).

Privileged access - the environment itself (its teacher knows the goal) and oracle distances
to the goal - is the one named field :attr:`EnvInfo.privileged`. It records every use, so
that the runner marks the rows of agents that used it (``row["privileged"] = True``) and the
reports flag them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from flaneur.env.navigation_env import NavigationEnv
    from flaneur.env.schemes.base import ActionScheme
    from flaneur.env.state import AgentState
    from flaneur.tasks.episode import Episode
    from flaneur.world.city import City


class EnvView:
    """A read-only view of an environment that shows nothing of the goal.

    Parameters
    ----------
    env
        The :class:`~flaneur.env.navigation_env.NavigationEnv` (kept private).
    """

    __slots__ = ("_env",)

    def __init__(self, env: NavigationEnv) -> None:
        self._env = env

    @property
    def city(self) -> City:
        """The city map (street graph and places)."""
        return self._env.city

    @property
    def scheme(self) -> ActionScheme:
        """The action scheme (labels, candidates and moves of a state)."""
        return self._env.scheme

    @property
    def state(self) -> AgentState:
        """The agent's own current state (node, heading, step)."""
        return self._env.state

    @property
    def step_limit(self) -> int:
        """Step limit of the current episode."""
        return self._env.step_limit

    @property
    def invalid_actions(self) -> list[dict[str, Any]]:
        """The agent's own invalid actions so far (slot, reason), as the step infos said."""
        return list(self._env.invalid_actions)


class Privileged:
    """Privileged access for oracle-like agents; every use is recorded.

    Parameters
    ----------
    env
        The environment (its episode, goal and teacher).
    """

    def __init__(self, env: NavigationEnv) -> None:
        self._env = env
        self.uses: set[str] = set()

    @property
    def used(self) -> bool:
        """Whether the agent read anything privileged."""
        return bool(self.uses)

    @property
    def env(self) -> NavigationEnv:
        """The environment itself (e.g. ``env.teacher()``, the oracle's action)."""
        self.uses.add("env")
        return self._env

    def goal_distances_m(self) -> np.ndarray:
        """Walking distance in metres from every node to the nearest goal (oracle distance).

        ``inf`` everywhere when the episode has no goal on the graph.
        """
        self.uses.add("goal_distance")
        graph = self._env.city.graph
        episode = self._env.episode
        goals = [g for g in (episode.goal_nodes if episode else ()) if g in graph]
        if not goals:
            return np.full(graph.n_nodes, np.inf)
        dist = np.asarray(graph.metre_distances_to(graph.indices(goals)), dtype=float)
        return dist.min(axis=0) if dist.ndim == 2 else dist


@dataclass(frozen=True)
class EnvInfo:
    """What an agent receives at :meth:`~flaneur.agents.Agent.reset` (see the module docstring).

    Attributes
    ----------
    scheme
        Name of the action scheme (``turns``, ``headings``, ``nodes``).
    n_actions
        Size of the action space.
    action_names
        Slot labels of the ``turns`` scheme; empty where labels depend on the state.
    max_steps
        The episode's step limit.
    seed, task_id
        The run seed and the task-set id.
    city
        The city map.
    env
        A read-only :class:`EnvView` (own state, scheme), or ``None`` outside an environment.
    avg_reference_length
        Mean reference-path length of the whole task set (baselines stop after it).
    task_episodes
        The whole task set's episodes (in-context examples).
    model, usage
        The run's language model and usage tracker (``None`` without ``--llm``).
    views
        The run's view provider for this city (``None`` without ``--views``).
    landmarks, llm
        The ``--landmarks`` and ``--llm`` values.
    protocol
        The run's protocol: ``flaneur``, or ``paper`` for the seed paper's own settings
        (:mod:`flaneur.evaluate.protocol`).
    privileged
        :class:`Privileged` access (environment, oracle distances); uses are recorded.
    """

    scheme: str
    n_actions: int
    action_names: tuple[str, ...] = ()
    max_steps: int = 0
    seed: int = 0
    task_id: str = ""
    city: City | None = None
    env: EnvView | None = None
    avg_reference_length: float | None = None
    task_episodes: tuple[Episode, ...] = ()
    model: Any = None
    usage: Any = None
    views: Any = None
    landmarks: str | None = None
    llm: str | None = None
    protocol: str = "flaneur"
    privileged: Privileged | None = field(default=None, compare=False)


def env_info_for(
    env: NavigationEnv,
    *,
    seed: int = 0,
    task_id: str = "",
    task_episodes: Sequence[Episode] = (),
    **resources: Any,
) -> EnvInfo:
    """The :class:`EnvInfo` of ``env`` for one episode.

    Parameters
    ----------
    env
        The environment the agent acts in.
    seed, task_id
        The run seed and task-set id.
    task_episodes
        The whole task set (for in-context examples).
    **resources
        Further :class:`EnvInfo` fields: ``model``, ``usage``, ``views``, ``landmarks``,
        ``llm``, ``avg_reference_length``, ``city``; an unknown name is a ``TypeError``.
    """
    scheme = env.scheme
    city = resources.pop("city", None) or env.city
    return EnvInfo(
        scheme=scheme.name,
        n_actions=scheme.n_actions,
        action_names=tuple(getattr(scheme, "labels_all", ())),
        max_steps=env.step_limit,
        seed=seed,
        task_id=task_id,
        city=city,
        env=EnvView(env),
        task_episodes=tuple(task_episodes),
        privileged=Privileged(env),
        **resources,
    )


__all__ = ["EnvInfo", "EnvView", "Privileged", "env_info_for"]
