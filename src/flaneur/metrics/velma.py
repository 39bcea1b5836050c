"""VELMA / Touchdown metrics: task completion (TC), shortest-path distance (SPD), KPA.

Reference
---------
Schumann et al. (2024), "VELMA: Verbalization Embodiment of LLM Agents for Vision and Language
Navigation in Street View", AAAI (code: github.com/raphael-sch/VELMA, ``vln/evaluate.py``);
TC and SPD follow Chen et al. (2019), "Touchdown" and Schumann & Riezler (2022).

Actions are the labels of the ``turns`` action scheme (``FORWARD``, ``LEFT``, ``RIGHT``,
``TURN_AROUND``, ``STOP``), each paired with the node index where it was taken.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from flaneur.world.graph import StreetGraph

Action = tuple[str, int]
"""An action label and the node index where it was taken."""

STOP = "STOP"


def task_completion(graph: StreetGraph, stop: int, goals: Sequence[int]) -> bool:
    """TC: the agent stopped on a goal node or on a graph neighbour of one.

    ``TC = 1[stop in {g} ∪ N(g)]`` where ``N(g)`` are the out-neighbours of the goal
    panorama, as VELMA's ``get_target_neighbors`` (Touchdown counts the goal's
    neighbours as correct to allow for the panorama spacing).
    """
    targets_of, _ = graph.adjacency
    return any(stop == goal or stop in targets_of[goal] for goal in goals)


def shortest_path_hops(stop_to_goal_hops: float) -> float | None:
    """SPD: number of edges on the shortest path from the stop node to the goal.

    ``SPD = d_hops(stop, goal)`` (VELMA, Touchdown); ``None`` when the goal is unreachable.
    """
    return None if not np.isfinite(stop_to_goal_hops) else float(stop_to_goal_hops)


def normalize_actions(actions: Sequence[Sequence]) -> list[Action]:
    """``[(LABEL, node), ...]`` with labels upper-cased; accepts pairs in any sequence type."""
    out: list[Action] = []
    for item in actions:
        if isinstance(item, str) or len(item) != 2:
            raise ValueError(f"an action must be a (label, node_index) pair, got {item!r}")
        label, node = item
        out.append((str(label).upper(), int(node)))
    return out


def key_point_indices(gold: Sequence[Action], degree: NDArray[np.int64]) -> list[int]:
    """Positions in the gold action sequence that VELMA counts as key points.

    Key points are the first action, every action taken at an intersection (a node with more
    than two out-links) and the stop decision.
    """
    keys = []
    last = len(gold) - 1
    for i, (label, node) in enumerate(gold):
        if i == 0 or degree[node] > 2 or label == STOP or i == last:
            keys.append(i)
    return keys


def key_point_accuracy(
    gold: Sequence[Action], agent: Sequence[Action], degree: NDArray[np.int64]
) -> float | None:
    """KPA: share of gold key points where the agent made the gold decision.

    ``KPA = |{k in K : agent[:k+1] == gold[:k+1]}| / |K|`` with ``K`` from
    :func:`key_point_indices`. The agent's decision at key point ``k`` is correct when it was
    in the same state (same node, reached by the same actions) and took the same action as the
    gold sequence at position ``k``; once the agent's actions diverge from the gold
    sequence it has left the gold path, so every later key point counts as wrong. Returns
    ``None`` for an empty gold sequence.
    """
    if not gold:
        return None
    keys = key_point_indices(gold, degree)
    diverge = 0
    limit = min(len(gold), len(agent))
    while diverge < limit and gold[diverge] == agent[diverge]:
        diverge += 1
    correct = sum(1 for k in keys if k < diverge)
    return correct / len(keys)
