"""The scene detector simulator, the detector interface and active detection, on
hand-made streets."""

from __future__ import annotations

import pytest

from flaneur.errors import FlaneurError
from flaneur.perception.detection import (
    Detection,
    DetectionError,
    SceneDetector,
    SceneNoise,
    active_detect,
    make_detector,
    passive_detect,
    zoom_request,
)
from flaneur.testing.street_scene import street_city
from flaneur.views.base import View
from flaneur.views.synthetic import SyntheticViews


@pytest.fixture(scope="module")
def views():
    city = street_city(
        [("waste_basket", 0.0, 10.0), ("fire_hydrant", 0.0, 40.0), ("bench", 0.0, -20.0)]
    )
    return SyntheticViews(city)


def test_perfect_simulator_reports_exactly_what_was_drawn(views):
    view = views.view("s0", 0.0, fov=90.0, size=(640, 640))
    det = SceneDetector(SceneNoise.perfect())
    found = det.detect(view, ["trash bin", "fire hydrant"])
    drawn = {o["object_id"]: o for o in view.metadata["objects"]}
    assert {d.object_id for d in found} == {"obj0", "obj1"}
    for d in found:
        assert list(d.box) == drawn[d.object_id]["box"]
        assert d.score == 1.0
    assert {d.label for d in found} == {"trash bin", "fire hydrant"}
    # only the asked labels come back
    assert [d.object_id for d in det.detect(view, ["hydrant"])] == ["obj1"]


def test_size_factor_hand_computed():
    noise = SceneNoise(size50=20.0, slope=2.0)
    assert noise.size_factor(20.0) == pytest.approx(0.5)
    assert noise.size_factor(40.0) == pytest.approx(0.8)  # 1 / (1 + 0.25)
    assert noise.size_factor(10.0) == pytest.approx(0.2)  # 1 / (1 + 4)
    assert noise.size_factor(0.0) == 0.0
    assert noise.size_factor(20.0, 10.0) == pytest.approx(0.8)  # the box curve


def test_small_far_objects_are_missed_more():
    objects = [("waste_basket", 1.5, float(y)) for y in range(-14, 70, 3)]
    city = street_city(objects, length=40.0)
    view = SyntheticViews(city).view("s-20", 0.0, fov=60.0, size=(640, 640))
    drawn = {o["object_id"]: o["distance"] for o in view.metadata["objects"]}
    near = {k for k, d in drawn.items() if d < 15}
    far = {k for k, d in drawn.items() if d >= 40}
    hit_near, hit_far = [], []
    for seed in range(12):
        found = {
            d.object_id
            for d in SceneDetector(seed=seed, threshold=0.0).detect(view, ["waste_basket"])
            if d.object_id
        }
        hit_near.append(len(found & near) / len(near))
        hit_far.append(len(found & far) / len(far))
    assert sum(hit_near) / 12 > sum(hit_far) / 12 + 0.3


def test_seeded_deterministic_and_cached(views):
    view = views.view("s0", 0.0, fov=90.0, size=(320, 320))
    noise = SceneNoise(false_positives=3.0)
    a = SceneDetector(noise, seed=3, threshold=0.0)
    b = SceneDetector(noise, seed=3, threshold=0.0)
    assert a.detect(view, ["bench", "waste_basket"]) == b.detect(view, ["bench", "waste_basket"])
    assert a.misses == 1 and a.hits == 0
    a.detect(view, ["bench", "waste_basket"], threshold=0.6)
    assert a.hits == 1  # a higher threshold reuses the cached scores


def test_false_positives_and_disk_cache(views, tmp_path):
    view = views.view("s0", 90.0, fov=60.0, size=(320, 320))  # nothing drawn here
    det = SceneDetector(SceneNoise(false_positives=4.0), seed=1, threshold=0.0, cache_dir=tmp_path)
    fps = det.detect(view, ["bench"])
    assert fps and all(d.object_id is None and 0.45 <= d.score <= 0.7 for d in fps)
    again = SceneDetector(
        SceneNoise(false_positives=4.0), seed=1, threshold=0.0, cache_dir=tmp_path
    )
    assert again.detect(view, ["bench"]) == fps and again.hits == 1
    (next(tmp_path.glob("*.json"))).write_text("{broken", "utf-8")
    assert (
        SceneDetector(
            SceneNoise(false_positives=4.0), seed=1, threshold=0.0, cache_dir=tmp_path
        ).detect(view, ["bench"])
        == fps
    )


