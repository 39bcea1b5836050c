"""Street furniture drawn in synthetic views at true positions and sizes, and reported."""

from __future__ import annotations

import math

import pytest

from flaneur.testing.street_scene import street_city
from flaneur.views.synthetic import SyntheticViews


@pytest.fixture(scope="module")
def scene():
    city = street_city(
        [("waste_basket", 0.0, 10.0), ("fire_hydrant", 0.0, 40.0), ("bench", 0.0, -20.0)]
    )
    return SyntheticViews(city)


def test_object_drawn_where_and_as_big_as_the_camera_says(scene):
    view = scene.view("s0", 0.0, fov=90.0, size=(640, 640))
    objs = {o["object_id"]: o for o in view.metadata["objects"]}
    assert set(objs) == {"obj0", "obj1"}  # the bench is behind the camera
    x0, y0, x1, y1 = objs["obj0"]["box"]
    focal = 320.0 / math.tan(math.radians(45.0))  # 320 px
    assert (x1 - x0) == pytest.approx(focal * 0.5 / 10.0, abs=2)  # 0.5 m wide at 10 m
    assert (y1 - y0) == pytest.approx(focal * 0.9 / 10.0, abs=2)  # 0.9 m high
    assert (x0 + x1) / 2 == pytest.approx(320, abs=1.5)
    assert y1 == pytest.approx(320 + focal * 2.5 / 10.0, abs=2)  # ground 2.5 m below the eye
    assert objs["obj0"]["label"] == "waste_basket"
    assert objs["obj1"]["distance"] == pytest.approx(40.0, abs=0.01)
    # the hydrant's pixels are painted red
    hx0, hy0, hx1, hy1 = objs["obj1"]["box"]
    r, g, _ = view.image.getpixel(((hx0 + hx1) // 2, (hy0 + hy1) // 2 + 1))
    assert r > 120 and g < 90


def test_looking_away_draws_nothing_and_the_bench_appears_behind(scene):
    east = scene.view("s0", 90.0, fov=60.0, size=(320, 320))
    assert east.metadata["objects"] == []
    south = scene.view("s0", 180.0, fov=60.0, size=(320, 320))
    assert [o["label"] for o in south.metadata["objects"]] == ["bench"]
