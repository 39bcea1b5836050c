"""Scene geometry of a city, built once: streets, wall segments and their spatial index.

Walls come from the city's building footprints (extruded to their height) where it has
them.  Along stretches of street with no footprint nearby, facades are synthesised: set
back from both sides of each street edge, cut short at intersections, and closed by side
walls so that they read as a row of buildings.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import shapely
from numpy.typing import NDArray
from scipy.spatial import cKDTree
from shapely.geometry.polygon import orient

from flaneur.world.city import City

FACADE_COLOURS = np.array(
    [
        (222, 196, 150),  # ochre
        (236, 226, 200),  # cream
        (226, 208, 128),  # Helsinki yellow
        (190, 120, 96),  # terracotta
        (176, 176, 170),  # concrete
        (168, 190, 204),  # pale blue
        (214, 170, 160),  # dusty pink
        (150, 160, 140),  # grey green
        (205, 186, 170),  # sandstone
        (120, 110, 105),  # dark brick
    ],
    dtype=np.float64,
)


@dataclass
class SceneParams:
    """Dimensions of the synthetic street scene, in metres.

    Attributes
    ----------
    road_width
        Carriageway width.
    sidewalk
        Sidewalk width on each side of the carriageway.
    setback
        Distance from the street centre line to a synthesised facade.
    facade_depth
        Depth of a synthesised building (its side walls).
    piece
        Maximum wall piece length (long walls are cut for depth sorting and indexing).
    default_height
        ``(low, high)`` height range of buildings with no known height.
    """

    road_width: float = 8.0
    sidewalk: float = 3.5
    setback: float = 9.0
    facade_depth: float = 12.0
    piece: float = 10.0
    default_height: tuple[float, float] = (12.0, 21.0)


def stable_hash(text: str) -> int:
    """A deterministic non-negative hash (``hash()`` of str is salted per process)."""
    return zlib.crc32(text.encode())


@dataclass
class Walls:
    """Vertical wall quads: segment ``a -> b`` from ``z = 0`` to ``top``.

    ``normal`` is the unit outward normal (walls are seen from that side only);
    ``line`` groups pieces cut from one straight facade (signs are laid out per line);
    ``kind`` is 0 for real footprints, 1 for synthesised facades, 2 for their side walls.
    """

    a: NDArray[np.float64]
    b: NDArray[np.float64]
    top: NDArray[np.float64]
    normal: NDArray[np.float64]
    colour: NDArray[np.float64]
    line: NDArray[np.int64]
    kind: NDArray[np.int8]

    def __len__(self) -> int:
        return len(self.a)

    @property
    def mid(self) -> NDArray[np.float64]:
        """Midpoints ``(m, 2)``."""
        return (self.a + self.b) / 2.0


class _WallBuilder:
    def __init__(self, piece: float) -> None:
        self.piece = piece
        self.rows: list[tuple] = []
        self.n_lines = 0

    def add(self, a, b, top: float, colour, kind: int) -> None:
        """Add the straight wall ``a -> b`` (outward normal on its right), cut into pieces."""
        a, b = np.asarray(a, float), np.asarray(b, float)
        d = b - a
        length = float(np.hypot(*d))
        if length < 0.3:
            return
        normal = np.array([d[1], -d[0]]) / length
        n = max(1, int(np.ceil(length / self.piece)))
        line = self.n_lines
        self.n_lines += 1
        for i in range(n):
            p0, p1 = a + d * (i / n), a + d * ((i + 1) / n)
            self.rows.append((p0, p1, top, normal, colour, line, kind))

    def build(self) -> Walls:
        if not self.rows:
            z2, z1 = np.zeros((0, 2)), np.zeros(0)
            return Walls(z2, z2, z1, z2, np.zeros((0, 3)), z1.astype(np.int64), z1.astype(np.int8))
        a, b, top, normal, colour, line, kind = zip(*self.rows, strict=True)
        return Walls(
            np.array(a),
            np.array(b),
            np.array(top, dtype=float),
            np.array(normal),
            np.array(colour, dtype=float),
            np.array(line, dtype=np.int64),
            np.array(kind, dtype=np.int8),
        )


def _default_height(seed: int, params: SceneParams) -> float:
    low, high = params.default_height
    return low + (seed % 1000) / 999.0 * (high - low)


def street_segments(city: City) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray]:
    """Undirected street edges as ``(a_xy, b_xy, (u, v) node pairs)``, each pair once
    (edges touching a node without coordinates are left out)."""
    g = city.graph
    u, v = g.edge_sources, g.targets.astype(np.int64)
    pairs = np.unique(np.sort(np.column_stack([u, v]), axis=1), axis=0)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    pairs = pairs[g.located[pairs[:, 0]] & g.located[pairs[:, 1]]]  # skip nodes without position
    return g.xy[pairs[:, 0]], g.xy[pairs[:, 1]], pairs


def _add_footprints(builder: _WallBuilder, city: City, params: SceneParams) -> list:
    polygons = []
    heights = city.building_heights
    for i, geom in enumerate(city.buildings_xy):
        if geom is None or geom.is_empty:
            continue
        parts = getattr(geom, "geoms", [geom])
        seed = stable_hash(f"building-{i}")
        height = float(heights[i]) if i < len(heights) and np.isfinite(heights[i]) else None
        top = height if height and height > 2.0 else _default_height(seed, params)
        colour = FACADE_COLOURS[seed % len(FACADE_COLOURS)]
        for part in parts:
            if part.geom_type != "Polygon" or part.area < 4.0:
                continue
            poly = orient(part.simplify(0.3), 1.0)
            polygons.append(poly)
            for ring in (poly.exterior, *poly.interiors):
                coords = np.asarray(ring.coords)
                for j in range(len(coords) - 1):
                    builder.add(coords[j], coords[j + 1], top, colour, kind=0)
    return polygons


def _add_synthetic_facades(
    builder: _WallBuilder, city: City, params: SceneParams, footprints: list
) -> None:
    a_xy, b_xy, pairs = street_segments(city)
    if len(pairs) == 0:
        return
    degree = np.bincount(pairs.ravel(), minlength=city.graph.n_nodes)
    # types-shapely: an array of unknown shape may give one LineString; (n, 2, 2) gives n
    streets: NDArray[np.object_]
    streets = shapely.linestrings(np.stack([a_xy, b_xy], axis=1))  # type: ignore[assignment]
    street_tree = shapely.STRtree(streets)
    building_tree = shapely.STRtree(footprints) if footprints else None
    half_road = params.road_width / 2.0 + params.sidewalk
    step = 2.0
    for k in range(len(pairs)):
        a, b = a_xy[k], b_xy[k]
        d = b - a
        length = float(np.hypot(*d))
        if length < 1.0:
            continue
        t_hat = d / length
        left = np.array([-t_hat[1], t_hat[0]])
        start = params.setback + 1.0 if degree[pairs[k, 0]] > 2 else 0.0
        stop = length - (params.setback + 1.0 if degree[pairs[k, 1]] > 2 else 0.0)
        if stop - start < 2.0:
            continue
        ts = np.arange(start, stop + 1e-9, step)
        if ts[-1] < stop - 1e-6:
            ts = np.append(ts, stop)
        for side in (1.0, -1.0):
            offset = side * left * params.setback
            pts = a + offset + ts[:, None] * t_hat
            geoms = shapely.points(pts)
            # the facade must stay clear of every other street and of real buildings
            near_street = np.zeros(len(pts), bool)
            idx_pt, idx_st = street_tree.query(geoms, predicate="dwithin", distance=half_road)
            near_street[idx_pt[idx_st != k]] = True
            if building_tree is not None:
                band = np.stack([a + ts[:, None] * t_hat, pts], axis=1)
                lines = shapely.linestrings(band)
                hit, _ = building_tree.query(lines, predicate="dwithin", distance=4.0)
                near_street[hit] = True
            ok = ~near_street
            _emit_runs(builder, pts, ok, side, t_hat, left, k, params)


def _emit_runs(builder, pts, ok, side, t_hat, left, k, params) -> None:
    """Turn the free sample points of one street side into facade runs with side walls."""
    run_start = None
    for i in range(len(ok) + 1):
        free = i < len(ok) and ok[i]
        if free and run_start is None:
            run_start = i
        if not free and run_start is not None:
            j = i - 1
            if j > run_start:
                p, q = pts[run_start], pts[j]
                seed = stable_hash(f"street-{k}-{side}-{run_start}")
                top = _default_height(seed, params)
                colour = FACADE_COLOURS[seed % len(FACADE_COLOURS)]
                back = side * left * params.facade_depth
                # the front faces the street: its outward normal (right of a -> b) points
                # back towards the centre line; the side walls face along the street
                if side < 0:
                    builder.add(q, p, top, colour, kind=1)
                    builder.add(p, p + back, top, colour * 0.92, kind=2)
                    builder.add(q + back, q, top, colour * 0.92, kind=2)
                else:
                    builder.add(p, q, top, colour, kind=1)
                    builder.add(p + back, p, top, colour * 0.92, kind=2)
                    builder.add(q, q + back, top, colour * 0.92, kind=2)
            run_start = None


@dataclass
class Scene:
    """Pre-built geometry of one city for the renderer.

    Attributes
    ----------
    walls
        All wall pieces.
    wall_tree
        KD-tree over wall piece midpoints.
    street_a, street_b
        Undirected street segments (metres).
    street_tree
        KD-tree over street segment midpoints.
    junctions
        Positions of nodes where three or more streets meet.
    params
        The dimensions used.
    """

    walls: Walls
    wall_tree: cKDTree
    street_a: NDArray[np.float64]
    street_b: NDArray[np.float64]
    street_tree: cKDTree
    node_xy: NDArray[np.float64]
    node_tree: cKDTree
    params: SceneParams
    max_half_piece: float
    max_half_street: float
    footprints: list

    def inside_buildings(self, xy: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Whether each point ``(n, 2)`` lies inside a building footprint."""
        out = np.zeros(len(xy), dtype=bool)
        if self.footprints and len(xy):
            tree = shapely.STRtree(self.footprints)
            hit, _ = tree.query(shapely.points(xy), predicate="within")
            out[hit] = True
        return out

    @classmethod
    def build(cls, city: City, params: SceneParams | None = None) -> Scene:
        """Build the scene geometry of ``city``."""
        params = params or SceneParams()
        builder = _WallBuilder(params.piece)
        footprints = _add_footprints(builder, city, params)
        _add_synthetic_facades(builder, city, params, footprints)
        walls = builder.build()
        a_xy, b_xy, pairs = street_segments(city)
        node_xy = city.graph.xy[np.unique(pairs)] if len(pairs) else np.zeros((0, 2))
        mids = walls.mid if len(walls) else np.zeros((0, 2))
        street_mid = (a_xy + b_xy) / 2.0 if len(a_xy) else np.zeros((0, 2))
        half_piece = float(np.hypot(*(walls.b - walls.a).T).max() / 2) if len(walls) else 0.0
        half_street = float(np.hypot(*(b_xy - a_xy).T).max() / 2) if len(a_xy) else 0.0
        return cls(
            walls=walls,
            wall_tree=cKDTree(mids),
            street_a=a_xy,
            street_b=b_xy,
            street_tree=cKDTree(street_mid),
            node_xy=node_xy,
            node_tree=cKDTree(node_xy),
            params=params,
            max_half_piece=half_piece,
            max_half_street=half_street,
            footprints=footprints,
        )

    def walls_near(self, xy: NDArray[np.float64], radius: float) -> NDArray[np.int64]:
        """Indices of wall pieces that may lie within ``radius`` of ``xy``."""
        if len(self.walls) == 0:
            return np.zeros(0, dtype=np.int64)
        rows = self.wall_tree.query_ball_point(xy, radius + self.max_half_piece)
        return np.asarray(sorted(rows), dtype=np.int64)

    def nodes_near(self, xy: NDArray[np.float64], radius: float) -> NDArray[np.int64]:
        """Indices (into :attr:`node_xy`) of street nodes within ``radius`` of ``xy``."""
        if len(self.node_xy) == 0:
            return np.zeros(0, dtype=np.int64)
        return np.asarray(sorted(self.node_tree.query_ball_point(xy, radius)), dtype=np.int64)

    def streets_near(self, xy: NDArray[np.float64], radius: float) -> NDArray[np.int64]:
        """Indices of street segments that may lie within ``radius`` of ``xy``."""
        if len(self.street_a) == 0:
            return np.zeros(0, dtype=np.int64)
        rows = self.street_tree.query_ball_point(xy, radius + self.max_half_street)
        return np.asarray(sorted(rows), dtype=np.int64)
