"""V-IRL vision-language navigation metrics: success, arrival ratio, reaction accuracy.

Reference
---------
Yang et al. (2024), "V-IRL: Grounding Virtual Intelligence in Real Life", ECCV (code:
github.com/VIRL-Platform/VIRL, ``virl/actions/navigation/vision_language_navigator.py``).
V-IRL's route is a list of *key positions* (the points where the route turns, from the
directions API, and the destination). Its VLN benchmark reports success (the agent stops
within 25 m of the destination) and, at the key positions, how often the agent arrives and
how often it reacts correctly.

flaneur's definitions on a viewpoint graph:

- key positions: interior nodes of the reference path where the path turns by at least
  ``turn_deg`` (45 degrees) between the incoming and outgoing step, plus the destination
  (the start is not a key position);
- ``arrival_ratio`` = share of key positions that the agent's path visits;
- ``reaction_accuracy`` = share of key positions where the agent's first action at that node
  equals the gold action taken there (the destination's gold action is ``STOP``); a key
  position the agent never reaches counts as wrong.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from flaneur.geo import angle_diff, bearing
from flaneur.world.graph import StreetGraph

SUCCESS_RADIUS_M = 25.0
"""V-IRL's success radius."""

TURN_DEG = 45.0
"""Smallest change of direction that makes a reference node a key position."""


def virl_success(stop_to_goal_straight_m: float, radius_m: float = SUCCESS_RADIUS_M) -> bool:
    """Success: the stop is within ``radius_m`` (straight line) of the destination."""
    return bool(stop_to_goal_straight_m <= radius_m)


def key_positions(
    graph: StreetGraph, reference: NDArray[np.int64], turn_deg: float = TURN_DEG
) -> list[int]:
    """Key positions of a reference path (node indices, in path order, without repeats).

    ``K = {r_i : 0 < i < |R|-1, |angle(r_{i-1} -> r_i, r_i -> r_{i+1})| >= turn_deg}
    ∪ {r_last}``.
    """
    ref = np.asarray(reference, dtype=np.int64)
    if ref.size == 0:
        return []
    keys: list[int] = []
    if ref.size >= 3:
        lat, lng = graph.lat[ref], graph.lng[ref]
        head = bearing(lat[:-1], lng[:-1], lat[1:], lng[1:])
        turn = np.abs(angle_diff(head[1:], head[:-1]))
        moved = (ref[1:-1] != ref[:-2]) & (ref[1:-1] != ref[2:])
        keys = ref[1:-1][(turn >= turn_deg) & moved].tolist()
    keys.append(int(ref[-1]))
    return list(dict.fromkeys(keys))  # first visits, in order


def arrival_ratio(keys: Sequence[int], path: NDArray[np.int64]) -> float | None:
    """Share of key positions the agent's path visits (``None`` without key positions)."""
    if not keys:
        return None
    visited = set(np.asarray(path).tolist())
    return sum(1 for k in keys if k in visited) / len(keys)


def first_action_at(actions: Sequence[tuple[str, int]]) -> dict[int, str]:
    """``{node: label of the first action taken at that node}``."""
    first: dict[int, str] = {}
    for label, node in actions:
        first.setdefault(node, label)
    return first


def reaction_accuracy(
    keys: Sequence[int],
    gold: Sequence[tuple[str, int]],
    agent: Sequence[tuple[str, int]],
) -> float | None:
    """Share of key positions where the agent's first action equals the gold action there.

    Key positions without a gold action (the gold walk never acts there) are left out;
    ``None`` when no key position has one.
    """
    gold_first = first_action_at(gold)
    agent_first = first_action_at(agent)
    scored = [k for k in keys if k in gold_first]
    if not scored:
        return None
    return sum(1 for k in scored if agent_first.get(k) == gold_first[k]) / len(scored)
