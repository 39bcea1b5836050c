"""Every metric of VELMA, MapGPT/R2R, CitySeeker and V-IRL for agent runs, in one flat row.

:func:`batch_metrics` scores many episodes at once (graph distances for all of them in a few
bounded searches, DTW for all of them in one vectorised pass); :func:`episode_metrics` scores
one. Each returns rows with the fields listed in :data:`METRIC_FIELDS` (documented in
``docs/metrics.md``); a field is ``None`` where it does not apply (no reference path, no
actions given, no places of the goal category in the city, goal unreachable).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from flaneur.geo import haversine
from flaneur.metrics import cityseeker, r2r, velma, virl
from flaneur.metrics.distances import (
    HOPS,
    MERCATOR,
    METRES,
    MetricCache,
    as_index_array,
    cache_for,
)
from flaneur.metrics.facts import EpisodeFacts, episode_facts
from flaneur.metrics.table import added_metrics
from flaneur.tasks.episode import Episode
from flaneur.world.city import City
from flaneur.world.graph import StreetGraph

DEFAULT_SUCCESS_RADIUS_M = 25.0
"""Radius of SR/OSR/SPL/SDTW and the nDTW threshold ``d_th`` (R2R uses 3 m indoors)."""

Value = float | bool | str | None
ActionSeq = Sequence[Sequence[Any]]
NodePath = Sequence[int] | Sequence[str] | NDArray
"""A path as node indices or node ids."""


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def _as_path(city: City, path: NodePath) -> NDArray[np.int64]:
    if len(path) and isinstance(path[0], str):
        return city.graph.indices(cast(Sequence[str], path))  # node ids, as the first is
    return as_index_array(path)


def batch_metrics(
    city: City,
    episodes: Sequence[Episode],
    paths: Sequence[NodePath],
    *,
    gold_actions: Sequence[ActionSeq | None] | None = None,
    agent_actions: Sequence[ActionSeq | None] | None = None,
    success_radius_m: float = DEFAULT_SUCCESS_RADIUS_M,
    dist_cache: MetricCache | None = None,
) -> list[dict[str, Value]]:
    """Score many agent runs.

    Parameters
    ----------
    city
        The city the episodes live in.
    episodes
        The episodes, one per run.
    paths
        Per run, the node indices the agent occupied: start first, one entry per move, the
        last entry is where it stopped (string node ids are accepted too).
    gold_actions, agent_actions
        Optional per run: ``[(label, node_index), ...]`` in the ``turns`` scheme
        (``FORWARD``/``LEFT``/``RIGHT``/``TURN_AROUND``/``STOP``), the node being where the
        action was taken. Needed for ``kpa_prefix`` (both) and ``reaction_accuracy`` (both);
        ``kpa`` (VELMA's) needs only the paths and the reference path.
    success_radius_m
        Radius for ``sr``, ``osr``, ``spl``, ``sdtw`` and the nDTW threshold.
    dist_cache
        The city's :class:`MetricCache` (default: :func:`cache_for` ``(city)``).

    Returns
    -------
    list of dict
        One row per run with :data:`ROW_FIELDS`, :data:`METRIC_FIELDS` and the fields of
        metrics added with :func:`~flaneur.metrics.register_metric`.
    """
    n = len(episodes)
    _check_lengths(n, paths, gold_actions, agent_actions)
    if n == 0:
        return []
    cache = dist_cache if dist_cache is not None else cache_for(city)
    facts = episode_facts(cache, episodes)
    walks = [_as_path(city, p) for p in paths]
    stops = np.asarray([w[-1] for w in walks], dtype=np.int64)
    ne, spd, mercator = _goal_distances(cache, facts, stops)
    straight = _Straight(cache, walks, facts)
    taken = _walk_lengths(cache, walks)
    osr = _oracle_success(cache, facts, straight, ne <= success_radius_m, success_radius_m)
    dtw_all = _reference_dtw(cache, facts, walks)
    tc, kpa_all = _velma_scores(city.graph, facts, walks, stops)
    rows = []
    for i, (episode, fact, walk) in enumerate(zip(episodes, facts, walks, strict=True)):
        gold = _actions(gold_actions, i)
        agent = _actions(agent_actions, i)
        kpa = None if np.isnan(kpa_all[i]) else float(kpa_all[i])
        rows.append(
            _row(
                cache,
                episode,
                fact,
                walk,
                straight.per_run(i),
                float(taken[i]),
                (float(ne[i]), float(spd[i]), float(mercator[i])),
                bool(osr[i]),
                float(dtw_all[i]),
                gold,
                agent,
                success_radius_m,
                tc[i],
                kpa,
            )
        )
    _add_registered_metrics(rows, city, episodes, walks)
    return rows


def _add_registered_metrics(
    rows: list[dict[str, Value]],
    city: City,
    episodes: Sequence[Episode],
    walks: list[NDArray[np.int64]],
) -> None:
    """Metrics registered by users and plug-ins, one run at a time."""
    for metric in added_metrics():
        compute = metric.compute
        assert compute is not None, "the metric registry requires compute"
        for row, episode, walk in zip(rows, episodes, walks, strict=True):
            row[metric.key] = compute(city, episode, walk)


def _velma_scores(
    graph: StreetGraph,
    facts: Sequence[EpisodeFacts],
    walks: Sequence[NDArray[np.int64]],
    stops: NDArray[np.int64],
) -> tuple[list[bool], NDArray[np.float64]]:
    """Per run, VELMA's task completion and key point accuracy (NaN without a reference
    path)."""
    tc = [
        velma.task_completion(graph, int(stops[i]), f.targets.tolist()) for i, f in enumerate(facts)
    ]
    kpa_all = velma.key_point_accuracy_batch([f.reference for f in facts], walks, graph.degree, tc)
    return tc, kpa_all


def _check_lengths(
    n: int,
    paths: Sequence[NodePath],
    gold_actions: Sequence[ActionSeq | None] | None,
    agent_actions: Sequence[ActionSeq | None] | None,
) -> None:
    """A ValueError unless ``paths`` and the given action lists hold one entry per episode."""
    if len(paths) != n:
        raise ValueError(f"got {len(paths)} paths for {n} episodes")
    for name, seq in (("gold_actions", gold_actions), ("agent_actions", agent_actions)):
        if seq is not None and len(seq) != n:
            raise ValueError(f"got {len(seq)} {name} for {n} episodes")


def _goal_distances(
    cache: MetricCache, facts: Sequence[EpisodeFacts], stops: NDArray[np.int64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per run, the graph distance from its stop to the nearest of its target goals: in
    metres (``ne``), in hops (``spd``) and in Web-Mercator metres (``spd_mercator_m``)."""
    n = len(facts)
    owner = np.repeat(np.arange(n), [len(f.targets) for f in facts])
    goal_of = np.concatenate([f.targets for f in facts])
    out = []
    for weight in (METRES, HOPS, MERCATOR):
        best = np.full(n, np.inf)
        np.minimum.at(best, owner, cache.pair_distances(stops[owner], goal_of, weight))
        out.append(best)
    return out[0], out[1], out[2]


