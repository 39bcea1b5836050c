"""Place detection (V-IRL §5, ``place_localization.py``): find the places of 20 types in views.

:func:`build_detection_set` lays a grid of points every ``spacing_m`` (20 m) over each region
(in the city's metric projection), snaps each point to its nearest street viewpoint (within
``spacing_m``), and keeps the viewpoints with at least one ground-truth place within
``radius_m`` (25 m): V-IRL takes views only there. Ground truth = the named places inside the
region having a type of the list and lying within ``radius_m`` of a kept viewpoint (V-IRL's
places come from Google with names and at least 30 reviews; an unnamed OSM place has no sign
to find). Every viewpoint is looked at with fov 60, 90 and 120 all around (360 / fov headings
each, from north), pitch 10: 6 + 4 + 3 = 13 views.

:func:`evaluate_detection` runs a :class:`~flaneur.perception.detection.Detector` prompted
with the type names on every view, turns each box into the heading span of its edges
(:meth:`flaneur.views.base.View.bearing_of_x`), matches it to the nearest ground-truth place
near the viewpoint inside the span (:func:`flaneur.bench.detection_metrics.match_box`) and
scores recall per type, AR and the accuracy of matched boxes
(:func:`flaneur.bench.detection_metrics.score_detection`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import shapely

from flaneur.bench.detection_metrics import match_box, score_detection
from flaneur.bench.sets import score_items
from flaneur.bench.types import place_virl_types, type_label
from flaneur.geo import bearing
from flaneur.services.region import Region, region_of_points
from flaneur.views.base import View
from flaneur.world.city import City

__all__ = [
    "DETECTION_VERSION",
    "FOVS",
    "build_detection_set",
    "evaluate_detection",
    "summarize_detection",
    "view_headings",
]

DETECTION_VERSION = 1
"""Version of the detection set format and construction rules."""
FOVS = (60.0, 90.0, 120.0)
PITCH = 10.0
SPACING_M = 20.0
RADIUS_M = 25.0


def view_headings(fovs: Sequence[float] = FOVS) -> list[tuple[float, float]]:
    """``(heading, fov)`` of the views at a viewpoint: ``360 // fov`` headings per fov from 0."""
    return [(float(k * fov), float(fov)) for fov in fovs for k in range(int(360 // fov))]


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


def build_detection_set(
    city: City,
    regions: Sequence[Region],
    types: Sequence[str],
    *,
    spacing_m: float = SPACING_M,
    radius_m: float = RADIUS_M,
    fovs: Sequence[float] = FOVS,
    pitch: float = PITCH,
    per_region: int | None = None,
    seed: int = 0,
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]], dict[str, int]]:
    """Viewpoints, ground-truth places and per-region grid counts of the detection set.

    Parameters
    ----------
    city, regions, types
        The city, the regions and the V-IRL type list (the detector's prompt).
    spacing_m
        Grid spacing; a grid point without a viewpoint within this distance is dropped.
    radius_m
        A place is ground truth, and a candidate for a box, within this distance of a
        viewpoint.
    fovs, pitch
        The cameras of the views (recorded in each item).
    per_region, seed
        Keep at most ``per_region`` viewpoints of each region (a sample drawn with ``seed``,
        in grid order); the ground truth is then the places near the kept ones.

    Returns
    -------
    (items, places, grid_viewpoints)
        Items ``{"node", "region", "views": [[heading, fov], ...], "pitch", "places":
        [[place_id, bearing, distance], ...]}`` (viewpoints with a place near), the ground
        truth ``{place_id: {"name", "region", "types"}}``, and the number of grid
        viewpoints per region (before keeping those with a place near).
    """
    graph, places = city.graph, city.places
    in_region = region_of_points(list(regions), places.lat, places.lng)
    typed = {r: place_virl_types(places.categories[r], types) for r in range(len(places))}
    headings = [list(v) for v in view_headings(fovs)]
    items: list[dict[str, Any]] = []
    truth: dict[str, dict[str, Any]] = {}
    grid_counts: dict[str, int] = {}
    seen: set[int] = set()
    rng = np.random.default_rng(seed)
    for region in regions:
        nodes = [n for n in _grid_nodes(city, region, spacing_m) if n not in seen]
        seen.update(nodes)
        grid_counts[region.name] = len(nodes)
        kept: list[dict[str, Any]] = []
        for node in nodes:
            rows, dists = places.within(graph.xy[node], radius_m)
            near = []
            for r, d in zip(rows.tolist(), np.asarray(dists).tolist(), strict=True):
                if in_region[r] != region.name or not typed[r] or not places.names[r]:
                    continue
                b = float(bearing(graph.lat[node], graph.lng[node], places.lat[r], places.lng[r]))
                pid = str(places.ids[r])
                near.append([pid, round(b % 360.0, 2), round(float(d), 2)])
                truth.setdefault(
                    pid,
                    {"name": str(places.names[r]), "region": region.name, "types": list(typed[r])},
                )
            if near:
                kept.append(
                    {
                        "node": str(graph.ids[node]),
                        "region": region.name,
                        "views": headings,
                        "pitch": pitch,
                        "places": near,
                    }
                )
        if per_region is not None and len(kept) > per_region:
            pick = np.sort(rng.permutation(len(kept))[:per_region])
            kept = [kept[i] for i in pick]
        items += kept
    used = {c[0] for it in items for c in it["places"]}
    return items, {p: v for p, v in truth.items() if p in used}, grid_counts


def evaluate_detection(
    items: Iterable[dict[str, Any]],
    truth: dict[str, dict[str, Any]],
    types: Sequence[str],
    detect: Callable[[list[View], list[str]], list[list[Any]]],
    view_of: Callable[[str, float, float, float], View],
    *,
    done: dict[str, dict[str, Any]] | None = None,
    on_result: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Detect in every view of every viewpoint, match the boxes and score them.

    Parameters
    ----------
    items, truth
        The viewpoints and ground truth of :func:`build_detection_set`.
    types
        The type list; the detector is prompted with their words (``"movie theater"``).
    detect
        ``(views, labels) -> boxes per view`` (each box has ``box`` and ``label``), e.g.
        ``lambda views, labels: detector.detect_batch(views, labels)``.
    view_of
        ``(node id, heading, pitch, fov) -> View``.
    done, on_result
        Resume: earlier per-viewpoint results by node id; callback for each new result.

    Returns
    -------
    dict
        See :func:`summarize_detection`.
    """
    labels = [type_label(t) for t in types]
    type_of = dict(zip(labels, types, strict=True))

    def score(item: dict[str, Any]) -> dict[str, Any]:
        node = item["node"]
        views = [view_of(node, h, item["pitch"], fov) for h, fov in item["views"]]
        candidates = [tuple(c) for c in item["places"]]
        boxes = []
        for view, dets in zip(views, detect(views, labels), strict=True):
            for det in dets:
                x0, _, x1, _ = det.box
                span = (view.bearing_of_x(x0), view.bearing_of_x(x1))
                pid = match_box(span, candidates)
                label = type_of.get(det.label, det.label)
                boxes.append(
                    {
                        "type": label,
                        "score": round(float(det.score), 4),
                        "fov": view.fov,
                        "span": [round(span[0], 2), round(span[1], 2)],
                        "place_id": pid,
                        "correct": pid is not None and label in truth[pid]["types"],
                    }
                )
        return {
            "node": node,
            "region": item["region"],
            "views": len(views),
            "near": [c[0] for c in candidates],
            "boxes": boxes,
        }

    results = score_items(items, "node", score, done, on_result)
    return summarize_detection(results, truth, types)


def summarize_detection(
    results: Sequence[dict[str, Any]], truth: dict[str, dict[str, Any]], types: Sequence[str]
) -> dict[str, Any]:
    """AR, localisation AR, box accuracy, per-type, per-region and per-fov tables.

    Only the ground-truth places near the viewpoints in ``results`` count (a run limited to
    the first viewpoints is scored on their places).
    """
    near = {pid for r in results for pid in r["near"]}
    gt = {p: v for p, v in truth.items() if p in near}
    place_types = {pid: v["types"] for pid, v in gt.items()}
    boxes = [(b["type"], b["place_id"]) for r in results for b in r["boxes"]]
    s = score_detection(place_types, boxes, types)
    per_region: dict[str, dict[str, Any]] = {}
    for region in sorted({v["region"] for v in gt.values()}):
        sub = {p: t for p, t in place_types.items() if gt[p]["region"] == region}
        rb = [
            (b["type"], b["place_id"]) for r in results if r["region"] == region for b in r["boxes"]
        ]
        rs = score_detection(sub, rb, types)
        per_region[region] = {
            "places": rs.places,
            "viewpoints": sum(r["region"] == region for r in results),
            "ar": rs.ar,
            "ar_localisation": rs.ar_localisation,
            "box_accuracy": rs.box_accuracy,
            "boxes": rs.boxes,
            "matched_boxes": rs.matched_boxes,
        }
    return {
        "viewpoints": len(results),
        "views": sum(r["views"] for r in results),
        "places": s.places,
        "types_with_places": len(s.per_type),
        "ar": s.ar,
        "ar_localisation": s.ar_localisation,
        "box_accuracy": s.box_accuracy,
        "boxes": s.boxes,
        "matched_boxes": s.matched_boxes,
        "correct_boxes": s.correct_boxes,
        "per_type": s.per_type,
        "per_region": per_region,
        "results": list(results),
    }
