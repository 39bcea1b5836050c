"""Fuzzy names, box-to-place matching and the map oracle."""

from __future__ import annotations

import pytest
from PIL import Image

from flaneur.perception.landmarks.map import MapLandmarks
from flaneur.perception.matching import fuzzy_ratio, match_box, normalize_name
from flaneur.views.base import View


def test_normalize_and_fuzzy():
    assert normalize_name("Hotel  Kämp!") == "hotel kamp"
    assert fuzzy_ratio("Hotel Kämp", "HOTEL KAMP") == 1.0
    assert fuzzy_ratio("Hotel Kämp", "HotelKamp") == 1.0
    assert fuzzy_ratio("Stockmann", "Stockmann Helsinki keskusta") == 1.0
    assert fuzzy_ratio("Stockmann", "Stokmann") >= 0.9
    assert fuzzy_ratio("Stockmann", "Apteekki") < 0.5
    assert fuzzy_ratio("", "x") == 0.0


def _view(node: str, heading: float, fov: float = 60.0) -> View:
    return View(Image.new("RGB", (800, 460)), node, heading, fov=fov)


def test_match_box_frustum(city):
    # from (0, -40) looking east, Stockmann (14, -40) is straight ahead, 14 m away
    view = _view("n100_060", 90.0)
    hit = match_box(city, view, (380, 100, 420, 200))
    assert hit.matched and hit.name == "Stockmann"
    assert hit.distance_m == pytest.approx(14.0, abs=0.5)
    assert hit.heading_range[0] < 90.0 < hit.heading_range[1]
    miss = match_box(city, view, (0, 100, 40, 200))  # far left: nothing there
    assert not miss.matched and miss.place_row is None
    far = match_box(city, view, (380, 100, 420, 200), radius_m=10)
    assert not far.matched


def test_map_landmarks(city):
    scorer = MapLandmarks(city, radius_m=50)
    view = _view("n100_060", 90.0)
    obs = {o.landmark: o for o in scorer.score(view, ["Stockmann", "Apteekki", "shop"])}
    assert obs["Stockmann"].visible and obs["Stockmann"].place_id == "p2"
    assert obs["Stockmann"].heading == pytest.approx(90.0, abs=1.0)
    assert not obs["Apteekki"].visible
    assert obs["shop"].visible  # a category matches the nearest place of that kind
    assert [o.landmark for o in scorer.visible(view, ["Apteekki", "Stockmann"])] == ["Stockmann"]
    behind = scorer.score(_view("n100_060", 270.0), ["Stockmann"])[0]
    assert not behind.visible