def _reference_dtw(
    cache: MetricCache, facts: Sequence[EpisodeFacts], walks: Sequence[NDArray[np.int64]]
) -> NDArray[np.float64]:
    """Per run, the DTW distance (metres) of its walk to its reference path; NaN for an
    episode without one."""
    n = len(facts)
    has_ref = [f.reference.size > 0 for f in facts]
    ref_rows = [i for i in range(n) if has_ref[i]]
    dtw_all = np.full(n, np.nan)
    if ref_rows:
        dtw_all[ref_rows] = r2r.dtw_batch(
            [facts[i].reference_xy for i in ref_rows], [cache.sphere_xy[walks[i]] for i in ref_rows]
        )
    return dtw_all


def episode_metrics(
    city: City,
    episode: Episode,
    path: NodePath,
    *,
    gold_actions: ActionSeq | None = None,
    agent_actions: ActionSeq | None = None,
    success_radius_m: float = DEFAULT_SUCCESS_RADIUS_M,
    dist_cache: MetricCache | None = None,
) -> dict[str, Value]:
    """Score one agent run; see :func:`batch_metrics` for the parameters and fields."""
    return batch_metrics(
        city,
        [episode],
        [path],
        gold_actions=None if gold_actions is None else [gold_actions],
        agent_actions=None if agent_actions is None else [agent_actions],
        success_radius_m=success_radius_m,
        dist_cache=dist_cache,
    )[0]


