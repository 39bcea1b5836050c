"""Equirectangular-to-perspective projection against a panorama with known markers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image

from flaneur.views.base import ViewError
from flaneur.views.panorama import PanoramaFolder, equirect_to_perspective, perspective_rays
from flaneur.world.graph import StreetGraph

W, H = 1440, 720  # 4 pixels per degree


def _pano(markers: dict[tuple[float, float], tuple[int, int, int]]) -> np.ndarray:
    """Grey panorama with square markers at (yaw from the centre column, pitch)."""
    pano = np.full((H, W, 3), 90, np.uint8)
    for (yaw, pitch), colour in markers.items():
        col = int((yaw + 180.0) / 360.0 * W)
        row = int((90.0 - pitch) / 180.0 * H)
        for c in range(col - 6, col + 6):
            pano[max(row - 6, 0) : row + 6, c % W] = colour
    return pano


def _find(img: Image.Image, colour) -> tuple[float, float]:
    a = np.asarray(img).astype(int)
    mask = np.abs(a - np.array(colour)).sum(axis=2) < 60
    ys, xs = np.nonzero(mask)
    assert xs.size, f"marker {colour} not in view"
    return float(xs.mean()), float(ys.mean())


RED, GREEN, BLUE = (230, 20, 20), (20, 220, 40), (20, 40, 230)
PANO = _pano({(90.0, 0.0): RED, (-45.0, 30.0): GREEN, (170.0, -10.0): BLUE})


def test_marker_at_centre_when_facing_it():
    yaw = 20.0  # the panorama's centre column looks at compass 20
    view = equirect_to_perspective(PANO, 110.0, fov=60, size=(400, 300), pano_yaw=yaw)
    x, y = _find(view, RED)
    assert x == pytest.approx(200, abs=1.5) and y == pytest.approx(150, abs=1.5)
    up = equirect_to_perspective(PANO, 20 - 45, pitch=30, fov=60, size=(400, 300), pano_yaw=yaw)
    x, y = _find(up, GREEN)
    assert x == pytest.approx(200, abs=1.5) and y == pytest.approx(150, abs=1.5)


def test_marker_off_centre_follows_the_pinhole_model():
    view = equirect_to_perspective(PANO, 100.0, fov=90, size=(400, 300), pano_yaw=0.0)
    x, y = _find(view, RED)  # red at compass 90: 10 degrees left of the view centre
    f = 200.0 / math.tan(math.radians(45.0))
    assert x == pytest.approx(200 - f * math.tan(math.radians(10)), abs=1.5)
    assert y == pytest.approx(150, abs=1.5)


def test_wraps_around_the_seam():
    view = equirect_to_perspective(PANO, 180.0, fov=60, size=(300, 200), pano_yaw=0.0)
    x, _ = _find(view, BLUE)  # blue at +170, just left of the seam at 180
    f = 150.0 / math.tan(math.radians(30.0))
    assert x == pytest.approx(150 - f * math.tan(math.radians(10)), abs=1.5)


def test_rays_of_the_centre_pixel():
    yaw, tilt = perspective_rays(30.0, 10.0, 60.0, (3, 3))
    assert yaw[1, 1] == pytest.approx(30.0) and tilt[1, 1] == pytest.approx(10.0)
    assert tilt[0, 1] > 10.0 > tilt[2, 1] and yaw[1, 0] < 30.0 < yaw[1, 2]


@pytest.fixture
def folder(tmp_path):
    graph = StreetGraph.from_edges(
        ["p1", "p2", "p3"],
        [60.0, 60.0001, 60.0002],
        [24.0, 24.0, 24.0],
        [0, 1],
        [1, 2],
        pano_yaw=[20.0, 0.0, 0.0],
    )
    Image.fromarray(PANO).save(tmp_path / "p1.jpg", quality=95)
    (tmp_path / "p2.jpg").write_bytes(b"not an image")
    return PanoramaFolder(tmp_path, graph)


def test_folder_cuts_views_with_the_node_yaw(folder):
    view = folder.view("p1", 110.0, size=(400, 300))
    x, y = _find(view.image, RED)
    assert abs(x - 200) < 2 and abs(y - 150) < 2
    assert view.source == "panorama" and view.metadata["pano_yaw"] == 20.0
    assert folder.view("p1", 110.0, size=(400, 300)).cached


def test_folder_errors(folder, tmp_path):
    with pytest.raises(ViewError, match="cannot read panorama"):
        folder.view("p2", 0.0)
    with pytest.raises(ViewError, match="no panorama for node 'p3'"):
        folder.view("p3", 0.0)
    with pytest.raises(ViewError, match="fov"):
        folder.view("p1", 0.0, fov=190)
    with pytest.raises(ViewError, match="folder not found"):
        PanoramaFolder(tmp_path / "missing", folder.graph)
