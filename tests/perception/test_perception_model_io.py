"""The pre- and post-processing around real vision models, without the models (no torch):
CLIP's image preparation, Grounding DINO's prompt and label tokens, box formats and frames,
and the registry entry of Grounding DINO. The models themselves run in tests/vision."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from PIL import Image

from flaneur.errors import FlaneurError
from flaneur.perception.detection import DETECTORS, REAL_DETECTORS, DetectionError, make_detector
from flaneur.perception.detection.adapters import (
    GroundingDinoDetector,
    cxcywh_to_xyxy,
    grounding_prompt,
    label_tokens,
    view_boxes,
)
from flaneur.perception.landmarks.clip import (
    OPENAI_MEAN,
    OPENAI_STD,
    CLIPError,
    downloads_allowed,
    open_clip_pixels,
)
from flaneur.views.base import View


def _noise(width: int, height: int, seed: int = 0) -> Image.Image:
    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, (height, width, 3), dtype=np.uint8))


def test_clip_pixels_normalise_per_channel_with_the_models_statistics():
    image = _noise(16, 16)
    raw = np.asarray(image, np.float32) / 255.0
    got = open_clip_pixels(image, {"size": 16})
    assert got.shape == (3, 16, 16) and got.dtype == np.float32
    expected = ((raw - np.float32(OPENAI_MEAN)) / np.float32(OPENAI_STD)).transpose(2, 0, 1)
    assert np.allclose(got, expected, atol=1e-6)
    mine = open_clip_pixels(image, {"size": 16, "mean": 0.5, "std": [0.5, 0.25, 0.125]})
    assert np.allclose(mine[2], (raw[..., 2] - 0.5) / 0.125, atol=1e-5)


def test_clip_pixels_resize_modes():
    wide = _noise(40, 20, 1)
    # shortest: 20 -> 16 high, 32 wide, the centre 16 columns
    shortest = open_clip_pixels(wide, {"size": 16, "mean": 0, "std": 1})
    resized = np.asarray(wide.resize((32, 16), Image.Resampling.BICUBIC), np.float32) / 255
    assert np.allclose(shortest, resized[:, 8:24].transpose(2, 0, 1), atol=1e-6)
    # longest: 40 -> 16 wide, 8 high, padded with the fill colour above and below
    longest = open_clip_pixels(
        wide, {"size": 16, "mean": 0, "std": 1, "resize_mode": "longest", "fill_color": 255}
    )
    assert np.allclose(longest[:, :4], 1.0) and np.allclose(longest[:, 12:], 1.0)
    inner = np.asarray(wide.resize((16, 8), Image.Resampling.BICUBIC), np.float32) / 255
    assert np.allclose(longest[:, 4:12], inner.transpose(2, 0, 1), atol=1e-6)
    squash = open_clip_pixels(wide, {"size": (8, 24), "mean": 0, "std": 1, "resize_mode": "squash"})
    assert squash.shape == (3, 8, 24)
    with pytest.raises(CLIPError, match="unknown open_clip resize_mode 'fit'"):
        open_clip_pixels(wide, {"size": 16, "resize_mode": "fit"})


def test_downloads_need_a_flag(monkeypatch):
    monkeypatch.delenv("FLANEUR_DOWNLOAD_WEIGHTS", raising=False)
    assert not downloads_allowed() and downloads_allowed(True)
    monkeypatch.setenv("FLANEUR_DOWNLOAD_WEIGHTS", "1")
    assert downloads_allowed() and not downloads_allowed(False)


def test_grounding_prompt_and_label_tokens():
    text, spans = grounding_prompt(["trash_bin", "Bench", "fire  hydrant"])
    assert text == "trash bin. bench. fire hydrant."
    assert [text[a:b] for a, b in spans] == ["trash bin", "bench", "fire hydrant"]
    # BERT-like offsets: [CLS] trash bin . bench . fire hydrant . [SEP] (+ padding)
    offsets = [
        (0, 0),
        (0, 5),
        (6, 9),
        (9, 10),
        (11, 16),
        (16, 17),
        (18, 22),
        (23, 30),
        (30, 31),
        (0, 0),
    ]
    tokens = label_tokens(offsets, spans, positions=12)
    assert tokens.shape == (3, 12)
    assert [list(np.flatnonzero(row)) for row in tokens] == [[1, 2], [4], [6, 7]]


def test_box_formats_and_the_views_frame():
    boxes = cxcywh_to_xyxy(np.array([[0.5, 0.5, 0.5, 0.25], [0.0, 1.0, 0.2, 0.2]]), 64, 48)
    assert np.allclose(boxes, [[16, 18, 48, 30], [-6.4, 43.2, 6.4, 52.8]])
    framed = view_boxes(np.vstack([boxes, [[70, 10, 80, 20]]]), 64, 48)
    assert np.allclose(framed[:2], [[16, 18, 48, 30], [0, 43.2, 6.4, 48]])
    assert np.isnan(framed[2]).all()  # wholly outside the view


def test_grounding_dino_is_a_registered_real_detector(monkeypatch, tmp_path):
    assert DETECTORS.get("grounding-dino") is GroundingDinoDetector
    assert "grounding-dino" in REAL_DETECTORS
    with pytest.raises(FlaneurError, match="needs weights") as info:
        make_detector("grounding-dino")
    assert "\n" not in str(info.value)
    with pytest.raises(DetectionError, match="Grounding DINO weights not found"):
        make_detector("grounding-dino", weights=str(tmp_path / "nothing"))
    monkeypatch.setitem(sys.modules, "transformers", None)  # the import fails
    det = make_detector("grounding-dino", weights=str(tmp_path))
    view = View(_noise(16, 16), "n", 0.0)
    with pytest.raises(DetectionError, match="pip install torch transformers") as info:
        det.detect(view, ["bench"])
    assert "\n" not in str(info.value)
