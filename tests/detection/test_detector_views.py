"""The scene simulator and the oracle report what the offline renderer drew: they refuse real
imagery before a run starts, and a provider made by a plug-in function when it is made."""

from __future__ import annotations

import pytest

from flaneur.env.toy import toy_city
from flaneur.errors import FlaneurError
from flaneur.perception.detection import (
    check_detector_views,
    check_scene_provider,
    make_detector,
)
from flaneur.views.registry import VIEWS, register_views, views_from_spec


class Elsewhere:
    """A provider class of other imagery."""

    def __init__(self, city):
        self.city = city


def synthetic_factory(city, arg):
    return views_from_spec("synthetic", city)


def other_factory(city, arg):
    return Elsewhere(city)


@pytest.fixture()
def plugins():
    register_views("test-synthetic-factory", synthetic_factory, replace=True)
    register_views("test-other-factory", other_factory, replace=True)
    register_views("test-other-class", Elsewhere, replace=True)
    yield
    for name in ("test-synthetic-factory", "test-other-factory", "test-other-class"):
        VIEWS.unregister(name)


def test_real_imagery_and_other_provider_classes_are_refused_before_a_run(plugins):
    for views in ("panorama:/tmp/x", "google", "mapillary", "test-other-class"):
        with pytest.raises(FlaneurError, match=f"needs synthetic views, not --views {views}"):
            check_detector_views("scene", views)
        check_detector_views("ocr", views)  # a detector that reads the image itself
    for views in (None, "synthetic", "test-synthetic-factory", "test-other-factory"):
        check_detector_views("oracle", views)  # a function's provider is checked when made


def test_a_provider_made_by_a_function_is_checked_when_made(plugins):
    city = toy_city()
    scene = make_detector("scene")
    check_scene_provider(scene, views_from_spec("test-synthetic-factory", city), "scene")
    with pytest.raises(FlaneurError, match="needs synthetic views, not Elsewhere"):
        check_scene_provider(scene, views_from_spec("test-other-factory", city), "scene")
    check_scene_provider(make_detector("ocr"), Elsewhere(city), "ocr")
