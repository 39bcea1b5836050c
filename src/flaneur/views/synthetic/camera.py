"""A pinhole camera in the city's metric frame (x east, y north, z up, metres).

The camera looks along a compass ``heading`` (0 = north, clockwise) tilted by ``pitch``
(positive = up). Camera coordinates are ``X`` right, ``Y`` up and ``Z`` forward; a point
projects to pixel ``u = cx + f X / Z``, ``v = cy - f Y / Z`` with the focal length ``f``
set by the horizontal field of view.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

NEAR = 0.3
"""Near clipping plane in metres: geometry closer than this (in Z) is cut away."""


@dataclass
class Camera:
    """A pinhole camera.

    Parameters
    ----------
    x, y, z
        Position in metres (``z`` = eye height above the ground).
    heading, pitch, fov
        Direction and horizontal field of view in degrees.
    width, height
        Image size in pixels.
    """

    x: float
    y: float
    z: float
    heading: float
    pitch: float
    fov: float
    width: int
    height: int
    rotation: NDArray[np.float64] = field(init=False, repr=False)
    focal: float = field(init=False)

    def __post_init__(self) -> None:
        h, p = math.radians(self.heading), math.radians(self.pitch)
        sh, ch, sp, cp = math.sin(h), math.cos(h), math.sin(p), math.cos(p)
        right = (ch, -sh, 0.0)
        up = (-sh * sp, -ch * sp, cp)
        forward = (sh * cp, ch * cp, sp)
        self.rotation = np.array([right, up, forward])
        self.focal = (self.width / 2.0) / math.tan(math.radians(self.fov) / 2.0)

    @property
    def position(self) -> NDArray[np.float64]:
        """``(x, y, z)``."""
        return np.array([self.x, self.y, self.z])

    @property
    def horizon_row(self) -> float:
        """Image row of the horizon (may lie outside the image)."""
        return self.height / 2.0 + self.focal * math.tan(math.radians(self.pitch))

    def to_camera(self, points: NDArray[np.float64]) -> NDArray[np.float64]:
        """World points ``(..., 3)`` to camera coordinates ``(..., 3)``."""
        return (points - self.position) @ self.rotation.T

    def project(self, cam: NDArray[np.float64]) -> NDArray[np.float64]:
        """Camera coordinates ``(..., 3)`` with ``Z > 0`` to pixels ``(..., 2)``."""
        z = cam[..., 2]
        u = self.width / 2.0 + self.focal * cam[..., 0] / z
        v = self.height / 2.0 - self.focal * cam[..., 1] / z
        return np.stack([u, v], axis=-1)

    def clip_and_project(self, cam_poly: NDArray[np.float64]) -> list[tuple[float, float]]:
        """Clip one polygon (``(k, 3)`` camera coordinates) at the near plane and project it.

        Returns
        -------
        list of tuple
            Pixel vertices; empty if the polygon lies wholly behind the near plane.
        """
        z = cam_poly[:, 2]
        if z.min() >= NEAR:
            return [tuple(p) for p in self.project(cam_poly).tolist()]
        if z.max() < NEAR:
            return []
        out = []
        k = len(cam_poly)
        for i in range(k):
            cur, nxt = cam_poly[i], cam_poly[(i + 1) % k]
            cur_in, nxt_in = cur[2] >= NEAR, nxt[2] >= NEAR
            if cur_in:
                out.append(cur)
            if cur_in != nxt_in:
                t = (NEAR - cur[2]) / (nxt[2] - cur[2])
                out.append(cur + t * (nxt - cur))
        if len(out) < 3:
            return []
        return [tuple(p) for p in self.project(np.array(out)).tolist()]

    def column_bearing(self, u: float) -> float:
        """Relative bearing in degrees (negative = left) of image column ``u``."""
        return math.degrees(math.atan2(u - self.width / 2.0, self.focal))
