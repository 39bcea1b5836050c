"""Where an unseen place is likeliest to be, and which street shows most of it.

The explorer knows the street map but not where the place it seeks is. What it does know
is that the place sought is the *nearest* one of its kind: the reference path length of the
task set (``env_info.avg_reference_length``, given to every agent) says how far such a
place typically is. :class:`CoveragePlan` turns that into a prior over the street nodes:

- a node ``h`` hops from the start gets ``p(h) / n(h)``, where ``n(h)`` is the number of
  nodes ``h`` hops away (a ring of the search disk) and ``p(h)`` a distance prior that
  rises to the typical goal distance and falls after it (a gamma shape with mean
  ``avg_reference_length``): near rings have few nodes, so each of them counts for more;
- a node is *covered* once the agent has stood within ``radius_m`` of it (it then saw the
  places around it), and its weight no longer counts.

:meth:`CoveragePlan.gain` scores a street by a greedy walk of ``depth`` steps that starts
along it: the prior weight it would newly cover. The explorer adds that gain to the value
of each street, so it sweeps the likely region instead of wandering off. The node-to-node
"within radius" lists come from a KD-tree, built once per graph and radius.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from scipy.spatial import cKDTree

from flaneur.world.graph import StreetGraph

_NEAR: dict[tuple[int, float], tuple[weakref.ref[StreetGraph], list[NDArray[np.int64]]]] = {}
_MATRICES: dict[tuple[int, float], tuple[weakref.ref[StreetGraph], sparse.csr_matrix]] = {}
_LOCK = threading.Lock()


def nodes_near_nodes(graph: StreetGraph, radius_m: float) -> list[NDArray[np.int64]]:
    """For every node, the nodes within ``radius_m`` metres (itself included).

    Built once per graph and radius (KD-tree pairs) and shared by every episode. Nodes
    without coordinates see only themselves.
    """
    key = (id(graph), float(radius_m))
    with _LOCK:
        entry = _NEAR.get(key)
        if entry is not None and entry[0]() is graph:
            return entry[1]
    xy = np.asarray(graph.xy, dtype=np.float64)
    located = np.isfinite(xy).all(axis=1)
    rows = np.flatnonzero(located)
    near: list[NDArray[np.int64]] = [np.asarray([i], dtype=np.int64) for i in range(len(xy))]
    if rows.size:
        tree = cKDTree(xy[rows])
        # scipy-stubs choose the one-point overload (list[int]) for an array of points
        found_lists: NDArray[np.object_]
        found_lists = tree.query_ball_point(xy[rows], radius_m)  # type: ignore[assignment]
        for k, found in enumerate(found_lists):
            near[int(rows[k])] = rows[np.asarray(sorted(found), dtype=np.int64)]
    with _LOCK:
        _NEAR[key] = (weakref.ref(graph), near)
    return near


def near_matrix(graph: StreetGraph, radius_m: float) -> sparse.csr_matrix:
    """Sparse 0/1 matrix: ``M[i, j] = 1`` when node ``j`` is within ``radius_m`` of node ``i``."""
    key = (id(graph), float(radius_m))
    with _LOCK:
        entry = _MATRICES.get(key)
        if entry is not None and entry[0]() is graph:
            return entry[1]
    near = nodes_near_nodes(graph, radius_m)
    indptr = np.zeros(len(near) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(a) for a in near])
    indices = np.concatenate(near) if near else np.zeros(0, np.int64)
    matrix = sparse.csr_matrix((np.ones(len(indices)), indices, indptr), (len(near), len(near)))
    with _LOCK:
        _MATRICES[key] = (weakref.ref(graph), matrix)
    return matrix


def distance_prior(hops: NDArray[np.int64], mean: float, shape: float = 3.0) -> NDArray[np.float64]:
    """Unnormalised prior of the goal being ``hops`` away: a gamma density with ``mean``.

    >>> p = distance_prior(np.arange(1, 40), mean=14.0)
    >>> int(np.argmax(p)) + 1   # the mode, (shape - 1) / shape x mean
    9
    """
    scale = max(mean, 1.0) / shape
    h = np.maximum(hops.astype(np.float64), 0.5)
    return h ** (shape - 1.0) * np.exp(-h / scale)


class CoveragePlan:
    """The prior weight of every node not yet seen, for one episode.

    Parameters
    ----------
    graph
        The street graph.
    targets_of
        Out-neighbours of each node (``graph.adjacency[0]``).
    start_hops
        Hops from the start to every node within reach (others get no weight).
    mean_hops
        Typical hop distance of a goal (the task set's average reference length).
    radius_m
        A node counts as seen once the agent stood this close to it.
    """

    def __init__(
        self,
        graph: StreetGraph,
        targets_of: list[list[int]],
        start_hops: dict[int, int],
        mean_hops: float,
        radius_m: float = 40.0,
    ) -> None:
        self.targets_of = targets_of
        self.near = nodes_near_nodes(graph, radius_m)
        self.weight = np.zeros(graph.n_nodes, dtype=np.float64)
        if start_hops:
            nodes = np.fromiter(start_hops.keys(), dtype=np.int64, count=len(start_hops))
            hops = np.fromiter(start_hops.values(), dtype=np.int64, count=len(start_hops))
            ring = np.bincount(hops)
            prior = distance_prior(hops, mean_hops) / ring[hops]
            self.weight[nodes] = prior / prior.sum()
        self.covered = np.zeros(graph.n_nodes, dtype=bool)

    def visit(self, node: int) -> None:
        """The agent stands at ``node``: everything near it is seen."""
        self.covered[self.near[node]] = True

    def remaining(self) -> float:
        """Prior weight not yet seen (1 at the start, 0 when everything in reach is seen)."""
        return float(self.weight[~self.covered].sum())

    def stop_values(self, matrix: sparse.csr_matrix, miss: float) -> NDArray[np.float64]:
        """For every node, the prior weight within reach of a stop there (``matrix``, see
        :func:`near_matrix`): unseen nodes count fully, seen ones ``miss`` times (the
        perception may have missed the place there)."""
        effective = np.where(self.covered, miss * self.weight, self.weight)
        return np.asarray(matrix @ effective).ravel()

    def gain(self, node: int, first: int, depth: int) -> float:
        """Weight newly seen by a greedy walk of ``depth`` steps from ``node`` via ``first``.

        After ``first``, each step takes the neighbour that shows the most new weight
        (never the node it came from unless it is a dead end). Weight seen along the way
        counts once.
        """
        seen: set[int] = set()
        total = self._take(first, seen)
        prev, here = node, first
        for _ in range(depth - 1):
            options = [t for t in self.targets_of[here] if t != prev] or self.targets_of[here]
            if not options:
                break
            best, best_gain = options[0], -1.0
            for t in options:
                g = self._peek(t, seen)
                if g > best_gain:
                    best, best_gain = t, g
            total += self._take(best, seen)
            prev, here = here, best
        return total

    def _new(self, node: int, seen: set[int]) -> NDArray[np.int64]:
        near = self.near[node]
        near = near[~self.covered[near]]
        if seen and near.size:
            near = near[[int(v) not in seen for v in near.tolist()]]
        return near

    def _peek(self, node: int, seen: set[int]) -> float:
        return float(self.weight[self._new(node, seen)].sum())

    def _take(self, node: int, seen: set[int]) -> float:
        new = self._new(node, seen)
        seen.update(new.tolist())
        return float(self.weight[new].sum())


__all__ = ["CoveragePlan", "distance_prior", "near_matrix", "nodes_near_nodes"]
