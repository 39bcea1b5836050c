"""Benchmark regions: named polygons in (lng, lat).

V-IRL draws its benchmark places from 14 district polygons. flaneur takes any GeoJSON
(``Polygon`` / ``MultiPolygon`` features, named by ``properties.name``), or, by default, a
documented grid over the city: square cells of ``cell_m`` metres (default 500 m) in the
city's metric projection, anchored at the south-west corner of its streets and places, named
``r<row>c<col>`` from the south-west, keeping the cells that contain at least one place.
The grid is a stand-in for districts: the built-in extract carries no suburb boundaries.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import shapely
from shapely.geometry import box, shape
from shapely.geometry.base import BaseGeometry

from flaneur.errors import FlaneurError
from flaneur.world.city import City

__all__ = ["Region", "RegionError", "grid_regions", "load_regions", "region_of_points"]


class RegionError(FlaneurError):
    """Regions could not be read or are empty."""


@dataclass(frozen=True)
class Region:
    """A named polygon in (lng, lat)."""

    name: str
    polygon: BaseGeometry


def grid_regions(city: City, cell_m: float = 500.0) -> list[Region]:
    """Square cells of ``cell_m`` metres over the city that hold at least one place."""
    if cell_m <= 0:
        raise RegionError(f"cell size must be positive, got {cell_m}")
    proj = city.graph.projection
    xy = city.graph.xy[city.graph.located]
    if len(xy) == 0 or len(city.places) == 0:
        raise RegionError(f"city {city.name!r} has no located streets or no places for regions")
    pxy = city.places.xy
    x0, y0 = np.minimum(xy.min(axis=0), pxy.min(axis=0))
    cols = np.floor((pxy[:, 0] - x0) / cell_m).astype(int)
    rows = np.floor((pxy[:, 1] - y0) / cell_m).astype(int)
    regions = []
    for r, c in sorted(set(zip(rows.tolist(), cols.tolist(), strict=True))):
        xs = [x0 + c * cell_m, x0 + (c + 1) * cell_m]
        ys = [y0 + r * cell_m, y0 + (r + 1) * cell_m]
        lat, lng = proj.inverse(np.array(xs), np.array(ys))
        poly = box(float(min(lng)), float(min(lat)), float(max(lng)), float(max(lat)))
        regions.append(Region(f"r{r:02d}c{c:02d}", poly))
    return regions


def load_regions(path: str | Path) -> list[Region]:
    """Regions from a GeoJSON file (FeatureCollection, Feature or bare geometry).

    Raises
    ------
    RegionError
        One line naming the file and the feature that is wrong.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise RegionError(f"{path}: cannot read regions ({err.strerror})") from None
    except json.JSONDecodeError as err:
        raise RegionError(f"{path}: not JSON (line {err.lineno}: {err.msg})") from None
    if isinstance(data, dict) and data.get("type") == "FeatureCollection":
        features = data.get("features")
    elif isinstance(data, dict) and data.get("type") == "Feature":
        features = [data]
    elif isinstance(data, dict) and "coordinates" in data:
        features = [{"type": "Feature", "geometry": data, "properties": {}}]
    else:
        raise RegionError(f"{path}: expected a GeoJSON FeatureCollection, Feature or geometry")
    if not isinstance(features, list) or not features:
        raise RegionError(f"{path}: no features")
    regions = []
    for i, feat in enumerate(features):
        geom = feat.get("geometry") if isinstance(feat, dict) else None
        if not isinstance(geom, dict) or geom.get("type") not in ("Polygon", "MultiPolygon"):
            raise RegionError(f"{path}: feature {i}: expected a Polygon or MultiPolygon geometry")
        try:
            poly = shape(geom)
        except Exception as err:  # shapely raises several types on bad coordinates
            raise RegionError(f"{path}: feature {i}: bad coordinates ({err})") from None
        if poly.is_empty or not math.isfinite(poly.area):
            raise RegionError(f"{path}: feature {i}: empty polygon")
        props = feat.get("properties") or {}
        name = str(props.get("name") or props.get("id") or f"region{i}")
        regions.append(Region(name, poly if poly.is_valid else poly.buffer(0)))
    return regions


def region_of_points(regions: list[Region], lat: np.ndarray, lng: np.ndarray) -> list[str | None]:
    """The name of the first region containing each point, or None."""
    out: list[str | None] = [None] * len(lat)
    points = shapely.points(np.asarray(lng, dtype=float), np.asarray(lat, dtype=float))
    for region in regions:
        inside = shapely.contains(region.polygon, points)
        for i in np.flatnonzero(inside):
            if out[i] is None:
                out[i] = region.name
    return out
