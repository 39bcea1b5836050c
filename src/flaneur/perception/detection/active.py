"""Active detection (V-IRL's visual checker): re-aim at each box, zoom in, detect again.

A box found at the first threshold (V-IRL: 0.55) is checked by turning the camera to the
box centre and narrowing the field of view to ``fov × 4 × box long side / image side``, at
least ``min_fov`` (V-IRL: 30°) and never wider than the first view; the detector runs on the
zoomed view at a higher threshold (V-IRL: 0.63–0.66). The box is kept if a box of the same
label in the zoomed view covers the image centre. Far objects are bigger in the zoomed view,
so they score higher; a false box has nothing under it when looked at closely.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from flaneur.perception.detection.base import Detection, Detector
from flaneur.views.base import View, ViewProvider

PASSIVE_THRESHOLD = 0.55
ACTIVE_THRESHOLD = 0.64
MIN_FOV = 30.0


@dataclass(frozen=True)
class Sighting:
    """A detection placed in the world: where it was seen from and in which directions.

    Attributes
    ----------
    node
        Viewpoint node id.
    label
        Detected label.
    score
        Detection score (the zoomed view's, after active detection).
    heading
        Compass bearing of the box centre in degrees.
    span
        ``(left, right)`` compass bearings of the box edges.
    box, view_heading, view_pitch, view_fov
        The box and the view it was found in (the zoomed view after active detection).
    size_px
        The box height in pixels (with the view's focal length, a range cue).
    focal_px
        Focal length of that view in pixels.
    object_id
        The simulator's object id (analysis only), else None.
    """

    node: str
    label: str
    score: float
    heading: float
    span: tuple[float, float]
    box: tuple[float, float, float, float]
    view_heading: float
    view_pitch: float
    view_fov: float
    size_px: float
    focal_px: float
    object_id: str | None = None


def sighting(view: View, det: Detection) -> Sighting:
    """The :class:`Sighting` of ``det`` found in ``view``."""
    x0, y0, x1, y1 = det.box
    return Sighting(
        node=view.node,
        label=det.label,
        score=det.score,
        heading=view.bearing_of_x((x0 + x1) / 2.0),
        span=(view.bearing_of_x(x0), view.bearing_of_x(x1)),
        box=det.box,
        view_heading=view.heading,
        view_pitch=view.pitch,
        view_fov=view.fov,
        size_px=y1 - y0,
        focal_px=view.focal_px,
        object_id=det.object_id,
    )


def zoom_request(view: View, det: Detection, *, min_fov: float = MIN_FOV) -> tuple[float, ...]:
    """``(heading, pitch, fov)`` of the view re-aimed at ``det`` and zoomed (V-IRL's rule)."""
    width, height = view.size
    cx, cy = det.centre
    heading = view.bearing_of_x(cx)
    pitch = view.pitch - math.degrees(math.atan2(cy - height / 2.0, view.focal_px))
    fov = view.fov * 4.0 * det.long_side / max(width, height)
    fov = min(view.fov, max(min_fov, fov))
    return heading, max(-80.0, min(80.0, pitch)), fov


def active_detect(
    provider: ViewProvider,
    views: Sequence[View],
    detector: Detector,
    labels: Sequence[str],
    *,
    threshold: float = PASSIVE_THRESHOLD,
    active_threshold: float = ACTIVE_THRESHOLD,
    min_fov: float = MIN_FOV,
    stats: dict[str, int] | None = None,
) -> list[Sighting]:
    """Detect in ``views``, then confirm every box in a re-aimed, zoomed view.

    ``stats``, if given, gets ``zoom_views`` (how many zoomed views were taken) added.

    Returns
    -------
    list of Sighting
        The confirmed boxes, placed with the zoomed view (a better bearing and size).
    """
    first = detector.detect_batch(views, labels, threshold=threshold)
    zoomed: list[View] = []
    asked: list[Detection] = []
    for view, dets in zip(views, first, strict=True):
        for det in dets:
            heading, pitch, fov = zoom_request(view, det, min_fov=min_fov)
            zoomed.append(provider.view(view.node, heading, pitch=pitch, fov=fov, size=view.size))
            asked.append(det)
    if stats is not None:
        stats["zoom_views"] = stats.get("zoom_views", 0) + len(zoomed)
    second = detector.detect_batch(zoomed, labels, threshold=active_threshold)
    out = []
    for zview, det, dets in zip(zoomed, asked, second, strict=True):
        cx, cy = zview.size[0] / 2.0, zview.size[1] / 2.0
        hits = [
            d
            for d in dets
            if d.label == det.label and d.box[0] <= cx <= d.box[2] and d.box[1] <= cy <= d.box[3]
        ]
        if hits:
            out.append(sighting(zview, max(hits, key=lambda d: d.score)))
    return out


def passive_detect(
    views: Sequence[View],
    detector: Detector,
    labels: Sequence[str],
    *,
    threshold: float = PASSIVE_THRESHOLD,
) -> list[Sighting]:
    """Detect in ``views`` once, at ``threshold`` (no re-aiming)."""
    found = detector.detect_batch(views, labels, threshold=threshold)
    return [sighting(v, d) for v, dets in zip(views, found, strict=True) for d in dets]
