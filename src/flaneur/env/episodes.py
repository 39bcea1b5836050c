"""Choosing the episode of a reset and resolving its node ids (checked once per episode)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from numbers import Integral
from typing import Any

import numpy as np

from flaneur.errors import ArgumentError, DataError, FlaneurError, UnknownNodeError
from flaneur.tasks.episode import Episode, iter_unknown_nodes
from flaneur.world.graph import StreetGraph


class EpisodeSet:
    """The episodes of an environment.

    Parameters
    ----------
    episodes
        The episodes (at least one).
    graph
        The street graph their node ids refer to.
    order
        ``"random"`` or ``"sequential"`` (used when a reset names no episode).
    """

    def __init__(self, episodes: Sequence[Episode], graph: StreetGraph, order: str) -> None:
        self.episodes = list(episodes)
        if not self.episodes:
            raise FlaneurError("NavigationEnv needs at least one episode")
        if order not in ("random", "sequential"):
            raise FlaneurError("episode_order must be 'random' or 'sequential'")
        self.graph = graph
        self.order = order
        self._next = 0
        self._by_id: dict[str, int] | None = None
        self._resolved: dict[int, tuple[Episode, int, list[int]]] = {}

    def pick(self, options: dict[str, Any] | None, rng: np.random.Generator) -> Episode:
        """The episode named by ``options`` (``episode``: an Episode, id or index; or
        ``episode_id`` / ``index``), else the next one in the set's order."""
        options = options or {}
        if not isinstance(options, Mapping):
            raise ArgumentError(
                f"reset: options must be a dict such as {{'episode': 'ID'}}, got {options!r}"
            )
        choice = options.get("episode", options.get("episode_id", options.get("index")))
        if isinstance(choice, Episode):
            return choice
        episodes = self.episodes
        if isinstance(choice, str):
            if self._by_id is None:
                self._by_id = {e.id: i for i, e in enumerate(episodes)}
            if choice not in self._by_id:
                raise FlaneurError(f"no episode with id {choice!r} in this environment")
            return episodes[self._by_id[choice]]
        if choice is not None:
            if (
                isinstance(choice, bool)
                or not isinstance(choice, Integral | float)
                or (isinstance(choice, float) and not choice.is_integer())
            ):
                raise ArgumentError(
                    f"reset: options['episode'] must be an Episode, an id or a whole-number "
                    f"index, got {choice!r}"
                )
            index = int(choice)
            if not -len(episodes) <= index < len(episodes):
                raise FlaneurError(f"episode index {index} out of range")
            return episodes[index]
        if self.order == "sequential":
            index = self._next % len(episodes)
            self._next += 1
            return episodes[index]
        return episodes[int(rng.integers(len(episodes)))]

    def resolve(self, episode: Episode) -> tuple[int, list[int]]:
        """``(start node, goal nodes)`` as indices.

        Raises
        ------
        UnknownNodeError
            Naming the episode and field of the first unknown node id.
        DataError
            If the episode has neither goal nodes nor a reference path.
        """
        known = self._resolved.get(id(episode))
        if known is not None and known[0] is episode:
            return known[1], known[2]
        graph = self.graph
        for field, node_id in iter_unknown_nodes(episode, graph):
            raise UnknownNodeError(node_id, context=f"episode {episode.id!r}, field {field}")
        goal_ids = episode.goal_nodes or episode.reference_path[-1:]
        if not goal_ids:
            raise DataError(f"episode {episode.id!r} has neither goal_nodes nor reference_path")
        start, goals = graph.index(episode.start_node), [graph.index(g) for g in goal_ids]
        if len(self._resolved) < 100_000:
            self._resolved[id(episode)] = (episode, start, goals)
        return start, goals


__all__ = ["EpisodeSet"]
