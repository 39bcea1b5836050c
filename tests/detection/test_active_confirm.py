"""Active detection's confirmation: the candidate box carried into the zoomed view, and
multi-scale confirmation (further looks at other zoom levels)."""

from __future__ import annotations

import math

import pytest
from PIL import Image

from flaneur.perception.detection import Detection, SceneDetector, SceneNoise, active_detect
from flaneur.perception.detection.active import (
    confirming_box,
    inside_share,
    look_fovs,
    project_box,
    sighting,
    zoom_request,
)
from flaneur.perception.detection.base import DetectionError
from flaneur.testing.street_scene import street_city
from flaneur.views.base import View
from flaneur.views.synthetic import SyntheticViews


def _view(heading, pitch=0.0, fov=60.0, size=(640, 640)):
    return View(Image.new("RGB", size), "n", heading, pitch=pitch, fov=fov)


def test_project_box_onto_itself_and_a_zoom_hand_computed():
    src = _view(90.0)
    box = (300.0, 300.0, 340.0, 340.0)
    assert project_box(src, box, src) == pytest.approx(box)
    # same heading, fov 60 -> fov 30: focal 554.3 -> 1194.3 px, so offsets grow by 2.155
    zoom = _view(90.0, fov=30.0)
    k = math.tan(math.radians(30)) / math.tan(math.radians(15))
    assert project_box(src, box, zoom) == pytest.approx(
        (320 - 20 * k, 320 - 20 * k, 320 + 20 * k, 320 + 20 * k)
    )
    # turning right by the box's bearing puts its centre at the image centre
    det = Detection((500.0, 300.0, 540.0, 340.0), "bench", 0.7)
    heading, pitch, fov = zoom_request(src, det)
    x0, y0, x1, y1 = project_box(src, det.box, _view(heading, pitch, fov))
    assert (x0 + x1) / 2 == pytest.approx(320.0, abs=0.5)
    assert (y0 + y1) / 2 == pytest.approx(320.0, abs=1.0)


def test_sides_cut_by_the_frame_stay_open():
    src = _view(0.0)
    x0, y0, x1, y1 = project_box(src, (300.0, 600.0, 340.0, 640.0), _view(0.0, -10.0, 30.0))
    assert y1 == math.inf and x0 > -math.inf and x1 < math.inf and y0 > -math.inf
    assert inside_share((0, 0, 10, 10), (5, 0, 20, math.inf)) == pytest.approx(0.5)
    assert inside_share((0, 0, 0, 10), (0, 0, 1, 1)) == 0.0


def test_confirming_box_must_lie_where_the_candidate_was():
    src, zoom = _view(0.0), _view(0.0, fov=30.0)
    cand = Detection((310.0, 310.0, 330.0, 330.0), "trash bin", 0.5)  # -> 298.4..341.6
    elsewhere = Detection((40.0, 500.0, 90.0, 600.0), "trash bin", 0.95)
    other_label = Detection((300.0, 300.0, 340.0, 340.0), "bench", 0.9)
    here = Detection((302.0, 296.0, 338.0, 346.0), "trash bin", 0.7)  # 36x50, 33.2 rows in
    assert confirming_box(src, cand, zoom, [elsewhere, other_label]) is None
    assert confirming_box(src, cand, zoom, [elsewhere, here, other_label]) is here


def test_a_box_cut_by_the_frame_is_confirmed_below_the_zoomed_centre():
    # only the top 8 px of an object show at the bottom edge; re-aimed at that sliver, the
    # zoomed view sees the whole object below its centre (the old "box over the image
    # centre" rule rejected it)
    src = _view(0.0)
    cand = Detection((300.0, 632.0, 340.0, 640.0), "trash bin", 0.6)
    heading, pitch, fov = zoom_request(src, cand)
    zoom = _view(heading, pitch, fov)
    whole = Detection((290.0, 330.0, 350.0, 500.0), "trash bin", 0.9)
    assert not whole.box[1] <= 320.0 <= whole.box[3]
    assert confirming_box(src, cand, zoom, [whole]) is whole