def test_bad_input_is_one_line(views):
    view = views.view("s0", 0.0, fov=60.0, size=(64, 64))
    det = SceneDetector()
    with pytest.raises(DetectionError, match="unknown label 'flux capacitor'"):
        det.detect(view, ["flux capacitor"])
    with pytest.raises(DetectionError, match="non-empty"):
        det.detect(view, [])
    plain = View(view.image, "s0", 0.0, source="google")
    with pytest.raises(DetectionError, match="synthetic views only"):
        det.detect(plain, ["bench"])
    with pytest.raises(FlaneurError, match="unknown detector 'yolo9'"):
        make_detector("yolo9")
    with pytest.raises(DetectionError, match="recall_max"):
        SceneNoise(recall_max=2.0)


def test_zoom_request_follows_virl_rule():
    from PIL import Image

    view = View(Image.new("RGB", (640, 640)), "n", 90.0, fov=60.0)
    det = Detection((480.0, 300.0, 520.0, 380.0), "bench", 0.7)
    heading, pitch, fov = zoom_request(view, det)
    assert heading == pytest.approx(view.bearing_of_x(500.0))
    assert fov == 30.0  # 60 * 4 * 80 / 640 = 30
    det_big = Detection((100.0, 100.0, 300.0, 300.0), "bench", 0.7)
    assert zoom_request(view, det_big)[2] == 60.0  # 75 capped at the first view's fov
    assert pitch < 0  # the box is below the centre: look down


def test_active_detection_confirms_far_objects_and_drops_false_boxes():
    city = street_city([("waste_basket", 1.0, 30.0)], length=20.0)
    views = SyntheticViews(city)
    view = views.view("s0", 0.0, fov=60.0, size=(640, 640))
    noise = SceneNoise(false_positives=0.0, score_noise=0.0, jitter=0.0, recall_max=1.0)
    confirmed = 0
    for seed in range(30):
        det = SceneDetector(noise, seed=seed, threshold=0.0)
        assert det.detect(view, ["waste_basket"], threshold=0.64) == []  # too small
        for found in active_detect(views, [view], det, ["waste_basket"], threshold=0.3):
            confirmed += 1
            assert found.object_id == "obj0" and found.score >= 0.64
            assert found.view_fov == 30.0
            assert found.heading == pytest.approx(1.91, abs=0.3)  # atan(1 / 30)
    assert confirmed >= 3
    # a false box has nothing under it when looked at closely
    empty = SyntheticViews(street_city([], length=20.0))
    blank = empty.view("s0", 0.0, fov=60.0, size=(640, 640))
    fp = SceneDetector(SceneNoise(false_positives=5.0), seed=2, threshold=0.0)
    assert passive_detect([blank], fp, ["waste_basket"], threshold=0.55)
    assert active_detect(empty, [blank], fp, ["waste_basket"]) == []


def test_virl_profile_scores_small_objects_lower_and_changes_nothing_else():
    import dataclasses

    virl, default = SceneNoise.virl(), SceneNoise()
    assert dataclasses.replace(virl, size50=default.size50) == default
    # a 25 px tall bin (20 m away in a 640 px view of fov 60), by hand:
    # default q = 1 / (1 + (22/25)^2.5) = 1 / (1 + 0.7265) = 0.5792 -> score 0.42 + 0.55 q = 0.739
    # virl    q = 1 / (1 + (70/25)^2.5) = 1 / (1 + 13.119) = 0.0708 -> score 0.459
    assert default.size_factor(25.0) == pytest.approx(0.5792, abs=1e-4)
    assert virl.size_factor(25.0) == pytest.approx(0.0708, abs=1e-4)
    assert default.score_floor + default.score_span * virl.size_factor(25.0) == pytest.approx(
        0.459, abs=1e-3
    )
    # twice the size (the zoom to fov 30): q = 1 / (1 + (70/50)^2.5) = 1 / (1 + 2.3191) = 0.3013
    assert virl.size_factor(50.0) == pytest.approx(0.3013, abs=1e-4)
