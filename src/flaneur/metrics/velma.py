"""VELMA / Touchdown metrics: task completion (TC), shortest-path distance (SPD), KPA.

TC, SPD and KPA follow VELMA's released evaluation code; ``kpa_prefix`` is flaneur's
stricter key-point accuracy on action sequences, kept under its own name.

Reference
---------
Schumann et al. (2024), "VELMA: Verbalization Embodiment of LLM Agents for Vision and Language
Navigation in Street View", AAAI (code: github.com/raphael-sch/VELMA, ``vln/evaluate.py``);
TC and SPD follow Chen et al. (2019), "Touchdown" and Schumann & Riezler (2022).

Actions (for ``kpa_prefix``) are the labels of the ``turns`` action scheme (``FORWARD``,
``LEFT``, ``RIGHT``, ``TURN_AROUND``, ``STOP``), each paired with the node index where it was
taken.
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

    ``TC = 1[stop in {g} ∪ N(g)]`` where ``N(g)`` are the neighbours of the goal panorama in
    either direction (edges ``g -> n`` and ``n -> g``), as VELMA's ``get_target_neighbors``
    (``networkx.all_neighbors``); Touchdown counts the goal's neighbours as correct to allow
    for the panorama spacing.
    """
    targets_of, _ = graph.adjacency
    return any(
        stop == goal or stop in targets_of[goal] or goal in targets_of[stop] for goal in goals
    )


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


def dedupe_path(path: Sequence[int] | NDArray[np.int64]) -> NDArray[np.int64]:
    """The path without consecutive repeats (VELMA's ``pano_path``: rotations add no node)."""
    nodes = np.asarray(path, dtype=np.int64).ravel()
    if nodes.size < 2:
        return nodes
    return nodes[np.concatenate(([True], nodes[1:] != nodes[:-1]))]


KeyPoint = int | tuple[int, int]
"""A VELMA key point: a single node (the path's first two) or a ``(node, next node)`` move."""


def key_points(
    path: Sequence[int] | NDArray[np.int64], degree: NDArray[np.int64]
) -> list[KeyPoint]:
    """Key points of a node path as VELMA's ``vln/evaluate.py`` lists them.

    The first two nodes of the path as single nodes, then for every position ``i`` whose node
    is an intersection (more than two out-links) and has a successor, the move
    ``(path[i], path[i + 1])``. A path of one node or none has no key points. The list may
    repeat a move (a path through the same intersection twice the same way); VELMA divides
    by the list's length, repeats included.
    """
    nodes = np.asarray(path, dtype=np.int64).ravel()
    if nodes.size <= 1:
        return []
    here, after = nodes[:-1], nodes[1:]
    cross = degree[here] > 2
    moves = zip(here[cross].tolist(), after[cross].tolist(), strict=True)
    return [int(nodes[0]), int(nodes[1]), *moves]


def key_point_accuracy(
    gold_path: Sequence[int] | NDArray[np.int64],
    agent_path: Sequence[int] | NDArray[np.int64],
    degree: NDArray[np.int64],
    stopped_at_goal: bool,
) -> float | None:
    """KPA exactly as VELMA's released evaluation (``vln/evaluate.py``, ``get_metrics``).

    ``KPA = (|set(K(gold)) ∩ set(K(agent))| + 1[TC]) / (len(K(gold)) + 1)`` with ``K`` from
    :func:`key_points` on the paths without consecutive repeats (:func:`dedupe_path`) and
    ``TC`` the stop on the goal or a neighbour of it (:func:`task_completion`). Key points
    are compared as a set, wherever on the path they occur: an agent that leaves the gold
    path and later takes a gold move at an intersection still scores it. The path's first
    two nodes count as single nodes (a quirk of that code: the start always matches, the
    second node matches when the first move went the gold way). Returns ``None`` for an
    empty gold path. :func:`key_point_accuracy_batch` scores many runs at once.
    """
    value = key_point_accuracy_batch([gold_path], [agent_path], degree, [stopped_at_goal])[0]
    return None if np.isnan(value) else float(value)


