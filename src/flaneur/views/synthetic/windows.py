"""Windows and shop fronts of a wall piece, as world-space quads (computed once per wall).

Each wall is divided into bays about 3.4 m wide; street facades get a glazed shop window
per bay on the ground floor, and every wall gets one window per bay on each upper floor.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from flaneur.views.synthetic.scene import Walls

BAY_M = 3.4
FLOOR_M = 3.3
SHOP_GLASS = np.array([(48, 60, 70), (60, 72, 80), (70, 62, 56)], dtype=np.float64)
GLASS = np.array(
    [(84, 104, 122), (104, 124, 140), (70, 86, 100), (150, 168, 180)], dtype=np.float64
)
FRAME = np.array((236, 234, 226), dtype=np.float64)


def _quads(a, t, s0, s1, z0, z1) -> NDArray[np.float64]:
    """Quads on the wall plane from along-wall spans ``[s0, s1]`` and heights ``[z0, z1]``."""
    p0 = a + s0[:, None] * t
    p1 = a + s1[:, None] * t
    return np.stack(
        [
            np.column_stack([p0, z0]),
            np.column_stack([p1, z0]),
            np.column_stack([p1, z1]),
            np.column_stack([p0, z1]),
        ],
        axis=1,
    )


def _build(walls: Walls, row: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    a, b, top = walls.a[row], walls.b[row], float(walls.top[row])
    d = b - a
    length = float(np.hypot(*d))
    if length < 1.5:
        return np.zeros((0, 4, 3)), np.zeros((0, 3))
    t = d / length
    nb = max(1, round(length / BAY_M))
    bay = length / nb
    starts = np.arange(nb) * bay
    quads, colours = [], []
    seed = row * 7919
    if walls.kind[row] != 2:
        s0, s1 = starts + 0.35, starts + bay - 0.35
        quads.append(_quads(a, t, s0, s1, np.full(nb, 0.45), np.full(nb, 2.7)))
        colours.append(SHOP_GLASS[(seed + np.arange(nb)) % len(SHOP_GLASS)])
    floors = int((top - 0.8 - 3.5 - 1.5) // FLOOR_M) + 1 if top > 5.8 else 0
    if floors > 0:
        fz = 3.5 + FLOOR_M * np.arange(floors)
        centre = np.tile(starts + bay / 2, floors)
        z0 = np.repeat(fz, nb)
        half = min(0.6, bay / 2 - 0.3)
        # a light frame, then the glass inside it
        quads.append(_quads(a, t, centre - half - 0.1, centre + half + 0.1, z0 - 0.1, z0 + 1.6))
        colours.append(np.tile(FRAME, (len(centre), 1)))
        quads.append(_quads(a, t, centre - half, centre + half, z0, z0 + 1.5))
        colours.append(GLASS[(seed + np.arange(len(centre)) * 3) % len(GLASS)])
    if not quads:
        return np.zeros((0, 4, 3)), np.zeros((0, 3))
    return np.concatenate(quads), np.concatenate(colours)


def wall_windows(walls: Walls, row: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(quads (q, 4, 3), colours (q, 3))`` of the windows of wall piece ``row``."""
    cache = walls.__dict__.setdefault("_windows", {})
    hit = cache.get(row)
    if hit is None:
        hit = cache[row] = _build(walls, row)
    return hit
