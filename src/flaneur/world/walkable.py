"""Walkable headings: the directions each panorama offers as a way to go (CitySeeker).

CitySeeker's data lists, for every panorama, its ``walkable_headings``: compass headings
(degrees, 0 = north, clockwise) in the data's own order. They are not the street graph's
edges: a panorama may list more headings than it has out-edges, fewer, or headings far from
any edge. :class:`WalkableHeadings` keeps them in CSR form, one slice per node of the city's
graph (an empty slice where the source gives none).

Moving along a heading follows CitySeeker's released code (``utils/client.py``,
``get_closest_viewpoint``): the move takes the out-edge whose azimuth is closest to the
heading by the plain difference ``|azimuth - heading|``, without wrapping at north (a heading
of 359 degrees is 358 degrees from an edge at 1 degree) and without a tolerance: every
heading leads along some edge as long as the node has one, two headings may lead along the
same edge, and an edge that no heading is closest to cannot be taken. Ties go to the first
edge in the graph's order (the released order is Neo4j's, unspecified; the Shanghai data has
no ties).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from flaneur.world.graph import StreetGraph


@dataclass(frozen=True, eq=False)
class WalkableHeadings:
    """The walkable headings of every node, in CSR form.

    Parameters
    ----------
    indptr
        ``n + 1`` offsets: the headings of node ``i`` are ``headings[indptr[i]:indptr[i + 1]]``.
    headings
        Every node's headings in degrees, in the source's order.
    """

    indptr: NDArray[np.int64]
    headings: NDArray[np.float64]

    def __post_init__(self) -> None:
        indptr = np.asarray(self.indptr, dtype=np.int64)
        headings = np.asarray(self.headings, dtype=np.float64)
        object.__setattr__(self, "indptr", indptr)
        object.__setattr__(self, "headings", headings)
        if indptr.ndim != 1 or indptr.size == 0 or indptr[0] != 0:
            raise ValueError("walkable headings: indptr must start at 0")
        if indptr[-1] != headings.size or np.any(np.diff(indptr) < 0):
            raise ValueError("walkable headings: indptr must rise to the number of headings")
        if not np.all(np.isfinite(headings)):
            raise ValueError("walkable headings must be finite numbers")

    @classmethod
    def from_lists(cls, per_node: Sequence[Sequence[float]]) -> WalkableHeadings:
        """From one list of headings per node (in node order)."""
        indptr = np.zeros(len(per_node) + 1, dtype=np.int64)
        np.cumsum([len(h) for h in per_node], out=indptr[1:])
        flat = [float(h) for heads in per_node for h in heads]
        return cls(indptr, np.asarray(flat, dtype=np.float64))

    @property
    def n_nodes(self) -> int:
        """Number of nodes covered (the graph's)."""
        return len(self.indptr) - 1

    def of(self, node: int) -> NDArray[np.float64]:
        """The walkable headings of ``node`` in the source's order (empty when none)."""
        return self.headings[self.indptr[node] : self.indptr[node + 1]]

    def edges(self, graph: StreetGraph, node: int) -> list[int]:
        """For each walkable heading of ``node``, its out-edge (the position among the node's
        out-edges, so the ``headings`` scheme's slot minus one); empty when the node has no
        heading or no out-edge (see the module docstring for the rule)."""
        heads = self.of(node)
        out = graph.out_headings(node)
        if heads.size == 0 or out.size == 0:
            return []
        return np.abs(out[None, :] - heads[:, None]).argmin(axis=1).tolist()

    def to_arrays(self) -> dict[str, NDArray]:
        """The arrays a city pack stores (``walkable.npz``)."""
        return {"indptr": self.indptr, "headings": self.headings}

    @classmethod
    def from_arrays(cls, arrays: dict[str, ArrayLike]) -> WalkableHeadings:
        """Rebuild from :meth:`to_arrays` output."""
        return cls(np.asarray(arrays["indptr"]), np.asarray(arrays["headings"]))

    def compare(self, graph: StreetGraph) -> dict[str, int]:
        """How the headings differ from ``graph``'s out-edges, in nodes.

        Returns
        -------
        dict
            ``nodes`` (with at least one heading), ``count_differs`` (number of headings other
            than the number of out-edges), ``shared_edge`` (two headings lead along one edge),
            ``unreachable_edge`` (an out-edge no heading leads along).
        """
        counts = {"nodes": 0, "count_differs": 0, "shared_edge": 0, "unreachable_edge": 0}
        for node in np.flatnonzero(np.diff(self.indptr) > 0).tolist():
            edges = self.edges(graph, node)
            counts["nodes"] += 1
            counts["count_differs"] += len(self.of(node)) != int(graph.degree[node])
            counts["shared_edge"] += len(set(edges)) < len(edges)
            counts["unreachable_edge"] += len(set(edges)) < int(graph.degree[node])
        return counts


__all__ = ["WalkableHeadings"]
