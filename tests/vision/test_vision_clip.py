"""CLIP through open_clip for real: a tiny randomly initialised CLIP saved in open_clip's
folder format is loaded by ``OpenCLIPBackend`` (open_clip's config, weights and tokenizer
loading), and its images are prepared by flaneur's port of open_clip's evaluation transform.
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest
from PIL import Image

from flaneur.perception.landmarks.clip import (
    CLIPError,
    CLIPLandmarks,
    OpenCLIPBackend,
    import_open_clip,
    open_clip_pixels,
)

EXTRA = "pip install -e '.[vision]' && pip install --no-deps open_clip_torch==3.3.0"
if importlib.util.find_spec("open_clip") is None:
    pytest.skip(f"open_clip is not installed (the vision extra: {EXTRA})", allow_module_level=True)
torch = pytest.importorskip("torch", reason=f"torch is not installed (the vision extra: {EXTRA})")


def _by_hand(image: Image.Image, mean, std) -> np.ndarray:
    """What the model must see of a 32 px high image: the centre 32 columns (the left
    offset rounded half to even, as torchvision's centre crop does), scaled to [0, 1] and
    normalised with the saved mean and std, channels first."""
    pixels = np.asarray(image.convert("RGB"), dtype=np.float32) / 255.0
    left = round((pixels.shape[1] - 32) / 2)
    crop = pixels[:, left : left + 32]
    return ((crop - np.float32(mean)) / np.float32(std)).transpose(2, 0, 1)


def _reference(tiny, pixels: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        out = tiny.model.encode_image(torch.from_numpy(np.ascontiguousarray(pixels))).numpy()
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_the_saved_model_loads_and_sees_normalised_centre_crops(tiny_clip, noise):
    backend = OpenCLIPBackend(str(tiny_clip.folder), batch_size=2)
    mean, std = tiny_clip.mean, tiny_clip.std
    assert backend.preprocess_cfg["mean"] == list(mean)
    square, wide = noise(32, 32, 1).image, noise(48, 32, 2).image
    pixels = backend.pixels([square, wide])
    expected = np.stack([_by_hand(square, mean, std), _by_hand(wide, mean, std)])
    assert pixels.shape == (2, 3, 32, 32) and pixels.dtype == np.float32
    assert np.allclose(pixels, expected, atol=1e-6)
    # three images in batches of two: the saved weights, not a fresh random model
    images = [square, wide, square]
    emb = backend.embed_images(images)
    assert emb.shape == (3, 16)
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    assert np.allclose(emb, _reference(tiny_clip, np.stack([*expected, expected[0]])), atol=1e-5)


def test_a_larger_view_is_resized_by_its_short_side_then_cropped(tiny_clip, noise):
    backend = OpenCLIPBackend(str(tiny_clip.folder))
    view = noise(80, 50, 3).image  # short side 50 -> 32: 51 x 32, then the centre 32
    resized = view.resize((51, 32), Image.Resampling.BICUBIC)
    got = backend.pixels([view])[0]
    assert np.allclose(got, _by_hand(resized, tiny_clip.mean, tiny_clip.std), atol=1e-6)


def test_texts_and_scores_are_deterministic_and_follow_the_image(tiny_clip, noise):
    backend = OpenCLIPBackend(str(tiny_clip.folder))
    texts = backend.embed_texts(["picture of Kiosk", "picture of Stockmann"])
    assert texts.shape == (2, 16) and np.allclose(np.linalg.norm(texts, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(texts[0], texts[1])
    refs = [noise(40, 32, 10 + k).image for k in range(8)]
    first = CLIPLandmarks(backend, refs, tau=0.5)
    again = CLIPLandmarks(OpenCLIPBackend(str(tiny_clip.folder)), refs, tau=0.5)
    view, other = noise(40, 32, 99), noise(40, 32, 100)
    names = ["Kiosk", "Stockmann"]
    z = first.zscores(view, names)
    assert z.shape == (2,) and np.all(np.isfinite(z))
    assert np.array_equal(z, again.zscores(view, names))  # same input, same output
    assert not np.allclose(z, first.zscores(other, names))  # the image moves the scores
    assert [o.score for o in first.score(view, names)] == [round(float(v), 4) for v in z]


def test_nothing_is_downloaded_without_the_flag(tiny_clip, tmp_path, monkeypatch):
    monkeypatch.delenv("FLANEUR_DOWNLOAD_WEIGHTS", raising=False)
    with pytest.raises(CLIPError, match="would be downloaded: pass download=True") as info:
        OpenCLIPBackend("ViT-B-32", "laion2b_s34b_b79k")
    assert "\n" not in str(info.value)
    with pytest.raises(CLIPError, match="unknown open_clip architecture 'tiny'"):
        OpenCLIPBackend("tiny")
    with pytest.raises(CLIPError, match=r"no open_clip_config\.json"):
        OpenCLIPBackend(str(tmp_path))
    monkeypatch.setenv("FLANEUR_DOWNLOAD_WEIGHTS", "1")  # allowed: fails later, offline
    with pytest.raises(CLIPError, match="unknown open_clip architecture"):
        OpenCLIPBackend("tiny", "laion2b_s34b_b79k")


def test_open_clip_imports_without_torchvision_and_leaves_none_behind():
    open_clip, _ = import_open_clip()
    assert hasattr(open_clip, "create_model")
    if importlib.util.find_spec("torchvision") is None:
        assert not any(name.split(".")[0] == "torchvision" for name in sys.modules)
        with pytest.raises(CLIPError, match="OpenCLIPBackend prepares images itself"):
            open_clip.image_transform(32, is_train=False)


@pytest.mark.skipif(
    importlib.util.find_spec("torchvision") is None,
    reason="torchvision is not installed: open_clip's own transform cannot run to compare",
)
def test_pixels_equal_open_clips_own_transform(tiny_clip, noise):  # pragma: no cover
    open_clip, _ = import_open_clip()
    mean, std = tiny_clip.mean, tiny_clip.std
    for mode in ("shortest", "longest", "squash"):
        cfg = {"size": 32, "mean": mean, "std": std, "resize_mode": mode}
        transform = open_clip.image_transform(
            32, is_train=False, mean=mean, std=std, resize_mode=mode
        )
        for view in (noise(80, 50, 4), noise(30, 70, 5)):
            ref = transform(view.image).numpy()
            assert np.allclose(open_clip_pixels(view.image, cfg), ref, atol=1e-6)
