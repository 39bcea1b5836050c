"""Room-to-Room style metrics (used by MapGPT): NE, SR, OSR, SPL, DTW, nDTW and SDTW.

References
----------
- Anderson et al. (2018), "Vision-and-Language Navigation: Interpreting visually-grounded
  navigation instructions in real environments" (R2R: NE, SR, OSR).
- Anderson et al. (2018), "On Evaluation of Embodied Navigation Agents" (SPL).
- Ilharco et al. (2019), "General Evaluation for Instruction Conditioned Navigation using
  Dynamic Time Warping" (DTW, nDTW, SDTW).
- Chen et al. (2024), "MapGPT: Map-Guided Prompting with Adaptive Path Planning for
  Vision-and-Language Navigation" (reports NE, SR, OSR, SPL with the R2R evaluation code).

Distances along the street graph (NE, the reference length of SPL) are shortest paths in
metres; DTW compares node positions by straight-line metres (great-circle distances, in a
local frame where they cost one ``hypot``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray


def navigation_error(stop_to_goal_m: float) -> float:
    """NE: shortest-path distance in metres from where the agent stopped to the goal.

    ``NE = d(stop, goal)`` with ``d`` the graph shortest path (Anderson et al. 2018, R2R).
    """
    return float(stop_to_goal_m)


def success(stop_to_goal_m: float, radius_m: float) -> bool:
    """SR for one episode: ``NE <= radius`` (R2R uses 3 m indoors; flaneur's default is 25 m)."""
    return bool(stop_to_goal_m <= radius_m)


def oracle_success(path_to_goal_m: ArrayLike, radius_m: float) -> bool:
    """OSR for one episode: some node of the agent's path is within ``radius`` of the goal.

    ``OSR = 1[min_t d(p_t, goal) <= radius]`` (Anderson et al. 2018, R2R).
    """
    values = np.asarray(path_to_goal_m, dtype=float)
    return bool(values.size and np.nanmin(values) <= radius_m)


def spl(succeeded: bool, shortest_m: float, taken_m: float) -> float:
    """SPL for one episode: ``S * l / max(p, l)`` (Anderson et al. 2018).

    Parameters
    ----------
    succeeded
        ``S``, the episode's success (SR).
    shortest_m
        ``l``, shortest-path length in metres from the start to the goal.
    taken_m
        ``p``, length in metres of the path the agent walked.

    Returns
    -------
    float
        In ``[0, 1]``; an episode whose start is its goal scores ``S`` when ``l = p = 0``.
    """
    if not succeeded:
        return 0.0
    denominator = max(taken_m, shortest_m)
    if denominator <= 0:
        return 1.0
    return float(shortest_m / denominator)


def dtw(reference_xy: ArrayLike, query_xy: ArrayLike) -> float:
    """Dynamic time warping cost in metres between two paths of points.

    ``DTW(R, Q) = min over monotone alignments W of sum_{(i,j) in W} ||r_i - q_j||``, computed
    with the recursion ``D(i,j) = c(i,j) + min(D(i-1,j), D(i,j-1), D(i-1,j-1))``
    (Ilharco et al. 2019, eq. 1). This is the raw value in metres (CitySeeker's tables appear
    to print this quantity under the name "nDTW").
    """
    return float(dtw_batch([np.asarray(reference_xy, float)], [np.asarray(query_xy, float)])[0])


def ndtw(dtw_m: float, reference_len: int, threshold_m: float) -> float:
    """nDTW: ``exp(-DTW(R, Q) / (|R| * d_th))`` (Ilharco et al. 2019), in ``(0, 1]``.

    ``|R|`` is the number of nodes of the reference path and ``d_th`` the success threshold.
    """
    if reference_len <= 0 or not math.isfinite(dtw_m):
        return 0.0 if reference_len > 0 else float("nan")
    return float(math.exp(-dtw_m / (reference_len * threshold_m)))


def sdtw(succeeded: bool, ndtw_value: float) -> float:
    """SDTW: ``SR * nDTW`` (Ilharco et al. 2019): nDTW counted only for successful episodes."""
    return float(ndtw_value) if succeeded else 0.0


def dtw_batch(
    references: Sequence[NDArray[np.float64]], queries: Sequence[NDArray[np.float64]]
) -> NDArray[np.float64]:
    """DTW costs of many (reference, query) point sequences at once.

    All episodes advance one reference row at a time. Within a row the left-to-right part of
    the recursion, ``D(i,j) = min(t_j, c_ij + D(i,j-1))`` with
    ``t_j = c_ij + min(D(i-1,j), D(i-1,j-1))``, is solved in closed form as
    ``D(i,j) = C_j + min_{k<=j}(t_k - C_k)`` where ``C`` is the running sum of ``c_i.``, so
    one row costs a few numpy operations for every episode together.

    Parameters
    ----------
    references, queries
        Per episode, an ``(m, 2)`` and an ``(n, 2)`` array of metric coordinates
        (``m, n >= 1``).

    Returns
    -------
    numpy.ndarray
        DTW cost per episode (``nan`` where a coordinate is unknown).
    """
    count = len(references)
    if count != len(queries):
        raise ValueError("references and queries must have the same length")
    out = np.full(count, np.nan)
    if count == 0:
        return out
    ref_len = np.asarray([len(r) for r in references], dtype=np.int64)
    qry_len = np.asarray([len(q) for q in queries], dtype=np.int64)
    if (ref_len < 1).any() or (qry_len < 1).any():
        raise ValueError("every path needs at least one point")
    m, n = int(ref_len.max()), int(qry_len.max())
    ref = np.zeros((count, m, 2))
    qry = np.zeros((count, n, 2))
    for e in range(count):
        ref[e, : ref_len[e]] = references[e]
        qry[e, : qry_len[e]] = queries[e]
    cols = np.arange(n)
    prev = None
    rows_done = np.arange(count)
    for i in range(m):
        cost = np.hypot(qry[:, :, 0] - ref[:, i, None, 0], qry[:, :, 1] - ref[:, i, None, 1])
        cost[cols[None, :] >= qry_len[:, None]] = 0.0  # padding never feeds real cells
        csum = np.cumsum(cost, axis=1)
        if prev is None:
            row = csum
        else:
            diagonal = np.concatenate([np.full((count, 1), np.inf), prev[:, :-1]], axis=1)
            t = cost + np.minimum(prev, diagonal)
            row = csum + np.minimum.accumulate(t - csum, axis=1)
        done = ref_len == i + 1
        out[done] = row[rows_done[done], qry_len[done] - 1]
        prev = row
    return out
