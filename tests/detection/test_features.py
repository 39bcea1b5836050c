"""ORB feature matching for de-duplication on real imagery, on images drawn here."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from flaneur.perception.detection import Sighting
from flaneur.perception.features import FeatureMatcher, FeatureMatchingError, crop
from flaneur.perception.memory import VisualMemory


def poster(seed: int, size=(160, 220)) -> Image.Image:
    """A textured board (seeded rectangles and discs), standing in for a real object."""
    rng = np.random.default_rng(seed)
    img = Image.new("RGB", size, tuple(int(v) for v in rng.integers(0, 255, 3)))
    draw = ImageDraw.Draw(img)
    for _ in range(40):
        x0, y0 = int(rng.integers(0, size[0])), int(rng.integers(0, size[1]))
        w, h = (int(v) for v in rng.integers(5, 40, 2))
        colour = tuple(int(v) for v in rng.integers(0, 255, 3))
        shape = draw.rectangle if rng.random() < 0.5 else draw.ellipse
        shape([x0, y0, x0 + w, y0 + h], fill=colour)
    return img


@pytest.fixture(scope="module")
def scene() -> Image.Image:
    image = Image.new("RGB", (640, 640), (120, 130, 140))
    image.paste(poster(1), (100, 200))
    image.paste(poster(2), (400, 220))
    return image


def test_same_object_in_overlapping_and_zoomed_crops_matches(scene):
    matcher = FeatureMatcher()
    a = crop(scene, (100, 200, 260, 420))
    b = crop(scene, (90, 215, 270, 430))  # the same board, framed differently
    zoomed = scene.crop((60, 160, 300, 460)).resize((480, 600))  # a closer look
    c = crop(zoomed, (80, 80, 400, 520))
    assert matcher.inliers(a, b) >= 50 and matcher.same(a, b)
    assert matcher.same(a, c)


def test_different_objects_do_not_match(scene):
    matcher = FeatureMatcher()
    a = crop(scene, (100, 200, 260, 420))
    other = crop(scene, (400, 220, 560, 440))
    assert matcher.inliers(a, other) < matcher.min_inliers
    flat = np.full((50, 50, 3), 128, np.uint8)  # no texture, no keypoints
    assert matcher.inliers(a, flat) == 0


def test_crop_grows_the_box_and_stays_in_the_image(scene):
    assert crop(scene, (100, 100, 200, 200)).shape == (120, 120, 3)  # 10 % margin each side
    assert crop(scene, (600, 600, 640, 640)).shape == (44, 44, 3)
    with pytest.raises(FeatureMatchingError, match="ratio"):
        FeatureMatcher(ratio=1.5)


def _seen(node, heading, pixels):
    return Sighting(
        node,
        "bench",
        0.8,
        heading,
        (heading - 5, heading + 5),
        (0, 0, 10, 10),
        heading,
        0.0,
        60.0,
        10.0,
        500.0,
        None,
        pixels,
    )


def test_memory_merges_real_sightings_by_features_and_saves_without_pixels(scene, tmp_path):
    same_a = crop(scene, (100, 200, 260, 420))
    same_b = crop(scene, (90, 215, 270, 430))
    other = crop(scene, (400, 220, 560, 440))
    # bearing rays from (0, 0) at 0 deg, (6, 0) at 20 deg and (-6, 0) at 10 deg never meet near the
    # range points, so only the features can tell that the first two are one bench
    memory = VisualMemory()
    first = memory.add(_seen("a", 0.0, same_a), (0.0, 0.0))
    assert memory.add(_seen("b", 20.0, same_b), (6.0, 0.0)) is first
    assert memory.add(_seen("c", 10.0, other), (-6.0, 0.0)) is not first
    plain = VisualMemory(feature_matching=False)
    plain.add(_seen("a", 0.0, same_a), (0.0, 0.0))
    plain.add(_seen("b", 20.0, same_b), (6.0, 0.0))
    assert len(plain) == 2
    back = VisualMemory.load(memory.save(tmp_path / "memory.json"))
    assert back.counts() == {"bench": 2} and back.objects[0].sightings[0].crop is None
