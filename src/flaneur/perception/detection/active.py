"""Active detection (V-IRL's visual checker): re-aim at each box, zoom in, detect again.

A box found at the first (proposal) threshold is checked by turning the camera to the box
centre and narrowing the field of view to ``fov × 4 × box long side / image side``, at least
``min_fov`` (V-IRL: 30°) and never wider than the first view; the detector runs on the
zoomed view at a higher threshold (V-IRL: 0.63–0.66). The candidate is confirmed by a box of
the same label in the zoomed view that lies where the candidate was: the candidate's box is
carried into the zoomed view through both cameras' geometry (:func:`project_box`; sides cut
by the first image's border are left open, since the object may go on past them), and at
least half of the confirming box must fall inside it. Far objects are bigger in the zoomed
view, so they score higher; a false box has nothing under it when looked at closely.
V-IRL accepts any box of the label in the zoomed view; asking for it where the candidate
was keeps a false box from being confirmed by an unrelated object elsewhere in the frame.

*Multi-scale confirmation* ("look again", ``looks``): when the first zoomed view gives no
confirming box, up to ``looks - 1`` further views of the same target are taken at other zoom
levels, aimed like the first (at the candidate's centre), and the first confirming box is
accepted by the same rule. The further fields of view lie evenly on a log scale strictly
between the zoomed view's and the first view's (with ``looks=2``: their geometric mean);
when that would put neighbouring looks less than ``MIN_SCALE_STEP`` apart (no distinct
framing), they lie between the zoomed view's and ``min_fov`` instead, and when neither
leaves room no further view is taken. Looking at several scales at test time is standard
for real detectors (a miss in one framing is often an effect of that framing: scale, crop,
where the object falls in the image), and the scene detector simulator draws every view
independently, so a lone miss of a large object (probability ``1 − recall_max``) is not
evidence against it. A false box still has nothing under it at any scale. ``looks=1`` is
V-IRL's single check.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from flaneur.perception.detection.base import Detection, DetectionError, Detector
from flaneur.perception.features import crop as crop_pixels
from flaneur.views.base import View, ViewProvider

PASSIVE_THRESHOLD = 0.55
ACTIVE_THRESHOLD = 0.64
MIN_FOV = 30.0
MIN_INSIDE = 0.5
"""Share of a confirming box that must lie inside the candidate's projected box."""
LOOKS = 1
"""Zoomed views at most per candidate (1: V-IRL's single check; the calibration's choice with
the simulator's default noise, see docs/detection.md)."""
MIN_SCALE_STEP = 1.1
"""Smallest ratio between the fields of view of two looks at one candidate: a framing that
differs by less is nearly the same picture, not another scale."""


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
    crop
        The box's pixels (RGB array) on real imagery, for feature matching in the visual
        memory; None on synthetic views (not saved with the memory).
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
    crop: np.ndarray | None = field(default=None, repr=False, compare=False)


def sighting(view: View, det: Detection) -> Sighting:
    """The :class:`Sighting` of ``det`` found in ``view`` (with its crop on real imagery:
    a view that does not list the objects a renderer drew)."""
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
        crop=None if "objects" in view.metadata else crop_pixels(view.image, det.box),
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


def look_fovs(fov: float, zoom_fov: float, looks: int, *, min_fov: float = MIN_FOV) -> list[float]:
    """Fields of view of the further looks at a candidate, after the first zoomed view.

    Parameters
    ----------
    fov
        The first (proposal) view's field of view in degrees.
    zoom_fov
        The first zoomed view's (:func:`zoom_request`).
    looks
        Zoomed views at most, the first included (so ``looks - 1`` further ones).
    min_fov
        The narrowest field of view allowed.

    Returns
    -------
    list of float
        ``looks - 1`` fields of view spaced evenly on a log scale strictly between
        ``zoom_fov`` and ``fov`` (for ``looks=2`` their geometric mean); if adjacent ones
        would differ by less than ``MIN_SCALE_STEP``, between ``zoom_fov`` and ``min_fov``
        instead (narrower); if that is too close as well, none. Never wider than ``fov``,
        never narrower than ``min_fov``.
    """
    if looks < 2 or fov < min_fov:
        return []
    for far in (fov, min_fov):
        step = (far / zoom_fov) ** (1.0 / looks)
        if max(step, 1.0 / step) >= MIN_SCALE_STEP:
            return [zoom_fov * step**k for k in range(1, looks)]
    return []


