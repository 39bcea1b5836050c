"""Graph distances for metrics, computed in batches and cached per city.

Metrics need only a few graph distances per episode (stop -> goal, start -> goal, path nodes
near the goal), never whole distance rows. :class:`MetricCache` answers batches of
``(source, target)`` pairs with *bounded* reverse Dijkstra searches: each target is searched
backwards with a distance limit derived from the straight-line distance, and pairs the search
did not reach are searched again with a larger limit (finally without limit). A finite result
of a bounded search is exact, so the answers equal plain shortest paths; they only cost a
small ball around the goal instead of the whole city. Results are memoised per city, so
evaluating many agents on one task set pays for each pair once.

:func:`cache_for` returns the cache of a city (created on first use and dropped with the city).
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse
from scipy.sparse import csgraph
from scipy.spatial import cKDTree

from flaneur.geo import EARTH_RADIUS_M, haversine
from flaneur.metrics.cityseeker import mercator_edge_lengths
from flaneur.world.graph import StreetGraph

if TYPE_CHECKING:
    from flaneur.world.city import City

HOPS = "hops"
METRES = "length"
MERCATOR = "mercator"
"""Weight of :meth:`MetricCache.pair_distances` in Web-Mercator metres
(:func:`~flaneur.metrics.cityseeker.mercator_edge_lengths`; CitySeeker's ``edge_distance``)."""
_CELLS_PER_CHUNK = 2_000_000
"""Upper bound on the size of one dense Dijkstra result (targets x nodes)."""


class MetricCache:
    """Memoised pair distances, place-category masks and per-episode facts for one city.

    Parameters
    ----------
    city
        The city whose street graph and places the metrics use.
    """

    def __init__(self, city: City) -> None:
        self.city = city
        self.graph: StreetGraph = city.graph
        self._pairs: dict[str, dict[tuple[int, int], float]] = {HOPS: {}, METRES: {}, MERCATOR: {}}
        self._reversed: dict[str, sparse.csr_matrix] = {}
        self.category_masks: dict[tuple[str, float], NDArray[np.bool_]] = {}
        self.episode_facts: dict[tuple, Any] = {}

    # ------------------------------------------------------------------ graph helpers
    def _reverse(self, weight: str) -> sparse.csr_matrix:
        """The graph reversed (``[b, a]`` = weight of edge a -> b), built on first use."""
        matrix = self._reversed.get(weight)
        if matrix is None:
            forward = self.mercator if weight == MERCATOR else self.graph.adjacency_matrix(weight)
            matrix = self._reversed[weight] = forward.T.tocsr()
        return matrix

    @cached_property
    def mercator_lengths(self) -> NDArray[np.float64]:
        """Edge lengths in Web-Mercator metres (NaN where an end has no coordinates)."""
        return mercator_edge_lengths(self.graph)

    @cached_property
    def mercator(self) -> sparse.csr_matrix:
        """Edge lengths in Web-Mercator metres as a sparse matrix; an edge with an end
        without coordinates has infinite length (never on a shortest path)."""
        g = self.graph
        data = np.where(np.isnan(self.mercator_lengths), np.inf, self.mercator_lengths)
        data = np.maximum(data, 1e-6)  # csgraph reads explicit zeros as missing edges
        return sparse.csr_matrix((data, g.targets, g.indptr), shape=(g.n_nodes, g.n_nodes))

    @cached_property
    def _centre(self) -> tuple[float, float]:
        g = self.graph
        if g.n_nodes == 0 or np.isnan(g.lat).all():
            return (0.0, 0.0)
        return (float(np.nanmean(g.lat)), float(np.nanmean(g.lng)))

    def to_sphere_xy(self, lat: ArrayLike, lng: ArrayLike) -> NDArray[np.float64]:
        """Positions in metres in a local equirectangular frame on the haversine sphere.

        ``x = R cos(lat_c) (lng - lng_c)``, ``y = R (lat - lat_c)`` around the graph centre:
        straight-line distances in this frame match :func:`flaneur.geo.haversine` to about
        0.1 % across a city and cost one ``hypot`` each.
        """
        lat_c, lng_c = self._centre
        lat = np.asarray(lat, dtype=float)
        lng = np.asarray(lng, dtype=float)
        x = EARTH_RADIUS_M * np.cos(np.radians(lat_c)) * np.radians(lng - lng_c)
        y = EARTH_RADIUS_M * np.radians(lat - lat_c)
        return np.column_stack([np.ravel(x), np.ravel(y)])

    @cached_property
    def sphere_xy(self) -> NDArray[np.float64]:
        """Node positions from :meth:`to_sphere_xy`, shape ``(n, 2)`` (used by DTW)."""
        return self.to_sphere_xy(self.graph.lat, self.graph.lng)

    @cached_property
    def _node_tree(self) -> cKDTree:
        return cKDTree(np.nan_to_num(self.sphere_xy, nan=1e12))

    @cached_property
    def forward_length(self) -> sparse.csr_matrix:
        """Edge lengths in metres as a sparse matrix (``[a, b]`` = length of edge a -> b)."""
        return self.graph.adjacency_matrix("length")

    @cached_property
    def typical_edge_m(self) -> float:
        """Median positive edge length in metres (turns metre bounds into hop bounds)."""
        lengths = self.graph.lengths[self.graph.lengths > 0]
        return float(np.median(lengths)) if lengths.size else 1.0

    def straight_m(self, a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
        """Great-circle distance in metres between node arrays ``a`` and ``b``."""
        g = self.graph
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        return np.asarray(haversine(g.lat[a], g.lng[a], g.lat[b], g.lng[b]), dtype=np.float64)

    # ------------------------------------------------------------------ pair distances
    def pair_distances(
        self,
        sources: ArrayLike,
        targets: ArrayLike,
        weight: str = METRES,
        *,
        cap: ArrayLike | None = None,
        bound: ArrayLike | None = None,
    ) -> NDArray[np.float64]:
        """Shortest-path distance from ``sources[i]`` to ``targets[i]`` for every ``i``.

        Parameters
        ----------
        sources, targets
            Node indices of equal length.
        weight
            ``"length"`` (metres along edges), ``"hops"`` (number of edges) or
            ``"mercator"`` (Web-Mercator metres along edges).
        cap
            Optional per-pair limit: distances above it are reported as ``inf`` without
            searching further (used for "is any node within r metres" questions).
        bound
            Optional known upper bound per pair (for example the length of a walk from the
            source to the target); used as the first search limit.

        Returns
        -------
        numpy.ndarray
            Float distances; ``inf`` where the target cannot be reached (or is beyond ``cap``).
        """
        src = np.asarray(sources, dtype=np.int64).ravel()
        dst = np.asarray(targets, dtype=np.int64).ravel()
        if src.shape != dst.shape:
            raise ValueError("sources and targets must have the same length")
        out = np.full(src.shape, np.inf)
        out[src == dst] = 0.0
        memo = self._pairs[weight]
        caps = None if cap is None else np.broadcast_to(np.asarray(cap, float), src.shape)
        bounds = None if bound is None else np.broadcast_to(np.asarray(bound, float), src.shape)
        todo: list[int] = []
        for i, key in enumerate(zip(src.tolist(), dst.tolist(), strict=True)):
            if key[0] == key[1]:
                continue
            hit = memo.get(key)
            if hit is not None:
                out[i] = hit if caps is None or hit <= caps[i] else np.inf
            else:
                todo.append(i)
        if not todo:
            return out
        rows = np.asarray(todo, dtype=np.int64)
        limits = self._initial_limits(src[rows], dst[rows], weight)
        if bounds is not None:
            known = np.isfinite(bounds[rows])
            limits[known] = bounds[rows][known] * (1 + 1e-9) + 1e-6
        if caps is not None:
            limits = np.minimum(limits, caps[rows])
        while rows.size:
            found = self._bounded_search(src[rows], dst[rows], limits, weight)
            reached = np.isfinite(found)
            out[rows[reached]] = found[reached]
            for i, value in zip(rows[reached].tolist(), found[reached].tolist(), strict=True):
                memo[(int(src[i]), int(dst[i]))] = value
            final = ~reached & np.isinf(limits)
            for i in rows[final].tolist():
                memo[(int(src[i]), int(dst[i]))] = np.inf
            again = ~reached & ~final
            if caps is not None:
                again &= limits < caps[rows]
            rows, limits = rows[again], self._grow(limits[again], weight)
            if caps is not None:
                limits = np.minimum(limits, caps[rows])
        if caps is not None:
            out[out > caps] = np.inf  # a shared search limit may have found more
        return out

    def _initial_limits(
        self, src: NDArray[np.int64], dst: NDArray[np.int64], weight: str
    ) -> NDArray[np.float64]:
        straight = np.nan_to_num(self.straight_m(src, dst), nan=np.inf)
        if weight == HOPS:
            return np.ceil(2.0 * straight / self.typical_edge_m) + 8.0
        if weight == MERCATOR:  # Mercator metres: ground metres / cos(latitude), near the centre
            return (2.0 * straight + 60.0) / np.cos(np.radians(min(abs(self._centre[0]), 80.0)))
        return 2.0 * straight + 60.0

    def _grow(self, limits: NDArray[np.float64], weight: str) -> NDArray[np.float64]:
        grown = limits * 4.0
        if weight == HOPS:
            ceiling = float(self.graph.n_nodes)
        elif weight == MERCATOR:
            finite = self.mercator_lengths[np.isfinite(self.mercator_lengths)]
            ceiling = 4.0 * float(finite.sum())
        else:
            ceiling = 4.0 * float(self.graph.lengths.sum())
        return np.where(grown >= ceiling, np.inf, grown)

    def _bounded_search(
        self,
        src: NDArray[np.int64],
        dst: NDArray[np.int64],
        limits: NDArray[np.float64],
        weight: str,
    ) -> NDArray[np.float64]:
        """One round: reverse Dijkstra from each distinct target with a shared limit per chunk."""
        by_target: dict[int, list[int]] = defaultdict(list)
        for i, t in enumerate(dst.tolist()):
            by_target[t].append(i)
        target_list = list(by_target)
        target_limit = np.asarray([limits[by_target[t]].max() for t in target_list])
        order = np.argsort(target_limit, kind="stable")
        chunk = max(1, _CELLS_PER_CHUNK // max(1, self.graph.n_nodes))
        found = np.full(src.shape, np.inf)
        matrix = self._reverse(weight)
        for start in range(0, len(order), chunk):
            part = order[start : start + chunk]
            goals = [target_list[j] for j in part.tolist()]
            limit = float(target_limit[part].max())
            dist = csgraph.dijkstra(matrix, indices=goals, unweighted=weight == HOPS, limit=limit)
            for row, goal in enumerate(goals):
                pairs = by_target[goal]
                found[pairs] = dist[row, src[pairs]]
        # a shared chunk limit may exceed a pair's own limit; that result is still exact
        return found

    # ------------------------------------------------------------------ places
    def category_mask(self, category: str, radius_m: float = 50.0) -> NDArray[np.bool_]:
        """Nodes within ``radius_m`` (straight line) of a place of ``category``.

        This links places to viewpoints the way CitySeeker does (a place counts for every
        viewpoint within 50 m of it).
        """
        key = (category, float(radius_m))
        mask = self.category_masks.get(key)
        if mask is None:
            mask = np.zeros(self.graph.n_nodes, dtype=bool)
            places = self.city.places
            rows = places.with_category(category)
            if len(rows):
                where = self.to_sphere_xy(places.lat[rows], places.lng[rows])
                # scipy-stubs choose the one-point overload (list[int]) for an array of points
                near: NDArray[np.object_]
                near = self._node_tree.query_ball_point(where, radius_m)  # type: ignore[assignment]
                hits = [i for group in near for i in group]
                mask[np.asarray(hits, dtype=np.int64)] = True
            self.category_masks[key] = mask
        return mask


_CACHES: weakref.WeakKeyDictionary[Any, MetricCache] = weakref.WeakKeyDictionary()


def cache_for(city: City) -> MetricCache:
    """The :class:`MetricCache` of ``city`` (one per city object, freed with it)."""
    cache = _CACHES.get(city)
    if cache is None or cache.graph is not city.graph:
        cache = MetricCache(city)
        _CACHES[city] = cache
    return cache


def as_index_array(path: ArrayLike) -> NDArray[np.int64]:
    """A path of node indices as an ``int64`` array (raises on an empty path)."""
    arr = np.asarray(path, dtype=np.int64).ravel()
    if arr.size == 0:
        raise ValueError("an agent path needs at least the start node")
    return arr
