"""Street furniture in synthetic views: simple upright shapes at their true positions and sizes.

Each object is a flat cut-out standing on the ground at its mapped position, turned to face
the camera, built from a few polygons in object coordinates (``s`` across in metres from the
centre, ``z`` up from the ground). Its width and height are those of
:data:`flaneur.world.furniture.FURNITURE_KINDS`, so an object's size in pixels falls with
distance as it would in a photograph. The painter draws them in depth order with the walls
and signs and reports each one it drew (object id, kind, pixel box, distance): that record
is what the scene detector simulator of :mod:`flaneur.perception.detection` reads.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from flaneur.views.synthetic.camera import NEAR, Camera
from flaneur.world.furniture import FURNITURE_KINDS, Furniture

Shape = list[tuple[tuple[int, int, int], list[tuple[float, float]]]]
"""Polygons ``(colour, [(s, z), ...])`` in units of the object's width (s) and height (z)."""


def _rect(s0: float, z0: float, s1: float, z1: float) -> list[tuple[float, float]]:
    return [(s0, z0), (s1, z0), (s1, z1), (s0, z1)]


SHAPES: dict[str, Shape] = {
    "waste_basket": [
        ((46, 84, 58), [(-0.5, 0.0), (0.5, 0.0), (0.55, 0.92), (-0.55, 0.92)]),
        ((30, 52, 38), _rect(-0.58, 0.88, 0.58, 1.0)),
    ],
    "fire_hydrant": [
        ((196, 34, 30), _rect(-0.35, 0.0, 0.35, 0.8)),
        ((196, 34, 30), _rect(-0.5, 0.45, 0.5, 0.6)),
        ((150, 24, 22), [(-0.35, 0.8), (0.35, 0.8), (0.15, 1.0), (-0.15, 1.0)]),
    ],
    "bench": [
        ((72, 56, 42), _rect(-0.47, 0.0, -0.42, 0.5)),
        ((72, 56, 42), _rect(0.42, 0.0, 0.47, 0.5)),
        ((140, 100, 62), _rect(-0.5, 0.45, 0.5, 0.55)),
        ((140, 100, 62), _rect(-0.5, 0.7, 0.5, 0.78)),
        ((140, 100, 62), _rect(-0.5, 0.88, 0.5, 1.0)),
    ],
    "mailbox": [
        ((70, 70, 70), _rect(-0.12, 0.0, 0.12, 0.45)),
        ((236, 168, 28), _rect(-0.5, 0.45, 0.5, 1.0)),
        ((40, 40, 40), _rect(-0.3, 0.82, 0.3, 0.87)),
    ],
    "bicycle_parking": [
        ((120, 124, 130), _rect(-0.5, 0.0, 0.5, 0.06)),
        *[
            ((120, 124, 130), [(a - 0.07, 0.0), (a - 0.04, 0.0), (a - 0.04, 1.0), (a - 0.07, 1.0)])
            for a in (-0.35, -0.05, 0.25)
        ],
        *[((120, 124, 130), _rect(a - 0.07, 0.94, a + 0.07, 1.0)) for a in (-0.35, -0.05, 0.25)],
    ],
    "street_lamp": [
        ((58, 62, 66), _rect(-0.2, 0.0, 0.2, 0.97)),
        ((240, 232, 190), _rect(-0.5, 0.93, 0.5, 1.0)),
    ],
    "bus_shelter": [
        ((60, 64, 70), _rect(-0.5, 0.0, -0.47, 0.93)),
        ((60, 64, 70), _rect(0.47, 0.0, 0.5, 0.93)),
        ((168, 196, 206), _rect(-0.47, 0.08, 0.47, 0.9)),
        ((46, 50, 56), _rect(-0.52, 0.9, 0.52, 1.0)),
        ((230, 230, 230), _rect(0.2, 0.35, 0.4, 0.7)),
    ],
}


def visible_objects(furniture: Furniture, camera: Camera, radius: float) -> list[tuple[float, int]]:
    """``(distance, row)`` of the furniture within ``radius`` in front of the camera."""
    rows, dist = furniture.within(camera.position[:2], radius)
    out = []
    for row, d in zip(rows.tolist(), dist.tolist(), strict=True):
        if d < 1.0:
            continue  # standing in the object: nothing sensible to draw
        out.append((float(d), int(row)))
    return out


def object_corners(furniture: Furniture, row: int, pos: NDArray) -> NDArray[np.float64]:
    """The object's upright quad facing ``pos``: TL, TR, BR, BL in world metres."""
    c = furniture.xy[row]
    w, h = furniture.size[row]
    d = c - pos
    t = np.array([d[1], -d[0]]) / max(float(np.hypot(*d)), 1e-9) * (w / 2.0)
    return np.array([[*(c - t), h], [*(c + t), h], [*(c + t), 0.0], [*(c - t), 0.0]])


def paint_object(draw, furniture: Furniture, row: int, camera: Camera, fog) -> list[int] | None:
    """Draw one object; returns its pixel box ``[x0, y0, x1, y1]`` clipped to the image,
    or None when nothing of it falls in the frame."""
    kind = str(furniture.kinds[row])
    c = furniture.xy[row]
    w, h = furniture.size[row]
    pos = camera.position[:2]
    d = c - pos
    dist = float(np.hypot(*d))
    across = np.array([d[1], -d[0]]) / max(dist, 1e-9)
    corners = object_corners(furniture, row, pos)
    cam = camera.to_camera(corners)
    if cam[:, 2].min() < max(NEAR, 0.5):
        return None
    px = camera.project(cam)
    x0, y0 = px.min(axis=0)
    x1, y1 = px.max(axis=0)
    box = [
        max(0, math.floor(x0)),
        max(0, math.floor(y0)),
        min(camera.width, math.ceil(x1)),
        min(camera.height, math.ceil(y1)),
    ]
    if box[2] - box[0] < 1 or box[3] - box[1] < 1:
        return None
    for colour, outline in SHAPES[kind]:
        pts = np.array([[*(c + across * (s * w)), z * h] for s, z in outline], dtype=np.float64)
        poly = camera.project(camera.to_camera(pts))
        draw.polygon([tuple(p) for p in poly.tolist()], fill=fog(np.asarray(colour, float), dist))
    return box


def object_record(furniture: Furniture, row: int, box: list[int], dist: float) -> dict:
    """What the painter reports for a drawn object (see the module docstring)."""
    return {
        "object_id": str(furniture.ids[row]),
        "label": str(furniture.kinds[row]),
        "box": box,
        "distance": round(dist, 2),
    }


__all__ = ["FURNITURE_KINDS", "SHAPES", "object_corners", "paint_object", "visible_objects"]
