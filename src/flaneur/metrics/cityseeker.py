"""CitySeeker metrics: TCE, TCP (and TCP-40 / TCP-60), TCC, SPD (m), AS, and the ordered
multi-goal rule.

Reference
---------
CitySeeker: "How Do VLMs Explore Embodied Urban Navigation with Implicit Human Needs?"
(ICLR 2026 submission; benchmark code github.com/anonymous-cityseeker/CitySeeker). The paper
reports task completion three ways plus path metrics:

- TCE (exact): the agent stops on the goal viewpoint.
- TCP (proximity): the agent stops within 50 m (straight line) of the goal viewpoint. The
  paper also reports the same rate at 40 m and 60 m (TCP-40, TCP-60), row fields ``tcp40``
  and ``tcp60`` (:data:`PROXIMITY_RADII_M`).
- TCC (category): the agent stops at a viewpoint linked to a place of the goal category;
  places are linked to every viewpoint within 50 m.
- SPD: shortest-path distance in metres from the stop to the goal (the same number as NE).
  flaneur's metres are great-circle metres along its graph; CitySeeker's own SPD sums the
  data's ``edge_distance``, which is in Web-Mercator metres (about 1/cos(latitude) times
  ground metres, 1.17 in Shanghai; ``docs/metrics.md``): row field ``spd_mercator_m``, the
  shortest path by edges weighted with :func:`mercator_edge_lengths`.
- AS: average number of steps (moves between viewpoints; CitySeeker's limit is 35).
- SPL and nDTW as in :mod:`flaneur.metrics.r2r`. CitySeeker's tables print "nDTW" values far
  above 1 (e.g. 136.97), which look like raw DTW in metres; flaneur reports both
  ``ndtw`` (normalized, Ilharco et al. 2019) and ``dtw_m`` (raw, metres).

Ordered multi-goal tasks ("find X and Y in order", ``metadata["ordered"]``): each measure
must hold for the goals in order along the path: goal 1 at some step, goal 2 at the same or a
later step, ..., and the last goal at the stop.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray
from pyproj import Transformer

if TYPE_CHECKING:
    from flaneur.world.graph import StreetGraph

PROXIMITY_M = 50.0
"""TCP radius and the place-to-viewpoint linking radius of CitySeeker."""

PROXIMITY_RADII_M: dict[str, float] = {"tcp": PROXIMITY_M, "tcp40": 40.0, "tcp60": 60.0}
"""Row field of each proximity rate and its radius: TCP (50 m), TCP-40 and TCP-60."""

MAX_STEPS = 35
"""CitySeeker's step limit per episode."""


@cache
def _to_web_mercator() -> Transformer:
    return Transformer.from_crs("EPSG:4326", "EPSG:3857", always_xy=True)


def mercator_edge_lengths(graph: StreetGraph) -> NDArray[np.float64]:
    """Length of every edge of ``graph`` in Web-Mercator metres (EPSG:3857), in edge order.

    Both ends are projected (``x = R λ``, ``y = R ln tan(π/4 + φ/2)``, ``R = 6,378,137 m``)
    and the length is the planar distance between them, as CitySeeker's ``edge_distance``
    (on its Shanghai data the two agree to 1e-9 m on every edge with both ends located).
    Near a point, Web-Mercator metres are ground metres times 1/cos(latitude).

    Parameters
    ----------
    graph
        The street graph.

    Returns
    -------
    numpy.ndarray
        One length per edge; NaN where an end has no coordinates.
    """
    x, y = _to_web_mercator().transform(graph.lng, graph.lat)
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    src, dst = graph.edge_sources, graph.targets
    return np.asarray(np.hypot(x[dst] - x[src], y[dst] - y[src]), dtype=np.float64)


def ordered_completion(hits: Sequence[NDArray[np.bool_]]) -> bool:
    """Whether per-goal hit masks over path positions are satisfied in order, last at the stop.

    Parameters
    ----------
    hits
        One boolean array per goal (in task order), each over the positions of the agent's
        path: ``hits[j][t]`` says the goal-``j`` condition holds at step ``t``.

    Returns
    -------
    bool
        True when there are positions ``t_1 <= t_2 <= ... <= t_k = last`` with
        ``hits[j][t_j]`` for every goal ``j`` (a greedy earliest match decides this).
    """
    if not hits:
        return False
    last = len(hits[-1]) - 1
    if last < 0 or not hits[-1][last]:
        return False
    position = 0
    for mask in hits[:-1]:
        found = np.flatnonzero(mask[position:])
        if found.size == 0:
            return False
        position += int(found[0])
    return True


def completion(hits: Sequence[NDArray[np.bool_]], ordered: bool) -> bool:
    """Task completion for one measure: ordered rule, or any goal satisfied at the stop."""
    if not hits:
        return False
    if ordered:
        return ordered_completion(hits)
    return any(bool(mask[-1]) for mask in hits)


def exact_hits(
    path: NDArray[np.int64], goals: Sequence[int] | NDArray[np.int64]
) -> list[NDArray[np.bool_]]:
    """TCE condition per goal: the agent is on the goal node."""
    return [path == goal for goal in goals]


def proximity_hits(
    path_to_goal_m: Sequence[NDArray[np.float64]], radius_m: float = PROXIMITY_M
) -> list[NDArray[np.bool_]]:
    """TCP condition per goal: straight-line distance to the goal node ``<= radius_m``."""
    return [np.asarray(d) <= radius_m for d in path_to_goal_m]


def category_hits(
    path: NDArray[np.int64], masks: Sequence[NDArray[np.bool_]]
) -> list[NDArray[np.bool_]]:
    """TCC condition per goal category: the node is linked to a place of that category."""
    return [mask[path] for mask in masks]


def average_steps(steps: Sequence[int]) -> float:
    """AS: mean number of moves per episode, ``(1/N) sum_i (|path_i| - 1)``."""
    return float(np.mean(steps)) if len(steps) else float("nan")
