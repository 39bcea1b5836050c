"""The street graph: viewpoints and the directed links between them, held in arrays.

A :class:`StreetGraph` stores ``n`` viewpoint nodes (string id, lat, lng, optional panorama
yaw) and ``m`` directed edges in compressed sparse row (CSR) form: the out-edges of node ``i``
are ``targets[indptr[i]:indptr[i + 1]]`` with their ``headings`` (degrees, 0 = north,
clockwise) and ``lengths`` (metres), sorted by heading. Nothing is stored as one Python object
per node, so a 30k-node city loads in milliseconds and routing runs in scipy's C code.

Node *indices* (0..n-1) are used inside flaneur; string *ids* are used at the boundaries
(files, episodes, users). :meth:`StreetGraph.index` and :attr:`StreetGraph.ids` convert.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import shapely
from numpy.typing import ArrayLike, NDArray
from scipy import sparse
from scipy.sparse import csgraph
from scipy.spatial import cKDTree

from flaneur.errors import ArgumentError, DataError, UnknownNodeError
from flaneur.geo import LocalProjection, bearing, haversine

if TYPE_CHECKING:
    import networkx as nx
    import shapely

UNREACHABLE = -1
"""Value of an unreachable node in integer hop-distance arrays."""


class StreetGraph:
    """Viewpoints of a city and the directed street links between them.

    Parameters
    ----------
    ids
        Node ids (strings), unique.
    lat, lng
        Node coordinates in degrees.
    indptr, targets, headings, lengths
        CSR out-edges; see the module docstring. Out-edges of each node must be sorted by
        heading (use :meth:`from_edges` to build a graph from an unsorted edge list).
    pano_yaw
        Optional panorama yaw per node in degrees (NaN where unknown).
    check
        Validate shapes, ranges and ordering (cheap; skipped when loading trusted packs).
    """

    def __init__(
        self,
        ids: ArrayLike,
        lat: ArrayLike,
        lng: ArrayLike,
        indptr: ArrayLike,
        targets: ArrayLike,
        headings: ArrayLike,
        lengths: ArrayLike,
        *,
        pano_yaw: ArrayLike | None = None,
        check: bool = True,
    ) -> None:
        self.ids: NDArray[np.str_] = np.asarray(ids, dtype=str)
        self.lat: NDArray[np.float64] = np.asarray(lat, dtype=np.float64)
        self.lng: NDArray[np.float64] = np.asarray(lng, dtype=np.float64)
        self.indptr: NDArray[np.int64] = np.asarray(indptr, dtype=np.int64)
        self.targets: NDArray[np.int32] = np.asarray(targets, dtype=np.int32)
        self.headings: NDArray[np.float64] = np.asarray(headings, dtype=np.float64)
        self.lengths: NDArray[np.float64] = np.asarray(lengths, dtype=np.float64)
        n = len(self.ids)
        self.pano_yaw: NDArray[np.float64] = (
            np.full(n, np.nan) if pano_yaw is None else np.asarray(pano_yaw, dtype=np.float64)
        )
        if check:
            self._check()

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_edges(
        cls,
        ids: Sequence[str] | ArrayLike,
        lat: ArrayLike,
        lng: ArrayLike,
        sources: ArrayLike,
        targets: ArrayLike,
        *,
        headings: ArrayLike | None = None,
        lengths: ArrayLike | None = None,
        pano_yaw: ArrayLike | None = None,
    ) -> StreetGraph:
        """Build a graph from an edge list of node indices.

        Parameters
        ----------
        ids, lat, lng
            Node ids and coordinates.
        sources, targets
            Integer node indices of each directed edge.
        headings, lengths
            Edge heading (degrees) and length (metres); computed from the node coordinates
            (initial bearing, haversine) where not given.
        pano_yaw
            Optional panorama yaw per node.

        Returns
        -------
        StreetGraph
            Out-edges sorted by heading (ties by target index).
        """
        lat = np.asarray(lat, dtype=np.float64)
        lng = np.asarray(lng, dtype=np.float64)
        src = np.asarray(sources, dtype=np.int64)
        dst = np.asarray(targets, dtype=np.int64)
        n = len(lat)
        if src.shape != dst.shape:
            raise ValueError("sources and targets must have the same length")
        if src.size and (src.min() < 0 or dst.min() < 0 or src.max() >= n or dst.max() >= n):
            raise ValueError("edge endpoints must be node indices in [0, n)")
        if headings is None:
            head = bearing(lat[src], lng[src], lat[dst], lng[dst])
        else:
            head = np.mod(np.asarray(headings, dtype=np.float64), 360.0)
        if lengths is None:
            length = haversine(lat[src], lng[src], lat[dst], lng[dst])
        else:
            length = np.asarray(lengths, dtype=np.float64)
        order = np.lexsort((dst, head, src))
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
        return cls(ids, lat, lng, indptr, dst[order], head[order], length[order], pano_yaw=pano_yaw)

    def _check(self) -> None:
        n = len(self.ids)
        m = len(self.targets)
        if self.lat.shape != (n,) or self.lng.shape != (n,) or self.pano_yaw.shape != (n,):
            raise ValueError("ids, lat, lng and pano_yaw must have one entry per node")
        if self.indptr.shape != (n + 1,) or self.indptr[0] != 0 or self.indptr[-1] != m:
            raise ValueError("indptr must have n + 1 entries from 0 to the number of edges")
        if self.headings.shape != (m,) or self.lengths.shape != (m,):
            raise ValueError("headings and lengths must have one entry per edge")
        if m and (self.targets.min() < 0 or self.targets.max() >= n):
            raise ValueError("edge targets must be node indices in [0, n)")
        if len(np.unique(self.ids)) != n:
            _, first, counts = np.unique(self.ids, return_index=True, return_counts=True)
            dup = str(self.ids[first[counts > 1][0]])
            raise DataError(f"node id {dup!r} appears more than once; node ids must be unique")
        if m:
            same_node = np.repeat(np.arange(n), np.diff(self.indptr))
            step = np.diff(self.headings)
            if np.any((step < 0) & (same_node[1:] == same_node[:-1])):
                raise ValueError("out-edges of each node must be sorted by heading")

    # ------------------------------------------------------------------ basic access
    @property
    def n_nodes(self) -> int:
        """Number of viewpoint nodes."""
        return len(self.ids)

    @property
    def n_edges(self) -> int:
        """Number of directed edges."""
        return len(self.targets)

    def __len__(self) -> int:
        return self.n_nodes

    def __repr__(self) -> str:
        return f"StreetGraph(nodes={self.n_nodes}, edges={self.n_edges})"

    @cached_property
    def _id_to_index(self) -> dict[str, int]:
        return {node_id: i for i, node_id in enumerate(self.ids.tolist())}

    def index(self, node_id: str) -> int:
        """Index of the node with id ``node_id``; raises :class:`UnknownNodeError`."""
        try:
            return self._id_to_index[node_id]
        except KeyError:
            raise UnknownNodeError(node_id) from None

    def indices(self, node_ids: Iterable[str]) -> NDArray[np.int64]:
        """Indices of many node ids; raises :class:`UnknownNodeError` naming the first unknown."""
        lookup = self._id_to_index
        out = []
        for node_id in node_ids:
            try:
                out.append(lookup[node_id])
            except KeyError:
                raise UnknownNodeError(node_id) from None
        return np.asarray(out, dtype=np.int64)

    def check_indices(self, nodes: ArrayLike, name: str, *, where: str) -> NDArray[np.int64]:
        """``nodes`` (an index or a sequence of them) as a 1-D ``int64`` array.

        Raises
        ------
        ArgumentError
            Naming ``name`` (in ``where``) if a value is not a whole number in
            ``[0, n_nodes)`` (a node id string, a fraction, a negative or a huge index).
        """
        try:
            arr = np.atleast_1d(np.asarray(nodes))
        except (TypeError, ValueError):
            arr = np.asarray([None], dtype=object)
        whole = arr.dtype.kind in "iu" or (
            arr.dtype.kind == "f" and bool(np.all(np.isfinite(arr))) and not np.any(arr % 1)
        )
        if arr.size and not whole:
            raise ArgumentError(
                f"{where}: {name} must be node indices (whole numbers; use "
                f"graph.index(id) for an id), got {_shown(nodes)}"
            )
        if arr.ndim != 1 or (arr.size and (arr.min() < 0 or arr.max() >= self.n_nodes)):
            raise ArgumentError(
                f"{where}: {name} must be node indices in [0, {self.n_nodes}), got {_shown(nodes)}"
            )
        return arr.astype(np.int64)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._id_to_index

    @cached_property
    def degree(self) -> NDArray[np.int64]:
        """Out-degree of every node (number of streets leaving it)."""
        return np.diff(self.indptr)

    @cached_property
    def in_degree(self) -> NDArray[np.int64]:
        """In-degree of every node."""
        return np.bincount(self.targets, minlength=self.n_nodes)

    def degree_histogram(self) -> dict[int, int]:
        """``{out-degree: number of nodes}``, sorted by degree."""
        values, counts = np.unique(self.degree, return_counts=True)
        return {int(v): int(c) for v, c in zip(values, counts, strict=True)}

    def out_slice(self, node: int) -> slice:
        """Slice of the edge arrays holding the out-edges of ``node``."""
        return slice(int(self.indptr[node]), int(self.indptr[node + 1]))

    def neighbors(self, node: int) -> NDArray[np.int32]:
        """Out-neighbours of ``node``, ordered by heading."""
        return self.targets[self.indptr[node] : self.indptr[node + 1]]

    def out_headings(self, node: int) -> NDArray[np.float64]:
        """Headings of the out-edges of ``node``, ascending."""
        return self.headings[self.indptr[node] : self.indptr[node + 1]]

    def edge_index(self, source: int, target: int) -> int:
        """Position of the edge ``source -> target`` in the edge arrays, or -1 if absent."""
        start, stop = int(self.indptr[source]), int(self.indptr[source + 1])
        hits = np.flatnonzero(self.targets[start:stop] == target)
        return start + int(hits[0]) if hits.size else -1

    def has_edge(self, source: int, target: int) -> bool:
        """Whether the directed edge ``source -> target`` exists."""
        return self.edge_index(source, target) >= 0

    @cached_property
    def adjacency(self) -> tuple[list[list[int]], list[list[float]]]:
        """Out-neighbours and their headings as plain Python lists (for hot loops).

        Returns
        -------
        tuple of list
            ``(targets_of, headings_of)`` where ``targets_of[i]`` lists the out-neighbours
            of node ``i`` ordered by heading and ``headings_of[i]`` their headings.
        """
        bounds = self.indptr.tolist()
        targets = self.targets.tolist()
        headings = self.headings.tolist()
        targets_of = [targets[bounds[i] : bounds[i + 1]] for i in range(self.n_nodes)]
        headings_of = [headings[bounds[i] : bounds[i + 1]] for i in range(self.n_nodes)]
        return targets_of, headings_of

    @cached_property
    def edge_sources(self) -> NDArray[np.int64]:
        """Source node index of every edge (the CSR row of each edge)."""
        return np.repeat(np.arange(self.n_nodes, dtype=np.int64), self.degree)

    def path_is_walk(self, path: Iterable[int]) -> bool:
        """Whether consecutive nodes of ``path`` are joined by edges (repeats allowed)."""
        return all(a == b or self.has_edge(a, b) for a, b in itertools.pairwise(path))

    def path_length_m(self, path: Sequence[int]) -> float:
        """Sum of great-circle distances between consecutive nodes of ``path`` in metres."""
        p = np.asarray(path, dtype=np.int64)
        if p.size < 2:
            return 0.0
        return float(
            haversine(self.lat[p[:-1]], self.lng[p[:-1]], self.lat[p[1:]], self.lng[p[1:]]).sum()
        )

    # ------------------------------------------------------------------ geometry
    @property
    def bbox(self) -> tuple[float, float, float, float]:
        """``(west, south, east, north)`` in degrees."""
        located = self.located
        if not located.any():
            return (np.nan, np.nan, np.nan, np.nan)
        lat, lng = self.lat[located], self.lng[located]
        return (float(lng.min()), float(lat.min()), float(lng.max()), float(lat.max()))

    @cached_property
    def located(self) -> NDArray[np.bool_]:
        """Mask of nodes with known coordinates (some sources have nodes without)."""
        return ~(np.isnan(self.lat) | np.isnan(self.lng))

    @cached_property
    def projection(self) -> LocalProjection:
        """The local metric projection centred on this graph."""
        located = self.located
        if not located.any():
            return LocalProjection(0.0, 0.0)
        return LocalProjection.around(self.lat[located], self.lng[located])

    @cached_property
    def xy(self) -> NDArray[np.float64]:
        """Node positions in metres in :attr:`projection`, shape ``(n, 2)``."""
        x, y = self.projection.forward(self.lat, self.lng)
        return np.column_stack([x, y])

    @cached_property
    def _kdtree(self) -> tuple[cKDTree, NDArray[np.int64]]:
        rows = np.flatnonzero(self.located)
        return cKDTree(self.xy[rows]), rows

    def nearest_node(self, lat: ArrayLike, lng: ArrayLike) -> NDArray[np.int64] | int:
        """Index of the located node nearest to each coordinate (scalar in, scalar out).

        Raises
        ------
        ArgumentError
            If ``lat``/``lng`` are not finite degrees in range, differ in shape, or the
            graph has no located node.
        """
        lat_arr, lng_arr = _coordinates(lat, lng, where="nearest_node")
        tree, rows = self._kdtree
        if rows.size == 0:
            raise ArgumentError("nearest_node: the graph has no node with coordinates")
        x, y = self.projection.forward(lat_arr, lng_arr)
        _, idx = tree.query(np.column_stack([np.ravel(x), np.ravel(y)]))
        if np.ndim(lat) == 0:
            # scipy-stubs type query()'s result as scalar-or-array; rows in give an array
            return int(rows[idx[0]])  # type: ignore[index]
        return rows[idx].astype(np.int64)

    def nodes_within(self, node: int, radius_m: float) -> NDArray[np.int64]:
        """Indices of nodes within ``radius_m`` metres (straight line) of ``node``."""
        tree, rows = self._kdtree
        if not self.located[node]:
            return np.zeros(0, dtype=np.int64)
        return np.sort(rows[tree.query_ball_point(self.xy[node], radius_m)]).astype(np.int64)

    def nodes_within_xy(self, xy: ArrayLike, radius_m: float) -> NDArray[np.int64]:
        """Indices of located nodes within ``radius_m`` of a metric point, ascending."""
        tree, rows = self._kdtree
        hits = tree.query_ball_point(np.asarray(xy, dtype=np.float64), radius_m)
        return np.sort(rows[np.asarray(hits, dtype=np.int64)]).astype(np.int64)

    # ------------------------------------------------------------------ routing
    def adjacency_matrix(self, weight: str = "hops") -> sparse.csr_matrix:
        """The graph as a scipy CSR matrix weighted by ``"hops"`` (1) or ``"length"`` (m).

        Parallel edges keep the shortest weight.
        """
        if weight == "hops":
            data = np.ones(self.n_edges)
        elif weight == "length":
            # csgraph treats explicit zeros as missing edges; keep zero-length links usable
            data = np.maximum(self.lengths, 1e-6)
        else:
            raise ValueError(f"weight must be 'hops' or 'length', not {weight!r}")
        return sparse.csr_matrix(
            (data, self.targets, self.indptr), shape=(self.n_nodes, self.n_nodes)
        )

    @cached_property
    def _reverse_hops(self) -> sparse.csr_matrix:
        return self.adjacency_matrix("hops").T.tocsr()

    @cached_property
    def _reverse_length(self) -> sparse.csr_matrix:
        return self.adjacency_matrix("length").T.tocsr()

    def hop_distances_to(self, goals: ArrayLike) -> NDArray[np.int32]:
        """Hop distances from every node to each goal, in one call.

        Runs one breadth-first search per distinct goal on the reversed graph (scipy's C
        BFS) and turns each BFS tree into depths by vectorised pointer jumping.

        Parameters
        ----------
        goals
            Goal node indices (length ``k``), or a single index.

        Returns
        -------
        numpy.ndarray
            ``int32`` array of shape ``(k, n)`` (or ``(n,)`` for a single goal); entry
            ``[j, v]`` is the number of edges on a shortest path from ``v`` to ``goals[j]``,
            :data:`UNREACHABLE` (-1) where there is none.

        Raises
        ------
        ArgumentError
            If a goal is not a whole-number node index in ``[0, n_nodes)``.
        """
        goals_arr = self.check_indices(goals, "goals", where="hop_distances_to")
        unique, inverse = np.unique(goals_arr, return_inverse=True)
        out = np.empty((len(unique), self.n_nodes), dtype=np.int32)
        for row, goal in enumerate(unique.tolist()):
            out[row] = _bfs_depths(self._reverse_hops, goal)
        out = out[inverse]
        return out[0] if np.ndim(goals) == 0 else out

    def hop_distances_to_sets(self, goal_sets: Sequence[ArrayLike]) -> NDArray[np.int32]:
        """Hop distances from every node to the nearest node of each goal set.

        One multi-source breadth-first search per set (a virtual node linked to every
        member), instead of one search per member.

        Parameters
        ----------
        goal_sets
            ``k`` collections of node indices.

        Returns
        -------
        numpy.ndarray
            ``int32`` array ``(k, n)``; :data:`UNREACHABLE` where no member can be reached
            (and for empty sets).
        """
        reverse = self._reverse_hops
        n = self.n_nodes
        out = np.full((len(goal_sets), n), UNREACHABLE, dtype=np.int32)
        for row, members in enumerate(goal_sets):
            members = np.unique(np.asarray(members, dtype=np.int32))
            if members.size == 0:
                continue
            indices = np.concatenate([reverse.indices, members])
            indptr = np.append(reverse.indptr, reverse.indptr[-1] + members.size)
            data = np.ones(indices.size)
            augmented = sparse.csr_matrix((data, indices, indptr), shape=(n + 1, n + 1))
            depth = _bfs_depths(augmented, n)[:n]
            out[row] = np.where(depth > 0, depth - 1, UNREACHABLE)
        return out

    def metre_distances_to(self, goals: ArrayLike) -> NDArray[np.float64]:
        """Shortest walking distance in metres from every node to each goal (inf if none).

        Same shapes as :meth:`hop_distances_to`.
        """
        goals_arr = self.check_indices(goals, "goals", where="hop_distances_to")
        unique, inverse = np.unique(goals_arr, return_inverse=True)
        dist = csgraph.dijkstra(self._reverse_length, indices=unique)[inverse]
        return dist[0] if np.ndim(goals) == 0 else dist

    def shortest_path(self, source: int, target: int, *, weight: str = "hops") -> list[int]:
        """Node indices of a shortest path from ``source`` to ``target`` (both included).

        Raises
        ------
        ValueError
            If ``target`` cannot be reached from ``source``.
        """
        matrix = self.adjacency_matrix(weight) if weight != "hops" else self._hops_matrix
        # scipy-stubs: dijkstra() takes a single int index (documented), not only arrays
        _, pred = csgraph.dijkstra(  # type: ignore[call-overload]
            matrix, indices=source, return_predecessors=True, unweighted=weight == "hops"
        )
        if source != target and pred[target] < 0:
            raise ValueError(
                f"node {self.ids[target]!r} cannot be reached from node {self.ids[source]!r}"
            )
        path = [int(target)]
        while path[-1] != source:
            path.append(int(pred[path[-1]]))
        return path[::-1]

    @cached_property
    def _hops_matrix(self) -> sparse.csr_matrix:
        return self.adjacency_matrix("hops")

    def strong_components(self) -> NDArray[np.int32]:
        """Label of the strongly connected component of every node."""
        _, labels = csgraph.connected_components(self._hops_matrix, connection="strong")
        return labels

    def largest_component_fraction(self) -> float:
        """Share of nodes in the largest strongly connected component."""
        if self.n_nodes == 0:
            return 0.0
        return float(np.bincount(self.strong_components()).max() / self.n_nodes)

    # ------------------------------------------------------------------ subgraphs and export
    def within_polygon(self, polygon: shapely.Geometry) -> NDArray[np.bool_]:
        """Boolean mask of nodes inside ``polygon`` (shapely geometry in lng/lat)."""

        return shapely.contains_xy(polygon, self.lng, self.lat)

    def subgraph(
        self,
        *,
        bbox: tuple[float, float, float, float] | None = None,
        polygon: shapely.Geometry | None = None,
        mask: ArrayLike | None = None,
    ) -> StreetGraph:
        """The induced subgraph on nodes inside a box, a polygon, and/or a boolean mask.

        Parameters
        ----------
        bbox
            ``(west, south, east, north)`` in degrees (inclusive).
        polygon
            A shapely polygon in ``(lng, lat)`` coordinates.
        mask
            Boolean array selecting nodes.
        """
        keep = np.ones(self.n_nodes, dtype=bool) if mask is None else np.asarray(mask, bool).copy()
        if bbox is not None:
            west, south, east, north = bbox
            keep &= (
                (self.lng >= west) & (self.lng <= east) & (self.lat >= south) & (self.lat <= north)
            )
        if polygon is not None:
            keep &= self.within_polygon(polygon)
        new_index = np.full(self.n_nodes, -1, dtype=np.int64)
        new_index[keep] = np.arange(int(keep.sum()))
        src = self.edge_sources
        edge_keep = keep[src] & keep[self.targets]
        return StreetGraph.from_edges(
            self.ids[keep],
            self.lat[keep],
            self.lng[keep],
            new_index[src[edge_keep]],
            new_index[self.targets[edge_keep]],
            headings=self.headings[edge_keep],
            lengths=self.lengths[edge_keep],
            pano_yaw=self.pano_yaw[keep],
        )

    def to_networkx(self) -> nx.MultiDiGraph[str]:
        """Export as an osmnx-compatible :class:`networkx.MultiDiGraph`.

        Nodes carry ``x`` (lng), ``y`` (lat) and ``pano_yaw`` when known; edges carry
        ``length`` (m) and ``bearing`` (degrees); the graph carries ``crs = "epsg:4326"``.
        """
        # lazy: networkx takes 0.2 s to import
        import networkx as nx

        graph: nx.MultiDiGraph[str] = nx.MultiDiGraph(crs="epsg:4326")
        ids = self.ids.tolist()
        for node_id, y, x, yaw in zip(
            ids, self.lat.tolist(), self.lng.tolist(), self.pano_yaw.tolist(), strict=True
        ):
            attrs = {"x": x, "y": y}
            if yaw == yaw:  # not NaN
                attrs["pano_yaw"] = yaw
            graph.add_node(node_id, **attrs)
        for s, t, h, length in zip(
            self.edge_sources.tolist(),
            self.targets.tolist(),
            self.headings.tolist(),
            self.lengths.tolist(),
            strict=True,
        ):
            graph.add_edge(ids[s], ids[t], length=length, bearing=h)
        return graph

    # ------------------------------------------------------------------ persistence
    def to_arrays(self) -> dict[str, NDArray]:
        """The arrays that define this graph (what a city pack stores)."""
        return {
            "ids": self.ids,
            "lat": self.lat,
            "lng": self.lng,
            "pano_yaw": self.pano_yaw,
            "indptr": self.indptr,
            "targets": self.targets,
            "headings": self.headings,
            "lengths": self.lengths,
        }

    @classmethod
    def from_arrays(cls, arrays: dict[str, NDArray], *, check: bool = False) -> StreetGraph:
        """Rebuild a graph from :meth:`to_arrays` output."""
        return cls(
            arrays["ids"],
            arrays["lat"],
            arrays["lng"],
            arrays["indptr"],
            arrays["targets"],
            arrays["headings"],
            arrays["lengths"],
            pano_yaw=arrays["pano_yaw"],
            check=check,
        )


def _bfs_depths(matrix: sparse.csr_matrix, root: int) -> NDArray[np.int32]:
    """Depth of every node in the BFS tree of ``matrix`` from ``root`` (-1 if not reached)."""
    n = matrix.shape[0]
    order, pred = csgraph.breadth_first_order(matrix, root, directed=True, return_predecessors=True)
    depth = np.full(n, UNREACHABLE, dtype=np.int32)
    # pointer jumping on the reached nodes, re-indexed by BFS order (root first)
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(len(order))
    parent = position[np.where(pred[order] >= 0, pred[order], root)]
    level = np.ones(len(order), dtype=np.int32)
    level[0] = 0
    while parent.any():
        level += level[parent]
        parent = parent[parent]
    depth[order] = level
    return depth


def _shown(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _coordinates(lat: ArrayLike, lng: ArrayLike, *, where: str) -> tuple[NDArray, NDArray]:
    """``lat``, ``lng`` as float arrays of one shape, finite and in range, or
    :class:`ArgumentError` naming the bad one."""
    arrays = []
    for name, value, bound in (("lat", lat, 90.0), ("lng", lng, 180.0)):
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ArgumentError(f"{where}: {name} must be degrees, got {_shown(value)}") from None
        if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(np.abs(arr) > bound):
            raise ArgumentError(
                f"{where}: {name} must be finite degrees in [-{bound:g}, {bound:g}], "
                f"got {_shown(value)}"
            )
        arrays.append(arr)
    if arrays[0].shape != arrays[1].shape:
        raise ArgumentError(
            f"{where}: lat and lng differ in shape ({arrays[0].shape} and {arrays[1].shape})"
        )
    return arrays[0], arrays[1]