def _actions(seq: Sequence[ActionSeq | None] | None, i: int) -> list[velma.Action] | None:
    actions = None if seq is None else seq[i]
    return None if actions is None else velma.normalize_actions(actions)


class _Straight:
    """Straight-line metres from every path position to every goal, over all runs at once.

    ``flat`` concatenates the paths; per goal slot ``k`` (a run's k-th goal), ``dist[k]`` and
    ``goal[k]`` hold the distance and the goal for every position (NaN / -1 where the run has
    fewer goals). ``per_run(i)`` gives run ``i``'s arrays, one per goal.
    """

    def __init__(
        self, cache: MetricCache, walks: Sequence[NDArray[np.int64]], facts: Sequence[EpisodeFacts]
    ) -> None:
        graph = cache.graph
        lens = np.asarray([len(w) for w in walks])
        self.flat = np.concatenate(walks)
        self.owner = np.repeat(np.arange(len(walks)), lens)
        self.bounds = np.concatenate([[0], np.cumsum(lens)])
        self.n_goals = np.asarray([len(f.goals) for f in facts])
        self.dist: list[NDArray[np.float64]] = []
        self.goal: list[NDArray[np.int64]] = []
        lat, lng = graph.lat[self.flat], graph.lng[self.flat]
        for k in range(int(self.n_goals.max())):
            per_run = np.asarray([f.goals[k] if k < len(f.goals) else -1 for f in facts])
            goal = per_run[self.owner]
            dist = np.full(self.flat.size, np.nan)
            ok = goal >= 0
            dist[ok] = haversine(lat[ok], lng[ok], graph.lat[goal[ok]], graph.lng[goal[ok]])
            self.dist.append(dist)
            self.goal.append(goal)

    def per_run(self, i: int) -> list[NDArray[np.float64]]:
        lo, hi = self.bounds[i], self.bounds[i + 1]
        return [self.dist[k][lo:hi] for k in range(int(self.n_goals[i]))]


def _walk_lengths(cache: MetricCache, walks: Sequence[NDArray[np.int64]]) -> NDArray[np.float64]:
    """Metres walked along every path: the graph's edge lengths, in one sparse lookup.

    A move between nodes without an edge (not a walk) counts its great-circle length; staying
    on a node counts 0.
    """
    flat = np.concatenate(walks)
    step = np.zeros(flat.size)
    if flat.size > 1:
        a, b = flat[:-1], flat[1:]
        step[1:] = np.asarray(cache.forward_length[a, b]).ravel()
        gap = (step[1:] == 0) & (a != b)
        if gap.any():
            step[1:][gap] = cache.straight_m(a[gap], b[gap])
        step[1:][a == b] = 0.0
    starts = np.concatenate([[0], np.cumsum([len(w) for w in walks])[:-1]])
    step[starts] = 0.0  # no step from one path into the next
    return np.add.reduceat(step, starts)


