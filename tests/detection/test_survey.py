"""RX-399's walk on a hand-made street, and V-IRL's evaluation rule with hand-computed values."""

from __future__ import annotations

import pytest

from flaneur.perception.detection import SceneDetector, SceneNoise, Sighting
from flaneur.perception.memory import VisualMemory
from flaneur.perception.survey import (
    SurveyResult,
    SurveySettings,
    evaluate_survey,
    route_past,
    survey_route,
    travel_headings,
)
from flaneur.testing.street_scene import street_city
from flaneur.views.synthetic import SyntheticViews


def _sighting(node, left, right):
    mid = (left + right) / 2
    return Sighting(
        node, "trash bin", 0.9, mid, (left, right), (0, 0, 1, 1), mid, 0.0, 60.0, 45.0, 500.0
    )


def test_evaluation_rule_hand_computed():
    # bins at (2, 10) and (-3, 60); the route's viewpoints run along x = 0, y = -100..100
    city = street_city(
        [("waste_basket", 2.0, 10.0), ("waste_basket", -3.0, 60.0), ("bench", 2.0, 12.0)]
    )
    memory = VisualMemory()
    origin = city.graph.xy[city.graph.index("s0")]
    memory.add(_sighting("s0", 8.0, 14.0), origin)  # bearing to (2, 10) is 11.3 deg: right
    memory.add(_sighting("s0", 40.0, 50.0), origin)  # nothing there: wrong
    far = city.graph.xy[city.graph.index("s-50")]
    memory.add(_sighting("s-50", -5.0, 5.0), far)  # (-3, 60) is 110 m away: wrong
    route = [city.graph.index(f"s{y}") for y in range(0, 40, 10)]
    result = SurveyResult(memory, route)
    figures = evaluate_survey(result, city, "waste_basket")
    assert figures["reported"] == 3 and figures["true_positives"] == 1
    assert figures["accuracy"] == pytest.approx(1 / 3)
    assert figures["ground_truth_objects"] == 1  # (-3, 60) is 30 m from the route's end
    assert figures["recall"] == 1.0


def test_route_past_and_headings():
    city = street_city([], length=200.0)
    route = route_past(city, (0.5, 0.0), hops=3)
    names = [str(city.graph.ids[n]) for n in route]
    south_north = [f"s{y}" for y in range(-30, 31, 10)]
    assert names in (south_north, south_north[::-1])
    want = 0.0 if names == south_north else 180.0
    assert [round(h % 360 + 1e-6) % 360 for h in travel_headings(city, route)] == [want] * 7


def test_walk_counts_each_bin_once_with_a_perfect_detector():
    city = street_city(
        [("waste_basket", 2.5, 15.0), ("waste_basket", -2.5, 55.0), ("bench", 2.5, 30.0)],
        length=120.0,
    )
    provider = SyntheticViews(city)
    route = [city.graph.index(f"s{y}") for y in range(-60, 61, 10)]
    result = survey_route(
        provider,
        city,
        route,
        SceneDetector(SceneNoise.perfect()),
        ["trash bin"],
        SurveySettings(size=(320, 320)),
    )
    assert result.views > 3 * len(route)  # the zoomed views are counted too
    assert result.counts() == {"waste_basket": 2}
    figures = evaluate_survey(result, city, "waste_basket")
    assert figures["accuracy"] == 1.0 and figures["recall"] == 1.0


def test_one_reported_object_finds_at_most_one_bin():
    # bins at (2, 10) and (-2, 10): one wide box from s0 spans both (bearings +-11.3 deg)
    city = street_city([("waste_basket", 2.0, 10.0), ("waste_basket", -2.0, 10.0)])
    origin = city.graph.xy[city.graph.index("s0")]
    route = [city.graph.index("s0")]
    memory = VisualMemory()
    memory.add(_sighting("s0", -15.0, 15.0), origin)
    figures = evaluate_survey(SurveyResult(memory, route), city, "waste_basket")
    assert figures["true_positives"] == 1 and figures["ground_truth_objects"] == 2
    assert figures["found"] == 1 and figures["recall"] == 0.5
    # a second object over the left bin only: the matching gives each object its own bin
    other = city.graph.xy[city.graph.index("s10")]  # (-2, 10) is due west of (0, 10)
    memory.add(_sighting("s10", 265.0, 275.0), other)
    figures = evaluate_survey(SurveyResult(memory, route), city, "waste_basket")
    assert figures["found"] == 2 and figures["recall"] == 1.0
