"""Per-episode facts that do not depend on the agent, computed once per city and episode.

Goal indices, the reference path, its points, V-IRL key positions and the shortest start ->
goal length (SPL's ``l``) are the same for every agent run of an episode; they are computed
in one batch and memoised in the city's :class:`~flaneur.metrics.distances.MetricCache`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from flaneur.errors import UnknownNodeError
from flaneur.metrics.distances import METRES, MetricCache
from flaneur.metrics.virl import key_positions
from flaneur.tasks.episode import Episode


@dataclass(frozen=True)
class EpisodeFacts:
    """What the metrics need to know about an episode, as node indices.

    Attributes
    ----------
    goals
        All goal nodes in task order (``goal_nodes``, else the last reference node).
    ordered
        Whether the goals must be reached in order (``metadata["ordered"]``).
    targets
        Goals that count for the stop-based metrics: the last goal for ordered tasks,
        every goal otherwise (any one counts).
    reference
        Reference path as indices (empty when the episode has none).
    reference_xy
        Reference node positions in metres (:attr:`MetricCache.sphere_xy`).
    keys
        V-IRL key positions of the reference path.
    shortest_m
        Shortest walking distance start -> goal(s) in metres (ordered: through every goal in
        order; otherwise to the nearest goal); SPL's ``l``.
    categories
        Goal place categories in order.
    """

    goals: NDArray[np.int64]
    ordered: bool
    targets: NDArray[np.int64]
    reference: NDArray[np.int64]
    reference_xy: NDArray[np.float64]
    keys: tuple[int, ...]
    shortest_m: float
    categories: tuple[str, ...]


def _key(episode: Episode) -> tuple:
    return (
        episode.id,
        episode.start_node,
        episode.goal_nodes,
        episode.reference_path,
        episode.goal_categories,
        bool(episode.metadata.get("ordered", False)),
    )


def _indices(cache: MetricCache, episode: Episode, ids: Sequence[str], field: str) -> list[int]:
    graph = cache.graph
    try:
        return graph.indices(ids).tolist()
    except UnknownNodeError as err:
        raise UnknownNodeError(err.node_id, context=f"episode {episode.id!r}, {field}") from None


def episode_facts(cache: MetricCache, episodes: Sequence[Episode]) -> list[EpisodeFacts]:
    """Facts for each episode, computing the missing ones in one batch."""
    keys = [_key(e) for e in episodes]
    missing = [i for i, k in enumerate(keys) if k not in cache.episode_facts]
    if missing:
        _compute(cache, [episodes[i] for i in missing], [keys[i] for i in missing])
    return [cache.episode_facts[k] for k in keys]


def _compute(cache: MetricCache, episodes: Sequence[Episode], keys: Sequence[tuple]) -> None:
    graph = cache.graph
    partial = []
    legs_src: list[int] = []
    legs_dst: list[int] = []
    legs_bound: list[float] = []
    for episode in episodes:
        start = _indices(cache, episode, [episode.start_node], "start_node")[0]
        reference = np.asarray(
            _indices(cache, episode, episode.reference_path, "reference_path"), dtype=np.int64
        )
        goal_ids = episode.goal_nodes or episode.reference_path[-1:]
        if not goal_ids:
            raise ValueError(f"episode {episode.id!r} has neither goal_nodes nor a reference path")
        goals = np.asarray(_indices(cache, episode, goal_ids, "goal_nodes"), dtype=np.int64)
        ordered = bool(episode.metadata.get("ordered", False)) and len(goals) > 1
        ref_m = np.inf
        if reference.size > 1:
            ref_m = float(np.asarray(cache.forward_length[reference[:-1], reference[1:]]).sum())
        first_leg = len(legs_src)
        if ordered:
            stops = [start, *goals.tolist()]
            for a, b in itertools.pairwise(stops):
                legs_src.append(a)
                legs_dst.append(b)
                legs_bound.append(np.inf)
        else:
            for g in goals.tolist():
                legs_src.append(start)
                legs_dst.append(g)
                ends_here = reference.size and reference[-1] == g and reference[0] == start
                legs_bound.append(ref_m * 1.001 + 1.0 if ends_here else np.inf)
        partial.append((episode, goals, ordered, reference, first_leg, len(legs_src)))
    lengths = cache.pair_distances(legs_src, legs_dst, METRES, bound=np.asarray(legs_bound))
    xy = cache.sphere_xy
    for key, (episode, goals, ordered, reference, lo, hi) in zip(keys, partial, strict=True):
        legs = lengths[lo:hi]
        shortest = float(legs.sum() if ordered else legs.min())
        cache.episode_facts[key] = EpisodeFacts(
            goals=goals,
            ordered=ordered,
            targets=goals[-1:] if ordered else goals,
            reference=reference,
            reference_xy=xy[reference] if reference.size else np.zeros((0, 2)),
            keys=tuple(key_positions(graph, reference)) if reference.size else (),
            shortest_m=shortest,
            categories=tuple(episode.goal_categories),
        )