def key_point_accuracy_batch(
    gold_paths: Sequence[Sequence[int] | NDArray[np.int64]],
    agent_paths: Sequence[Sequence[int] | NDArray[np.int64]],
    degree: NDArray[np.int64],
    stopped_at_goal: Sequence[bool] | NDArray[np.bool_],
) -> NDArray[np.float64]:
    """:func:`key_point_accuracy` of many runs in a few numpy operations (NaN: empty gold).

    Key points become integers (a node ``v`` is ``v``, a move ``(u, v)`` is
    ``(u + 1) * n + v`` for ``n`` nodes, so the kinds never collide), tagged with their run;
    the set intersection per run is the intersection of the tagged unique codes.
    """
    runs = len(gold_paths)
    gold, gold_run = _key_codes(gold_paths, degree)
    agent, agent_run = _key_codes(agent_paths, degree)
    span = np.int64(degree.size) * (degree.size + 1) + degree.size + 1  # every code is below
    gold_keys = np.unique(gold_run * span + gold)
    agent_keys = np.unique(agent_run * span + agent)
    shared = np.intersect1d(gold_keys, agent_keys, assume_unique=True)
    hits = np.bincount(shared // span, minlength=runs)
    points = np.bincount(gold_run, minlength=runs)  # the list's length, repeats included
    bonus = np.asarray(stopped_at_goal, dtype=np.float64).reshape(runs)
    out = (hits + bonus) / (points + 1)
    lengths = np.asarray([np.asarray(p).size for p in gold_paths])
    out[lengths == 0] = np.nan
    return out


def _key_codes(
    paths: Sequence[Sequence[int] | NDArray[np.int64]], degree: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Key points of every path (after :func:`dedupe_path`) as integer codes, and their run."""
    if not paths:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    arrays = [np.asarray(p, dtype=np.int64).ravel() for p in paths]
    flat = np.concatenate(arrays)
    run = np.repeat(np.arange(len(arrays)), [a.size for a in arrays])
    keep = np.ones(flat.size, dtype=bool)
    keep[1:] = (flat[1:] != flat[:-1]) | (run[1:] != run[:-1])
    flat, run = flat[keep], run[keep]
    count = np.bincount(run, minlength=len(arrays))
    position = np.arange(flat.size) - (np.cumsum(count) - count)[run]
    single = (position < 2) & (count[run] >= 2)
    move = np.zeros(flat.size, dtype=bool)
    move[:-1] = (run[:-1] == run[1:]) & (degree[flat[:-1]] > 2)
    at = np.flatnonzero(move)
    codes = np.concatenate((flat[single], (flat[at] + 1) * degree.size + flat[at + 1]))
    return codes, np.concatenate((run[single], run[at]))


def key_point_indices(gold: Sequence[Action], degree: NDArray[np.int64]) -> list[int]:
    """Positions in the gold action sequence that :func:`key_point_accuracy_prefix` counts.

    The first action, every action taken at an intersection (a node with more than two
    out-links) and the stop decision.
    """
    keys = []
    last = len(gold) - 1
    for i, (label, node) in enumerate(gold):
        if i == 0 or degree[node] > 2 or label == STOP or i == last:
            keys.append(i)
    return keys


def key_point_accuracy_prefix(
    gold: Sequence[Action], agent: Sequence[Action], degree: NDArray[np.int64]
) -> float | None:
    """``kpa_prefix``: flaneur's stricter key-point accuracy (not VELMA's published number).

    ``KPA_prefix = |{k in K : agent[:k+1] == gold[:k+1]}| / |K|`` with ``K`` from
    :func:`key_point_indices`. The agent's decision at key point ``k`` is correct when it was
    in the same state (same node, reached by the same actions) and took the same action as the
    gold sequence at position ``k``; once the agent's actions diverge from the gold
    sequence it has left the gold path, so every later key point counts as wrong (VELMA's
    :func:`key_point_accuracy` still credits gold moves taken later). Returns ``None`` for
    an empty gold sequence.
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
