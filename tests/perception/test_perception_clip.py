"""CLIPLandmarks: standardisation and thresholding without torch (open_clip itself, on a
tiny model: tests/vision/test_vision_clip.py)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from flaneur.perception.landmarks.clip import (
    CLIPError,
    CLIPLandmarks,
    RandomProjectionBackend,
    standardize,
)
from flaneur.views.base import View


class TableBackend:
    """Embeddings looked up by image colour and caption: similarities chosen by the test."""

    name = "table"

    def __init__(self, images: dict, texts: dict) -> None:
        self.images, self.texts = images, texts

    def embed_images(self, images):
        return np.array([self.images[im.getpixel((0, 0))] for im in images], np.float32)

    def embed_texts(self, texts):
        return np.array([self.texts[t] for t in texts], np.float32)


def _img(value: int) -> Image.Image:
    return Image.new("RGB", (4, 4), (value, 0, 0))


def test_standardize():
    z = standardize(np.array([1.0, 3.0]), np.array([0.0, 1.0]), np.array([0.5, 0.0]))
    assert z[0] == pytest.approx(2.0) and z[1] > 1e6


def test_zscores_and_threshold():
    # reference images: unit vectors at angles giving similarities 0.1, 0.2, 0.3, 0.4 with
    # the caption of "Kiosk" (mean 0.25, std ~0.1118)
    sims = [0.1, 0.2, 0.3, 0.4, 0.9]
    images = {(k, 0, 0): [s, float(np.sqrt(1 - s * s))] for k, s in enumerate(sims)}
    backend = TableBackend(images, {"picture of Kiosk": [1.0, 0.0]})
    scorer = CLIPLandmarks(backend, [_img(k) for k in range(4)], tau=3.5)
    mean, std = scorer.stats("Kiosk")
    assert mean == pytest.approx(0.25) and std == pytest.approx(np.std([0.1, 0.2, 0.3, 0.4]))
    view = View(_img(4), "n1", 45.0)
    [obs] = scorer.score(view, ["Kiosk"])
    expected = (0.9 - 0.25) / np.std([0.1, 0.2, 0.3, 0.4])
    assert obs.score == pytest.approx(expected, rel=1e-4)
    assert obs.visible and obs.heading == 45.0 and obs.source == "clip"
    scorer.tau = expected + 0.01
    assert not scorer.score(view, ["Kiosk"])[0].visible


def test_random_projection_code_path():
    backend = RandomProjectionBackend(dim=32, seed=1)
    rng = np.random.default_rng(0)
    refs = [Image.fromarray(rng.integers(0, 255, (16, 16, 3), dtype=np.uint8)) for _ in range(30)]
    scorer = CLIPLandmarks(backend, refs)
    z = scorer.zscores(refs[0], ["Stockmann", "Hotel Kämp"])
    assert z.shape == (2,) and np.all(np.isfinite(z))
    allz = np.array([scorer.zscores(r, ["Stockmann"])[0] for r in refs])
    assert abs(allz.mean()) < 1e-4 and allz.std() == pytest.approx(1.0, rel=1e-3)
    a = backend.embed_texts(["picture of Stockmann"])
    assert np.allclose(
        a, RandomProjectionBackend(dim=32, seed=1).embed_texts(["picture of Stockmann"])
    )
    assert np.linalg.norm(a) == pytest.approx(1.0, rel=1e-5)


def test_needs_a_reference_set():
    scorer = CLIPLandmarks(RandomProjectionBackend())
    with pytest.raises(CLIPError, match="reference"):
        scorer.score(View(_img(1), "n", 0.0), ["Kiosk"])
    with pytest.raises(CLIPError, match="at least two"):
        scorer.fit([_img(1)])