def look_requests(
    view: View, det: Detection, *, looks: int = LOOKS, min_fov: float = MIN_FOV
) -> list[tuple[float, float, float]]:
    """``(heading, pitch, fov)`` of every zoomed look at ``det``, in the order taken.

    The first is :func:`zoom_request`'s (V-IRL's rule); the further ones keep its aim at the
    box centre with the fields of view of :func:`look_fovs`.
    """
    heading, pitch, fov = zoom_request(view, det, min_fov=min_fov)
    further = look_fovs(view.fov, fov, looks, min_fov=min_fov)
    return [(heading, pitch, fov), *((heading, pitch, f) for f in further)]


def _check_looks(looks: int) -> None:
    if isinstance(looks, bool) or not isinstance(looks, int) or looks < 1:
        raise DetectionError(f"looks must be a positive integer, not {looks!r}")


@dataclass(frozen=True)
class Confirmation:
    """A candidate box confirmed in a zoomed view.

    Attributes
    ----------
    index
        Position of the candidate in the list given to :func:`confirm_candidates`.
    view
        The zoomed view that confirmed it.
    box
        The confirming box, in ``view``'s pixels.
    """

    index: int
    view: View
    box: Detection


def confirm_candidates(
    candidates: Sequence[tuple[View, Detection]],
    render: Callable[[View, float, float, float], View],
    detector: Detector,
    labels: Sequence[str],
    *,
    active_threshold: float = ACTIVE_THRESHOLD,
    min_fov: float = MIN_FOV,
    looks: int = LOOKS,
    stats: dict[str, int] | None = None,
) -> list[Confirmation]:
    """Look again at each candidate box through re-aimed, zoomed views (V-IRL's check).

    Parameters
    ----------
    candidates
        ``(first view, box)`` pairs.
    render
        ``render(first view, heading, pitch, fov) -> View``: the zoomed view from the first
        view's viewpoint, at its size.
    detector, labels
        The detector and the labels it is asked for in the zoomed views.
    active_threshold
        Threshold of a confirming box.
    min_fov
        The narrowest zoomed field of view.
    looks
        Zoomed views at most per candidate (:func:`look_requests`); the zoomed views of one
        look go to the detector in one batch.
    stats
        If given, gets ``zoom_views`` (how many zoomed views were taken, all looks) added.

    Returns
    -------
    list of Confirmation
        The confirmed candidates, in the order given.

    Raises
    ------
    DetectionError
        If ``looks`` is not a positive integer.
    """
    _check_looks(looks)
    if stats is not None:
        stats["zoom_views"] = stats.get("zoom_views", 0)
    requests = [look_requests(v, d, looks=looks, min_fov=min_fov) for v, d in candidates]
    confirmed: dict[int, Confirmation] = {}
    for look in range(looks):
        todo = [i for i, req in enumerate(requests) if i not in confirmed and look < len(req)]
        if not todo:
            break
        zoomed = [render(candidates[i][0], *requests[i][look]) for i in todo]
        if stats is not None:
            stats["zoom_views"] += len(zoomed)
        second = detector.detect_batch(zoomed, labels, threshold=active_threshold)
        for i, zview, dets in zip(todo, zoomed, second, strict=True):
            view, det = candidates[i]
            hit = confirming_box(view, det, zview, dets)
            if hit is not None:
                confirmed[i] = Confirmation(i, zview, hit)
    return [confirmed[i] for i in sorted(confirmed)]