def _oracle_success(
    cache: MetricCache,
    facts: Sequence[EpisodeFacts],
    straight: _Straight,
    decided: NDArray[np.bool_],
    radius_m: float,
) -> NDArray[np.bool_]:
    """OSR: any path node within ``radius_m`` of a target goal along the graph.

    Runs in ``decided`` (already successful) count. Graph distance is never below the
    straight-line distance, so only path nodes within ``radius_m`` in a straight line are
    searched, with searches capped at ``radius_m``.
    """
    out = decided.copy()
    ordered = np.asarray([f.ordered for f in facts])
    nodes, goals, owners = [], [], []
    for k, (dist, goal) in enumerate(zip(straight.dist, straight.goal, strict=True)):
        last = straight.n_goals[straight.owner] - 1 == k
        target = last | ~ordered[straight.owner]  # ordered runs: only the final goal
        pick = (dist <= radius_m) & target & ~out[straight.owner]
        nodes.append(straight.flat[pick])
        goals.append(goal[pick])
        owners.append(straight.owner[pick])
    node, goal, owner = np.concatenate(nodes), np.concatenate(goals), np.concatenate(owners)
    if node.size:
        pairs, inverse = np.unique(np.stack([node, goal]), axis=1, return_inverse=True)
        dist = cache.pair_distances(pairs[0], pairs[1], METRES, cap=radius_m)
        out[owner[dist[np.ravel(inverse)] <= radius_m]] = True
    return out


def _row(
    cache: MetricCache,
    episode: Episode,
    fact: EpisodeFacts,
    walk: NDArray[np.int64],
    straight: Sequence[NDArray[np.float64]],
    taken_m: float,
    goal_distances: tuple[float, float, float],
    osr: bool,
    dtw_m: float,
    gold: list[velma.Action] | None,
    agent: list[velma.Action] | None,
    radius_m: float,
    tc: bool,
    kpa: float | None,
) -> dict[str, Value]:
    graph = cache.graph
    stop = int(walk[-1])
    ne_m, spd_hops, mercator_m = goal_distances
    sr = bool(np.isfinite(ne_m) and ne_m <= radius_m)
    has_ref = fact.reference.size > 0
    ndtw = None  # no reference, or a node without coordinates
    if has_ref and not np.isnan(dtw_m):
        ndtw = r2r.ndtw(dtw_m, fact.reference.size, radius_m)
    final_straight = min(float(s[-1]) for s in (straight[-1:] if fact.ordered else straight))
    tcc = None
    if fact.categories and len(cache.city.places):
        masks = [cache.category_mask(c, cityseeker.PROXIMITY_M) for c in fact.categories]
        ordered_cats = fact.ordered and len(masks) > 1
        tcc = cityseeker.completion(cityseeker.category_hits(walk, masks), ordered_cats)
    kpa_prefix = reaction = None
    if gold is not None and agent is not None:
        kpa_prefix = velma.key_point_accuracy_prefix(gold, agent, graph.degree)
        reaction = virl.reaction_accuracy(fact.keys, gold, agent)
    return {
        "episode_id": episode.id,
        "city": episode.city,
        "category": episode.category,
        "stop_node": str(graph.ids[stop]),
        "steps": len(walk) - 1,
        "path_length_m": _finite(round(taken_m, 3)),
        "tc": tc,
        "spd_hops": velma.shortest_path_hops(spd_hops),
        "kpa": kpa,
        "kpa_prefix": kpa_prefix,
        "ne_m": _finite(ne_m),
        "sr": sr,
        "osr": osr,
        "spl": r2r.spl(sr, fact.shortest_m, taken_m)
        if np.isfinite(fact.shortest_m) and np.isfinite(taken_m)
        else None,
        "dtw_m": _finite(dtw_m) if has_ref else None,
        "ndtw": ndtw,
        "sdtw": r2r.sdtw(sr, ndtw) if ndtw is not None else None,
        "tce": cityseeker.completion(cityseeker.exact_hits(walk, fact.goals), fact.ordered),
        **{
            key: cityseeker.completion(cityseeker.proximity_hits(straight, radius), fact.ordered)
            for key, radius in cityseeker.PROXIMITY_RADII_M.items()
        },
        "tcc": tcc,
        "spd_m": _finite(ne_m),
        "spd_mercator_m": _finite(mercator_m),
        "virl_success": virl.virl_success(final_straight),
        "arrival_ratio": virl.arrival_ratio(fact.keys, walk),
        "reaction_accuracy": reaction,
    }
