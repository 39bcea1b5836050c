"""Regions of a city: reading polygons, a grid of cells, and sampling a region for a walk.

One module for every region in flaneur: :func:`read_regions` is the one reader of polygon
files (GeoJSON features, GeoJSON order ``[lng, lat]``; or a JSON list of ``[lat, lng]``
pairs), :func:`grid_regions` the default regions of V-IRL's benchmarks on any city, and
:func:`sample_region` turns a polygon into grid points every D metres → the viewpoints they
snap to inside it → a visiting order (OR-Tools) → the walk between them, as V-IRL's urban
planner (Imani) samples a region before walking it. Every problem is a
:class:`~flaneur.services.errors.RegionError` or a :class:`~flaneur.errors.DataError`
naming the file.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import shapely
from shapely.geometry.base import BaseGeometry
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
    try:
        pairs = [tuple(float(v) for v in p) for p in points]
    except (TypeError, ValueError):
        raise RegionError("a region is a list of [lat, lng] number pairs") from None
    if len(pairs) < 3 or any(len(p) != 2 for p in pairs):
        raise RegionError("a region needs at least 3 (lat, lng) points")
    if not all(math.isfinite(v) for p in pairs for v in p):
        raise RegionError("a region's points must be finite numbers (no NaN or infinity)")
    return _checked(shapely.Polygon([(lng, lat) for lat, lng in pairs]))


def _checked(polygon: shapely.Polygon) -> shapely.Polygon:
    if not polygon.is_empty and not polygon.is_valid:
        raise RegionError(f"the region polygon is invalid: {explain_validity(polygon)}")
    if polygon.is_empty or polygon.area == 0:
        raise RegionError("the region polygon has no area")
    return polygon


@dataclass(frozen=True)
class Region:
    """A named polygon in ``(lng, lat)``: a benchmark region, a planner's survey area."""

    name: str
    polygon: BaseGeometry


def _geojson_features(data: Any, file: Path) -> list[dict[str, Any]]:
    if isinstance(data, dict) and data.get("type") == "FeatureCollection":
        features = data.get("features")
    elif isinstance(data, dict) and data.get("type") == "Feature":
        features = [data]
    elif isinstance(data, dict) and "coordinates" in data:
        features = [{"type": "Feature", "geometry": data, "properties": {}}]
    else:
        raise DataError("expected GeoJSON (a FeatureCollection, Feature or geometry)", path=file)
    if not isinstance(features, list) or not features:
        raise DataError("the GeoJSON holds no features", path=file)
    return features


def _feature_region(feature: Any, i: int, file: Path) -> Region:
    geom = feature.get("geometry") if isinstance(feature, dict) else None
    if not isinstance(geom, dict) or geom.get("type") not in ("Polygon", "MultiPolygon"):
        raise DataError(f"feature {i}: expected a Polygon or MultiPolygon geometry", path=file)
    try:
        polygon = shapely.geometry.shape(geom)
    except Exception as err:  # shapely raises several types on bad coordinates
        raise DataError(f"feature {i}: unreadable coordinates ({err})", path=file) from None
    bounds = polygon.bounds if not polygon.is_empty else ()
    if polygon.is_empty or not all(math.isfinite(v) for v in bounds) or polygon.area == 0:
        raise DataError(f"feature {i}: an empty polygon or one with non-finite points", path=file)
    props = feature.get("properties") or {}
    name = str(props.get("name") or props.get("id") or f"region{i}")
    return Region(name, polygon if polygon.is_valid else polygon.buffer(0))


