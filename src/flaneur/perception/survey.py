"""Walk a route and count objects: the perception loop of V-IRL's urban assistance robot
(RX-399), with V-IRL's evaluation rule.

At every viewpoint of the route the robot takes ``views_per_point`` views (V-IRL: 3 views of
fov 60 at the travel heading −60°, 0, +60°), detects the cared labels, confirms each box by
active detection (or not, for the passive baseline), and adds the sightings to a
:class:`~flaneur.perception.memory.VisualMemory`, which de-duplicates them. The count table
is the memory's count per category.

Evaluation (V-IRL's rule): a reported object is a true positive if a ground-truth point of
its category lies within ``radius_m`` (20 m) of a viewpoint it was seen from and inside the
heading span of that sighting's box (± ``span_margin_deg``). *Accuracy* is the share of
reported objects that are true positives; *recall* the share of ground-truth objects within
``radius_m`` of the route that reported objects found, each reported object finding at most
one (as in V-IRL's evaluation; one wide box over three bins is one bin found, not three).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from flaneur.geo import angle_diff
from flaneur.perception.detection.active import (
    ACTIVE_THRESHOLD,
    LOOKS,
    MIN_FOV,
    PASSIVE_THRESHOLD,
    active_detect,
    passive_detect,
)
from flaneur.perception.detection.base import (
    DetectionError,
    Detector,
    check_labels,
    taxonomy_labels,
)
from flaneur.perception.memory import VisualMemory
from flaneur.views.base import ViewProvider
from flaneur.world.city import City
from flaneur.world.furniture import FURNITURE_KINDS

RANGE_M = 20.0
"""V-IRL's evaluation radius: ground truth within this distance of a walked viewpoint."""


def furniture_labels(labels: Sequence[str]) -> dict[str, str]:
    """``{label: street-furniture category}`` of labels to count (``"trash bin"``:
    ``waste_basket``).

    Raises
    ------
    DetectionError
        One line: no labels, an unknown label, or one that is not street furniture.
    """
    checked = check_labels(list(labels))
    categories = taxonomy_labels(checked)
    for label, category in categories.items():
        if category not in FURNITURE_KINDS:
            raise DetectionError(
                f"label {label!r} ({category}) is not street furniture; choose from "
                f"{', '.join(FURNITURE_KINDS)}"
            )
    return categories


@dataclass(frozen=True)
class SurveySettings:
    """How the robot looks: views per viewpoint, camera, thresholds, active or passive.

    Attributes
    ----------
    views_per_point
        Views at every viewpoint, ``fov`` apart around the travel heading.
    fov
        Field of view of those views in degrees.
    size
        ``(width, height)`` of every view in pixels.
    active
        Confirm every box by active detection (else one passive pass).
    threshold
        Proposal threshold (the passive threshold without active detection).
    active_threshold
        Threshold of a confirming box in a zoomed view.
    min_fov
        The narrowest zoomed field of view.
    looks
        Zoomed views at most per candidate (multi-scale confirmation; 1 is V-IRL's single
        check). See :func:`~flaneur.perception.detection.active.active_detect`.
    """

    views_per_point: int = 3
    fov: float = 60.0
    size: tuple[int, int] = (640, 640)
    active: bool = True
    threshold: float = PASSIVE_THRESHOLD
    active_threshold: float = ACTIVE_THRESHOLD
    min_fov: float = MIN_FOV
    looks: int = LOOKS


@dataclass
class SurveyResult:
    """What a walk produced: the memory, the views used and the viewpoints visited."""

    memory: VisualMemory
    route: list[int]
    views: int = 0
    sightings: int = 0
    settings: SurveySettings = field(default_factory=SurveySettings)

    def counts(self) -> dict[str, int]:
        """The count table: objects per category after de-duplication."""
        return self.memory.counts()


def travel_headings(city: City, route: Sequence[int]) -> list[float]:
    """Compass heading of travel at each viewpoint (to the next one; the last keeps its own)."""
    xy = city.graph.xy
    out = []
    for k, node in enumerate(route):
        a, b = (route[k], route[k + 1]) if k + 1 < len(route) else (route[k - 1], node)
        dx, dy = xy[b] - xy[a]
        out.append(math.degrees(math.atan2(dx, dy)) % 360.0 if (dx or dy) else 0.0)
    return out


