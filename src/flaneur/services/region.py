"""Region sampling: a polygon → grid points every D metres → the viewpoints they snap to
inside the polygon → a visiting order (OR-Tools) → the walk between them.

V-IRL's urban planner (Imani) samples a region this way before walking it. A polygon comes
as a GeoJSON file (a Polygon, a Feature or the first polygon of a FeatureCollection; GeoJSON
order is ``[lng, lat]``) or as a list of ``(lat, lng)`` pairs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import shapely
from shapely.validation import explain_validity

from flaneur.errors import DataError
from flaneur.services.directions import Route, directions_via
from flaneur.services.errors import RegionError
from flaneur.services.optimize import distance_matrix, optimize_matrix
from flaneur.world.city import City

MAX_SAMPLES = 2_000


def polygon_from_latlng(points: Sequence[Sequence[float]]) -> shapely.Polygon:
    """A polygon from ``(lat, lng)`` pairs (closed or not).

    Raises
    ------
    RegionError
        Fewer than 3 points, or a self-intersecting ring.
    """
    pairs = [tuple(float(v) for v in p) for p in points]
    if len(pairs) < 3 or any(len(p) != 2 for p in pairs):
        raise RegionError("a region needs at least 3 (lat, lng) points")
    return _checked(shapely.Polygon([(lng, lat) for lat, lng in pairs]))


def _checked(polygon: shapely.Polygon) -> shapely.Polygon:
    if not polygon.is_empty and not polygon.is_valid:
        raise RegionError(f"the region polygon is invalid: {explain_validity(polygon)}")
    if polygon.is_empty or polygon.area == 0:
        raise RegionError("the region polygon has no area")
    return polygon


def load_polygon(path: str | Path) -> shapely.Polygon:
    """Read a region from a GeoJSON file, or a JSON list of ``[lat, lng]`` pairs.

    Raises
    ------
    DataError
        A missing or unreadable file, or no polygon in it.
    RegionError
        An invalid (e.g. self-intersecting) polygon.
    """
    file = Path(path)
    if not file.is_file():
        raise DataError("region file not found (expected GeoJSON)", path=file)
    try:
        data: Any = json.loads(file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DataError(f"invalid JSON ({err})", path=file) from None
    if isinstance(data, list):
        try:
            return polygon_from_latlng(data)
        except (TypeError, ValueError) as err:
            raise DataError(f"expected a list of [lat, lng] pairs ({err})", path=file) from None
    if isinstance(data, dict) and data.get("type") == "FeatureCollection":
        features = data.get("features") or []
        data = next(
            (
                f
                for f in features
                if (f.get("geometry") or {}).get("type") in ("Polygon", "MultiPolygon")
            ),
            None,
        )
    if isinstance(data, dict) and data.get("type") == "Feature":
        data = data.get("geometry")
    if not isinstance(data, dict) or data.get("type") not in ("Polygon", "MultiPolygon"):
        raise DataError("no Polygon geometry found (expected GeoJSON)", path=file)
    try:
        geometry = shapely.geometry.shape(data)
    except (ValueError, TypeError, IndexError) as err:
        raise DataError(f"unreadable polygon coordinates ({err})", path=file) from None
    if geometry.geom_type == "MultiPolygon":
        geometry = max(geometry.geoms, key=lambda g: g.area)
    return _checked(geometry)


@dataclass(frozen=True)
class RegionSample:
    """Result of :func:`sample_region`."""

    polygon: shapely.Polygon
    spacing_m: float
    grid_points: int
    nodes: tuple[int, ...]
    route: Route

    def to_dict(self, city: City) -> dict:
        """JSON-ready form."""
        graph = city.graph
        return {
            "spacing_m": self.spacing_m,
            "grid_points": self.grid_points,
            "viewpoints": [
                {
                    "node": n,
                    "id": str(graph.ids[n]),
                    "lat": float(graph.lat[n]),
                    "lng": float(graph.lng[n]),
                }
                for n in self.nodes
            ],
            "walk_m": round(self.route.distance_m, 1),
            "walk_min": round(self.route.duration_s / 60.0, 1),
            "walk_nodes": list(self.route.nodes),
        }


def sample_region(
    city: City, polygon: shapely.Polygon, *, spacing_m: float = 50.0, mode: str = "walking"
) -> RegionSample:
    """Sample viewpoints inside ``polygon`` on a grid and order them for one walk.

    Parameters
    ----------
    city
        The city.
    polygon
        Region in ``(lng, lat)`` coordinates.
    spacing_m
        Grid spacing in metres.
    mode
        Travel mode of the walk.

    Raises
    ------
    RegionError
        An invalid polygon, one that lies outside the city, one with no viewpoint inside, or
        a grid of more than :data:`MAX_SAMPLES` points.
    """
    if spacing_m <= 0:
        raise RegionError("spacing_m must be positive")
    polygon = _checked(polygon)
    west, south, east, north = city.bbox
    if not polygon.intersects(shapely.box(west, south, east, north)):
        raise RegionError(
            f"the region lies outside {city.name} (its streets span lng {west:.4f}..{east:.4f},"
            f" lat {south:.4f}..{north:.4f})"
        )
    proj = city.graph.projection
    ring = np.asarray(polygon.exterior.coords)
    x, y = proj.forward(ring[:, 1], ring[:, 0])
    metric = shapely.Polygon(np.column_stack([x, y]))
    minx, miny, maxx, maxy = metric.bounds
    gx = np.arange(minx + spacing_m / 2, maxx, spacing_m)
    gy = np.arange(miny + spacing_m / 2, maxy, spacing_m)
    if gx.size * gy.size > MAX_SAMPLES * 4:
        raise RegionError(f"spacing {spacing_m} m gives too many grid points; use a larger one")
    mx, my = np.meshgrid(gx, gy)
    inside = shapely.contains_xy(metric, mx.ravel(), my.ravel())
    px, py = mx.ravel()[inside], my.ravel()[inside]
    if px.size > MAX_SAMPLES:
        raise RegionError(f"{px.size} grid points exceed {MAX_SAMPLES}; use a larger spacing")
    if px.size == 0:
        px, py = np.asarray([metric.centroid.x]), np.asarray([metric.centroid.y])
    lat, lng = proj.inverse(px, py)
    snapped = np.atleast_1d(city.graph.nearest_node(lat, lng))
    keep = shapely.contains_xy(polygon, city.graph.lng[snapped], city.graph.lat[snapped])
    nodes = list(dict.fromkeys(int(n) for n in snapped[keep]))
    if not nodes:
        raise RegionError(f"no viewpoint of {city.name} lies inside the region")
    matrix = distance_matrix(city.graph, nodes)
    reachable = np.isfinite(matrix[0]) & np.isfinite(matrix[:, 0])
    nodes = [n for n, ok in zip(nodes, reachable, strict=True) if ok]
    matrix = matrix[np.ix_(reachable, reachable)]
    budget = min(2_000, 10 * len(nodes) + 100)
    order = optimize_matrix(matrix, time_limit_ms=budget).order
    ordered = [nodes[i] for i in order]
    route = directions_via(city, ordered, mode=mode)
    return RegionSample(polygon, float(spacing_m), int(px.size), tuple(ordered), route)
