"""Perspective views cut from local equirectangular panoramas (StreetLearn / Touchdown style).

A panorama ``W x H`` covers 360 degrees of yaw across its width and 180 degrees of pitch
down its height (row 0 looks straight up). Its centre column looks along the node's
panorama yaw (``graph.pano_yaw``; 0 = north when unknown); yaw grows to the right.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from PIL import Image, UnidentifiedImageError

from flaneur.views.base import DEFAULT_SIZE, ViewError
from flaneur.views.cache import ViewCache
from flaneur.views.cached import CachedViewProvider, Fetched, Plan, ViewRequest
from flaneur.world.graph import StreetGraph


def perspective_rays(
    heading_rel: float, pitch: float, fov: float, size: tuple[int, int]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Yaw and pitch (degrees) of the ray through every pixel of a pinhole view.

    ``heading_rel`` is the view direction relative to the panorama centre. Returns two
    ``(height, width)`` arrays: yaw in (-180, 180] relative to the panorama centre (positive
    = right) and pitch in [-90, 90] (positive = up).
    """
    width, height = size
    f = (width / 2.0) / math.tan(math.radians(fov) / 2.0)
    xs = np.arange(width, dtype=np.float64) + 0.5 - width / 2.0
    ys = height / 2.0 - (np.arange(height, dtype=np.float64) + 0.5)
    x, y = np.meshgrid(xs, ys)
    z = np.full_like(x, f)
    # camera frame -> frame of the view heading (tilt by pitch about the x axis)
    p = math.radians(pitch)
    y2 = y * math.cos(p) + z * math.sin(p)
    z2 = -y * math.sin(p) + z * math.cos(p)
    yaw = np.degrees(np.arctan2(x, z2)) + heading_rel
    tilt = np.degrees(np.arctan2(y2, np.hypot(x, z2)))
    return (yaw + 180.0) % 360.0 - 180.0, tilt


def equirect_to_perspective(
    pano: NDArray[np.uint8] | Image.Image,
    heading: float,
    *,
    pitch: float = 0.0,
    fov: float = 60.0,
    size: tuple[int, int] = DEFAULT_SIZE,
    pano_yaw: float = 0.0,
) -> Image.Image:
    """Cut a perspective view out of an equirectangular panorama (bilinear sampling).

    Parameters
    ----------
    pano
        The panorama, ``(H, W, 3)`` array or PIL image; column ``W/2`` looks along
        ``pano_yaw``, row 0 straight up.
    heading, pitch, fov
        Compass heading, pitch (up positive) and horizontal fov of the view in degrees.
    size
        ``(width, height)`` of the view.
    pano_yaw
        Compass heading of the panorama's centre column.
    """
    arr = np.asarray(pano.convert("RGB") if isinstance(pano, Image.Image) else pano)
    if arr.ndim != 3 or arr.shape[2] < 3:
        raise ViewError(f"a panorama must be an RGB image, not an array of shape {arr.shape}")
    arr = arr[..., :3].astype(np.float32)
    ph, pw = arr.shape[:2]
    yaw, tilt = perspective_rays((heading - pano_yaw) % 360.0, pitch, fov, size)
    # pixel centres: column c covers yaw (c + 0.5) / pw * 360 - 180
    u = (yaw + 180.0) / 360.0 * pw - 0.5
    v = (90.0 - tilt) / 180.0 * ph - 0.5
    u0 = np.floor(u).astype(np.int64)
    v0 = np.floor(v).astype(np.int64)
    fu = (u - u0)[..., None].astype(np.float32)
    fv = (v - v0)[..., None].astype(np.float32)
    u0m, u1m = u0 % pw, (u0 + 1) % pw  # wrap around in yaw
    v0c, v1c = np.clip(v0, 0, ph - 1), np.clip(v0 + 1, 0, ph - 1)
    top = arr[v0c, u0m] * (1 - fu) + arr[v0c, u1m] * fu
    bottom = arr[v1c, u0m] * (1 - fu) + arr[v1c, u1m] * fu
    out = top * (1 - fv) + bottom * fv
    return Image.fromarray(np.clip(out + 0.5, 0, 255).astype(np.uint8), "RGB")


def load_panorama(path: str | Path) -> Image.Image:
    """Read a panorama image; raises :class:`ViewError` if it is missing or unreadable."""
    path = Path(path)
    try:
        with Image.open(path) as img:
            img.load()
            return img.convert("RGB")
    except FileNotFoundError:
        raise ViewError(f"panorama file not found: {path}") from None
    except (UnidentifiedImageError, OSError, SyntaxError) as err:
        raise ViewError(f"cannot read panorama {path}: {err}") from None


class PanoramaFolder(CachedViewProvider):
    """Perspective views from a folder of equirectangular panoramas ``<panoid>.jpg``.

    Parameters
    ----------
    folder
        Folder holding one panorama per node, named by node id (Touchdown/StreetLearn
        panorama ids are the node ids of their graphs).
    graph
        The street graph; its ``pano_yaw`` gives each panorama's centre heading (0 where
        unknown).
    suffixes
        File name endings tried in order.
    cache
        Optional :class:`ViewCache` for the cut views.
    """

    name: ClassVar[str] = "panorama"

    def __init__(
        self,
        folder: str | Path,
        graph: StreetGraph,
        *,
        suffixes: tuple[str, ...] = (".jpg", ".jpeg", ".png"),
        cache: ViewCache | None = None,
    ) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise ViewError(f"panorama folder not found: {self.folder}")
        self.graph = graph
        self.suffixes = suffixes
        self.cache = cache or ViewCache.in_memory(64)
        self._last: tuple[str, Image.Image] | None = None

    def path(self, node_id: str) -> Path:
        """The panorama file of ``node_id``; raises :class:`ViewError` if there is none."""
        for suffix in self.suffixes:
            candidate = self.folder / f"{node_id}{suffix}"
            if candidate.is_file():
                return candidate
        raise ViewError(f"no panorama for node {node_id!r} in {self.folder}")

    def panorama(self, node_id: str) -> Image.Image:
        """The panorama of ``node_id`` (the last one read is kept in memory)."""
        if self._last is not None and self._last[0] == node_id:
            return self._last[1]
        img = load_panorama(self.path(node_id))
        self._last = (node_id, img)
        return img

    def plan(self, request: ViewRequest) -> Plan:
        """The key of a cut: the panorama file (path, size, mtime), its yaw and the camera."""
        yaw = float(self.graph.pano_yaw[request.index])
        yaw = 0.0 if not math.isfinite(yaw) else yaw
        path = self.path(request.node_id)
        stat = path.stat()
        key: dict[str, Any] = {
            "provider": self.name,
            "file": str(path.resolve()),
            "mtime": stat.st_mtime_ns,
            "bytes": stat.st_size,
            "yaw": yaw,
            "heading": request.heading,
            "pitch": request.pitch,
            "fov": request.fov,
            "size": list(request.size),
        }
        return Plan(key, {"panorama": path.name, "pano_yaw": yaw}, extra={"yaw": yaw})

    def fetch(self, request: ViewRequest, plan: Plan) -> Fetched:
        """Cut the perspective view out of the panorama."""
        image = equirect_to_perspective(
            self.panorama(request.node_id),
            request.heading,
            pitch=request.pitch,
            fov=request.fov,
            size=request.size,
            pano_yaw=plan.extra["yaw"],
        )
        return Fetched(image, plan.metadata)
