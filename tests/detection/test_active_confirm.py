"""Active detection's confirmation: the candidate box carried into the zoomed view."""

from __future__ import annotations

import math

import pytest
from PIL import Image

from flaneur.perception.detection import Detection, SceneDetector, SceneNoise, active_detect
from flaneur.perception.detection.active import (
    confirming_box,
    inside_share,
    project_box,
    zoom_request,
)
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