def active_detect(
    provider: ViewProvider,
    views: Sequence[View],
    detector: Detector,
    labels: Sequence[str],
    *,
    threshold: float = PASSIVE_THRESHOLD,
    active_threshold: float = ACTIVE_THRESHOLD,
    min_fov: float = MIN_FOV,
    looks: int = LOOKS,
    stats: dict[str, int] | None = None,
) -> list[Sighting]:
    """Detect in ``views``, then confirm every box in re-aimed, zoomed views.

    Parameters
    ----------
    provider
        Makes the zoomed views (from the same viewpoint and at the same size as the first).
    views
        The first views, where candidates are proposed.
    detector
        Any detector.
    labels
        The labels to detect.
    threshold
        Proposal threshold in the first views.
    active_threshold
        Threshold of a confirming box in a zoomed view.
    min_fov
        The narrowest zoomed field of view.
    looks
        Zoomed views at most per candidate: the first at V-IRL's zoom, then, while no box
        confirms it, further ones at other scales (:func:`look_requests`). ``1`` is V-IRL's
        single check.
    stats
        If given, gets ``zoom_views`` (how many zoomed views were taken, all looks) added.

    Returns
    -------
    list of Sighting
        The confirmed boxes in the order of the candidates, each placed with the zoomed view
        that confirmed it (a better bearing and size).

    Raises
    ------
    DetectionError
        If ``looks`` is not a positive integer.
    """
    _check_looks(looks)
    first = detector.detect_batch(views, labels, threshold=threshold)
    candidates = [(v, d) for v, dets in zip(views, first, strict=True) for d in dets]

    def render(view: View, heading: float, pitch: float, fov: float) -> View:
        return provider.view(view.node, heading, pitch=pitch, fov=fov, size=view.size)

    found = confirm_candidates(
        candidates,
        render,
        detector,
        labels,
        active_threshold=active_threshold,
        min_fov=min_fov,
        looks=looks,
        stats=stats,
    )
    return [sighting(c.view, c.box) for c in found]


def _rotation(heading: float, pitch: float) -> np.ndarray:
    """Rows: the camera's right, up and forward axes in the world (x east, y north, z up)."""
    h, p = math.radians(heading), math.radians(pitch)
    sh, ch, sp, cp = math.sin(h), math.cos(h), math.sin(p), math.cos(p)
    return np.array([(ch, -sh, 0.0), (-sh * sp, -ch * sp, cp), (sh * cp, ch * cp, sp)])


def project_box(
    src: View, box: tuple[float, float, float, float], dst: View
) -> tuple[float, float, float, float]:
    """Where ``box`` (pixels of ``src``) falls in ``dst``, a view from the same viewpoint.

    The box's corners become rays through ``src``'s pinhole camera and are projected into
    ``dst``'s; a side of ``box`` on ``src``'s border is cut by the frame, so it is left open
    (extended to infinity) in the result. Corners behind ``dst``'s camera give an open box.
    """
    (sw, sh), (dw, dh) = src.size, dst.size
    x0, y0, x1, y1 = box
    corners = np.array([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], dtype=float)
    f_src, f_dst = src.focal_px, dst.focal_px
    cam = np.stack(
        [
            (corners[:, 0] - sw / 2.0) / f_src,
            -(corners[:, 1] - sh / 2.0) / f_src,
            np.ones(len(corners)),
        ],
        axis=1,
    )
    world = cam @ _rotation(src.heading, src.pitch)
    local = world @ _rotation(dst.heading, dst.pitch).T
    if (local[:, 2] <= 1e-6).any():
        return (-math.inf, -math.inf, math.inf, math.inf)
    u = dw / 2.0 + f_dst * local[:, 0] / local[:, 2]
    v = dh / 2.0 - f_dst * local[:, 1] / local[:, 2]
    edge = 1.0
    return (
        -math.inf if x0 <= edge else float(u.min()),
        -math.inf if y0 <= edge else float(v.min()),
        math.inf if x1 >= sw - edge else float(u.max()),
        math.inf if y1 >= sh - edge else float(v.max()),
    )


def inside_share(box: tuple[float, ...], region: tuple[float, ...]) -> float:
    """The share of ``box``'s area that lies inside ``region`` (0 for an empty box)."""
    x0, y0, x1, y1 = box
    area = max(x1 - x0, 0.0) * max(y1 - y0, 0.0)
    if area <= 0:
        return 0.0
    w = min(x1, region[2]) - max(x0, region[0])
    h = min(y1, region[3]) - max(y0, region[1])
    return max(w, 0.0) * max(h, 0.0) / area


def confirming_box(
    view: View,
    candidate: Detection,
    zoomed: View,
    found: Sequence[Detection],
    *,
    min_inside: float = MIN_INSIDE,
) -> Detection | None:
    """The box of ``found`` (detections in ``zoomed``) that confirms ``candidate``, or None.

    It must carry the candidate's label and lie at least ``min_inside`` inside the
    candidate's box projected into the zoomed view; the best-placed one wins, then the
    best-scoring.
    """
    region = project_box(view, candidate.box, zoomed)
    best, key = None, (min_inside, -1.0)
    for d in found:
        if d.label != candidate.label:
            continue
        share = inside_share(d.box, region)
        if (share, d.score) >= key:
            best, key = d, (share, d.score)
    return best


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
