"""Paint one street view: sky, ground, streets, walls with windows, and signs.

Painter's algorithm: the ground is drawn first (it never hides anything above it); walls
facing the camera are sorted far to near and drawn in that order, each followed by its
windows and by the signs that hang on it, so nearer walls cover farther walls and signs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np
from numpy.typing import NDArray
from PIL import Image, ImageDraw

from flaneur.views.synthetic.camera import NEAR, Camera
from flaneur.views.synthetic.labels import LabelParams, screen_box, view_labels
from flaneur.views.synthetic.objects import (
    object_corners,
    object_record,
    paint_object,
    visible_objects,
)
from flaneur.views.synthetic.scene import Scene
from flaneur.views.synthetic.signs import FASCIA, Signs, board_image
from flaneur.views.synthetic.windows import wall_windows
from flaneur.world.furniture import Furniture

SIGN_KINDS = ("fascia", "column", "blade", "label")


@dataclass
class Style:
    """Colours and drawing distances of the synthetic renderer."""

    sky_top: tuple[int, int, int] = (96, 148, 210)
    sky_horizon: tuple[int, int, int] = (206, 222, 236)
    haze: tuple[int, int, int] = (200, 212, 224)
    ground: tuple[int, int, int] = (150, 146, 136)
    sidewalk: tuple[int, int, int] = (186, 182, 174)
    road: tuple[int, int, int] = (84, 86, 90)
    marking: tuple[int, int, int] = (232, 232, 222)
    wall_radius: float = 120.0
    ground_radius: float = 110.0
    window_radius: float = 60.0
    min_wall_distance: float = 2.5
    object_radius: float = 80.0
    sun: tuple[float, float] = (-0.45, -0.89)


def _background(camera: Camera, style: Style) -> Image.Image:
    h = camera.height
    rows = np.arange(h, dtype=np.float64)
    horizon = camera.horizon_row
    t_sky = np.clip((horizon - rows) / (0.9 * h), 0.0, 1.0)[:, None]
    sky = (1 - t_sky) * np.array(style.sky_horizon) + t_sky * np.array(style.sky_top)
    t_ground = np.clip((rows - horizon) / max(h - horizon, 1.0), 0.0, 1.0)[:, None]
    ground = np.array(style.ground) * (0.9 + 0.1 * t_ground)
    column = np.where((rows < horizon)[:, None], sky, ground).astype(np.uint8)
    return Image.fromarray(np.repeat(column[:, None, :], camera.width, axis=1), "RGB")


def _fogged(colour: NDArray, dist: float, style: Style) -> tuple[int, int, int]:
    f = min(0.55, dist / 320.0)
    c = (1 - f) * colour + f * np.asarray(style.haze)
    return (int(c[0]), int(c[1]), int(c[2]))


def _ground_quads(a: NDArray, b: NDArray, half: float, extend: float) -> NDArray:
    d = b - a
    length = np.maximum(np.hypot(d[:, 0], d[:, 1]), 1e-9)[:, None]
    t = d / length
    n = np.column_stack([-t[:, 1], t[:, 0]]) * half
    a2, b2 = a - t * extend, b + t * extend
    quad = np.stack([a2 + n, b2 + n, b2 - n, a2 - n], axis=1)
    return np.concatenate([quad, np.zeros((*quad.shape[:2], 1))], axis=2)


def _discs(centres: NDArray, radius: float, k: int = 10) -> NDArray:
    ang = np.linspace(0, 2 * np.pi, k, endpoint=False)
    ring = np.column_stack([np.cos(ang), np.sin(ang), np.zeros(k)]) * radius
    pts = np.concatenate([centres, np.zeros((len(centres), 1))], axis=1)
    return pts[:, None, :] + ring[None, :, :]


def _project_polys(camera: Camera, cam: NDArray) -> list[list[float]]:
    """Pixel outlines of polygons ``(k, m, 3)`` in camera coordinates: those wholly in
    front of the near plane are projected at once, the others clipped one by one; polygons
    wholly behind the camera or beside the frame are dropped."""
    z = cam[..., 2]
    front = z.min(axis=1) >= NEAR
    out: list[list[float]] = []
    if front.any():
        px = camera.project(cam[front])
        u = px[..., 0]
        beside = (u.max(axis=1) < 0) | (u.min(axis=1) > camera.width)
        kept = px[~beside]
        out += kept.reshape(len(kept), 2 * cam.shape[1]).tolist()
    for poly in cam[~front & (z.max(axis=1) >= NEAR)]:
        pts = camera.clip_and_project(poly)
        if len(pts) >= 3:
            out.append([c for p in pts for c in p])
    return out


def _draw_polys(draw, camera: Camera, polys: NDArray, fill) -> None:
    if len(polys) == 0:
        return
    for outline in _project_polys(camera, camera.to_camera(polys)):
        draw.polygon(outline, fill=fill)


def _paint_ground(draw, scene: Scene, camera: Camera, style: Style) -> None:
    p = scene.params
    rows = scene.streets_near(camera.position[:2], style.ground_radius)
    if rows.size == 0:
        return
    a, b = scene.street_a[rows], scene.street_b[rows]
    nodes = scene.node_xy[scene.nodes_near(camera.position[:2], style.ground_radius)]
    half_walk = p.road_width / 2 + p.sidewalk
    _draw_polys(draw, camera, _ground_quads(a, b, half_walk, 0.0), style.sidewalk)
    _draw_polys(draw, camera, _discs(nodes, half_walk), style.sidewalk)
    _draw_polys(draw, camera, _ground_quads(a, b, p.road_width / 2, 0.0), style.road)
    _draw_polys(draw, camera, _discs(nodes, p.road_width / 2), style.road)
    # dashed centre line on the streets close by
    near = np.hypot(*(((a + b) / 2) - camera.position[:2]).T) < 50.0
    dashes = []
    for sa, sb in zip(a[near], b[near], strict=True):
        d = sb - sa
        length = math.hypot(*d)
        for s in np.arange(2.0, length - 2.0, 6.0):
            dashes.append((sa + d * (s / length), sa + d * (min(s + 3.0, length - 2) / length)))
    if dashes:
        da = np.array([x[0] for x in dashes])
        db = np.array([x[1] for x in dashes])
        _draw_polys(draw, camera, _ground_quads(da, db, 0.08, 0.0), style.marking)


def _visible_walls(scene: Scene, camera: Camera, style: Style):
    walls = scene.walls
    pos = camera.position[:2]
    rows = scene.walls_near(pos, style.wall_radius)
    if rows.size == 0:
        return rows, np.zeros(0), np.zeros((0, 4, 3))
    a, b = walls.a[rows], walls.b[rows]
    facing = np.einsum("ij,ij->i", walls.normal[rows], pos - a) > 0
    rows, a, b = rows[facing], a[facing], b[facing]
    top = walls.top[rows]
    zero = np.zeros(len(rows))
    corners = np.stack(
        [
            np.column_stack([a, zero]),
            np.column_stack([b, zero]),
            np.column_stack([b, top]),
            np.column_stack([a, top]),
        ],
        axis=1,
    )
    cam = camera.to_camera(corners)
    z = cam[..., 2]
    in_front = z.max(axis=1) >= NEAR
    zc = np.maximum(z, NEAR)
    u = cam[..., 0] / zc * camera.focal
    half_w = camera.width / 2.0
    left = (u < -half_w).all(axis=1) & (z >= NEAR).all(axis=1)
    right = (u > half_w).all(axis=1) & (z >= NEAR).all(axis=1)
    # walls crossing the near plane: keep unless both ends lie on the same side outside
    keep = in_front & ~left & ~right
    rows, a, b, cam = rows[keep], a[keep], b[keep], cam[keep]
    e = b - a
    t = np.clip(np.einsum("ij,ij->i", pos - a, e) / np.maximum((e * e).sum(1), 1e-12), 0, 1)
    depth = np.hypot(*(a + t[:, None] * e - pos).T)
    # a viewpoint that (in the data) touches a wall sees past it rather than into it
    clear = depth >= style.min_wall_distance
    return rows[clear], depth[clear], cam[clear]


def _paint_windows(draw, walls, row: int, camera: Camera, dist: float, style: Style) -> None:
    quads, colours = wall_windows(walls, row)
    if len(quads) == 0:
        return
    wc = camera.to_camera(quads)
    ok = wc[:, :, 2].min(axis=1) >= NEAR
    if not ok.any():
        return
    px = camera.project(wc[ok]).reshape(-1, 8).tolist()
    f = min(0.55, dist / 320.0)
    fill = ((1 - f) * colours[ok] + f * np.asarray(style.haze)).astype(np.uint8).tolist()
    for poly, colour in zip(px, fill, strict=True):
        draw.polygon(poly, fill=tuple(colour))


def _blocked(walls, rows: NDArray, corners: NDArray, pos: NDArray) -> NDArray[np.bool_]:
    """Whether the lines of sight to the left edge, centre and right edge of a sign cross
    one of the wall pieces ``rows`` (seen in plan: walls are taller than signs)."""
    if len(rows) == 0:
        return np.zeros(3, dtype=bool)
    ends = np.array([corners[0, :2], (corners[0, :2] + corners[1, :2]) / 2, corners[1, :2]])
    d = (ends - pos)[:, None, :]  # (3, 1, 2)
    a = walls.a[rows][None]
    e = walls.b[rows][None] - a
    w = a - pos
    denom = d[..., 0] * e[..., 1] - d[..., 1] * e[..., 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (w[..., 0] * e[..., 1] - w[..., 1] * e[..., 0]) / denom
        u = (w[..., 0] * d[..., 1] - w[..., 1] * d[..., 0]) / denom
    return ((t > 0) & (t < 0.98) & (u >= 0) & (u <= 1)).any(axis=1)


def _legible(camera: Camera, corners: NDArray, box, lines: int) -> bool:
    """Whether a sign painted in plain sight can be read: mostly in the frame, letters at
    least 9 pixels high, and not squeezed to less than 40% of its width by the angle."""
    overhang = 0.25 * (box[2] - box[0])
    if box[0] < -overhang or box[2] > camera.width + overhang:
        return False
    px = camera.project(camera.to_camera(corners))
    wide = max(np.hypot(*(px[1] - px[0])), np.hypot(*(px[2] - px[3])))
    high = max(np.hypot(*(px[3] - px[0])), np.hypot(*(px[2] - px[1])))
    true_w = float(np.hypot(*(corners[1, :2] - corners[0, :2])))
    true_h = float(corners[0, 2] - corners[3, 2])
    squeeze = (wide / max(high, 1e-9)) / max(true_w / max(true_h, 1e-9), 1e-9)
    return high / lines >= 9.0 and squeeze >= 0.4


def _homography(dst: NDArray, src: NDArray) -> list[float]:
    """Coefficients mapping output pixels ``dst`` to input pixels ``src`` (PIL PERSPECTIVE)."""
    rows = []
    rhs = []
    for (x, y), (u, v) in zip(dst, src, strict=True):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        rhs += [u, v]
    return np.linalg.solve(np.array(rows), np.array(rhs)).tolist()


def _paint_board(
    canvas: Image.Image, world: NDArray, image_for, camera: Camera
) -> list[int] | None:
    """Paint a sign image onto its world quad (TL, TR, BR, BL); returns its pixel box."""
    cam = camera.to_camera(world)
    if cam[:, 2].min() < max(NEAR, 1.0):
        return None
    px = camera.project(cam)
    x0, y0 = np.floor(px.min(axis=0)).astype(int)
    x1, y1 = np.ceil(px.max(axis=0)).astype(int)
    cx0, cy0 = max(x0, 0), max(y0, 0)
    cx1, cy1 = min(x1, canvas.width), min(y1, canvas.height)
    if cx1 - cx0 < 2 or cy1 - cy0 < 2:
        return None
    on_screen = max(np.hypot(*(px[1] - px[0])), np.hypot(*(px[2] - px[3])))
    src = image_for(float(on_screen))
    w, h = src.size
    coeffs = _homography(px - [cx0, cy0], np.array([[0, 0], [w, 0], [w, h], [0, h]], float))
    patch = src.transform(
        (cx1 - cx0, cy1 - cy0), Image.Transform.PERSPECTIVE, coeffs, Image.Resampling.BILINEAR
    )
    canvas.paste(patch, (cx0, cy0), patch)
    return [int(cx0), int(cy0), int(cx1), int(cy1)]


def _paint_post(draw, signs: Signs, i: int, camera: Camera, dist: float, style: Style) -> None:
    c = signs.centre[i]
    d = c - camera.position[:2]
    t = np.array([d[1], -d[0]]) / max(float(np.hypot(*d)), 1e-9) * 0.12
    quad = np.array(
        [[*(c - t), 0.0], [*(c + t), 0.0], [*(c + t), signs.bottom[i]], [*(c - t), signs.bottom[i]]]
    )
    pts = camera.clip_and_project(camera.to_camera(quad))
    if len(pts) >= 3:
        draw.polygon(pts, fill=_fogged(np.array((60, 64, 66), float), dist, style))


def paint(
    scene: Scene,
    signs: Signs,
    camera: Camera,
    style: Style | None = None,
    labels: LabelParams | None = None,
    furniture: Furniture | None = None,
    objects: list[dict] | None = None,
) -> tuple[Image.Image, list[dict]]:
    """Render the view of ``camera``.

    Street ``furniture`` within ``style.object_radius`` whose centre line of sight is not
    cut by a wall is drawn in depth order over the walls; each one drawn is appended to
    ``objects`` (see :func:`flaneur.views.synthetic.objects.object_record`).

    Returns
    -------
    tuple
        ``(image, drawn)`` where ``drawn`` lists the signs and labels painted, as dicts
        ``{"place": row, "name", "kind", "box": [x0, y0, x1, y1]}`` (a sign painted behind
        a nearer wall may be partly covered).
    """
    style = style or Style()
    canvas = _background(camera, style)
    draw = ImageDraw.Draw(canvas)
    _paint_ground(draw, scene, camera, style)
    rows, depth, cam = _visible_walls(scene, camera, style)
    walls = scene.walls
    items: list[tuple[float, int, int]] = [(d, 0, k) for k, d in enumerate(depth.tolist())]
    sign_items, shown, taken = _sign_items(signs, walls, rows, depth, camera, style)
    items += sign_items
    extra = view_labels(signs, walls, rows, camera, shown, labels, taken) if labels else []
    items += [(lab.dist - 1e4, 2, k) for k, lab in enumerate(extra)]
    if furniture is not None and len(furniture):
        pos = camera.position[:2]
        for dist, row in visible_objects(furniture, camera, style.object_radius):
            if not _blocked(walls, rows, object_corners(furniture, row, pos), pos)[1]:
                items.append((dist - 1e4, 3, row))
    items.sort(key=lambda it: -it[0])
    front = np.flatnonzero(cam[..., 2].min(axis=1) >= NEAR) if len(cam) else np.zeros(0, int)
    outlines = dict(zip(front.tolist(), camera.project(cam[front]).tolist(), strict=True))
    drawn: list[dict] = []
    for d, kind, k in items:
        if kind == 0:
            pts = outlines[k] if k in outlines else camera.clip_and_project(cam[k])
            _paint_wall(draw, walls, rows[k], pts, camera, d, style)
        elif kind == 3:
            assert furniture is not None, "objects are drawn only with furniture"
            obox = paint_object(draw, furniture, k, camera, partial(_fogged, style=style))
            if obox is not None and objects is not None:
                objects.append(object_record(furniture, k, obox, d + 1e4))
        else:
            record = _paint_sign(canvas, draw, signs, extra, kind, k, camera, d, style)
            if record is not None:
                drawn.append(record)
    return canvas, drawn


def _sign_items(
    signs: Signs, walls, rows: NDArray, depth: NDArray, camera: Camera, style: Style
) -> tuple[list[tuple[float, int, int]], set[int], list[tuple[float, ...]]]:
    """The signs to paint, as ``(painting depth, 1, sign)`` items; the places whose sign can
    be read; the pixel boxes of the signs in plain sight.

    A sign whose lines of sight are all cut by walls (``rows``, at distance ``depth``) is
    left out; one in plain sight is painted over every wall (far first); one partly hidden
    right after the nearest wall piece it hangs on."""
    pos = camera.position[:2]
    piece_depth = dict(zip(rows.tolist(), depth.tolist(), strict=True))
    normals = signs.normal
    items: list[tuple[float, int, int]] = []
    shown: set[int] = set()
    taken: list[tuple[float, ...]] = []
    for i in signs.near(pos, style.wall_radius).tolist():
        centre = signs.centre[i]
        dist = math.hypot(*(centre - pos))
        if dist > signs.radius:
            continue
        if signs.kind[i] == FASCIA and np.dot(normals[i], pos - centre) <= 0.05 * dist:
            continue
        corners = signs.corners(i, pos)
        blocked = _blocked(walls, rows, corners, pos)
        if blocked.all():
            continue
        if not blocked.any():
            items.append((dist - 1e4, 1, i))  # in plain sight: over every wall, far first
            box = screen_box(camera, corners)
            if box is not None and box[2] > 0 and box[0] < camera.width:
                taken.append(box)
                if _legible(camera, corners, box, signs.label[i].count("\n") + 1):
                    shown.add(int(signs.place[i]))
            continue
        # partly hidden: painted right after the nearest wall piece it hangs on
        hung = [piece_depth[p] for p in signs.pieces[i].tolist() if p in piece_depth]
        items.append(((min(hung) if hung else dist) - 1e-3, 1, i))
    return items, shown, taken


def _paint_wall(draw, walls, row: int, pts, camera: Camera, dist: float, style: Style) -> None:
    """Paint wall piece ``row`` (pixel outline ``pts``), shaded by the sun and fogged by its
    distance, and its windows when it is near."""
    light = np.asarray(style.sun)
    shade = 0.8 + 0.2 * float(np.dot(walls.normal[row], light))
    if len(pts) < 3:
        return
    draw.polygon(pts, fill=_fogged(walls.colour[row] * shade, dist, style))
    if dist < style.window_radius:
        _paint_windows(draw, walls, row, camera, dist, style)


def _paint_sign(
    canvas: Image.Image,
    draw,
    signs: Signs,
    extra: list,
    kind: int,
    k: int,
    camera: Camera,
    depth: float,
    style: Style,
) -> dict | None:
    """Paint sign ``k`` (``kind`` 1, with its post if it stands on one) or label ``extra[k]``
    (``kind`` 2); what was drawn, or None when it fell outside the frame."""
    pos = camera.position[:2]
    if kind == 1:
        if signs.column[k]:
            _paint_post(draw, signs, k, camera, depth + 1e4, style)
        box = _paint_board(canvas, signs.corners(k, pos), partial(signs.image, k), camera)
        place, name, what = int(signs.place[k]), signs.text[k], SIGN_KINDS[signs.kind[k]]
    else:
        lab = extra[k]
        image_for = partial(board_image, lab.text, lab.colours)
        box = _paint_board(canvas, lab.corners(pos), image_for, camera)
        place, name, what = lab.row, lab.text, "label"
    if box is None:
        return None
    return {"place": place, "name": name, "kind": what, "box": box}
