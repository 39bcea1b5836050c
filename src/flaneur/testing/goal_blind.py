"""Check that an agent never reads the goal: run it on an episode whose goal fields raise.

An agent that claims to be goal-blind (the explorer, Hiro, any plug-in) gets a
:class:`GoalBlind` episode and an :class:`~flaneur.agents.EnvInfo` without the environment
or privileged access; reading ``goal_nodes``, ``reference_path`` and the like fails the run::

    result = run_goal_blind(NavigationEnv(city, [ep], scheme="headings"), agent, ep)
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from flaneur.agents import env_info_for
from flaneur.tasks.episode import Episode

GOAL_FIELDS = (
    "goal_nodes",
    "goal_place_ids",
    "goal_categories",
    "reference_path",
    "metadata",
    "goal_node",
    "category",
)
"""Episode fields that tell where the goal is (or what kind of goal it is)."""


class GoalBlind:
    """An episode whose goal fields raise :class:`AssertionError` when read.

    Parameters
    ----------
    episode
        The episode to wrap; every other field reads through.
    who
        The agent's name, for the error message.
    """

    def __init__(self, episode: Episode, who: str = "the agent") -> None:
        self._episode = episode
        self._who = who

    def __getattr__(self, name: str) -> Any:
        if name in GOAL_FIELDS:
            raise AssertionError(f"{self._who} read episode.{name}")
        return getattr(self._episode, name)


def run_goal_blind(
    env: Any,
    agent: Any,
    episode: Episode,
    *,
    env_episode: Episode | None = None,
    seed: int = 0,
    task_id: str = "goal-blind",
    **info: Any,
) -> dict[str, Any]:
    """Run ``agent`` to the end of ``episode`` without letting it see the goal.

    Parameters
    ----------
    env
        A :class:`~flaneur.env.NavigationEnv` holding the episode.
    agent
        The agent under test.
    episode
        The episode the agent is given (wrapped in :class:`GoalBlind`).
    env_episode
        The episode the environment plays (default ``episode``), e.g. one with the goals
        that ``episode`` lacks.
    seed, task_id
        Passed to :func:`~flaneur.agents.env_info_for`.
    **info
        Run resources for :func:`~flaneur.agents.env_info_for` (``views``, ``model``, ...).

    Returns
    -------
    dict
        ``actions`` (slots taken), ``path`` (node ids) and ``success``.
    """

    async def loop() -> dict[str, Any]:
        obs, step_info = env.reset(options={"episode": env_episode or episode})
        env_info = env_info_for(env, seed=seed, task_id=task_id, **info)
        env_info = dataclasses.replace(env_info, env=None, privileged=None)
        agent.reset(GoalBlind(episode, getattr(agent, "name", "the agent")), env_info)
        done, actions = False, []
        while not done:
            action = await agent.act({**obs, "info": step_info})
            actions.append(action.slot)
            obs, _, terminated, truncated, step_info = env.step(action.slot)
            done = terminated or truncated
        return {"actions": actions, "path": env.path_ids(), "success": env.success}

    return asyncio.run(loop())


__all__ = ["GOAL_FIELDS", "GoalBlind", "run_goal_blind"]
