"""The detector registry: names, typed options checked in one line, and the set-up of the
simulators for place detection."""

from __future__ import annotations

import math

import pytest

from flaneur.errors import FlaneurError
from flaneur.options import check_options, describe_options
from flaneur.perception.detection import (
    DETECTORS,
    Detection,
    Detector,
    OracleDetector,
    SceneDetector,
    SceneNoise,
    make_detector,
)


def test_registry_names_every_detector_and_checks_entries():
    assert DETECTORS.names()[:6] == ["scene", "oracle", "ocr", "yolo-world", "yolo", "owlvit"]
    assert all(issubclass(DETECTORS.get(n), Detector) for n in DETECTORS.names())
    with pytest.raises(FlaneurError, match="not a subclass"):
        DETECTORS.get("flaneur.perception.detection:Detection")


def test_typed_options_convert_and_document():
    det = make_detector("scene", seed=3, noise="virl", threshold=0.5)
    assert isinstance(det, SceneDetector) and det.seed == 3 and det.threshold == 0.5
    assert det.noise == SceneNoise.virl()
    assert describe_options(SceneDetector)["noise"]["type"] == "'default' or 'virl'"
    assert set(describe_options(DETECTORS.get("yolo"))) == {"weights", "threshold", "min_score"}
    assert check_options("scene", SceneDetector.Options, {"seed": 2.0}) == {"seed": 2}


@pytest.mark.parametrize(
    "name, options, expected",
    [
        ("scene", {"seed": -1}, "seed=-1 must be an integer from 0"),
        ("scene", {"threshold": math.nan}, "threshold=nan must be a number from 0 to 1"),
        ("scene", {"threshold": 1.5}, "threshold=1.5 must be a number from 0 to 1"),
        ("scene", {"noise": "loud"}, "noise='loud' must be 'default' or 'virl'"),
        ("scene", {"sed": 1}, "has no option sed (its options: seed, noise, threshold)"),
        ("oracle", {"seed": 1}, "has no option seed"),
        ("ocr", {"threshold": -0.1}, "threshold=-0.1 must be a number from 0 to 1"),
        ("yolo-world", {}, "needs weights: pass weights=PATH"),
        ("owlvit", {"weights": "w", "min_score": math.inf}, "min_score=inf must be a number"),
        ("sonar", {}, "unknown detector 'sonar'; choose from scene, oracle"),
    ],
)
def test_hostile_options_are_one_line_errors(name, options, expected):
    with pytest.raises(FlaneurError) as info:
        make_detector(name, **options)
    assert expected in str(info.value) and "\n" not in str(info.value)


def test_simulators_are_set_up_for_places_and_others_are_unchanged():
    places, labels = {"p1": ("cafe",)}, {"spa": ("sauna",)}
    scene = make_detector("scene", seed=4, threshold=0.4)
    told = scene.with_places(places, labels)
    assert isinstance(told, SceneDetector) and told is not scene
    assert (told.seed, told.threshold, told.places) == (4, 0.4, places)
    assert told.settings() != scene.settings()  # its own cache keys
    assert scene.with_places(places, labels, seed=7).seed == 4  # its own seed wins
    unseeded = make_detector("scene")
    assert unseeded.seed == 0 and unseeded.with_places(places, labels, seed=7).seed == 7
    oracle = make_detector("oracle").with_places(places, labels)
    assert isinstance(oracle, OracleDetector) and oracle.noise == SceneNoise.perfect()

    class Pixels(Detector):
        def _detect(self, view, labels):
            return [Detection((0, 0, 1, 1), labels[0], 1.0)]

    pixels = Pixels()
    assert pixels.with_places(places, labels) is pixels