def survey_route(
    provider: ViewProvider,
    city: City,
    route: Sequence[int],
    detector: Detector,
    labels: Sequence[str],
    settings: SurveySettings | None = None,
    *,
    memory: VisualMemory | None = None,
    progress: Callable[[int], Any] | None = None,
) -> SurveyResult:
    """Walk ``route`` (node indices), look around at every viewpoint, detect and count."""
    settings = settings or SurveySettings()
    memory = memory if memory is not None else VisualMemory()
    result = SurveyResult(memory, list(route), settings=settings)
    k = settings.views_per_point
    offsets = [settings.fov * (i - (k - 1) / 2.0) for i in range(k)]
    for node, heading in zip(route, travel_headings(city, route), strict=True):
        views = [
            provider.view(int(node), (heading + off) % 360.0, fov=settings.fov, size=settings.size)
            for off in offsets
        ]
        result.views += len(views)
        stats: dict[str, int] = {}
        if settings.active:
            found = active_detect(
                provider,
                views,
                detector,
                labels,
                stats=stats,
                threshold=settings.threshold,
                active_threshold=settings.active_threshold,
                min_fov=settings.min_fov,
                looks=settings.looks,
            )
        else:
            found = passive_detect(views, detector, labels, threshold=settings.threshold)
        result.views += stats.get("zoom_views", 0)
        for s in found:
            memory.add(s, city.graph.xy[int(node)])
        result.sightings += len(found)
        if progress is not None:
            progress(1)
    return result


def evaluate_survey(
    result: SurveyResult,
    city: City,
    category: str,
    *,
    radius_m: float = RANGE_M,
    span_margin_deg: float = 1.0,
) -> dict[str, Any]:
    """Accuracy and recall of one category against the city's street furniture (V-IRL rule).

    Returns
    -------
    dict
        ``reported``, ``true_positives``, ``accuracy``, ``ground_truth_objects`` (within
        ``radius_m`` of the route), ``found``, ``recall``.
    """
    furniture = city.furniture
    gt_rows = furniture.of_kind(category)
    gt_xy = furniture.xy[gt_rows] if len(gt_rows) else np.zeros((0, 2))
    route_xy = city.graph.xy[np.asarray(result.route, dtype=int)]
    if len(gt_rows):
        d = np.hypot(*(gt_xy[:, None, :] - route_xy[None, :, :]).transpose(2, 0, 1))
        covered = set(np.flatnonzero(d.min(axis=1) <= radius_m).tolist())
    else:
        covered = set()
    objects = [o for o in result.memory.objects if o.category == category]
    # reaches[i, j]: some sighting of object i has ground-truth object j in range and span
    reaches = np.zeros((len(objects), len(gt_rows)), dtype=bool)
    for i, obj in enumerate(objects):
        for s, origin in zip(obj.sightings, obj.origins, strict=True):
            delta = gt_xy - np.asarray(origin)
            dist = np.hypot(delta[:, 0], delta[:, 1])
            bearing = np.degrees(np.arctan2(delta[:, 0], delta[:, 1])) % 360.0
            left, right = s.span
            width = float(angle_diff(right, left)) % 360.0
            offset = np.asarray(angle_diff(bearing, left)) % 360.0
            inside = (offset <= width + span_margin_deg) | (offset >= 360.0 - span_margin_deg)
            reaches[i] |= (dist <= radius_m) & inside
    tp = int(reaches.any(axis=1).sum())
    # each reported object finds at most one ground-truth object (V-IRL credits the first
    # it matches): the most objects found that way is a maximum bipartite matching
    found = 0
    if reaches.any():
        cols = sorted(covered)
        rows, picked = linear_sum_assignment(-reaches[:, cols].astype(float))
        found = int(reaches[:, cols][rows, picked].sum())
    n_gt = len(covered)
    return {
        "reported": len(objects),
        "true_positives": tp,
        "accuracy": tp / len(objects) if objects else 0.0,
        "ground_truth_objects": n_gt,
        "found": found,
        "recall": found / n_gt if n_gt else 0.0,
    }


