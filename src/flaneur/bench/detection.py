"""V-IRL's place detection set (§5, ``place_localization.py``) on any city: the generator
``virl-detection`` and the matching of a detector's boxes to the places near a viewpoint.

:class:`DetectionSet` lays a grid of points every ``spacing_m`` (20 m) over each region (a
GeoJSON file's polygons, or square cells of ``cell_m`` over the city), snaps each point to its
nearest street viewpoint (within ``spacing_m``), and keeps the viewpoints with at least one
ground-truth place within ``radius_m`` (25 m): V-IRL takes views only there. Ground truth =
the named places inside the region having a type of the list and lying within ``radius_m``
of a kept viewpoint (V-IRL's places come from Google with names and at least 30 reviews; an
unnamed OSM place has no sign to find). Every viewpoint is looked at with fov 60, 90 and 120
all around (360 / fov headings each, from north), pitch 10: 6 + 4 + 3 = 13 views. Regions
without a viewpoint on their grid, or without a place of the list near one, are skipped and
named in the set's report.

One item per viewpoint: ``node``, ``region``, ``pitch``, ``views`` (``[heading, fov]``),
``types`` (the type list: the detector's prompt) and ``places`` (``id``, ``name``,
``bearing`` and ``distance`` from the viewpoint, ``types``).

:func:`match_boxes` turns each box into the heading span of its edges and matches it to the
nearest place of the item inside that span (:func:`flaneur.bench.detection_metrics.match_box`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
import shapely

from flaneur.bench.detection_metrics import match_box
from flaneur.bench.types import load_type_list, place_virl_types
from flaneur.errors import DataError, FlaneurError
from flaneur.geo import bearing
from flaneur.options import Range, option
from flaneur.services.region import Region, grid_regions, read_regions, region_of_points
from flaneur.tasks.generators import Generator
from flaneur.tasks.items import TaskItem
from flaneur.world.city import City

__all__ = [
    "FOVS",
    "DetectionOptions",
    "DetectionSet",
    "item_places",
    "match_boxes",
    "view_headings",
]

FOVS = (60.0, 90.0, 120.0)
PITCH = 10.0


def view_headings(fovs: Sequence[float] = FOVS) -> list[tuple[float, float]]:
    """``(heading, fov)`` of the views at a viewpoint: ``360 // fov`` headings per fov from 0."""
    return [(float(k * fov), float(fov)) for fov in fovs for k in range(int(360 // fov))]


@dataclass(frozen=True)
class DetectionOptions:
    """Options of the ``virl-detection`` generator (``-T KEY=VALUE``)."""

    types: str = option("20", "type list: 20, 96, a file (one type a line) or bank,cafe")
    spacing_m: Annotated[float, Range(5.0, 200.0)] = option(
        20.0, "grid spacing in metres; a grid point without a viewpoint this near is dropped"
    )
    radius_m: Annotated[float, Range(5.0, 100.0)] = option(
        25.0, "a place within this distance of a viewpoint is ground truth there"
    )
    per_region: Annotated[int, Range(1, 10_000)] | None = option(
        None, "viewpoints per region at most (a seeded sample; default all)"
    )
    cell_m: Annotated[float, Range(50.0, 20_000.0)] = option(
        500.0, "side of the square regions laid over the city (without regions)"
    )
    regions: str = option("", "GeoJSON file of region polygons named by properties.name")

    def __post_init__(self) -> None:
        load_type_list(self.types)  # unknown types: one line naming them


def _grid_nodes(city: City, region: Region, spacing_m: float) -> list[int]:
    """Viewpoints (node indices) nearest to the grid points inside the region, first-seen."""
    graph = city.graph
    proj = graph.projection
    if not graph.located.any():
        return []
    margin = 2.0 * spacing_m / 111_000.0  # degrees; the grid stays near the streets
    gw, gs, ge, gn = graph.bbox
    west, south, east, north = region.polygon.bounds
    west, south = max(west, gw - margin), max(south, gs - margin)
    east, north = min(east, ge + margin), min(north, gn + margin)
    if west > east or south > north:
        return []
    xs, ys = proj.forward(np.array([south, north]), np.array([west, east]))
    gx = np.arange(min(xs), max(xs) + 1e-9, spacing_m)
    gy = np.arange(min(ys), max(ys) + 1e-9, spacing_m)
    px, py = (a.ravel() for a in np.meshgrid(gx, gy))
    lat, lng = proj.inverse(px, py)
    inside = shapely.contains_xy(region.polygon, lng, lat)
    if not inside.any():
        return []
    nodes = np.atleast_1d(graph.nearest_node(lat[inside], lng[inside]))
    dist = np.hypot(graph.xy[nodes, 0] - px[inside], graph.xy[nodes, 1] - py[inside])
    return list(dict.fromkeys(nodes[dist <= spacing_m].tolist()))


def _places_near(
    city: City,
    node: int,
    region: str,
    in_region: list[str | None],
    typed: dict[int, tuple],
    r: float,
) -> list[dict[str, Any]]:
    """The ground-truth places of ``region`` within ``r`` metres of viewpoint ``node``."""
    graph, places = city.graph, city.places
    rows, dists = places.within(graph.xy[node], r)
    near = []
    for row, d in zip(rows.tolist(), np.asarray(dists).tolist(), strict=True):
        if in_region[row] != region or not typed[row] or not places.names[row]:
            continue
        b = float(bearing(graph.lat[node], graph.lng[node], places.lat[row], places.lng[row]))
        near.append(
            {
                "id": str(places.ids[row]),
                "name": str(places.names[row]),
                "bearing": round(b % 360.0, 2),
                "distance": round(float(d), 2),
                "types": list(typed[row]),
            }
        )
    return near


class DetectionSet(Generator):
    """V-IRL's place detection viewpoints on any city (see the module docstring)."""

    kind = "virl-detection"
    version = 1
    success_metric = "recall"
    description = "V-IRL's place detection: viewpoints on a 20 m grid, places within 25 m"
    default_size = 60
    Options = DetectionOptions

    def make(
        self, city: City, *, seed: int, size: int, set_name: str, options: Any
    ) -> tuple[list[TaskItem], dict[str, Any]]:
        types = load_type_list(options.types)
        regions = (
            read_regions(options.regions) if options.regions else grid_regions(city, options.cell_m)
        )
        places = city.places
        in_region = region_of_points(regions, places.lat, places.lng)
        typed = {r: place_virl_types(places.categories[r], types) for r in range(len(places))}
        views = [list(v) for v in view_headings()]
        rng = np.random.default_rng(seed)
        items: list[TaskItem] = []
        skipped: dict[str, str] = {}
        seen: set[int] = set()
        no_grid = f"no street viewpoint within {options.spacing_m:g} m of its grid"
        no_place = f"no viewpoint has a place of the type list within {options.radius_m:g} m"
        for region in regions:
            nodes = [n for n in _grid_nodes(city, region, options.spacing_m) if n not in seen]
            seen.update(nodes)
            if not nodes:
                skipped[region.name] = no_grid
                continue
            near = [
                (node, _places_near(city, node, region.name, in_region, typed, options.radius_m))
                for node in nodes
            ]
            kept = [(node, found) for node, found in near if found]
            if not kept:
                skipped[region.name] = no_place
                continue
            if options.per_region is not None and len(kept) > options.per_region:
                pick = np.sort(rng.permutation(len(kept))[: options.per_region])
                kept = [kept[i] for i in pick]
            for node, near_places in kept:
                node_id = str(city.graph.ids[node])
                data = {"node": node_id, "region": region.name, "pitch": PITCH, "views": views}
                data |= {"types": list(types), "places": near_places}
                items.append(TaskItem(f"{set_name}-{node_id}", region.name, data))
        if not items:
            where = options.regions or f"the {options.cell_m:g} m grid over {city.name}"
            raise FlaneurError(
                f"virl-detection: {where}: no viewpoint has a place of the type list within "
                f"{options.radius_m:g} m ({len(skipped)} regions skipped)"
            )
        if len(items) > size:
            pick = np.sort(rng.permutation(len(items))[:size])
            items = [items[i] for i in pick]
        report = {
            "counts": dict(Counter(it.category for it in items)),
            "regions": len(regions),
            "skipped": skipped,
            "places": len({p["id"] for it in items for p in it["places"]}),
            "views": sum(len(it["views"]) for it in items),
        }
        return items, report


def item_places(item: TaskItem) -> list[dict[str, Any]]:
    """The item's ground-truth places (checked: ``id``, ``bearing``, ``distance``, ``types``)."""
    found = item.get("places")
    ok = isinstance(found, list) and all(
        isinstance(p, dict)
        and isinstance(p.get("id"), str)
        and isinstance(p.get("bearing"), int | float)
        and isinstance(p.get("distance"), int | float)
        and isinstance(p.get("types"), list)
        for p in found
    )
    if not ok:
        raise DataError(
            f"item {item.id!r}: field 'places' must be a list of {{id, bearing, distance, types}}"
        )
    return list(found)


def match_boxes(item: TaskItem, boxes: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each box of a detection result (``{"view", "type", "score", "span"}``, ``span``: the
    compass headings of its left and right edges) matched to the viewpoint ``item``'s places:
    ``{"view", "type", "score", "place", "correct"}`` per box, in the given order; ``place`` is
    the nearest place whose bearing lies in the span (or ``None``), ``correct`` whether the
    box's type is one of that place's types."""
    places = item_places(item)
    candidates = [(p["id"], float(p["bearing"]), float(p["distance"])) for p in places]
    types = {p["id"]: set(p["types"]) for p in places}
    out = []
    for box in boxes:
        pid = match_box((float(box["span"][0]), float(box["span"][1])), candidates)
        out.append(
            {
                "view": int(box["view"]),
                "type": str(box["type"]),
                "score": float(box["score"]),
                "place": pid,
                "correct": pid is not None and box["type"] in types[pid],
            }
        )
    return out