def test_an_object_cut_by_the_bottom_edge_is_confirmed():
    # a bin 2.8 m ahead: its foot is below the first view's bottom edge
    city = street_city([("waste_basket", 0.5, 2.8)], length=20.0)
    views = SyntheticViews(city)
    view = views.view("s0", 0.0, fov=60.0, size=(320, 320))
    drawn = view.metadata["objects"]
    assert drawn and drawn[0]["box"][3] == 320  # cut by the frame
    det = SceneDetector(SceneNoise.perfect())
    found = active_detect(views, [view], det, ["trash bin"], threshold=0.5)
    assert [s.object_id for s in found] == ["obj0"]


# ---------------------------------------------------------------- multi-scale confirmation


def _single_check(provider, views, detector, labels, *, threshold, stats):
    """Active detection as it was before ``looks``: one zoomed view per candidate."""
    first = detector.detect_batch(views, labels, threshold=threshold)
    zoomed, asked = [], []
    for view, dets in zip(views, first, strict=True):
        for det in dets:
            heading, pitch, fov = zoom_request(view, det)
            zoomed.append(provider.view(view.node, heading, pitch=pitch, fov=fov, size=view.size))
            asked.append((view, det))
    stats["zoom_views"] = stats.get("zoom_views", 0) + len(zoomed)
    second = detector.detect_batch(zoomed, labels, threshold=0.64)
    out = []
    for (view, det), zview, dets in zip(asked, zoomed, second, strict=True):
        hit = confirming_box(view, det, zview, dets)
        if hit is not None:
            out.append(sighting(zview, hit))
    return out


def test_one_look_is_the_single_check_and_two_looks_only_add():
    city = street_city(
        [("waste_basket", 2.0, 12.0), ("waste_basket", -3.0, 35.0), ("bench", 3.0, 25.0)],
        length=40.0,
    )
    provider = SyntheticViews(city)
    views = [provider.view("s0", h, fov=60.0, size=(320, 320)) for h in (-30.0, 0.0, 30.0)]
    noise = SceneNoise(false_positives=1.0)
    for seed in range(6):
        det = SceneDetector(noise, seed=seed)
        old_stats, one_stats, two_stats = {}, {}, {}
        old = _single_check(provider, views, det, ["trash bin"], threshold=0.45, stats=old_stats)
        one = active_detect(
            provider, views, det, ["trash bin"], threshold=0.45, looks=1, stats=one_stats
        )
        two = active_detect(provider, views, det, ["trash bin"], threshold=0.45, stats=two_stats)
        assert one == old and one_stats == old_stats
        # the first look is the same view, so a second look can only add confirmations
        assert [s for s in two if s in one] == one
        assert two_stats["zoom_views"] >= one_stats["zoom_views"]


class _Camera:
    """A view provider of blank views that records what it was asked for."""

    name = "stub"

    def __init__(self):
        self.asked = []

    def view(self, node, heading, *, pitch=0.0, fov=60.0, size=(640, 640)):
        self.asked.append((heading, pitch, fov))
        return _view(heading, pitch, fov, size)


class _Detector:
    """Proposes ``box`` in the first (fov 60) view; in a zoomed view reports a box over the
    candidate's projection only in the looks listed in ``hit_looks`` (1 = first zoomed)."""

    def __init__(self, box, hit_looks=(), score=0.9):
        self.box, self.hit_looks, self.score = box, set(hit_looks), score
        self.zoomed = 0
        self.source = _view(0.0)

    def detect_batch(self, views, labels, *, threshold=None):
        out = []
        for view in views:
            if view.fov == 60.0 and view.heading == 0.0:
                dets = [Detection(self.box, "trash bin", 0.6)]
            else:
                self.zoomed += 1
                region = project_box(self.source, self.box, view)
                dets = [Detection(region, "trash bin", self.score)]
                if self.zoomed not in self.hit_looks:
                    dets = [Detection((10.0, 10.0, 60.0, 90.0), "trash bin", 0.95)]  # elsewhere
            out.append([d for d in dets if d.score >= threshold])
        return out


