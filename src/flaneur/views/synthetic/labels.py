"""Line-of-sight labels: a place in view whose own signs are out of sight still shows its name.

Static signs hang on the facade in front of each place, so from some viewpoints a place
that lies in the field of view has no sign in sight: its shop front faces another street,
or is seen edge-on.  For such a place the renderer hangs a label where the line of sight
from the camera to the place first meets a facade, turned to the camera, provided that
facade is within ``reach`` metres of the place (the place's own building, not another
building in front of it: a place hidden behind other buildings stays hidden).  A place
with no facade in front of it gets its label where it stands.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from flaneur.views.synthetic.camera import Camera
from flaneur.views.synthetic.lettering import board_size
from flaneur.views.synthetic.scene import Walls, stable_hash
from flaneur.views.synthetic.signs import FONT_PX, SIGN_COLOURS, Signs


@dataclass
class LabelParams:
    """Label placement.

    Attributes
    ----------
    reach
        A facade farther than this in front of the place hides it (another building).
    radius
        Places farther than this get no label.
    min_distance
        Places nearer than this get no label (they fill the view anyway).
    height, max_width, bottom
        Board height, widest board (long names shrink) and bottom height in metres.
    """

    reach: float = 22.0
    radius: float = 60.0
    min_distance: float = 3.0
    height: float = 1.1
    max_width: float = 7.0
    bottom: float = 2.7


@dataclass
class Label:
    """One label of one view."""

    row: int
    text: str
    colours: tuple
    centre: NDArray[np.float64]
    width: float
    bottom: float
    top: float
    dist: float

    def corners(self, camera_xy: NDArray[np.float64]) -> NDArray[np.float64]:
        """World corners ``(4, 3)`` of the board turned to the camera."""
        d = self.centre - camera_xy
        t = np.array([d[1], -d[0]]) / max(float(np.hypot(*d)), 1e-9) * (self.width / 2.0)
        left, right = self.centre - t, self.centre + t
        return np.array(
            [[*left, self.top], [*right, self.top], [*right, self.bottom], [*left, self.bottom]]
        )


def _first_hit(pos, target, walls: Walls, rows) -> float | None:
    """Distance along ``pos -> target`` to the first of the wall pieces ``rows`` crossed."""
    if len(rows) == 0:
        return None
    d = target - pos
    a, b = walls.a[rows], walls.b[rows]
    e = b - a
    denom = d[0] * e[:, 1] - d[1] * e[:, 0]
    w = a - pos
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (w[:, 0] * e[:, 1] - w[:, 1] * e[:, 0]) / denom
        u = (w[:, 0] * d[1] - w[:, 1] * d[0]) / denom
    ok = (t > 0) & (t <= 1) & (u >= 0) & (u <= 1)
    if not ok.any():
        return None
    return float(t[ok].min() * np.hypot(*d))


def screen_box(camera: Camera, corners: NDArray[np.float64]) -> tuple[float, ...] | None:
    """Pixel box ``(x0, y0, x1, y1)`` of a world quad, or None if it is behind the camera."""
    cam = camera.to_camera(corners)
    if cam[:, 2].min() < 1.0:
        return None
    px = camera.project(cam)
    return (*px.min(axis=0).tolist(), *px.max(axis=0).tolist())


def _overlaps(box, boxes, pad: float = 3.0) -> bool:
    return any(
        box[0] < b[2] + pad and b[0] < box[2] + pad and box[1] < b[3] + pad and b[1] < box[3] + pad
        for b in boxes
    )


def view_labels(
    signs: Signs,
    walls: Walls,
    rows: NDArray[np.int64],
    camera: Camera,
    shown: set[int],
    params: LabelParams | None = None,
    taken: list[tuple[float, ...]] | None = None,
) -> list[Label]:
    """Labels of the places in ``camera``'s view that show no sign in sight.

    Parameters
    ----------
    signs
        The laid-out static signs (with the named places).
    walls, rows
        All walls and the pieces drawn in this view.
    camera
        The camera.
    shown
        Place rows that already have a static sign painted in plain sight in this view.
    taken
        Pixel boxes of those signs: a label that would cover one moves up a row.
    """
    params = params or LabelParams()
    pos = camera.position[:2]
    taken = list(taken or [])
    wanted = _places_in_view(signs, walls, rows, camera, shown, params)
    out: list[Label] = []
    for at, row, k, unit in sorted(wanted, key=lambda w: (w[0], w[1])):
        label = _best_label(signs.named_text[k], row, at, unit, camera, params, taken)
        if label is None:
            continue
        box = screen_box(camera, label.corners(pos))
        if box is not None:
            taken.append(box)
        out.append(label)
    return out


def _places_in_view(
    signs: Signs,
    walls: Walls,
    rows: NDArray[np.int64],
    camera: Camera,
    shown: set[int],
    params: LabelParams,
) -> list[tuple[float, int, int, NDArray[np.float64]]]:
    """The named places in the field of view that want a label (no sign of theirs shown, not
    behind another building): ``(distance of the label, place row, named index, unit vector
    from the camera)``."""
    pos = camera.position[:2]
    half_fov = camera.fov / 2.0
    wanted = []
    for k in signs.named_near(pos, params.radius).tolist():
        row = int(signs.named_rows[k])
        if row in shown:
            continue
        p = signs.named_xy[k]
        delta = p - pos
        dist = float(np.hypot(*delta))
        if dist < params.min_distance:
            continue
        rel = (math.degrees(math.atan2(delta[0], delta[1])) - camera.heading + 180.0) % 360.0
        if abs(rel - 180.0) > half_fov:
            continue
        hit = _first_hit(pos, p, walls, rows)
        if hit is not None and dist - hit > params.reach:
            continue  # another building stands in front of the place
        at = dist if hit is None else max(hit - 0.5, params.min_distance)
        wanted.append((at, row, k, delta / dist))
    return wanted


def _best_label(
    text: str,
    row: int,
    at: float,
    unit: NDArray[np.float64],
    camera: Camera,
    params: LabelParams,
    taken: list[tuple[float, ...]],
) -> Label | None:
    """The label of place ``row`` at ``at`` metres along ``unit``, on the first of its rows
    (the usual one, one up, one down, two up) that lies in the frame and covers no box of
    ``taken``, else on the first that lies in the frame; None when no row does."""
    pos = camera.position[:2]
    bw, bh = board_size(text, FONT_PX)
    # near labels shrink so that they stay about as large on screen as at 20 m
    height = min(params.height, max(0.4, 0.055 * at), params.max_width * bh / bw)
    width = height * bw / bh
    centre = pos + unit * at
    right = np.array([unit[1], -unit[0]])
    colours = SIGN_COLOURS[stable_hash(f"label-{row}") % len(SIGN_COLOURS)]
    step = height + 0.3
    options: list[tuple[bool, int, Label]] = []  # (overlaps, order, label)
    for bottom in (
        params.bottom,
        params.bottom + step,
        params.bottom - step,
        params.bottom + 2 * step,
    ):
        cand = Label(row, text, colours, centre, width, bottom, bottom + height, at)
        box = screen_box(camera, cand.corners(pos))
        if box is None:
            continue
        # keep the whole board in the frame: slide it sideways
        shift = max(0.0, 2.0 - box[0]) - max(0.0, box[2] - (camera.width - 2.0))
        if shift and box[2] - box[0] < camera.width - 4:
            cand.centre = centre + right * (shift * at / camera.focal)
            box = screen_box(camera, cand.corners(pos))
        if box is not None and box[1] >= 0 and box[3] <= camera.height:
            options.append((_overlaps(box, taken), len(options), cand))
    return min(options, key=lambda o: o[:2])[2] if options else None