def object_rows(city: City, memory: VisualMemory) -> list[dict[str, Any]]:
    """One row per remembered object: its category, estimated position, how often it was
    seen and its best sighting (viewpoint, label, bearing, box, score and the view)."""
    rows = []
    for obj in memory.objects:
        x, y = obj.position
        lat, lng = city.graph.projection.inverse(np.asarray([x]), np.asarray([y]))
        best = max(obj.sightings, key=lambda s: s.score)
        rows.append(
            {
                "id": obj.id,
                "category": obj.category,
                "label": best.label,
                "lat": round(float(lat[0]), 7),
                "lng": round(float(lng[0]), 7),
                "sightings": len(obj.sightings),
                "node": best.node,
                "heading": round(float(best.heading), 2),
                "box": [round(float(v), 1) for v in best.box],
                "score": round(float(best.score), 3),
                "view": {
                    "heading": round(float(best.view_heading), 2),
                    "pitch": round(float(best.view_pitch), 2),
                    "fov": round(float(best.view_fov), 2),
                },
            }
        )
    return rows


def in_view(
    city: City,
    xy: np.ndarray,
    route: Sequence[int],
    settings: SurveySettings,
    radius_m: float = RANGE_M,
) -> np.ndarray:
    """Which of the points ``xy`` (``(n, 2)`` metres) a walk of ``route`` had in view: within
    ``radius_m`` of a viewpoint and inside the fields of view taken there (``views_per_point``
    views ``fov`` apart around the travel heading, as :func:`survey_route` looks)."""
    xy = np.asarray(xy, dtype=float).reshape(-1, 2)
    seen = np.zeros(len(xy), dtype=bool)
    half = settings.views_per_point * settings.fov / 2.0
    for node, heading in zip(route, travel_headings(city, route), strict=True):
        delta = xy - city.graph.xy[int(node)]
        near = np.hypot(delta[:, 0], delta[:, 1]) <= radius_m
        bearing = np.degrees(np.arctan2(delta[:, 0], delta[:, 1]))
        ahead = np.abs(np.asarray(angle_diff(bearing, heading))) <= half
        seen |= near & (ahead if half < 180.0 else True)
    return seen


def objects_along(
    city: City, memory: VisualMemory, route: Sequence[int], radius_m: float = RANGE_M
) -> set[int]:
    """Ids of the remembered objects whose estimated position lies within ``radius_m`` of a
    viewpoint of ``route`` (the objects "along the way")."""
    if not memory.objects or not len(route):
        return set()
    where = np.asarray([obj.position for obj in memory.objects], dtype=float)
    nodes = city.graph.xy[np.asarray(route, dtype=int)]
    gaps = np.hypot(*(where[:, None, :] - nodes[None, :, :]).transpose(2, 0, 1)).min(axis=1)
    return {obj.id for obj, gap in zip(memory.objects, gaps, strict=True) if gap <= radius_m}


def dedup_errors(memory: VisualMemory) -> dict[str, int]:
    """With the simulator's object ids: ``duplicates`` (extra objects for one real object)
    and ``merged`` (objects whose sightings are of more than one real object)."""
    owners: dict[str, int] = {}
    merged = 0
    for obj in memory.objects:
        ids = {s.object_id for s in obj.sightings if s.object_id}
        merged += len(ids) > 1
        for i in ids:
            owners[i] = owners.get(i, 0) + 1
    return {"duplicates": sum(n - 1 for n in owners.values()), "merged": int(merged)}


def route_past(city: City, xy: Sequence[float], *, hops: int = 4) -> list[int]:
    """A short walk through the viewpoint nearest to metric point ``xy``: from a node
    ``hops`` steps on one side to a node ``hops`` steps on the other (shortest paths)."""
    graph = city.graph
    centre = int(np.argmin(np.hypot(*(graph.xy - np.asarray(xy, dtype=float)).T)))
    hop = graph.hop_distances_to([centre])
    ring = np.flatnonzero(hop == hops)
    if ring.size == 0:
        ring = np.flatnonzero(hop > 0)
        if ring.size == 0:
            return [centre]
    a = int(ring[0])
    b = int(ring[np.argmax(np.hypot(*(graph.xy[ring] - graph.xy[a]).T))])
    first = graph.shortest_path(a, centre)
    return first + graph.shortest_path(centre, b)[1:]