BOX = (300.0, 300.0, 320.0, 340.0)  # fov 60 x 4 x 40 / 640 = 15 deg -> zoomed to 30 deg


def test_a_miss_in_the_first_zoomed_look_is_confirmed_by_the_second():
    for looks, want in ((1, 0), (2, 1)):
        camera, stats = _Camera(), {}
        found = active_detect(
            camera,
            [_view(0.0)],
            _Detector(BOX, hit_looks={2}),
            ["trash bin"],
            looks=looks,
            stats=stats,
        )
        assert len(found) == want and stats == {"zoom_views": looks}
        assert [fov for _, _, fov in camera.asked] == pytest.approx([30.0, math.sqrt(1800)][:looks])
        # both looks are aimed at the candidate's centre
        assert len({(round(h, 9), round(p, 9)) for h, p, _ in camera.asked}) == 1
    (s,) = found
    assert s.view_fov == pytest.approx(math.sqrt(60.0 * 30.0)) and s.score == 0.9


def test_a_confirmed_first_look_takes_no_further_view():
    camera, stats = _Camera(), {}
    found = active_detect(
        camera, [_view(0.0)], _Detector(BOX, hit_looks={1}), ["trash bin"], looks=3, stats=stats
    )
    assert len(found) == 1 and found[0].view_fov == 30.0 and stats == {"zoom_views": 1}


def test_a_false_proposal_is_not_confirmed_after_all_looks():
    camera, stats = _Camera(), {}
    found = active_detect(
        camera, [_view(0.0)], _Detector(BOX, hit_looks=()), ["trash bin"], looks=3, stats=stats
    )
    assert found == [] and stats == {"zoom_views": 3}
    fovs = [fov for _, _, fov in camera.asked]
    assert fovs == pytest.approx([30.0, 30.0 * 2 ** (1 / 3), 30.0 * 2 ** (2 / 3)])
    # a box that lies where the candidate was but scores under the active threshold neither
    low = _Detector(BOX, hit_looks={1, 2}, score=0.6)
    assert active_detect(_Camera(), [_view(0.0)], low, ["trash bin"], looks=2) == []


def test_look_fovs_between_the_first_and_zoomed_views_else_narrower_else_none():
    assert look_fovs(60.0, 30.0, 1) == []
    assert look_fovs(60.0, 30.0, 2) == pytest.approx([math.sqrt(1800.0)])
    assert look_fovs(60.0, 15.0, 3, min_fov=15.0) == pytest.approx(
        [15.0 * 4 ** (1 / 3), 15.0 * 4 ** (2 / 3)]
    )
    # the zoomed view is (nearly) the first view's width: the next look is narrower
    assert look_fovs(60.0, 60.0, 2) == pytest.approx([math.sqrt(1800.0)])
    assert look_fovs(60.0, 58.0, 2) == pytest.approx([math.sqrt(58.0 * 30.0)])
    # no distinct scale within [min_fov, fov]
    assert look_fovs(30.0, 30.0, 2) == []
    assert look_fovs(20.0, 20.0, 2) == []  # first view narrower than min_fov
    for fov, zoom, looks in ((60.0, 30.0, 4), (60.0, 45.0, 3), (60.0, 60.0, 5), (90.0, 31.0, 2)):
        for f in look_fovs(fov, zoom, looks):
            assert 30.0 <= f <= fov and abs(math.log(f / zoom)) >= math.log(1.1) - 1e-12


def test_looks_must_be_a_positive_integer():
    for bad in (0, -1, 1.5, True):
        with pytest.raises(DetectionError, match="looks must be a positive integer"):
            active_detect(_Camera(), [_view(0.0)], _Detector(BOX), ["trash bin"], looks=bad)