def read_regions(path: str | Path) -> list[Region]:
    """Regions from a file: GeoJSON (every Polygon/MultiPolygon feature, named by its
    ``properties.name``) or a JSON list of ``[lat, lng]`` pairs (one region, named after
    the file). The one reader of polygons in flaneur.

    Raises
    ------
    DataError
        Naming the file (and feature): missing, not UTF-8 JSON, no polygon, a feature that
        is not a polygon, non-finite or unreadable coordinates.
    RegionError
        A list of pairs that is not a valid polygon (too few points, self-intersecting).
    """
    file = Path(path)
    if not file.is_file():
        raise DataError("region file not found (expected GeoJSON or [[lat, lng], ...])", path=file)
    try:
        data: Any = json.loads(file.read_bytes().decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DataError(f"not a JSON text file ({err})", path=file) from None
    if isinstance(data, list):
        try:
            return [Region(file.stem, polygon_from_latlng(data))]
        except (TypeError, ValueError, RegionError) as err:
            raise DataError(f"expected a list of [lat, lng] pairs ({err})", path=file) from None
    return [_feature_region(f, i, file) for i, f in enumerate(_geojson_features(data, file))]


def load_polygon(path: str | Path) -> shapely.Polygon:
    """The one polygon of a region file (the largest part of the first region), checked.

    Raises
    ------
    DataError, RegionError
        As :func:`read_regions`; an invalid (self-intersecting) polygon.
    """
    geometry = read_regions(path)[0].polygon
    if isinstance(geometry, shapely.MultiPolygon):
        geometry = max(geometry.geoms, key=lambda g: g.area)
    # regions are read as a Polygon or a MultiPolygon (whose largest part is taken above)
    return _checked(cast(shapely.Polygon, geometry))


def grid_regions(city: City, cell_m: float = 500.0) -> list[Region]:
    """Square cells of ``cell_m`` metres over the city that hold at least one place.

    The cells lie in the city's metric projection, anchored at the south-west corner of its
    located streets and its places, and are named ``r<row>c<col>`` from the south-west.
    V-IRL draws its benchmark places from district polygons; this grid stands in for them
    where a city has none (the built-in extract carries no suburb boundaries).

    Raises
    ------
    RegionError
        A cell size that is not a positive number, or a city without located streets or
        without places.
    """
    if not (isinstance(cell_m, int | float) and math.isfinite(cell_m) and cell_m > 0):
        raise RegionError(f"region cell size must be a positive number of metres, not {cell_m}")
    graph, places = city.graph, city.places
    xy = graph.xy[graph.located]
    if len(xy) == 0 or len(places) == 0:
        raise RegionError(f"city {city.name!r} has no located streets or no places for regions")
    origin = np.minimum(xy.min(axis=0), places.xy.min(axis=0))
    cells = np.floor((places.xy - origin) / cell_m).astype(int)
    regions = []
    for row, col in sorted({(int(r), int(c)) for c, r in cells}):
        xs = np.array([origin[0] + col * cell_m, origin[0] + (col + 1) * cell_m])
        ys = np.array([origin[1] + row * cell_m, origin[1] + (row + 1) * cell_m])
        lat, lng = graph.projection.inverse(xs, ys)
        cell = shapely.box(float(min(lng)), float(min(lat)), float(max(lng)), float(max(lat)))
        regions.append(Region(f"r{row:02d}c{col:02d}", cell))
    return regions


def region_of_points(
    regions: Sequence[Region], lat: np.ndarray, lng: np.ndarray
) -> list[str | None]:
    """The name of the first region containing each point, or ``None``."""
    out: list[str | None] = [None] * len(lat)
    points = shapely.points(np.asarray(lng, dtype=float), np.asarray(lat, dtype=float))
    for region in regions:
        inside = shapely.contains(region.polygon, points)
        for i in np.flatnonzero(inside):
            if out[i] is None:
                out[i] = region.name
    return out


def region_has_viewpoints(city: City, polygon: BaseGeometry) -> bool:
    """Whether any located viewpoint of the city lies inside ``polygon``."""
    graph = city.graph
    located = graph.located
    return bool(shapely.contains_xy(polygon, graph.lng[located], graph.lat[located]).any())


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
    if not (math.isfinite(spacing_m) and spacing_m > 0):
        raise RegionError(f"spacing_m must be a positive number of metres, not {spacing_m}")
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
